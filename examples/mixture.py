"""Parallel loops: a Gaussian-mixture log-likelihood and a stencil, over prange.

The iterations of a prange are independent; `total += ...` on a variable defined
before the loop is a sum.  Built with OpenMP (`adgen --openmp`, or
`adgen.load(..., openmp=True)`), the loops run in parallel.
"""

import math

from adgen import Array, f64, prange


def loglik(x: Array[f64, 2], means: Array[f64, 2], logw: Array[f64], r: Array[f64]) -> f64:
    """Sum over the points x[i] of log sum_k exp(logw[k] - |x[i] - means[k]|^2 / 2);
    r[i] gets the term of point i."""
    total = 0.0
    for i in prange(x.shape[0]):
        top = -math.inf
        for k in range(means.shape[0]):
            d2 = 0.0
            for j in range(x.shape[1]):
                t = x[i, j] - means[k, j]
                d2 += t * t
            top = max(top, logw[k] - 0.5 * d2)
        acc = 0.0
        for k in range(means.shape[0]):
            d2 = 0.0
            for j in range(x.shape[1]):
                t = x[i, j] - means[k, j]
                d2 += t * t
            acc += math.exp(logw[k] - 0.5 * d2 - top)
        r[i] = top + math.log(acc)
        total += r[i]
    return total


def smooth(u: Array[f64], v: Array[f64], c: f64) -> f64:
    """v[i] = c u[i-1] + (1 - 2c) u[i] + c u[i+1]; returns |v|^2.  In the adjoint, iteration
    i adds to ub[i-1], ub[i] and ub[i+1], which its neighbours add to as well (atomics)."""
    s = 0.0
    for i in prange(1, len(u) - 1):
        v[i] = c * u[i - 1] + (1.0 - 2.0 * c) * u[i] + c * u[i + 1]
        s += v[i] * v[i]
    return s
