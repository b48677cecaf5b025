"""Activity analysis, interprocedural: which values need derivative code.

A value is *varied* when it depends on an independent input, and *useful*
when a dependent output depends on it; it is *active* when both hold, and
only active values get tangents (or, later, adjoints).  Integers, booleans
and the results of piecewise-constant primitives (comparisons, floor, //)
are never active.

Arrays are tracked as a whole: an array is varied once a varied value is
stored into it, useful once a useful value is loaded from it.  Summaries per
function (which parameters are varied at some call site, which results are
used) are solved to a fixed point over the call graph, so recursion and
calls in any order work; the analysis is context-insensitive (one derivative
per function, for the union of the ways it is called).

The same analysis runs on adjoint IR when the tangent transform is applied to
it (``--mode hvp``): there values also flow through the tape, from a ``push``
in a forward sweep to the matching ``pop`` in a reverse sweep, possibly in
another function (``g_fwd`` pushes, ``g_bwd`` pops).  The tape is tracked as
one array-like whole for the module (:class:`TapeActivity`): varied once a
varied float is pushed, useful once a popped float is useful.  Every float
push and pop then carries a tangent or none does, which keeps them paired.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import (
    Break, Call, Cast, Continue, For, Function, If, Load, Module, Op, Pop, Prim, Push, Return,
    Store, Value, While, Yield,
)
from ..ir.prims import PRIMS
from ..ir.types import ArrayType, ScalarType
from ..ir.walk import structure


def differentiable(v: Value) -> bool:
    t = v.type
    return (isinstance(t, ScalarType) and t.is_float) or \
        (isinstance(t, ArrayType) and t.elem.is_float)


@dataclass
class Summary:
    varied_params: set[int] = field(default_factory=set)
    varied_results: set[int] = field(default_factory=set)
    useful_results: set[int] = field(default_factory=set)
    #: array parameters whose contents at exit reach a dependent
    useful_out: set[int] = field(default_factory=set)
    #: parameters whose value on entry reaches a dependent
    useful_in: set[int] = field(default_factory=set)
    #: array parameters the function stores varied values into (so the caller's array is
    #: varied after the call, even if it was not before)
    varied_out: set[int] = field(default_factory=set)

    def snapshot(self) -> tuple[frozenset[int], ...]:
        return (frozenset(self.varied_params), frozenset(self.varied_results),
                frozenset(self.useful_results), frozenset(self.useful_out),
                frozenset(self.useful_in), frozenset(self.varied_out))


@dataclass
class TapeActivity:
    """The tape of an adjoint module as one whole: varied once a varied float is pushed, useful
    once a popped float is useful."""

    varied: bool = False
    useful: bool = False

    @property
    def active(self) -> bool:
        return self.varied and self.useful


@dataclass
class Request:
    """A function the user asked to differentiate: independents and dependents."""

    wrt: set[int]  # parameter indices
    of_results: set[int]
    of_arrays: set[int]  # parameter indices of written arrays


@dataclass
class FunctionActivity:
    varied: set[Value] = field(default_factory=set)
    useful: set[Value] = field(default_factory=set)

    def active(self, v: Value) -> bool:
        return v in self.varied and v in self.useful


@dataclass
class ModuleActivity:
    summaries: dict[str, Summary]
    functions: dict[str, FunctionActivity]
    requests: dict[str, Request]
    tape: TapeActivity = field(default_factory=TapeActivity)
    #: declarations of C functions given with ``@external``
    externals: frozenset[str] = frozenset()

    def active_params(self, fn: Function) -> list[int]:
        req = self.requests.get(fn.name)
        act = self.functions[fn.name]
        out = []
        for i, p in enumerate(fn.params):
            if not differentiable(p):
                continue
            if (req is not None and (i in req.wrt or i in req.of_arrays)) or act.active(p):
                out.append(i)
        return out

    def active_results(self, fn: Function) -> list[int]:
        req = self.requests.get(fn.name)
        s = self.summaries[fn.name]
        out = []
        for j, r in enumerate(fn.results):
            if not (isinstance(r.type, ScalarType) and r.type.is_float):
                continue
            if (req is not None and j in req.of_results) or \
                    (j in s.varied_results and j in s.useful_results):
                out.append(j)
        return out

    def needs_derivative(self, name: str) -> bool:
        s = self.summaries[name]
        if name in self.externals:  # it writes no array: only its results carry derivatives
            return bool(s.varied_params and s.useful_results)
        return name in self.requests or bool(s.varied_params and
                                              (s.useful_results or s.useful_out))


class _Slots:
    """The values of one if/loop slot that share activity, and the values feeding it."""

    def __init__(self, fn: Function) -> None:
        st = structure(fn)
        self.groups: list[tuple[list[Value], list[Value]]] = []
        feeders: dict[Op, list[Op]] = {}
        for op in fn.walk():
            if isinstance(op, Yield):
                r = st.region_of_op[op]
                parent = st.parent_of_region.get(r)
                if parent is not None:
                    feeders.setdefault(parent, []).append(op)
            elif isinstance(op, (Break, Continue)):
                loop = st.loop_of.get(op)
                if loop is not None:
                    feeders.setdefault(loop, []).append(op)
        for op in fn.walk():
            if isinstance(op, If):
                for j, res in enumerate(op.results):
                    ins = [t.operands[j] for t in feeders.get(op, [])]
                    self.groups.append(([res], ins))
            elif isinstance(op, For):
                for j, res in enumerate(op.results):
                    ins = [op.inits[j]] + [t.operands[j] for t in feeders.get(op, [])]
                    self.groups.append(([res, op.body.args[j + 1]], ins))
            elif isinstance(op, While):
                for j, res in enumerate(op.results):
                    ins = [op.inits[j]] + [t.operands[j] for t in feeders.get(op, [])]
                    self.groups.append(([res, op.regions[0].args[j], op.regions[1].args[j]], ins))


def _operands_with_derivative(op: Prim) -> list[Value]:
    if PRIMS[op.prim].piecewise_constant:
        return []
    ops = op.operands[1:] if op.prim == "select" else op.operands
    return [v for v in ops if differentiable(v)]


class _FunctionSolver:
    def __init__(self, fn: Function, summaries: dict[str, Summary], module: Module,
                 tape: TapeActivity) -> None:
        self.fn = fn
        self.summaries = summaries
        self.tape = tape
        self.module = module
        self.ops = list(fn.walk())
        self.slots = _Slots(fn)
        self.act = FunctionActivity()

    def varied(self) -> None:
        s = self.summaries[self.fn.name]
        V = self.act.varied
        for i in s.varied_params:
            V.add(self.fn.params[i])
        stored: set[Value] = set()  # arrays that receive varied values here
        changed = True
        while changed:
            before = len(V)
            for op in self.ops:
                if isinstance(op, Prim):
                    if differentiable(op.result) and any(v in V for v in _operands_with_derivative(op)):
                        V.add(op.result)
                elif isinstance(op, Cast):
                    if differentiable(op.result) and op.operands[0] in V:
                        V.add(op.result)
                elif isinstance(op, Load):
                    if differentiable(op.result) and op.operands[0] in V:
                        V.add(op.result)
                elif isinstance(op, Store):
                    if op.operands[-1] in V:
                        V.add(op.operands[0])
                        stored.add(op.operands[0])
                elif isinstance(op, Call):
                    callee = self.summaries[op.callee]
                    cfn = self.module.function(op.callee)
                    for p in callee.varied_out:
                        V.add(op.operands[p])
                        stored.add(op.operands[p])
                    if any(a in V for a in op.operands):
                        for p, a in enumerate(op.operands):
                            if a in V:
                                callee.varied_params.add(p)
                        for j in callee.varied_results:
                            V.add(op.results[j])
                        for p, a in enumerate(op.operands):
                            if isinstance(a.type, ArrayType) and differentiable(a) and \
                                    p in callee.varied_params and _writes(cfn, p, self.module):
                                V.add(a)
                elif isinstance(op, Return):
                    for j, v in enumerate(op.operands):
                        if v in V:
                            s.varied_results.add(j)
                elif isinstance(op, Push):
                    if op.operands[0] in V:
                        self.tape.varied = True
                elif isinstance(op, Pop):
                    if self.tape.varied and differentiable(op.result):
                        V.add(op.result)
            for members, ins in self.slots.groups:
                if differentiable(members[0]) and any(v in V for v in ins + members):
                    V.update(members)
            changed = len(V) != before
        s.varied_out |= {i for i, p in enumerate(self.fn.params) if p in stored}

    def useful(self) -> None:
        s = self.summaries[self.fn.name]
        U = self.act.useful
        for i in s.useful_out:
            U.add(self.fn.params[i])
        changed = True
        while changed:
            before = len(U)
            for op in reversed(self.ops):
                if isinstance(op, Return):
                    for j, v in enumerate(op.operands):
                        if j in s.useful_results and differentiable(v):
                            U.add(v)
                elif isinstance(op, Prim):
                    if op.result in U:
                        U.update(_operands_with_derivative(op))
                elif isinstance(op, Cast):
                    if op.result in U and differentiable(op.operands[0]):
                        U.add(op.operands[0])
                elif isinstance(op, Load):
                    if op.result in U:
                        U.add(op.operands[0])
                elif isinstance(op, Store):
                    if op.operands[0] in U and differentiable(op.operands[-1]):
                        U.add(op.operands[-1])
                elif isinstance(op, Call):
                    callee = self.summaries[op.callee]
                    for j, r in enumerate(op.results):
                        if r in U:
                            callee.useful_results.add(j)
                    for p, a in enumerate(op.operands):
                        if isinstance(a.type, ArrayType) and a in U:
                            callee.useful_out.add(p)
                    for p in callee.useful_in:
                        if differentiable(op.operands[p]):
                            U.add(op.operands[p])
                elif isinstance(op, Pop):
                    if op.result in U:
                        self.tape.useful = True
                elif isinstance(op, Push):
                    if self.tape.useful and differentiable(op.operands[0]):
                        U.add(op.operands[0])
            for members, ins in self.slots.groups:
                if any(m in U for m in members):
                    U.update(members)
                    U.update(v for v in ins if differentiable(v))
            changed = len(U) != before
        for i, p in enumerate(self.fn.params):
            if p in U:
                s.useful_in.add(i)


def _writes(fn: Function, param: int, module: Module, seen: set[tuple[str, int]] | None = None) -> bool:
    """Whether ``fn`` may write the array parameter ``param`` (through calls too)."""
    seen = seen if seen is not None else set()
    key = (fn.name, param)
    if key in seen:
        return False
    seen.add(key)
    if fn.external is not None:  # a C function given with @external: a C adjoint increments
        return fn.mode == "reverse" and fn.param_names[param] in fn.tangent_of  # its adjoints
    p = fn.params[param]
    for op in fn.walk():
        if isinstance(op, Store) and op.operands[0] is p:
            return True
        if isinstance(op, Call):
            for k, a in enumerate(op.operands):
                if a is p and _writes(module.function(op.callee), k, module, seen):
                    return True
    return False


def written_params(fn: Function, module: Module) -> set[int]:
    return {i for i, p in enumerate(fn.params)
            if isinstance(p.type, ArrayType) and _writes(fn, i, module)}


def analyze(module: Module, requests: dict[str, Request]) -> ModuleActivity:
    summaries = {fn.name: Summary() for fn in module.functions}
    for name, req in requests.items():
        s = summaries[name]
        s.varied_params |= req.wrt
        s.useful_results |= req.of_results
        s.useful_out |= req.of_arrays
    functions: dict[str, FunctionActivity] = {}
    tape = TapeActivity()
    for _ in range(100):
        before = ({n: s.snapshot() for n, s in summaries.items()}, tape.varied, tape.useful)
        for fn in module.functions:
            if fn.external is not None:
                functions[fn.name] = _external_activity(fn, summaries[fn.name])
                continue
            solver = _FunctionSolver(fn, summaries, module, tape)
            solver.varied()
            solver.useful()
            functions[fn.name] = solver.act
        if before == ({n: s.snapshot() for n, s in summaries.items()}, tape.varied, tape.useful):
            break
    externals = frozenset(fn.name for fn in module.functions if fn.external is not None)
    return ModuleActivity(summaries, functions, requests, tape, externals)


def _external_activity(fn: Function, s: Summary) -> FunctionActivity:
    """A C function given with ``@external`` is a black box: each float result depends on each
    float parameter.  Once it needs a derivative, every float parameter and result is active,
    so that the derivative has the one signature the user wrote (``f_d``/``f_b`` with every
    float input independent and every float result dependent)."""
    floats = {i for i, p in enumerate(fn.params) if differentiable(p)}
    float_results = {j for j, r in enumerate(fn.results)
                     if isinstance(r.type, ScalarType) and r.type.is_float}
    if s.varied_params & floats:
        s.varied_results |= float_results
    if s.useful_results & float_results:
        s.useful_in |= floats
    act = FunctionActivity()
    if s.varied_params and s.useful_results:
        s.varied_params |= floats
        s.useful_results |= float_results
        s.varied_results |= float_results
        s.useful_in |= floats
        act.varied = {fn.params[i] for i in floats}
        act.useful = set(act.varied)
    return act
