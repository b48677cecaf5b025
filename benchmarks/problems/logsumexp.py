"""log(sum(exp(x))), stabilised by the maximum: two loops, max, exp and log."""

import math

from adgen import Array, f64


def logsumexp(x: Array[f64]) -> f64:
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)
