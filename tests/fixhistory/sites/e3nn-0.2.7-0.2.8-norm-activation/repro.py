"""e3nn NormActivation (sigmoid, normalize=True) on a zero vector feature (1x1o), with the gradient."""
import torch

features = torch.tensor([[0.0, 0.0, 0.0], [0.3, -0.4, 1.2]], requires_grad=True)  # two 1o vectors


def _sq_norm(f):  # o3.Norm(irreps_in, squared=True): the tensor product f . f
    return (f * f).sum(-1, keepdim=True)


def parent(epsilon=1e-8):
    norms = _sq_norm(features).sqrt()  # o3.Norm(irreps_in): tp(features, features).sqrt()
    epsilon_norms = norms.clone()
    epsilon_norms[epsilon_norms < epsilon] = epsilon
    scalings = torch.sigmoid(epsilon_norms) / epsilon_norms
    out = scalings * features
    (grad,) = torch.autograd.grad(out.sum(), features)
    return out, grad


def fixed(epsilon=1e-8):
    _eps_squared = epsilon * epsilon
    norms = _sq_norm(features)
    norms[norms < _eps_squared] = _eps_squared
    norms = norms.sqrt()
    scalings = torch.sigmoid(norms) / norms
    out = scalings * features
    (grad,) = torch.autograd.grad(out.sum(), features)
    return out, grad
