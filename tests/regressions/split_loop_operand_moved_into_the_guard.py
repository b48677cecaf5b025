"""A value that a split loop reads stays before the loop.

Found by a review of the terms rule of transforms/skip_zero.py: the tangent of
``s += a * y[i]`` splits the loop (``s`` and ``b`` are primal, ``sd`` goes
into ``if (w[v] != 0.0)``), and ``ad = xd[v]``, read by both copies, counted
as serving the slice alone and moved into the branch with the copy: the loop
that stayed read an undeclared ``ad`` (the C did not compile).  Fixed: what a
loop to be split reads is not moved.
"""
from adgen import Array, f64


def f(x: Array[f64], y: Array[f64], w: Array[f64]) -> f64:
    r = 0.0
    for v in range(len(w)):
        a = x[v]
        s = 0.0
        b = 0.0
        for i in range(len(y)):
            s += a * y[i]
            b += a * x[i]
        r = r + w[v] * s + b
    return r
