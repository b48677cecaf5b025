"""A prange's adjoint computed each iteration again although a call in it reads an array
written after the loop.

Found by a review of the prange adjoints.  ``get(x, i)`` reads ``x``, which the second
prange overwrites; the first prange's adjoint recomputed ``get_fwd(x)`` on the new values
(adjoint vs tangent failed with error 1.16).  Fixed: ``why_not_recompute`` also requires the
arrays passed to calls in the body to be kept until the reverse sweep; this loop is taped.
"""
import math

from adgen import Array, f64, i64, prange


def get(x: Array[f64], i: i64) -> f64:
    return x[i]


def f(x: Array[f64], y: Array[f64], z: Array[f64], c: f64) -> f64:
    s = 0.0
    for i in prange(len(x)):
        v = get(x, i)
        y[i] = math.sin(v * c)
        s += y[i] * v
    for i in prange(len(x)):
        x[i] = z[i] * 2.0
    return s
