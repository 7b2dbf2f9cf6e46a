"""numpyro TwoSidedTruncatedDistribution(Normal(0, 1), low=-41, high=-40): both tail
probabilities cdf(-41), cdf(-40) underflow to 0 in float32, so log_prob subtracts
log(0) = -inf and returns +inf; the log_cdf/logsumexp form stays finite."""
import jax.numpy as jnp
from jax.scipy.special import logsumexp, ndtr
from jax.scipy.stats import norm as jax_norm

loc, scale = jnp.float32(0.0), jnp.float32(1.0)
low, high = jnp.float32(-41.0), jnp.float32(-40.0)
value = jnp.float32(-40.5)


def base_cdf(v):  # numpyro Normal.cdf
    return ndtr((v - loc) / scale)


def base_log_prob(v):  # numpyro Normal.log_prob
    return jax_norm.logpdf(v, loc, scale)


def parent():
    sign = jnp.where(loc >= low, 1.0, -1.0)
    tail_prob_at_low = base_cdf(loc - sign * (loc - low))
    tail_prob_at_high = base_cdf(loc - sign * (loc - high))
    sign = jnp.where(loc >= low, 1.0, -1.0)
    return base_log_prob(value) - jnp.log(
        sign * (tail_prob_at_high - tail_prob_at_low)
    )


def fixed():
    log_cdf = lambda v: jax_norm.logcdf(v, loc=loc, scale=scale)  # numpyro Normal.log_cdf
    log_diff_tail_probs = logsumexp(
        a=jnp.stack([log_cdf(high), log_cdf(low)], axis=-1),
        axis=-1,
        b=jnp.array([1, -1]),  # subtract low from high
    )
    return base_log_prob(value) - log_diff_tail_probs
