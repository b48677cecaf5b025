"""Reverse mode failed on this program: an equal loop dropped while still referred to.

Found by an adversarial review of the loop sharing in ``transforms/cse.py``.  In the
adjoint loop of the prange, which computes the iteration again, the two exp loops are
equal (the recomputation leaves out the store of ``cnt``).  The reverse sweep, while it
is built, refers to values inside the loops it mirrors; sharing the second loop with the
first dropped values the sweep still used ("VerifyError: f_b ... operand ... is not
defined before its use").  Fixed: a loop or an if is shared only when nothing outside it
uses a value defined inside it.
"""
import math

from adgen import Array, f64, i64, prange


def f(x: Array[f64], w: Array[f64], r: Array[f64], cnt: Array[i64]) -> f64:
    total = 0.0
    for i in prange(len(x)):
        acc = 0.0
        c = 0
        for k in range(len(w)):
            acc += math.exp(x[i] * w[k])
            c += 1
        cnt[i] = c
        acc2 = 0.0
        for k in range(len(w)):
            acc2 += math.exp(x[i] * w[k])
        r[i] = acc * acc2
        total += r[i]
    return total
