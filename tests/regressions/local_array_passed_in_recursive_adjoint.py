"""A recursive helper passes a local array to another helper.

Reverse mode: g1 is recursive, so its adjoint is split into g1_fwd/g1_bwd, and
the local array t0 (allocated inside a branch after the early return is
rewritten to single-exit form) is gone when g1_bwd calls g0_bwd.  adgen used
to try to carry the array pointer out of the branch and crashed; g0_bwd only
needs the extents, so the caller passes the adjoint array in its place.
"""

import math

from adgen import Array, f64, i32, zeros


def g0(p0: float, z: Array[f64]) -> float:
    return 0.5 * p0 + z[0] * z[len(z) - 1]


def g1(x: float, m: i32) -> float:
    if m <= 0:
        return 0.5 * x
    t0 = zeros(m + 1)
    for i in range(t0.shape[0]):
        t0[i] = 0.2 * math.exp(-x)
    v = g0(0.2 * math.cosh(x), t0)
    return math.tanh(g1(0.3 * v, m - 1)) + 0.5 * x
