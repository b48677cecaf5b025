"""copysign(constant, active): the tangent is zero, but forward mode crashes.

Found by tests/test_random_programs.py.  Transpiling in forward mode fails
with an AssertionError in adgen/transpile/ad/rules.py linear_combination
(``assert total is not None``): the copysign rule has no partial for the
sign argument and the magnitude is a constant, so no term is left.
"""

import math

from adgen import f64


def g(p: f64) -> float:
    return math.copysign(0.3, p) + p
