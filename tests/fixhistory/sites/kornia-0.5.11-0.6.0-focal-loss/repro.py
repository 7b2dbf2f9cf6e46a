"""kornia focal_loss on float16 logits of a confident prediction: softmax + 1e-8 is 0 in half."""
import torch
import torch.nn.functional as F

input = torch.tensor([[12.0, -12.0, 0.0]], dtype=torch.float16)  # (B, C) logits, half precision (AMP)
target = torch.tensor([0])
alpha, gamma, eps = 0.25, 2.0, 1e-8
target_one_hot = F.one_hot(target, num_classes=3).to(input.dtype)


def parent():
    input_soft: torch.Tensor = F.softmax(input, dim=1) + eps
    weight = torch.pow(-input_soft + 1.0, gamma)
    focal = -alpha * weight * torch.log(input_soft)
    loss_tmp = torch.sum(target_one_hot * focal, dim=1)
    return loss_tmp


def fixed():
    input_soft: torch.Tensor = F.softmax(input, dim=1)
    log_input_soft: torch.Tensor = F.log_softmax(input, dim=1)
    weight = torch.pow(-input_soft + 1.0, gamma)
    focal = -alpha * weight * log_input_soft
    loss_tmp = torch.einsum('bc...,bc...->b...', (target_one_hot, focal))
    return loss_tmp
