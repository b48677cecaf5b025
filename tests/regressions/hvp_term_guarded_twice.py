"""Two terms of one adjoint loop, each behind the weight.

Found by a review of the terms rule of transforms/skip_zero.py: in the
Hessian-vector product, the first term moved ``sbd`` into its branch, and the
second split the same loop again, its copy reading ``sbd`` outside that
branch (the C did not compile).  Fixed with
split_loop_operand_moved_into_the_guard.py.  With every float active the
weight is active too, and nothing is guarded: ``x`` alone.
"""
# check wrt: x
from adgen import Array, f64


def f(x: Array[f64], y: Array[f64], w: Array[f64]) -> f64:
    r = 0.0
    for v in range(len(w)):
        a = w[v] * x[v]
        s = 0.0
        for i in range(v, len(y)):
            s += a * y[i] * y[i]
        r += s * s
    return r
