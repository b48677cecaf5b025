"""What the CUDA target needs of a module (DESIGN.md section 4).

On the CUDA target, arrays live on the device.  Each outermost ``prange`` of a
function is a kernel; the rest of the function runs on the host and does
scalar work only.  A function called inside a ``prange`` (directly or through
other calls) is a *device function*: compiled for both host and device
(``ADGEN_HD``), it may index arrays anywhere but may not hold a ``prange``.
This pass finds the device functions and rejects, with a located error, what
cannot run: an array indexed outside a ``prange`` by a host function, a
``prange`` in a device function, a device function called by host code too (its
split adjoint takes a thread's tape there), local arrays (``zeros``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..frontend.diagnostics import AdgenError
from ..ir.core import Call, For, Function, Load, Module, Op, Store, Zeros
from ..ir.walk import calls, calls_and_rules, reachable

HINT = "on the CUDA target arrays live on the device"


def device_functions(module: Module, derivatives: bool = True) -> set[str]:
    """The functions called, directly or not, inside a prange; and with ``derivatives``
    those whose derivative is taken there and that index arrays, directly or through calls
    (``grad(f)`` in a prange: ``f_grad`` computes it from copies of ``f`` and its callees;
    such an ``f`` cannot run on the host, so it runs on the device as a callee does; one of
    scalars only stays a host function too)."""
    taken: dict[str, str] = {}
    if derivatives and module.nested:
        indexing = {fn.name for fn in module.functions
                    if any(isinstance(op, (Load, Store)) for op in fn.walk())}
        taken = {spec.name: spec.callee for spec in module.nested.values()
                 if reachable(module, [spec.callee]) & indexing}
    return reachable(module, [op.callee for fn in module.functions for loop in _pranges(fn)
                              for op in loop.walk() if isinstance(op, Call)],
                     lambda fn: calls(fn) + ([taken[fn.name]] if fn.name in taken else []))


def with_custom_rules(module: Module, device: set[str], mode: str) -> set[str]:
    """``device`` and the custom derivatives of its functions that ``mode``'s code calls, with
    what they call: the derivatives of a device function call them on the device (in the
    primal nothing does; the tangent modes call the ``@custom_jvp`` tangents only, the others
    the ``@custom_vjp`` adjoints too)."""
    if mode == "primal":
        return set(device)
    if mode in ("forward", "vector-forward"):
        return reachable(module, device,
                         lambda fn: calls(fn) + ([fn.custom_tangent] if fn.custom_tangent else []))
    return reachable(module, device, calls_and_rules)


def check_cuda(module: Module, adjoint: bool = False, modes: Sequence[str] = ()) -> set[str]:
    """Raise ``AdgenError`` for what cannot run on the CUDA target; return the device
    functions.  ``adjoint``: an adjoint is asked for, whose binomial checkpointing keeps its
    snapshots in local arrays.  ``modes``: the custom rules the code of these modes calls on
    the device (``with_custom_rules``) are checked as device functions too."""
    for fn in module.functions:
        ext = fn.external
        if ext is not None:
            raise AdgenError(ext.loc, "external C functions are not supported on the CUDA target "
                                      f"yet ('{ext.function}' calls {ext.name} from "
                                      f"{ext.source}; use --target c, or write the function in "
                                      "Python)")
    device = device_functions(module)
    checked = set(device).union(*(with_custom_rules(module, device, m) for m in modes))
    for fn in module.functions:
        for op in fn.walk():
            if isinstance(op, Zeros):
                raise AdgenError(op.loc, "local arrays (zeros) are not supported on the CUDA "
                                         "target yet (pass the array as a parameter)")
        on_device = [o for o in fn.walk()] if fn.name in checked else \
            [o for loop in _pranges(fn) for o in loop.walk()]
        for op in on_device if adjoint else []:
            if isinstance(op, For) and op.directive.startswith("binomial"):
                raise AdgenError(op.loc, f"'# adgen: {op.directive}' on a loop that runs on the "
                                         "device: its adjoint keeps the snapshots in local "
                                         "arrays, which kernels cannot allocate (not supported "
                                         "on the CUDA target yet: use '# adgen: checkpoint', "
                                         "or the C target)")
        if fn.name in checked:
            for loop in _pranges(fn):
                raise AdgenError(loop.loc, f"a prange in '{fn.name}', which runs on the device "
                                           f"({_why_on_device(module, device, fn.name)}): kernels "
                                           "cannot launch kernels (use range)")
            continue
        inside: set[Op] = {o for loop in _pranges(fn) for o in loop.walk()}
        for op in fn.walk():
            if isinstance(op, (Load, Store)) and op not in inside:
                raise AdgenError(op.loc, f"'{fn.name}' indexes the array "
                                         f"'{op.operands[0].name}' outside a prange ({HINT}: "
                                         "index arrays inside a prange loop, or in a function "
                                         "called from one)")
            if isinstance(op, Call) and op not in inside and op.callee in checked:
                reason = _why_on_device(module, device, op.callee)
                raise AdgenError(op.loc, f"'{op.callee}' runs on the device ({reason}) and is "
                                         "called here on the host too (not supported on the CUDA "
                                         "target yet: call it inside a prange, or give the host "
                                         "a copy under another name)")
    return device


def _why_on_device(module: Module, device: set[str], name: str) -> str:
    """Why ``name`` runs on the device: called inside a prange, or by the derivatives of such
    a function (its custom rule, or what the rule calls)."""
    if name in device_functions(module, derivatives=False):
        return "it is called inside a prange"
    for spec in module.nested.values():
        if spec.name in device and name in reachable(module, [spec.callee]):
            return f"{spec.kind}({spec.callee}) is taken inside a prange"
    for fn in module.functions:
        rules = [g for g in (fn.custom_tangent, fn.custom_adjoint) if g]
        if fn.name in device and rules and name in reachable(module, rules, calls_and_rules):
            return f"the derivatives of '{fn.name}', which is called inside a prange, call it"
    raise AssertionError(f"{name} is not reached from a device function")


def _pranges(fn: Function) -> list[For]:
    """The outermost prange loops of ``fn``."""
    out: list[For] = []

    def visit(ops: list[Op]) -> None:
        for op in ops:
            if isinstance(op, For) and op.parallel:
                out.append(op)
                continue
            for r in op.regions:
                visit(r.ops)

    visit(fn.body.ops)
    return out
