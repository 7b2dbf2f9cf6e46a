"""OPTAttention in float16 with a left-padded batch: the pad query's row is the padding mask's
finfo(float16).min plus a negative score (overflows to -inf) next to the causal mask's -inf."""
import torch
from torch import nn

dtype = torch.float16
minval = torch.finfo(dtype).min
# scores of the first (padding) query against 3 keys, shape (bsz * num_heads, tgt_len=1, src_len=3)
scores = torch.tensor([[[-30.0, 2.0, 1.0]]], dtype=dtype)
# the combined 4D mask of OPT 4.20: the expanded padding mask (min on the pad key) and the causal -inf
attention_mask = torch.tensor([[[[minval, float("-inf"), float("-inf")]]]], dtype=dtype)
bsz, num_heads, tgt_len, src_len = 1, 1, 1, 3


def parent():
    attn_weights = scores.view(bsz, num_heads, tgt_len, src_len) + attention_mask
    attn_weights = attn_weights.view(bsz * num_heads, tgt_len, src_len)
    attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    return attn_weights


def fixed():
    attn_weights = scores.view(bsz, num_heads, tgt_len, src_len) + attention_mask
    attn_weights = torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))
    attn_weights = attn_weights.view(bsz * num_heads, tgt_len, src_len)
    dtype_attn_weights = attn_weights.dtype
    if dtype_attn_weights == torch.float16:
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(dtype_attn_weights)
    else:
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    return attn_weights
