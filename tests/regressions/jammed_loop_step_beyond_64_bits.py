"""A loop around a reduction with a step of 2**62.

transforms/jam.py runs four iterations at a time: its step 4 * 2**62 and its
stop ``n - 3 * 2**62`` were written as constants that do not fit in 64 bits
(``k += 18446744073709551616``, which gcc wraps to 0: the loop never ended).
Such a loop is left as it is.
"""
from adgen import Array, f64


def f(W: Array[f64, 2], x: Array[f64], n: int) -> f64:
    tot = 0.0
    for k in range(0, n, 4611686018427387904):
        z = 0.0
        for i in range(W.shape[1]):
            z += W[k % W.shape[0], i] * x[i]
        tot += z * z
    return tot
