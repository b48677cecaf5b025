"""GradBench `particle`: the control w that makes a charged particle hit the origin.

A particle starts at (0, 8) with velocity (0.75, 0) and is pushed by the field
of two charges at (10, 10 - w) and (10, 0): its acceleration is minus the
gradient of the potential p(x; w), taken inside the time loop (naive Euler
steps of 0.1 until the particle would cross the x axis, then linear
interpolation to the crossing).  The control w minimizes the square of the
crossing's x coordinate by gradient descent, whose gradient is a derivative of
a loop that takes derivatives: nested AD.  The four functions `rr`, `rf`,
`fr`, `ff` say which mode the outer (argmin) and the inner (the force)
derivatives use: `r` is `grad(...)` (reverse), `f` is `jvp(...)` (forward,
one per coordinate).  The solver is GradBench's (see saddle.py).
"""

import math

from adgen import f64, grad, jvp

TOLERANCE = 1e-5
ETA = 1e-5
DOUBLE_AFTER = 10
DT = 0.1


def potential(x0: f64, x1: f64, w: f64) -> f64:
    """p(x; w): the sum of 1 / distance to each charge."""
    d_top = math.sqrt((x0 - 10.0) ** 2 + (x1 - (10.0 - w)) ** 2)
    d_bottom = math.sqrt((x0 - 10.0) ** 2 + x1 ** 2)
    return 1.0 / d_top + 1.0 / d_bottom


def force(x0: f64, x1: f64, w: f64, forward: int) -> tuple[f64, f64]:
    """The gradient of the potential with respect to the position."""
    if forward == 1:
        _, g0 = jvp(potential, (x0, x1, w), (1.0, 0.0, 0.0))
        _, g1 = jvp(potential, (x0, x1, w), (0.0, 1.0, 0.0))
        return g0, g1
    return grad(potential, argnums=(0, 1))(x0, x1, w)


def naive_euler(w: f64, forward: int) -> f64:
    """The square of the x coordinate where the particle crosses the x axis."""
    x0 = 0.0
    x1 = 8.0
    v0 = 0.75
    v1 = 0.0
    while True:
        g0, g1 = force(x0, x1, w, forward)
        n0 = x0 + DT * v0
        n1 = x1 + DT * v1
        if n1 <= 0.0:
            break
        x0 = n0
        x1 = n1
        v0 = v0 - DT * g0
        v1 = v1 - DT * g1
    t_f = -x1 / v1
    hit = x0 + t_f * v0
    return hit * hit


def outer_gradient(w: f64, outer: int, inner: int) -> f64:
    """d naive_euler / dw: a derivative through a loop of derivatives."""
    if outer == 1:
        _, g = jvp(naive_euler, (w, inner), (1.0, None))
        return g
    return grad(naive_euler)(w, inner)


def particle(w0: f64, outer: int, inner: int) -> f64:
    """The argmin over w of naive_euler, by gradient descent from w0."""
    w = w0
    fw = naive_euler(w, inner)
    g = outer_gradient(w, outer, inner)
    eta = ETA
    i = 0
    while abs(g) > TOLERANCE:
        if i == DOUBLE_AFTER:
            eta = 2.0 * eta
            i = 0
        else:
            n = w - eta * g
            if abs(w - n) <= TOLERANCE:
                break
            fn = naive_euler(n, inner)
            if fn < fw:
                w = n
                fw = fn
                g = outer_gradient(w, outer, inner)
                i += 1
            else:
                eta = eta / 2.0
                i = 0
    return w


def particle_rr(w0: f64) -> f64:
    return particle(w0, 0, 0)


def particle_rf(w0: f64) -> f64:
    return particle(w0, 0, 1)


def particle_fr(w0: f64) -> f64:
    return particle(w0, 1, 0)


def particle_ff(w0: f64) -> f64:
    return particle(w0, 1, 1)
