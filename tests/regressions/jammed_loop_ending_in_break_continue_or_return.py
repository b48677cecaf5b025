"""Loops around a reduction whose body ends in break, continue or return.

transforms/jam.py took the last op of the outer loop's body for its yield
and asserted it was one: every mode of such a module stopped with an internal
error (exit 3), the primal too.  A body that ends in break or return runs
once at most; one that ends in continue is a plain loop (jammed now).
"""
from adgen import Array, f64


def ends_in_break(W: Array[f64, 2], x: Array[f64]) -> f64:
    tot = 0.0
    for k in range(W.shape[0]):
        z = 0.0
        for i in range(W.shape[1]):
            z += W[k, i] * x[i]
        tot += z * z
        break
    return tot


def ends_in_continue(W: Array[f64, 2], x: Array[f64]) -> f64:
    tot = 0.0
    for k in range(W.shape[0]):
        z = 0.0
        for i in range(W.shape[1]):
            z += W[k, i] * x[i]
        tot += z * z
        continue
    return tot


def ends_in_return(W: Array[f64, 2], x: Array[f64]) -> f64:
    for k in range(W.shape[0]):
        z = 0.0
        for i in range(W.shape[1]):
            z += W[k, i] * x[i]
        return z
    return 0.0
