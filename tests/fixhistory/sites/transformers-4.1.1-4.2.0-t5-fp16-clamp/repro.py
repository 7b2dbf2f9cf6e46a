"""T5Block in float16: the feed-forward residual (x + FF(x)) overflows 65504 to inf, and the next
T5LayerNorm (variance in float32, rsqrt) turns inf into nan."""
import torch

residual = torch.tensor([[60000.0, -3.0, 1.5, 2.0]], dtype=torch.float16)  # a large-activation channel
ff_out = torch.tensor([[9000.0, 0.5, -0.5, 0.25]], dtype=torch.float16)  # DenseReluDense(layer_norm(x))


def _t5_layer_norm(hidden_states, eps=1e-6):
    variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return hidden_states.to(torch.float16)


def parent():
    hidden_states = residual + ff_out  # T5LayerFF output: hidden_states = self.layer[-1](hidden_states)
    return _t5_layer_norm(hidden_states)  # the next block's first layer norm


def fixed():
    hidden_states = residual + ff_out
    if torch.isinf(hidden_states).any():
        clamp_value = torch.finfo(hidden_states.dtype).max - 1000
        hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
    return _t5_layer_norm(hidden_states)
