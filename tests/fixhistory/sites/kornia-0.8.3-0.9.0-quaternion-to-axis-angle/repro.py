"""kornia quaternion_to_axis_angle of the identity quaternion (1, 0, 0, 0), with the gradient."""
import torch

quaternion = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.9, 0.1, -0.3, 0.2]], requires_grad=True)


def _axis_angle(q1, q2, q3, k):
    return torch.stack([q1 * k, q2 * k, q3 * k], dim=-1)


def parent():
    cos_theta, q1, q2, q3 = quaternion[..., 0], quaternion[..., 1], quaternion[..., 2], quaternion[..., 3]
    sin_squared_theta: torch.Tensor = q1 * q1 + q2 * q2 + q3 * q3
    sin_theta: torch.Tensor = torch.sqrt(sin_squared_theta)
    two_theta: torch.Tensor = 2.0 * torch.where(
        cos_theta < 0.0, torch.atan2(-sin_theta, -cos_theta), torch.atan2(sin_theta, cos_theta)
    )
    k_pos: torch.Tensor = two_theta / sin_theta
    k_neg: torch.Tensor = 2.0 * torch.ones_like(sin_theta)
    k: torch.Tensor = torch.where(sin_squared_theta > 0.0, k_pos, k_neg)
    out = _axis_angle(q1, q2, q3, k)
    (grad,) = torch.autograd.grad(out.sum(), quaternion)
    return out, grad


def fixed():
    cos_theta, q1, q2, q3 = quaternion[..., 0], quaternion[..., 1], quaternion[..., 2], quaternion[..., 3]
    sin_squared_theta: torch.Tensor = q1 * q1 + q2 * q2 + q3 * q3
    pos: torch.Tensor = sin_squared_theta > 0.0
    safe_sin_squared_theta: torch.Tensor = torch.where(pos, sin_squared_theta, torch.ones_like(sin_squared_theta))
    sin_theta: torch.Tensor = torch.where(pos, torch.sqrt(safe_sin_squared_theta), torch.zeros_like(sin_squared_theta))
    safe_cos_for_atan2: torch.Tensor = torch.where(pos, cos_theta, torch.ones_like(cos_theta))
    two_theta_shielded: torch.Tensor = 2.0 * torch.where(
        cos_theta < 0.0, torch.atan2(-sin_theta, -safe_cos_for_atan2), torch.atan2(sin_theta, safe_cos_for_atan2)
    )
    two_theta_value: torch.Tensor = 2.0 * torch.where(
        cos_theta < 0.0, torch.atan2(-sin_theta, -cos_theta), torch.atan2(sin_theta, cos_theta)
    )
    two_theta: torch.Tensor = two_theta_shielded + (two_theta_value.detach() - two_theta_shielded.detach())
    k_pos: torch.Tensor = two_theta / torch.where(pos, sin_theta, torch.ones_like(sin_theta))
    neg_branch: torch.Tensor = ~pos & (cos_theta != 0.0)
    safe_cos_theta: torch.Tensor = torch.where(neg_branch, cos_theta, torch.ones_like(cos_theta))
    k_neg: torch.Tensor = torch.where(neg_branch, 2.0 / safe_cos_theta.detach(), torch.zeros_like(cos_theta))
    k: torch.Tensor = torch.where(pos, k_pos, k_neg)
    out = _axis_angle(q1, q2, q3, k)
    (grad,) = torch.autograd.grad(out.sum(), quaternion)
    return out, grad
