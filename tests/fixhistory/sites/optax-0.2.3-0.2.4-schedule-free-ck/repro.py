"""optax schedule_free: at the first step of a warmup schedule the learning rate is 0 (or
tiny: 1e-25 ** 2 underflows in float32), so weight = max_lr ** 2 = 0, the weight sum is 0
and ck = weight / next_total_weight = 0 / 0 = NaN, which poisons the iterates."""
import jax.numpy as jnp

weight_lr_power = 2.0
lr = jnp.array([0.0, 1e-25, 1e-3], jnp.float32)
state_max_lr = jnp.zeros((3,), jnp.float32)
state_weight_sum = jnp.zeros((3,), jnp.float32)


def _weights():
    max_lr = jnp.maximum(state_max_lr, lr)
    weight = max_lr**weight_lr_power
    next_total_weight = state_weight_sum + weight
    return weight, next_total_weight


def parent():
    weight, next_total_weight = _weights()
    ck = weight / next_total_weight
    return ck


def fixed():
    weight, next_total_weight = _weights()
    ck = jnp.where(
        jnp.logical_or(jnp.isnan(weight), jnp.isnan(next_total_weight)),
        jnp.full(weight.shape, jnp.nan),
        jnp.nan_to_num(weight / next_total_weight, nan=0.0, posinf=jnp.inf),
    )
    return ck
