"""torchmetrics PearsonCorrCoef updated one sample at a time: the first update sees n_obs = 1, and
the unbiased variance of a single sample is nan (a 0 divisor) -- times (n_obs - 1) = 0 it stays nan."""
import torch

samples = [(torch.tensor([0.5]), torch.tensor([1.0])), (torch.tensor([1.5]), torch.tensor([2.5])),
           (torch.tensor([-0.5]), torch.tensor([0.1]))]


def _update(preds, target, mean_x, mean_y, var_x, var_y, corr_xy, n_prior, single_sample_fix):
    cond = n_prior.mean() > 0 or (single_sample_fix and preds.shape[0] == 1)
    n_obs = preds.shape[0]
    if cond:
        mx_new = (n_prior * mean_x + preds.sum(0)) / (n_prior + n_obs)
        my_new = (n_prior * mean_y + target.sum(0)) / (n_prior + n_obs)
    else:
        mx_new = preds.mean(0)
        my_new = target.mean(0)
    n_prior = n_prior + n_obs
    if cond:
        var_x = var_x + ((preds - mx_new) * (preds - mean_x)).sum(0)
        var_y = var_y + ((target - my_new) * (target - mean_y)).sum(0)
    else:
        var_x = var_x + preds.var(0) * (n_obs - 1)
        var_y = var_y + target.var(0) * (n_obs - 1)
    corr_xy = corr_xy + ((preds - mx_new) * (target - mean_y)).sum(0)
    return mx_new, my_new, var_x, var_y, corr_xy, n_prior


def _run(single_sample_fix):
    state = [torch.zeros(1) for _ in range(5)] + [torch.zeros(1)]
    for preds, target in samples:
        state = list(_update(preds, target, *state, single_sample_fix=single_sample_fix))
    _, _, var_x, var_y, corr_xy, _ = state
    return corr_xy / (var_x * var_y).sqrt(), var_x


def parent():
    return _run(single_sample_fix=False)


def fixed():
    return _run(single_sample_fix=True)
