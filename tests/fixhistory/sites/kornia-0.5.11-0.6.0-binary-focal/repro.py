"""kornia binary_focal_loss_with_logits on a confident float16 logit: 1 - sigmoid(x) + 1e-8 is 0 in half."""
import torch
import torch.nn.functional as F

input = torch.tensor([[12.0, -3.0]], dtype=torch.float16)  # logits, half precision (AMP)
target = torch.tensor([[1.0, 0.0]], dtype=torch.float16)
alpha, gamma, eps = 0.25, 2.0, 1e-8


def parent():
    probs = torch.sigmoid(input)
    loss_tmp = -alpha * torch.pow((1.0 - probs + eps), gamma) * target * torch.log(probs + eps) - (
        1 - alpha
    ) * torch.pow(probs + eps, gamma) * (1.0 - target) * torch.log(1.0 - probs + eps)
    return loss_tmp


def fixed():
    probs_pos = torch.sigmoid(input)
    probs_neg = torch.sigmoid(-input)
    loss_tmp = -alpha * torch.pow(probs_neg, gamma) * target * F.logsigmoid(input) - (
        1 - alpha
    ) * torch.pow(probs_pos, gamma) * (1.0 - target) * F.logsigmoid(-input)
    return loss_tmp
