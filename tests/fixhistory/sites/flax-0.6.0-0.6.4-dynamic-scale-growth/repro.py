"""flax DynamicScale: while gradients stay finite (e.g. a loss that is exactly 0 for a long
run) the loss scale doubles every growth_interval steps; from 2**127 the next growth is
inf in float32, and scaling by inf then turns the next gradients into NaN (0 * inf)."""
import jax
import jax.numpy as jnp

scale = jnp.asarray(2.0 ** 127, jnp.float32)
growth_factor = 2.0
grow = jnp.asarray(True)
finite = jnp.asarray(True)


def _grad(new_scale):
    # DynamicScale.value_and_grad: grad of loss * scale, divided by scale
    def scaled_loss(p):
        return (p * 0.0) * new_scale
    g = jax.grad(scaled_loss)(jnp.float32(1.0))
    return g / new_scale


def parent():
    fin_scale = jnp.where(grow & finite,
                          scale * growth_factor,
                          scale)
    return fin_scale, _grad(fin_scale)


def fixed():
    fin_scale = jnp.where(
        grow & finite,
        jnp.minimum(scale * growth_factor, jnp.finfo(jnp.float32).max),
        scale)
    return fin_scale, _grad(fin_scale)
