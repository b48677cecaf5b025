"""A function that writes an array that is not an independent (``--wrt x``).

The derivatives take the entry value of ``q`` as a constant (its tangent on
entry is not read; only ``q`` on exit is differentiated), but ``--check``
gave ``q`` a random direction like an independent: the finite differences
then saw the return's dependence on ``q``, which the tangent rightly leaves
out, and the check failed ("tangent vs finite differences 1.48"), so did the
dot-product test and the hvp's symmetry.  The check's directions are zero in
what is not an independent.
"""
# check wrt: x
import math

from adgen import Array, f64


def f(x: Array[f64], q: Array[f64]) -> f64:
    total = 0.0
    p = 1.0
    for j in range(len(x)):
        total += math.sin(x[j]) * p
        p = p * q[(j + 1) % len(q)]
        q[j] = q[j] + 1.0
    return total
