"""torchmetrics universal_image_quality_index of two black (all-zero) images: every window has
mu_pred = mu_target = 0, and the parent's denominator (mu_pred_sq + mu_target_sq) * lower is 0."""
import torch
from torch import nn

preds = torch.zeros(1, 1, 16, 16)
target = torch.zeros(1, 1, 16, 16)


def _stats():
    kernel = torch.full((1, 1, 11, 11), 1.0 / 121)  # a window average (torchmetrics uses a gaussian)
    input_list = torch.cat((preds, target, preds * preds, target * target, preds * target))
    output_list = nn.functional.conv2d(input_list, kernel, groups=1).split(preds.shape[0])
    mu_pred_sq = output_list[0].pow(2)
    mu_target_sq = output_list[1].pow(2)
    mu_pred_target = output_list[0] * output_list[1]
    sigma_pred_sq = output_list[2] - mu_pred_sq
    sigma_target_sq = output_list[3] - mu_target_sq
    sigma_pred_target = output_list[4] - mu_pred_target
    return mu_pred_sq, mu_target_sq, mu_pred_target, sigma_pred_sq, sigma_target_sq, 2 * sigma_pred_target


def parent():
    mu_pred_sq, mu_target_sq, mu_pred_target, sigma_pred_sq, sigma_target_sq, upper = _stats()
    lower = sigma_pred_sq + sigma_target_sq + torch.finfo(sigma_pred_sq.dtype).eps
    uqi_idx = ((2 * mu_pred_target) * upper) / ((mu_pred_sq + mu_target_sq) * lower)
    return uqi_idx.mean()


def fixed():
    mu_pred_sq, mu_target_sq, mu_pred_target, sigma_pred_sq, sigma_target_sq, upper = _stats()
    lower = sigma_pred_sq + sigma_target_sq
    eps = torch.finfo(sigma_pred_sq.dtype).eps
    uqi_idx = ((2 * mu_pred_target) * upper) / ((mu_pred_sq + mu_target_sq) * lower + eps)
    return uqi_idx.mean()
