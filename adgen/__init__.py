"""adgen: ahead-of-time automatic differentiation of a typed Python subset to C.

    import adgen
    m = adgen.load("model.py", modes=("forward", "reverse"))
    y, ydot = m.f.jvp((x, n), (xdot, None))
    y, (xbar, _) = m.f.vjp((x, n), 1.0)
    (hv, _) = m.f.hvp((x, n), (v, None))          # with "hvp" among the modes
    jac = adgen.jacobian(m.f, (x, n))             # with "vector-forward"/"vector-reverse"

``adgen.api.transpile`` gives the generated text without building it.  The names a module imports to run unchanged in CPython (``Array``, ``f64``,
``zeros``...) are re-exported here from ``adgen.lang``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .lang import (  # noqa: E402
    Array, custom_jvp, custom_vjp, external, f32, f64, grad, i32, i64, jvp, prange, zeros,
)

__all__ = ["AdgenError", "AdgenWarning", "Array", "LoadError", "UsageError", "check", "custom_jvp", "custom_vjp",
           "external", "f32", "f64", "grad",
           "hessian", "i32", "i64", "jacobian", "jvp", "load", "prange", "zeros", "__version__"]


def __getattr__(name: str):  # lazy: keep `from adgen import Array` cheap for CPython runs
    if name in ("load", "check", "hessian", "AdgenError", "AdgenWarning", "LoadError",
                "UsageError"):
        from . import api
        return getattr(api, name)
    if name == "jacobian":
        from .jacobians import jacobian
        return jacobian
    raise AttributeError(name)
