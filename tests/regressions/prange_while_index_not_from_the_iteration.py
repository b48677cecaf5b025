"""A prange writing y[j], j carried by an inner while from 0, was accepted.

Found by a review of the prange checks.  The store check took every value an inner loop
carries as depending on the iteration as soon as the loop body used the iteration's index,
so every iteration writing y[0], y[1], y[2] (a race, and a wrong adjoint even in sequence)
passed.  Fixed: ``index_dependent`` follows what the while carries (its initial value and
what it passes on), and rejects the store.
"""
# expect: rejected
from adgen import Array, f64, prange


def f(x: Array[f64], y: Array[f64]) -> f64:
    s = 0.0
    for i in prange(len(x)):
        j = 0
        while j < 3:
            y[j] = x[i] * x[i]
            j += 1
        s += x[i]
    return s
