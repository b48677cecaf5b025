"""Reverse mode failed on this program: an equal if dropped while still referred to.

Found by an adversarial review of the sharing of ifs in ``transforms/cse.py``: the ifs on
``a > 0.0`` are equal in the adjoint loop, which computes the iteration again without the
store of ``cnt``, and the reverse sweep under construction referred to values inside the
second ("VerifyError: f_b ... operand ... is not defined before its use").  Fixed as in
loop_shared_while_the_reverse_sweep_refers_into_it.py.
"""
import math

from adgen import Array, f64, i64, prange


def f(x: Array[f64], w: Array[f64], r: Array[f64], cnt: Array[i64]) -> f64:
    total = 0.0
    for i in prange(len(x)):
        a = x[i]
        u = 0.0
        if a > 0.0:
            for k in range(len(w)):
                u = math.sin(u + a * w[k])
            cnt[i] = i
        v = 0.0
        if a > 0.0:
            for k in range(len(w)):
                v = math.sin(v + a * w[k])
        r[i] = u * v
        total += r[i]
    return total
