# Excerpt of vector-quantize-pytorch 1.14.1, vector_quantize_pytorch/vector_quantize_pytorch.py (licence: MIT), verbatim:
# the module's imports, the module-level names the code uses, and the enclosing top-level definition.
from functools import partial
import torch
from torch import nn, einsum
import torch.nn.functional as F
import torch.distributed as distributed
from torch.optim import Optimizer
from torch.cuda.amp import autocast
from einops import rearrange, repeat, reduce, pack, unpack
from typing import Callable

def cdist(x, y):
    x2 = reduce(x ** 2, 'b n d -> b n', 'sum')
    y2 = reduce(y ** 2, 'b n d -> b n', 'sum')
    xy = einsum('b i d, b j d -> b i j', x, y) * -2
    return (rearrange(x2, 'b i -> b i 1') + rearrange(y2, 'b j -> b 1 j') + xy).clamp(min = 0).sqrt()
