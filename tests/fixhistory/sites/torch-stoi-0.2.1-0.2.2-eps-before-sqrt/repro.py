"""torch_stoi NegSTOILoss band energies when a one-third octave band covers no FFT bin (an all-zero
row of the octave band matrix, as for the lowest bands at a small nfft): EPS added inside the
matmul is multiplied by that zero row, the band energy is 0, and the sqrt's gradient is inf * 0."""
import torch

EPS = 1e-8
torch.manual_seed(0)
n_freq, n_frames = 8, 5
OBM = torch.zeros(3, n_freq)
OBM[1, 2:4] = 1.0
OBM[2, 4:8] = 1.0  # OBM[0] is empty: the band holds no bin
spec = torch.randn(1, n_freq, n_frames, 2, requires_grad=True)


def parent():
    x_spec = torch.view_as_complex(spec)
    x_tob = torch.matmul(OBM, x_spec.abs().pow(2) + EPS).sqrt()
    (grad,) = torch.autograd.grad(x_tob.sum(), spec)
    return x_tob, grad


def fixed():
    x_spec = torch.view_as_complex(spec)
    x_tob = (torch.matmul(OBM, x_spec.abs().pow(2)) + EPS).sqrt()
    (grad,) = torch.autograd.grad(x_tob.sum(), spec)
    return x_tob, grad
