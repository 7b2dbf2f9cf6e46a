"""SB3 PPO advantage normalization on a mini-batch of one sample (batch_size=1)."""
import torch as th

advantages = th.tensor([0.7])  # rollout_data.advantages of a mini-batch of size 1
normalize_advantage = True


def parent():
    adv = advantages
    if normalize_advantage:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return adv


def fixed():
    adv = advantages
    if normalize_advantage and len(adv) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return adv
