"""A split loop's initial values stay before it.

Found by a review of the terms rule of transforms/skip_zero.py: ``a`` is
carried by the inner loop, and the initial value of its tangent, ``ad =
xd[v]``, moved into ``if (w[v] != 0.0)`` with the loop's copy: the loop that
stayed for ``b`` read ``ad`` uninitialised (a tangent off by 30% against
differences, and undefined behaviour).  Fixed with
split_loop_operand_moved_into_the_guard.py.
"""
from adgen import Array, f64


def f(x: Array[f64], y: Array[f64], w: Array[f64]) -> f64:
    r = 0.0
    for v in range(len(w)):
        a = x[v]
        b = 0.0
        for i in range(v, len(x)):
            b += a * y[i]
            a = x[i]
        r = r + w[v] * a + b
    return r
