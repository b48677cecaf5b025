"""grad() and jvp() of a recursive function, inside the module.

The gradient ``rec_grad`` is ``rec``'s adjoint ``rec_b`` made to return the
adjoints (``retb`` fixed to 1); its own recursive call of ``rec_b`` (a joint
sweep: the adjoint of the result is known there) was renamed ``rec_grad``
too, so it called the changed function with ``rec_b``'s convention: the
result thrown away and an adjoint read uninitialised (a wrong value, different
from run to run), an internal error (IndexError in the activity analysis),
or C that did not compile ('tmp_1' undeclared).  The recursive calls now go
to a copy of ``rec_b`` as it is.  (Vector reverse mode refuses grad() of a
function whose adjoint keeps a tape, as ``rec``'s does.)
"""
# check modes: forward, vector-forward, reverse, hvp
import math

from adgen import grad, jvp


def rec(a: float, n: int) -> float:
    if n <= 0:
        return a
    b = a
    for t in range(n):
        b = math.sin(b)
    return rec(b, n - 1)


def rec2(a: float, n: int) -> float:
    if n <= 0:
        return a
    return rec2(math.sin(a), n - 1) * a


def f(y: float, n: int) -> float:
    return grad(rec)(y, n % 4) + grad(rec2)(y, n % 3)


def g(y: float, n: int) -> float:
    d = grad(rec2)(y, n % 3)
    p, pd = jvp(rec2, (y, n % 3), (d, None))
    return d * p + pd
