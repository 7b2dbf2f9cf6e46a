"""torch_stoi NegSTOILoss one-third octave bands of a spectrum with silent frames: the band
energies are 0, and the gradient of (.)**0.5 at 0 is inf, times 0 = nan."""
import torch

EPS = 1e-8
torch.manual_seed(0)
n_freq, n_frames, n_bands = 8, 5, 3
OBM = (torch.rand(n_bands, n_freq) > 0.5).float()  # the octave band matrix (0/1 weights)
spec = torch.randn(1, n_freq, n_frames, 2)
spec[..., 1:3, :] = 0.0  # two frames of digital silence
spec.requires_grad_(True)


def parent():
    x_spec = spec  # stft output with a real/imag last dim
    x_tob = torch.matmul(OBM, torch.norm(x_spec, 2, -1) ** 2).pow(0.5)
    (grad,) = torch.autograd.grad(x_tob.sum(), spec)
    return x_tob, grad


def fixed():
    x_spec = torch.view_as_complex(spec)  # 0.2.0 uses a complex stft
    x_tob = torch.matmul(OBM, x_spec.abs().pow(2) + EPS).sqrt()
    (grad,) = torch.autograd.grad(x_tob.sum(), spec)
    return x_tob, grad
