"""pytorch_optimizer StableSPAM step for a parameter whose gradient is all zero (e.g. an unused
embedding row block, a frozen branch): the gradient is divided by its norm, 0."""
import torch

p = torch.ones(4)
grad = torch.zeros(4)
gamma1, gamma2, eps, step, scale = 0.7, 0.9, 1e-8, 1, 1.0


def _c_norm(grad_norm):
    m_norm_t = torch.zeros(()).lerp_(grad_norm, weight=1.0 - gamma1 * scale)
    v_norm_t = torch.zeros(()).lerp_(grad_norm.pow(2), weight=1.0 - gamma2)
    m_norm_hat = m_norm_t / (1.0 - (gamma1 * scale) ** step)
    v_norm_hat = v_norm_t / (1.0 - gamma2 ** step)
    return m_norm_hat.div_(v_norm_hat.sqrt_().add_(eps))


def parent():
    g = grad.clone()
    grad_norm = torch.norm(g)
    c_norm_t = _c_norm(grad_norm)
    g.div_(grad_norm).mul_(c_norm_t)
    return p - 1e-3 * g  # the parameter after the update


def fixed():
    g = grad.clone()
    grad_norm = torch.linalg.norm(g)
    if grad_norm == 0:
        return p  # `continue`: the parameter is left as it is
    c_norm_t = _c_norm(grad_norm)
    g.div_(grad_norm).mul_(c_norm_t)
    return p - 1e-3 * g
