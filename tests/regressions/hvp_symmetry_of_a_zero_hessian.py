"""The hvp symmetry check failed on a Hessian that is zero analytically.

Found by the random programs (tests/programs.py).  cos(acos(x)) is x, so the Hessian of f is
0, but forward-over-reverse rounding gives about 1e-17 in one direction and 0 in the other;
the check divided |<u, Hv> - <v, Hu>| by max(|<u, Hv>|, |<v, Hu>|, 1e-300) and reported a
relative error of 1.  Fixed: the check has the absolute floor the difference check has (1e-6).
"""
import math


def f(p: float) -> float:
    return math.cos(math.acos(0.4 * p)) + 0.5 * p
