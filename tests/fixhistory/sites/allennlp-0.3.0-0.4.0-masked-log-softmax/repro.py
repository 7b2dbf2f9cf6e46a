"""allennlp masked_log_softmax of a batch whose second row is fully masked (allennlp issue #890)."""
import torch

vector = torch.tensor([[0.3725, 0.5344, 0.2128, 0.3324], [0.3423, 0.3423, 0.3423, 0.3423]], requires_grad=True)
mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])


def parent():
    out = torch.nn.functional.log_softmax(vector + mask.log(), dim=1)
    (grad,) = torch.autograd.grad((out * mask).sum(), vector)  # the caller masks the result
    return out, grad


def fixed():
    out = torch.nn.functional.log_softmax(vector + (mask + 1e-45).log(), dim=1)
    (grad,) = torch.autograd.grad((out * mask).sum(), vector)
    return out, grad
