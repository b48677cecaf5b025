"""Reverse mode failed on this program: a loop that pushes moved above what it uses.

Found by an adversarial review of the loop sharing in ``transforms/cse.py``.  The adjoint
of the prange computes the iteration again, fused with the forward loop; the inner loop
that pushes each ``exp`` for the reverse replaces the forward loop's equal one.  Its own
ops had been shared with the constant 2.5 of ``math.log(acc) + 2.5``, defined after the
place it moved to ("VerifyError: f_b ... operand ... is not defined before its use").
Fixed: the loop moves only when everything its ops use is there at that place.
"""
import math

from adgen import Array, f64, prange


def f(x: Array[f64], w: Array[f64, 2]) -> f64:
    total = 0.0
    for i in prange(len(x)):
        acc = 0.0
        for k in range(w.shape[0]):
            d2 = 0.0
            for j in range(w.shape[1]):
                d2 += (x[i] - w[k, j]) ** 2
            acc += math.exp(2.5 - d2)
        total += math.log(acc) + 2.5
    return total
