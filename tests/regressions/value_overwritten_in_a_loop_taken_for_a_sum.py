"""A loop that overwrites a carried value was vectorised as a sum of its values.

Found by the random programs (tests/programs.py), the first run with vectorised loops.  In
``v = math.pow(...)`` inside a loop, ``v`` is carried and never read, which
``Variables.is_sum`` accepts (nothing but additions reads it), so the loop got
``ADGEN_SIMD(omp simd reduction(+: v))``: each SIMD lane kept its own ``v`` and the lanes
were added up, giving several times the value (the primal differed from CPython by 1e-4
relative).  Fixed: a reduction clause needs the value the body passes on to be the carried
value plus or minus terms (``Variables.adds_to``).
"""
import math


def f(p0: float, p1: float, n: int) -> float:
    v0 = 0.25 * p0
    for i in range(n % 7 + 3):
        v0 = math.pow(2.0 - math.cos(math.log1p(2.0 - math.cos(p1))), 0.5)
    return v0 * p0 + 0.5 * p1
