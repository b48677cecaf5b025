"""The gradient of a function that takes the gradient of a function with a taped adjoint.

Found by the random programs (tests/programs.py, nested derivatives).  ``e``'s adjoint keeps
a tape (its loop), so ``e_grad`` gets a custom adjoint, ``e_grad_vjp`` (a Hessian-vector
product of ``e``).  ``grad(g)`` built ``g``'s adjoint from the functions ``g`` calls, which
left out ``e_grad_vjp`` (called by no function, only named as a custom adjoint): building
``g_grad_p`` failed with ``KeyError: 'e_grad_vjp'``.  With that fixed, the hvp file lacked
``g_grad_p_vjp_g_b_d_e_grad_d`` (a primal helper named like a tangent, see
function_named_like_a_tangent.py): ``KeyError`` again.  The hvp of ``f`` is a fourth
derivative of ``e``.  Not in vector reverse mode, which refuses ``grad(e)`` of such an ``e``.
"""
# check modes: forward, vector-forward, reverse, hvp
import math

from adgen import f64, grad


def e(x: f64, n: int) -> f64:
    s = x
    for i in range(n):
        s = s * math.sin(s) + x
    return s


def g(p: f64, q: f64) -> f64:
    return grad(e)(q, 3) * p


def f(a: f64, b: f64) -> f64:
    return grad(g)(a, b) + a
