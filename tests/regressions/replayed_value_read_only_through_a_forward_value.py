"""An inactive carried value that the adjoint loop carries itself, read by the
reverse body only through a forward value computed from it.

Found by the random programs: ``adgen prog.py --mode reverse`` failed
verification with "operand v1b is not defined before its use" in
``g0_grad_p0_bwd``.  The adjoint loop of ``g0_grad_p0`` (the gradient of g0,
whose own adjoint loop carries ``v1b`` unchanged) runs in the forward order and
first got an extra carried slot for ``v1b`` as it was built; the reverse body
read only ``0.4 * v1b``, a forward value resolved later (record.py), so the
sweep's dead-code elimination removed the slot first.  Slots are now added by
record.py when a use resolves to them.
"""
import math

from adgen import Array, f64, grad


def g0(p0: float, p1: f64) -> float:
    v1 = 0.0
    for i in range(2):
        v0 = 0.8 * p1
        p1, v0 = math.cos(v0), p1
        v1 -= 0.4 * math.log2(1.0 + p0 * p0)
    return v1 + 0.5 * p0


def f(x: Array[f64]) -> float:
    v3 = math.tanh(grad(g0, argnums=0)(0.3 * x[1], 1.0))
    return v3 + 0.5 * x[0]
