"""kornia rgb_to_hls saturation at a black pixel (max + min = 0), with its gradient."""
import torch

image = torch.tensor([[[0.0, 0.2]], [[0.0, 0.5]], [[0.0, 0.9]]], requires_grad=True)  # (3, 1, 2): black, blue-ish


def parent():
    maxc = image.max(-3)[0]
    minc = image.min(-3)[0]
    l = (maxc + minc) / 2
    deltac = maxc - minc
    s: torch.Tensor = torch.where(
        l < 0.5, deltac / (maxc + minc), deltac / (torch.tensor(2.0) - (maxc + minc))
    )  # saturation
    s = torch.where(torch.isnan(s), torch.tensor(0.0, device=s.device, dtype=s.dtype), s)
    (grad,) = torch.autograd.grad(s.sum(), image)
    return s, grad


def fixed(eps=1e-8):
    maxc, imax = image.max(-3)
    minc = image.min(-3)[0]
    l = maxc + minc
    s = maxc - minc
    im: torch.Tensor = image / (s + eps).unsqueeze(-3)
    s = s / (torch.where(l < 1.0, l, 2.0 - l) + eps)  # saturation (kornia: s /= ..., in place)
    (grad,) = torch.autograd.grad(s.sum(), image)
    return s, im, grad
