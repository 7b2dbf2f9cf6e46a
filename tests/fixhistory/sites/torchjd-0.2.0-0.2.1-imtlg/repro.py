"""torchjd IMTL-G weighting of an all-zero Jacobian: the weights' sum is 0."""
import torch

matrix = torch.zeros(3, 5)  # every objective's gradient is zero (e.g. at a common minimum)


def _alpha(matrix):
    d = torch.linalg.norm(matrix, dim=1)
    return torch.linalg.pinv(matrix @ matrix.T) @ d


def parent():
    raw_weights = _alpha(matrix)
    weights = raw_weights / raw_weights.sum()
    return weights


def fixed():
    alpha_star = _alpha(matrix)
    alpha_star_sum = alpha_star.sum()
    if alpha_star_sum.abs() < 1e-12:
        weights = torch.zeros_like(alpha_star)
    else:
        weights = alpha_star / alpha_star_sum
    return weights
