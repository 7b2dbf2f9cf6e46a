"""vector-quantize-pytorch cdist(x, y) as x**2 + y**2 - 2xy when an input vector equals a codebook
vector: the float32 cancellation leaves a small negative number, and its sqrt is nan."""
import torch
from torch import einsum

torch.manual_seed(0)
codes = torch.randn(1, 16, 64) * 3.0  # (b, codebook size, dim)
x = codes[:, :4].clone()  # inputs that coincide with codebook entries (e.g. after the codebook was initialized from them)


def _terms(x, y):
    x2 = (x ** 2).sum(-1)
    y2 = (y ** 2).sum(-1)
    xy = einsum('b i d, b j d -> b i j', x, y) * -2
    return x2[:, :, None] + y2[:, None, :] + xy


def parent():
    return _terms(x, codes).sqrt()


def fixed():
    return _terms(x, codes).clamp(min = 0).sqrt()
