"""x-transformers Attention with a padding mask: a padded query's row of input_mask = q_mask * k_mask
is all False, so its row of dots is all -inf, and softmax of it is nan (gradient included)."""
import torch
from torch import einsum

torch.manual_seed(0)
b, h, n, d = 1, 2, 3, 4
q = torch.randn(b, h, n, d, requires_grad=True)
k = torch.randn(b, h, n, d)
v = torch.randn(b, h, n, d)
mask = torch.tensor([[True, True, False]])  # last token is padding
q_mask = mask[:, None, :, None]
k_mask = mask[:, None, None, :]
input_mask = q_mask * k_mask


def _attend(mask_value):
    dots = einsum('b h i d, b h j d -> b h i j', q, k) * d ** -0.5
    dots = dots.masked_fill(~input_mask, mask_value)  # x-transformers: dots.masked_fill_ (in place)
    attn = dots.softmax(dim=-1)
    out = einsum('b h i j, b h j d -> b h i d', attn, v)
    loss = (out * mask[:, None, :, None]).sum()  # padded positions are excluded from the loss
    (grad,) = torch.autograd.grad(loss, q)
    return out, grad


def parent():
    return _attend(float('-inf'))


def fixed():
    mask_value = -torch.finfo(q.dtype).max  # max_neg_value(dots)
    return _attend(mask_value)
