"""NeMo Automodel MaskedCrossEntropy with num_label_tokens = 0 (every label is ignore_index: a
prompt-only sample, or truncation cut every answer off)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.randn(6, 10, requires_grad=True)
labels = torch.full((6,), -100)
num_label_tokens = (labels != -100).sum()  # 0


def parent():
    loss = F.cross_entropy(logits, labels, reduction="sum")
    loss = loss / num_label_tokens
    (grad,) = torch.autograd.grad(loss, logits)
    return loss, grad


def fixed():
    loss = F.cross_entropy(logits, labels, reduction="sum")
    if num_label_tokens == 0:
        loss = loss * 0.0
    else:
        loss = loss / num_label_tokens
    (grad,) = torch.autograd.grad(loss, logits)
    return loss, grad
