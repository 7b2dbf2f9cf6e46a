"""DistanceWeightedMiner weights when two unit embeddings are antipodal (distance 2):
log(1 - 0.25 * 2**2) = log(0) = -inf."""
import torch

torch.manual_seed(0)
d = 8
e0 = torch.nn.functional.one_hot(torch.tensor(0), d).float()
u = torch.nn.functional.normalize(torch.randn(d), dim=0) * 0.3
embeddings = torch.nn.functional.normalize(torch.stack([e0, -e0, e0 + u, -e0 + u]), dim=1)
labels = torch.arange(4)
cutoff, nonzero_loss_cutoff = 0.5, 1.4


def _log_weights(with_eye):
    dist_mat = torch.cdist(embeddings, embeddings)
    if with_eye:
        dist_mat = dist_mat + torch.eye(dist_mat.size(0))
    dist_mat = torch.max(dist_mat, torch.tensor(cutoff))
    log_weights = (2.0 - float(d)) * torch.log(dist_mat) - (float(d - 3) / 2) * torch.log(1.0 - 0.25 * (dist_mat ** 2.0))
    mask = torch.ones_like(dist_mat)
    mask[labels.unsqueeze(1) == labels.unsqueeze(0)] = 0
    return dist_mat, log_weights, mask


def parent():
    dist_mat, log_weights, mask = _log_weights(with_eye=True)
    weights = torch.exp(log_weights - torch.max(log_weights))
    weights = weights * mask * ((dist_mat < nonzero_loss_cutoff).float())
    weights = weights / torch.sum(weights, dim=1, keepdim=True)
    return weights


def fixed():
    dist_mat, log_weights, mask = _log_weights(with_eye=False)
    inf_or_nan = torch.isinf(log_weights) | torch.isnan(log_weights)
    weights = torch.exp(log_weights - torch.max(log_weights[~inf_or_nan]))
    weights = weights * mask * ((dist_mat < nonzero_loss_cutoff).float())
    weights[inf_or_nan] = 0
    weights = weights / torch.sum(weights, dim=1, keepdim=True)
    return weights
