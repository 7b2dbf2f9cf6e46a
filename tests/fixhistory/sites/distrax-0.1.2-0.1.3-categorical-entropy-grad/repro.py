"""distrax Categorical entropy with a -inf logit (an impossible category): the value is
finite, but jax.grad of it is NaN (multiply_no_nan(logits, exp(x)) is a where whose other
branch -inf * exp(x) has a 0 * inf gradient).  The fix uses mul_exp on log_softmax."""
import jax
import jax.numpy as jnp

logits0 = jnp.array([0.0, 1.0, -jnp.inf], jnp.float32)


def multiply_no_nan(x, y):  # distrax 0.1.2 utils/math.py
    dtype = jnp.result_type(x, y)
    return jnp.where(y == 0, jnp.zeros((), dtype=dtype), x * y)


def mul_exp(x, logp):  # distrax 0.1.3 utils/math.py
    p = jnp.exp(logp)
    x = jnp.where(p == 0, 0.0, x)
    return x * p


def parent_entropy(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    x = logits - m
    sum_exp_x = jnp.sum(jnp.exp(x), axis=-1)
    lse_logits = jnp.squeeze(m, axis=-1) + jnp.log(sum_exp_x)
    return lse_logits - jnp.sum(
        multiply_no_nan(logits, jnp.exp(x)), axis=-1) / sum_exp_x


def fixed_entropy(logits):
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.sum(mul_exp(log_probs, log_probs), axis=-1)


def parent():
    return parent_entropy(logits0), jax.grad(parent_entropy)(logits0)


def fixed():
    return fixed_entropy(logits0), jax.grad(fixed_entropy)(logits0)
