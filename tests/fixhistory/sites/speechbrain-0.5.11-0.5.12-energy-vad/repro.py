"""speechbrain VAD.energy_VAD on a speech segment holding a chunk of digital silence (all zeros)."""
import torch

torch.manual_seed(0)
segment_chunks = torch.randn(6, 160) * 0.1  # (n_chunks, chunk_len) of one detected speech segment
segment_chunks[2] = 0.0  # a chunk of exact silence (zero padding, muted input)


def _normalize(energy_chunks):
    return ((energy_chunks - energy_chunks.mean()) / (2 * energy_chunks.std())) + 0.5


def parent():
    energy_chunks = segment_chunks.abs().sum(-1).log()
    return _normalize(energy_chunks)


def fixed(eps=1e-6):
    energy_chunks = segment_chunks.abs().sum(-1) + eps
    energy_chunks = energy_chunks.log()
    return _normalize(energy_chunks)
