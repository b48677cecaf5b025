"""A value read from an array before a loop or an if that writes the element is
emitted at its (later) use, so it reads the new element.

Found by tests/test_random_programs.py.  The generated C for ``k`` is

    if (p > 0.0) { z[0] = 0.5 * z[0]; }
    return erf(z[0]);

so "primal vs CPython" and "tangent vs finite differences" fail for both
functions (relative errors ~0.2-0.3).  Straight-line code (the store not
inside a loop or branch) is correct.
"""

import math

from adgen import Array, f64


def h(z: Array[f64]) -> float:
    v = math.erf(z[0])
    for i in range(1):
        z[0] = 0.5 * z[0]
    return v


def k(z: Array[f64], p: f64) -> float:
    v = math.erf(z[0])
    if p > 0.0:
        z[0] = 0.5 * z[0]
    return v
