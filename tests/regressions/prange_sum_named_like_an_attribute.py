"""A prange sum named like a function of math was taken for a read of the sum.

Found by the random programs with prange (tests/programs.py).  ``exp += math.exp(x[i])``
was rejected with "'exp' is read in the prange loop that sums it": the check of the
prange's sums visited the attribute name of ``math.exp`` as if it were the variable.
"""
import math

from adgen import Array, prange


def f(x: Array[float]) -> float:
    exp = 0.0
    for i in prange(len(x)):
        exp += math.exp(x[i])
    return exp
