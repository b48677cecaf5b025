"""C signatures of IR functions: the one place that decides parameter order.

A function's C parameters are its IR parameters in order; an array parameter
is followed by its tangent (if any) and then by its extents
``NAME_shape0``...; results are the C return value (a single scalar result
of a function that does not return a tuple) or out-pointers (``ret0``,
``retd``...).  The scalar adjoints of an adjoint's parameters are pointers
right after their parameter (``double *xb``), incremented.  The split halves
of adjoints (``g_fwd``, ``g_bwd``) take the caller's tape first.  Call sites
use the same list to place arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Function, Module
from ..ir.types import ArrayType, ScalarType, Type, VecType
from .names import c_safe


@dataclass(frozen=True)
class CParam:
    name: str
    ctype: str
    #: ("value", body arg index) | ("shape", body arg index, axis) | ("result", result index)
    #: | ("tape",)
    source: tuple[str, ...]


@dataclass(frozen=True)
class CSignature:
    name: str
    return_ctype: str  # "void" or a scalar C type
    #: which IR result the C return value is, if any
    c_return: int | None
    params: list[CParam]
    is_static: bool
    #: CUDA: "ADGEN_HD inline" for a function that runs on the device too (inline: the host
    #: pass of nvcc sees no use of it when only kernels call it)
    qualifier: str = ""

    def prototype(self) -> str:
        params = ", ".join(f"{p.ctype}{'' if p.ctype.endswith('*') else ' '}{p.name}"
                           for p in self.params) or "void"
        static = "static " if self.is_static else ""
        qualifier = self.qualifier + " " if self.qualifier else ""
        return f"{static}{qualifier}{self.return_ctype} {self.name}({params})"


def scalar_ctype(t: Type) -> str:
    assert isinstance(t, ScalarType), t
    return t.c_name


def root_param(fn: Function, name: str) -> str:
    """The primal parameter a tangent or an adjoint (or a tangent of an adjoint) belongs to:
    ``xd``, ``xb``, ``xbd`` -> ``x``; its extents are the ones they share."""
    while name in fn.tangent_of or name in fn.adjoint_of:
        name = fn.tangent_of.get(name) or fn.adjoint_of[name]
    return name


def signature(fn: Function, written: set[int], functions: frozenset[str] = frozenset()) -> CSignature:
    """``written``: indices of array parameters the function may write; ``functions``: the names
    of the module's functions (a parameter must not hide one)."""
    params: list[CParam] = []
    primal_index = {name: i for i, name in enumerate(fn.param_names)}
    pending_shapes: list[CParam] = []
    taken: set[str] = set()
    if fn.tape is not None:  # the tape's name, a parameter's or a local's: no parameter's
        taken.add("tape")
    if fn.tape == "param":
        params.append(CParam("tape", "adgen_tape *", ("tape",)))
    cnames = [c_safe(n, taken, functions) for n in fn.param_names]
    result_index = {r.name: j for j, r in enumerate(fn.results)}
    increments: dict[str, list[str]] = {}
    deferred: list[str] = []
    for n in fn.increments:  # placed after what it is the adjoint (or tangent) of
        increments.setdefault(fn.adjoint_of.get(n) or fn.tangent_of[n], []).append(n)
    def root(name: str) -> str:
        return root_param(fn, name)

    for i, (v, name) in enumerate(zip(fn.params, fn.param_names, strict=True)):
        t = v.type
        cname = cnames[i]
        if isinstance(t, ArrayType):
            primal = primal_index.get(root(name), i)
            const = "" if primal in written or i in written else "const "
            params.append(CParam(cname, f"{const}{t.elem.c_name} *", ("value", i)))
            if primal == i:
                pending_shapes = [CParam(c_safe(f"{cname}_shape{k}", taken, functions), "int64_t",
                                         ("shape", i, k)) for k in range(t.ndim)]
            # the extents follow the array and the tangents / adjoints right after it
            nxt = fn.param_names[i + 1] if i + 1 < len(fn.params) else None
            if nxt is None or root(nxt) != root(name):
                params.extend(pending_shapes)
                pending_shapes = []
        elif isinstance(t, VecType):
            params.append(CParam(cname, f"const {t.elem.c_name} *", ("value", i)))
        else:
            params.append(CParam(cname, scalar_ctype(t), ("value", i)))
        pending = deferred + increments.get(name, [])
        deferred = []
        nxt = fn.param_names[i + 1] if i + 1 < len(fn.params) else None
        if nxt is not None and fn.tangent_of.get(nxt) == name:
            deferred, pending = pending, []  # after the tangent: f_b_d(x, xd, xb, xbd, ...)
        while pending:  # an incremented adjoint, then its own incremented tangent (hvp)
            n = pending.pop(0)
            r = fn.results[result_index[n]]
            elem = r.type.elem if isinstance(r.type, VecType) else r.type
            assert isinstance(elem, ScalarType)
            params.append(CParam(c_safe(n, taken, functions), f"{elem.c_name} *",
                                 ("result", result_index[n])))
            pending[:0] = increments.get(n, [])
    placed = {p.source[1] for p in params if p.source[0] == "result"}
    c_return: int | None = None
    return_ctype = "void"
    if fn.results and not fn.returns_tuple and isinstance(fn.results[0].type, ScalarType) \
            and fn.results[0].name not in fn.increments:
        c_return = 0
        return_ctype = scalar_ctype(fn.results[0].type)
    for j, r in enumerate(fn.results):
        if j == c_return or j in placed:
            continue
        elem = r.type.elem if isinstance(r.type, VecType) else r.type
        assert isinstance(elem, ScalarType)
        params.append(CParam(c_safe(r.name, taken, functions), f"{elem.c_name} *", ("result", j)))
    return CSignature(fn.name, return_ctype, c_return, params, fn.is_static)


def signatures(module: Module) -> dict[str, CSignature]:
    from ..analysis.activity import written_params
    names = frozenset(fn.name for fn in module.functions)
    return {fn.name: signature(fn, written_params(fn, module), names) for fn in module.functions}
