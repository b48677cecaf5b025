"""GradBench `saddle`: the saddle point of f(a, b) = |a|^2 - |b|^2 by nested gradient descent.

The argmin over a of (the max over b of f(a, b)) is taken by gradient descent,
and each step's gradient is that of a function that itself runs a gradient
descent (the inner argmax over b) with gradients of f: nested derivatives.
Then, with a known, the argmax over b once more.  The four functions `rr`,
`rf`, `fr`, `ff` say which mode the outer and the inner derivatives use: `r`
is `grad(...)` (reverse), `f` is one `jvp(...)` per coordinate (forward).
The solver is GradBench's: steps of eta along the gradient, eta doubled after
10 successful steps and halved after a failed one, stopping when the gradient
or the step falls to 1e-5.  Every point starts at `start`.
"""

import math

from adgen import f64, grad, jvp

TOLERANCE = 1e-5
ETA = 1e-5
DOUBLE_AFTER = 10


def cost(a0: f64, a1: f64, b0: f64, b1: f64) -> f64:
    """f(a, b) = (a0^2 + a1^2) - (b0^2 + b1^2)."""
    return (a0 * a0 + a1 * a1) - (b0 * b0 + b1 * b1)


def neg_cost(a0: f64, a1: f64, b0: f64, b1: f64) -> f64:
    """-f: the argmax over b is the argmin of -f."""
    return -cost(a0, a1, b0, b1)


def inner_gradient(a0: f64, a1: f64, b0: f64, b1: f64, forward: int) -> tuple[f64, f64]:
    """The gradient of -f with respect to b."""
    if forward == 1:
        _, g0 = jvp(neg_cost, (a0, a1, b0, b1), (0.0, 0.0, 1.0, 0.0))
        _, g1 = jvp(neg_cost, (a0, a1, b0, b1), (0.0, 0.0, 0.0, 1.0))
        return g0, g1
    return grad(neg_cost, argnums=(2, 3))(a0, a1, b0, b1)


def argmax_b(a0: f64, a1: f64, s0: f64, s1: f64, forward: int) -> tuple[f64, f64]:
    """The b that maximizes f(a, b), by gradient descent on -f from s."""
    x0 = s0
    x1 = s1
    fx = neg_cost(a0, a1, x0, x1)
    g0, g1 = inner_gradient(a0, a1, x0, x1, forward)
    eta = ETA
    i = 0
    while math.sqrt(g0 * g0 + g1 * g1) > TOLERANCE:
        if i == DOUBLE_AFTER:
            eta = 2.0 * eta
            i = 0
        else:
            n0 = x0 - eta * g0
            n1 = x1 - eta * g1
            if math.sqrt((x0 - n0) ** 2 + (x1 - n1) ** 2) <= TOLERANCE:
                break
            fn = neg_cost(a0, a1, n0, n1)
            if fn < fx:
                x0 = n0
                x1 = n1
                fx = fn
                g0, g1 = inner_gradient(a0, a1, x0, x1, forward)
                i += 1
            else:
                eta = eta / 2.0
                i = 0
    return x0, x1


def max_cost(a0: f64, a1: f64, s0: f64, s1: f64, forward: int) -> f64:
    """max over b of f(a, b): the outer objective, whose gradient runs the inner descent."""
    b0, b1 = argmax_b(a0, a1, s0, s1, forward)
    return cost(a0, a1, b0, b1)


def outer_gradient(a0: f64, a1: f64, s0: f64, s1: f64, outer: int,
                   inner: int) -> tuple[f64, f64]:
    """The gradient of max_cost with respect to a: a derivative of a derivative."""
    if outer == 1:
        _, g0 = jvp(max_cost, (a0, a1, s0, s1, inner), (1.0, 0.0, 0.0, 0.0, None))
        _, g1 = jvp(max_cost, (a0, a1, s0, s1, inner), (0.0, 1.0, 0.0, 0.0, None))
        return g0, g1
    return grad(max_cost, argnums=(0, 1))(a0, a1, s0, s1, inner)


def argmin_a(s0: f64, s1: f64, outer: int, inner: int) -> tuple[f64, f64]:
    """The a that minimizes max_cost, by the same gradient descent from s (written out again:
    the subset has no function arguments, and one solver for both objectives would take the
    gradient of max_cost inside max_cost itself)."""
    x0 = s0
    x1 = s1
    fx = max_cost(x0, x1, s0, s1, inner)
    g0, g1 = outer_gradient(x0, x1, s0, s1, outer, inner)
    eta = ETA
    i = 0
    while math.sqrt(g0 * g0 + g1 * g1) > TOLERANCE:
        if i == DOUBLE_AFTER:
            eta = 2.0 * eta
            i = 0
        else:
            n0 = x0 - eta * g0
            n1 = x1 - eta * g1
            if math.sqrt((x0 - n0) ** 2 + (x1 - n1) ** 2) <= TOLERANCE:
                break
            fn = max_cost(n0, n1, s0, s1, inner)
            if fn < fx:
                x0 = n0
                x1 = n1
                fx = fn
                g0, g1 = outer_gradient(x0, x1, s0, s1, outer, inner)
                i += 1
            else:
                eta = eta / 2.0
                i = 0
    return x0, x1


def saddle(s0: f64, s1: f64, outer: int, inner: int) -> tuple[f64, f64, f64, f64]:
    """The saddle point (a, b): the argmin a, then the argmax b for it (in the outer mode)."""
    a0, a1 = argmin_a(s0, s1, outer, inner)
    b0, b1 = argmax_b(a0, a1, s0, s1, outer)
    return a0, a1, b0, b1


def saddle_rr(s0: f64, s1: f64) -> tuple[f64, f64, f64, f64]:
    return saddle(s0, s1, 0, 0)


def saddle_rf(s0: f64, s1: f64) -> tuple[f64, f64, f64, f64]:
    return saddle(s0, s1, 0, 1)


def saddle_fr(s0: f64, s1: f64) -> tuple[f64, f64, f64, f64]:
    return saddle(s0, s1, 1, 0)


def saddle_ff(s0: f64, s1: f64) -> tuple[f64, f64, f64, f64]:
    return saddle(s0, s1, 1, 1)
