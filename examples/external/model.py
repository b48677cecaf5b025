"""External C functions: a stable softplus and logsumexp written in C (special.c), with
hand-written tangents and adjoints, called from a model written in Python.

    adgen model.py --mode forward --mode reverse -o out --build --check

compiles special.c into the module's library, and checks the C functions as it checks
generated code: the C functions against the Python bodies below (which are what the
module means in CPython), the C tangents against finite differences, the C adjoints
against the C tangents (the dot-product test).  The C signatures follow adgen's own
``f_d`` / ``f_b`` (docs/generated-code.md#external-c-functions); the generated headers
declare them.
"""

import math

from adgen import Array, external, f64, zeros


@external("special.c", name="softplus_c", tangent="softplus_c_d", adjoint="softplus_c_b")
def softplus(x: f64) -> f64:
    """log(1 + exp(x)), without overflow for large x."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@external("special.c", name="logsumexp_c", tangent="logsumexp_c_d", adjoint="logsumexp_c_b")
def logsumexp(x: Array[f64]) -> f64:
    """log(sum(exp(x))), shifted by the largest element."""
    m = x[0]
    for i in range(len(x)):
        m = max(m, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def loss(w: Array[f64], x: Array[f64], b: float) -> float:
    """A smooth maximum (logsumexp) of smooth ReLUs (softplus) of w[i] x[i] + b."""
    z = zeros(len(w))
    for i in range(len(w)):
        z[i] = softplus(w[i] * x[i] + b)
    return logsumexp(z)
