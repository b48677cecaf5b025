"""A function whose name ends in ``_d`` was left out of the tangent file.

Found while extending the random programs (tests/programs.py) to nested derivatives, whose
functions are named ``g_grad_p_vjp_g_b_d_e_grad_d`` and so on; a user function shows it as
well.  ``f_d`` calls ``cnt_d`` as a primal helper (its argument is an int, so it has no
tangent), but the forward transform gathered the helpers its tangents call skipping every
callee named with the tangent suffix, taking them for tangents made in the same pass:
``cnt_d`` was not written, and emitting ``f_d`` failed with ``KeyError: 'cnt_d'``.  Fixed:
a callee the module defines is a helper, whatever its name.
"""


def cnt_d(n: int) -> int:
    return n + 1


def f(x: float, n: int) -> float:
    return x * float(cnt_d(n))
