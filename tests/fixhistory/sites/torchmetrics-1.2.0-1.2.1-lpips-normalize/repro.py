"""torchmetrics LPIPS normalize_tensor of a feature vector that a ReLU zeroed: the value is 0, but
the gradient of sqrt(sum(x**2)) at 0 is inf * 0 = nan."""
import torch

torch.manual_seed(0)
in_feat = torch.relu(torch.randn(1, 4, 2, 2))
in_feat[..., 0, 0] = 0.0  # every channel of one spatial position is 0 after the ReLU
in_feat.requires_grad_(True)


def parent(eps=1e-10):
    norm_factor = torch.sqrt(torch.sum(in_feat**2, dim=1, keepdim=True))
    out = in_feat / (norm_factor + eps)
    (grad,) = torch.autograd.grad(out.sum(), in_feat)
    return out, grad


def fixed(eps=1e-8):
    norm_factor = torch.sqrt(eps + torch.sum(in_feat**2, dim=1, keepdim=True))
    out = in_feat / norm_factor
    (grad,) = torch.autograd.grad(out.sum(), in_feat)
    return out, grad
