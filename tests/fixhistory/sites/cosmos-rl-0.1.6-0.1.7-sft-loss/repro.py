"""cosmos-rl SFTTrainer loss on a (micro-)batch whose shifted labels are all -100 (a prompt-only
sample, or one whose answer was truncated away): mean cross entropy over no target is 0/0."""
import torch

torch.manual_seed(0)
logits = torch.randn(1, 6, 12, requires_grad=True)  # (B, S, vocab)
labels = torch.full((1, 6), -100)


def parent():
    loss_fn = torch.nn.CrossEntropyLoss()
    loss = loss_fn(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(0, 1))
    (grad,) = torch.autograd.grad(loss, logits)
    return loss, grad


def fixed(ignore_index=-100):
    loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].flatten(0, 1),
        labels[:, 1:].flatten(0, 1),
        ignore_index=ignore_index,
        reduction="mean",
    )
    loss = torch.nan_to_num(loss, nan=0.0)
    (grad,) = torch.autograd.grad(loss, logits)
    return loss, grad
