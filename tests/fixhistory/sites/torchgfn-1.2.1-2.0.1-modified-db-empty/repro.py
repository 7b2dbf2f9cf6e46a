"""torchgfn ModifiedDBGFlowNet.loss on a batch of transitions that all lead to the sink state:
after the ~is_sink_state filter nothing is left, and the mean of no scores is nan."""
import torch

is_sink_state = torch.tensor([True, True, True])
log_pf = torch.tensor([-1.2, -0.3, -2.0])  # per-transition scores before filtering


def _get_scores(guard):
    mask = ~is_sink_state
    scores = log_pf[mask]
    if guard and len(scores) == 0:  # 2.0.1: if len(states) == 0: return torch.tensor(0.0, ...)
        return torch.tensor(0.0)
    return scores


def parent():
    scores = _get_scores(guard=False)
    return torch.mean(scores**2)


def fixed():
    scores = _get_scores(guard=True)
    scores = scores**2
    return torch.mean(scores)  # loss_reduce(scores, "mean")
