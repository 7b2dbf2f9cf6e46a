"""OLMo-core TransformerTrainModule.train_batch on a rank whose instances are all masked by the
instance filter: every label is label_ignore_index, so the loss divisor is 0."""
import torch
import torch.nn.functional as F

label_ignore_index = -100
torch.manual_seed(0)
logits = torch.randn(2, 4, 11)  # (B, S, vocab)
instance_mask = torch.tensor([False, False])  # both instances filtered out on this rank
labels = torch.randint(0, 11, (2, 4))
labels[~instance_mask] = label_ignore_index  # the filter sets masked instances' labels to ignore


def _loss_sum():
    return F.cross_entropy(logits.view(-1, 11), labels.view(-1), ignore_index=label_ignore_index, reduction="sum")


def parent():
    batch_num_tokens_for_loss = (labels != label_ignore_index).sum()
    return _loss_sum() / batch_num_tokens_for_loss  # LMHead: loss / loss_div_factor


def fixed():
    batch_num_tokens_per_instance = labels.shape[1]
    batch_num_tokens_for_loss = (labels != label_ignore_index).sum()
    batch_num_tokens_for_loss += (~instance_mask).sum() * batch_num_tokens_per_instance
    return _loss_sum() / batch_num_tokens_for_loss
