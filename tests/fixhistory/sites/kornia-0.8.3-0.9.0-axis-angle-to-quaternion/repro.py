"""kornia axis_angle_to_quaternion of the zero rotation (0, 0, 0), with the gradient."""
import torch

axis_angle = torch.tensor([[0.0, 0.0, 0.0], [0.1, -0.2, 0.3]], requires_grad=True)


def _quaternion(k, w):
    a = axis_angle
    return torch.cat([w, a[..., 0:1] * k, a[..., 1:2] * k, a[..., 2:3] * k], dim=-1)


def parent():
    a0, a1, a2 = axis_angle[..., 0:1], axis_angle[..., 1:2], axis_angle[..., 2:3]
    theta_squared: torch.Tensor = a0 * a0 + a1 * a1 + a2 * a2
    theta: torch.Tensor = torch.sqrt(theta_squared)
    half_theta: torch.Tensor = theta * 0.5
    mask: torch.Tensor = theta_squared > 0.0
    ones: torch.Tensor = torch.ones_like(half_theta)
    k_neg: torch.Tensor = 0.5 * ones
    k_pos: torch.Tensor = torch.sin(half_theta) / theta
    k: torch.Tensor = torch.where(mask, k_pos, k_neg)
    w: torch.Tensor = torch.where(mask, torch.cos(half_theta), ones)
    q = _quaternion(k, w)
    (grad,) = torch.autograd.grad(q.sum(), axis_angle)
    return q, grad


def fixed():
    a0, a1, a2 = axis_angle[..., 0:1], axis_angle[..., 1:2], axis_angle[..., 2:3]
    theta_squared: torch.Tensor = a0 * a0 + a1 * a1 + a2 * a2
    mask: torch.Tensor = theta_squared > 0.0
    safe_theta_squared: torch.Tensor = torch.where(mask, theta_squared, torch.ones_like(theta_squared))
    theta: torch.Tensor = torch.where(mask, torch.sqrt(safe_theta_squared), torch.zeros_like(theta_squared))
    half_theta: torch.Tensor = theta * 0.5
    ones: torch.Tensor = torch.ones_like(half_theta)
    k_neg: torch.Tensor = 0.5 * ones
    k_pos: torch.Tensor = torch.sin(half_theta) / torch.where(mask, theta, ones)
    k: torch.Tensor = torch.where(mask, k_pos, k_neg)
    w: torch.Tensor = torch.where(mask, torch.cos(half_theta), ones)
    q = _quaternion(k, w)
    (grad,) = torch.autograd.grad(q.sum(), axis_angle)
    return q, grad
