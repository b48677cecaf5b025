"""Tangent mode: ``f`` -> ``f_d`` (scalar) or ``f_dv`` (many directions).

Each op is copied and, when its result is active, followed by the ops that
compute its tangent (from the rule table).  Structured ops get one extra
result / carried value / block argument per active slot, so the tangent of
a loop-carried variable is itself loop-carried; terminators pass tangents
along with values.  Only active values (activity analysis) get tangents.

In vector mode a tangent is a ``VecType`` (one entry per direction) and an
array's tangent has a trailing direction axis; the ops are the same, which
is why the rules never look at the mode.

A ``TangentFunction`` may also carry several scalar tangents per value, one
per direction known at compile time (``directions``): each op is copied once
and followed by its tangent in every direction whose operands have one, so
that a direction only costs the ops it reaches.  The adjoint of a prange
marked ``# adgen: forward-in-reverse`` (``mixed.py``) uses this on the loop
body, one direction per input of the iteration.

Applied to adjoint IR (``f_b``, with its split halves ``g_fwd``/``g_bwd``),
the same transform gives the tangent of the adjoint, ``f_b_d``: a
Hessian-vector product (``--mode hvp``).  The tape then carries tangents too:
when the tape is active every float ``push v`` is followed by ``push vd``,
and every float ``pop`` is preceded by the pop of its tangent (last in,
first out).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

from ..analysis.activity import ModuleActivity, written_params
from ..ir.builder import Builder
from ..ir.core import (
    Assert, Break, Call, Cast, Condition, Const, Continue, Dim, For, Function, If, Load, Module,
    Op, Pop, Prim, Push, Region, Result, Return, Store, Value, While, Yield, Zeros,
)
from ..ir.types import I64, ArrayType, ScalarType, Type, VecType
from ..ir.walk import defined_inside
from . import rules

SUFFIX = {False: "_d", True: "_dv"}


def derivative_name(fn: Function, vector: bool) -> str:
    """``f`` -> ``f_d``; a function of adjoint IR keeps its own name: ``f_b`` -> ``f_b_d``
    (``f_b_dv`` in vector mode), ``g_fwd`` -> ``g_fwd_d``."""
    if fn.external is not None and fn.mode == "primal":  # the C tangent the user gives
        return fn.external.tangent
    base = fn.primal if fn.mode == "primal" else fn.name
    return base + SUFFIX[vector]


def derived_mode(fn: Function, vector: bool) -> str:
    if fn.mode == "primal":
        return "vector-forward" if vector else "forward"
    assert fn.mode == "reverse", "only the tangent of a scalar adjoint is built"
    return "vector-hvp" if vector else "hvp"


def tangent_type(t: Type, vector: bool) -> Type:
    if isinstance(t, ArrayType):
        return ArrayType(t.elem, t.ndim, vector=vector)
    assert isinstance(t, ScalarType)
    return VecType(t) if vector else t


def tangent_name(name: str | None) -> str | None:
    return None if name is None else name + "d"


@dataclass
class _Target:
    """Where a terminator sends values: the slots of an if/loop or the function results."""

    tangent_slots: list[int]
    is_loop: bool = False
    #: the directions its tangents are passed in (None: every direction)
    directions: list[int] | None = None


class TangentFunction:
    def __init__(self, fn: Function, module: Module, activity: ModuleActivity, vector: bool,
                 directions: int = 1) -> None:
        self.fn = fn
        self.module = module
        self.activity = activity
        self.act = activity.functions[fn.name]
        self.vector = vector
        self.map: dict[Value, Value] = {}
        #: old value -> its tangent, per direction; ``tan`` is the direction being built
        self.tangents: list[dict[Value, Value]] = [{} for _ in range(directions)]
        self.tan: dict[Value, Value] = self.tangents[0]
        self.nbdirs: Value | None = None
        self.top: Region = Region()
        self.shadows: dict[Value, Value] = {}
        self.param_shadow_at = 0

    # -- values ----------------------------------------------------------------
    def m(self, v: Value) -> Value:
        return self.map.get(v, v)

    def each_direction(self, directions: list[int] | None = None) -> Iterator[int]:
        """Make ``self.tan`` the tangents of each direction (of ``directions``) in turn."""
        try:
            for d in range(len(self.tangents)) if directions is None else directions:
                self.tan = self.tangents[d]
                yield d
        finally:
            self.tan = self.tangents[0]

    def directions_into(self, op: Op) -> list[int] | None:
        """The directions in which the values ``op`` (an if or a loop) passes on may have
        tangents: every one (None) with one direction; with several, those of the values it
        uses from outside, since a direction that reaches none of them is zero in it (and
        a zero carried or yielded is not one the simplifier can drop: ``x * 0.0`` is not 0
        in IEEE arithmetic)."""
        if len(self.tangents) == 1:
            return None
        inside = defined_inside(op)
        used = [v for o in op.walk() for v in o.operands if v not in inside]
        return [d for d, tan in enumerate(self.tangents) if any(v in tan for v in used)]

    def tangent_name(self, name: str | None, direction: int) -> str | None:
        """``xd``; ``xd0``, ``xd1`` ... when there are several directions."""
        if name is None or len(self.tangents) == 1:
            return tangent_name(name)
        return f"{name}d{direction}"

    def tangents_of(self, b: Builder, values: list[Value], slots: list[int],
                    directions: list[int] | None = None) -> list[Value]:
        """The tangents of ``values[j]`` for each slot j, in each direction (zero where there
        is none): what a structured op carries after its values."""
        return [self.tangent_or_zero(b, values[j]) for j in slots
                for _ in self.each_direction(directions)]

    def ttype(self, t: Type) -> Type:
        return tangent_type(t, self.vector)

    def active(self, v: Value) -> bool:
        return self.act.active(v)

    def tangent_or_zero(self, b: Builder, v: Value) -> Value:
        t = self.tan.get(v)
        if t is not None:
            return t
        if isinstance(v.type, ArrayType):
            return self.zero_shadow(v)
        return b.const(0.0, self.ttype(v.type))

    def zero_shadow(self, array: Value) -> Value:
        """A zero tangent for an array that has none (passed to an active parameter)."""
        if array in self.shadows:
            return self.shadows[array]
        new = self.m(array)
        assert isinstance(new.type, ArrayType)
        owner = new.owner
        top = self.top
        b = Builder(Region(), self.fn.loc)
        if isinstance(owner, Zeros):
            extents = list(owner.operands)
            shadow = b.zeros(extents, ArrayType(new.type.elem, new.type.ndim, self.vector),
                             tangent_name(new.name))
            # beside its array: at the top in a primal; adjoint IR may allocate in a branch
            top = _region_holding(top, owner)
            pos = top.ops.index(owner) + 1
        else:
            extents = [b.dim(new, k) for k in range(new.type.ndim)]
            shadow = b.zeros(extents, ArrayType(new.type.elem, new.type.ndim, self.vector),
                             tangent_name(new.name))
            pos = self.param_shadow_at
            self.param_shadow_at += len(b.region.ops)
        top.ops[pos:pos] = b.region.ops
        self.shadows[array] = shadow
        return shadow

    # -- function ----------------------------------------------------------------
    def run(self) -> Function:
        fn = self.fn
        active_params = set(self.activity.active_params(fn))
        active_results = self.activity.active_results(fn)
        params: list[Value] = []
        names: list[str] = []
        tangent_of: dict[str, str] = {}
        # arrays it writes whose contents reach no dependent (``Function.unneeded_tangents``)
        written = written_params(fn, self.module)
        unneeded: list[str] = []
        used = set(fn.param_names) | {r.name for r in fn.results}

        def unique(base: str) -> str:
            while base in used:
                base += "_"
            used.add(base)
            return base

        for i, (p, name) in enumerate(zip(fn.params, fn.param_names, strict=True)):
            np_ = Value(p.type, p.name)
            params.append(np_)
            names.append(name)
            self.map[p] = np_
            if i in active_params:
                tname = unique(name + "d")
                t = Value(self.ttype(p.type), tname)
                params.append(t)
                names.append(tname)
                tangent_of[tname] = name
                self.tan[p] = t
                if i in written and p not in self.act.useful:
                    unneeded.append(tname)
        nbdirs_name = None
        if self.vector:
            nbdirs_name = unique("nbdirs")
            self.nbdirs = Value(I64, nbdirs_name)
            params.append(self.nbdirs)
            names.append(nbdirs_name)
        results = [Result(r.name, r.type) for r in fn.results]
        for j in active_results:
            r = fn.results[j]
            tname = unique("retd" if r.name == "return" else r.name + "d")
            results.append(Result(tname, self.ttype(r.type)))
            tangent_of[tname] = r.name
        self.top = Region(params)
        ret = _Target(active_results)
        self.region(fn.body, self.top, [ret])
        # the tangent of an incremented adjoint (``*xb +=``) is incremented too (``*xbd +=``)
        tangent_named = {primal: t for t, primal in tangent_of.items()}
        increments = fn.increments + [tangent_named[n] for n in fn.increments
                                      if n in tangent_named]
        return Function(derivative_name(fn, self.vector), self.top, results, fn.loc,
                        primal=fn.primal, mode=derived_mode(fn, self.vector), param_names=names,
                        tangent_of=tangent_of, returns_tuple=fn.returns_tuple,
                        nbdirs=nbdirs_name, is_static=fn.is_static, increments=increments,
                        tape=fn.tape, adjoint_of=dict(fn.tangent_of),
                        unneeded_tangents=unneeded + fn.unneeded_tangents)

    # -- regions ---------------------------------------------------------------------
    def region(self, old: Region, new: Region, targets: list[_Target]) -> None:
        for op in old.ops:
            b = Builder(new, op.loc)
            self.op(op, b, targets)

    def op(self, op: Op, b: Builder, targets: list[_Target]) -> None:
        handler = getattr(self, "op_" + type(op).__name__)
        handler(op, b, targets)

    def copy(self, op: Op, b: Builder) -> Op:
        results = [Value(r.type, r.name) for r in op.results]
        new = type(op)([self.m(v) for v in op.operands], results, op.loc)  # type: ignore[call-arg]
        for field_name in ("value", "prim", "axis", "callee", "message"):
            if hasattr(op, field_name):
                setattr(new, field_name, getattr(op, field_name))
        for r, nr in zip(op.results, results, strict=True):
            self.map[r] = nr
        b.insert(new)
        return new

    def op_Const(self, op: Const, b: Builder, t: list[_Target]) -> None:
        self.copy(op, b)

    def op_Dim(self, op: Dim, b: Builder, t: list[_Target]) -> None:
        self.copy(op, b)

    def op_Assert(self, op: Assert, b: Builder, t: list[_Target]) -> None:
        self.copy(op, b)

    def carries_tangent(self, v: Value) -> bool:
        """Whether a push or pop of ``v`` has a tangent on the tape beside it."""
        t = v.type
        return self.activity.tape.active and isinstance(t, ScalarType) and t.is_float

    def op_Push(self, op: Push, b: Builder, t: list[_Target]) -> None:
        self.copy(op, b)
        v = op.operands[0]
        if self.carries_tangent(v):
            b.insert(Push([self.tangent_or_zero(b, v)], [], op.loc))

    def op_Pop(self, op: Pop, b: Builder, t: list[_Target]) -> None:
        v = op.results[0]
        if self.carries_tangent(v):  # pushed after the value, so popped before it
            d = Value(self.ttype(v.type), tangent_name(v.name))
            b.insert(Pop([], [d], op.loc))
            if self.active(v):
                self.tan[v] = d
        self.copy(op, b)

    def op_Prim(self, op: Prim, b: Builder, t: list[_Target]) -> None:
        new = self.copy(op, b)
        if not self.active(op.result):
            return
        for k in self.each_direction():
            tangents = [self.tan.get(v) for v in op.operands]
            if all(x is None for x in tangents):
                continue
            start = len(b.region.ops)
            d = rules.tangent(b, op.prim, new.operands, new.result, tangents)
            # (a tangent may be a value computed before: x[i] for x[i] * w in the direction
            # of w, whose seed is 1.0; it keeps its name)
            if d.name is None and any(o is d.owner for o in b.region.ops[start:]):
                d.name = self.tangent_name(op.result.name, k)
            self.tan[op.result] = d

    def op_Cast(self, op: Cast, b: Builder, t: list[_Target]) -> None:
        new = self.copy(op, b)
        rt = new.result.type
        assert isinstance(rt, ScalarType)
        for k in self.each_direction():
            src = self.tan.get(op.operands[0])
            if self.active(op.result) and src is not None:
                self.tan[op.result] = b.cast(src, rt, self.tangent_name(op.result.name, k))

    def op_Load(self, op: Load, b: Builder, t: list[_Target]) -> None:
        new = self.copy(op, b)
        for k in self.each_direction():
            shadow = self.tan.get(op.operands[0])
            if self.active(op.result) and shadow is not None:
                self.tan[op.result] = b.load(shadow, new.operands[1:],
                                             self.tangent_name(op.result.name, k))

    def op_Store(self, op: Store, b: Builder, t: list[_Target]) -> None:
        new = self.copy(op, b)
        shadow = self.tan.get(op.operands[0])
        if shadow is not None:
            value = self.tangent_or_zero(b, op.operands[-1])
            if not _reloaded(value, shadow, new.operands[1:-1], b.region):
                b.store(shadow, new.operands[1:-1], value)

    def op_Zeros(self, op: Zeros, b: Builder, t: list[_Target]) -> None:
        new = self.copy(op, b)
        if self.active(op.result):
            self.tan[op.result] = b.zeros(
                new.operands, ArrayType(new.result.type.elem, new.result.type.ndim,  # type: ignore[union-attr]
                                        self.vector), tangent_name(op.result.name))

    def op_Call(self, op: Call, b: Builder, t: list[_Target]) -> None:
        callee = self.module.function(op.callee)
        c_params = set(self.activity.active_params(callee))
        c_results = self.activity.active_results(callee)
        written = written_params(callee, self.module)
        need = any(self.active(r) for r in op.results) or any(
            p in written and a in self.tan for p, a in enumerate(op.operands))
        if not (need and self.activity.needs_derivative(callee.name)) and \
                not _keeps_tape_tangents(callee, self.activity):
            self.copy(op, b)
            return
        args: list[Value] = []
        for p, a in enumerate(op.operands):
            args.append(self.m(a))
            if p in c_params:
                args.append(self.tangent_or_zero(b, a))
        if self.vector:
            assert self.nbdirs is not None
            args.append(self.nbdirs)
        types = [r.type for r in op.results] + [self.ttype(callee.results[j].type) for j in c_results]
        names = [r.name for r in op.results] + [tangent_name(op.results[j].name) for j in c_results]
        outs = b.call(derivative_name(callee, self.vector), args, types, names)
        for r, nr in zip(op.results, outs[:len(op.results)], strict=True):
            self.map[r] = nr
        for k, j in enumerate(c_results):
            if self.active(op.results[j]):
                self.tan[op.results[j]] = outs[len(op.results) + k]

    # -- structured ops ------------------------------------------------------------------
    def active_slots(self, values: list[Value]) -> list[int]:
        return [j for j, v in enumerate(values) if self.active(v)]

    def new_args(self, old: list[Value], slots: list[int],
                 directions: list[int] | None = None) -> list[Value]:
        args = []
        for v in old:
            nv = Value(v.type, v.name)
            self.map[v] = nv
            args.append(nv)
        for j in slots:
            for k in self.each_direction(directions):
                tv = Value(self.ttype(old[j].type), self.tangent_name(old[j].name, k))
                self.tan[old[j]] = tv
                args.append(tv)
        return args

    def new_results(self, op: Op, new: Op, slots: list[int],
                    directions: list[int] | None = None) -> None:
        results = []
        for r in op.results:
            nr = Value(r.type, r.name)
            self.map[r] = nr
            results.append(nr)
        for j in slots:
            r = op.results[j]
            for k in self.each_direction(directions):
                tr = Value(self.ttype(r.type), self.tangent_name(r.name, k))
                self.tan[r] = tr
                results.append(tr)
        new.results = results
        for r in results:
            r.owner = new

    def op_If(self, op: If, b: Builder, targets: list[_Target]) -> None:
        slots = self.active_slots(op.results)
        new = If([self.m(op.operands[0])], [], op.loc, regions=[Region(), Region()])
        b.insert(new)
        directions = self.directions_into(op)
        target = _Target(slots, directions=directions)
        for old_r, new_r in zip(op.regions, new.regions, strict=True):
            self.region(old_r, new_r, targets + [target])
        self.new_results(op, new, slots, directions)

    def op_For(self, op: For, b: Builder, targets: list[_Target]) -> None:
        body = op.body
        slots = self.active_slots(body.args[1:])
        directions = self.directions_into(op)
        inits = [self.m(v) for v in op.inits] + self.tangents_of(b, op.inits, slots, directions)
        iv = Value(I64, body.args[0].name)
        self.map[body.args[0]] = iv
        args = self.new_args(body.args[1:], slots, directions)
        new = For([self.m(v) for v in op.operands[:3]] + inits, [], op.loc,
                  regions=[Region([iv, *args])], parallel=op.parallel,
                  iteration_tape=op.iteration_tape, note=op.note)
        b.insert(new)
        target = _Target(slots, is_loop=True, directions=directions)
        self.region(body, new.body, targets + [target])
        self.new_results(op, new, slots, directions)

    def op_While(self, op: While, b: Builder, targets: list[_Target]) -> None:
        cond, body = op.regions
        slots = self.active_slots(body.args)
        directions = self.directions_into(op)
        inits = [self.m(v) for v in op.inits] + self.tangents_of(b, op.inits, slots, directions)
        cond_args = self.new_args(cond.args, slots, directions)
        new_cond = Region(cond_args)
        target = _Target(slots, is_loop=True, directions=directions)
        self.region(cond, new_cond, targets + [target])
        body_args = self.new_args(body.args, slots, directions)
        new_body = Region(body_args)
        new = While(inits, [], op.loc, regions=[new_cond, new_body])
        b.insert(new)
        self.region(body, new_body, targets + [target])
        self.new_results(op, new, slots, directions)

    # -- terminators -------------------------------------------------------------------------
    def forward_values(self, b: Builder, values: list[Value], target: _Target) -> list[Value]:
        return [self.m(v) for v in values] + self.tangents_of(b, values, target.tangent_slots,
                                                              target.directions)

    def op_Yield(self, op: Yield, b: Builder, targets: list[_Target]) -> None:
        b.insert(Yield(self.forward_values(b, op.operands, targets[-1]), [], op.loc))

    def op_Condition(self, op: Condition, b: Builder, targets: list[_Target]) -> None:
        b.insert(Condition([self.m(op.operands[0])], [], op.loc))

    def op_Break(self, op: Break, b: Builder, targets: list[_Target]) -> None:
        b.insert(Break(self.forward_values(b, op.operands, self._loop(targets)), [], op.loc))

    def op_Continue(self, op: Continue, b: Builder, targets: list[_Target]) -> None:
        b.insert(Continue(self.forward_values(b, op.operands, self._loop(targets)), [], op.loc))

    def op_Return(self, op: Return, b: Builder, targets: list[_Target]) -> None:
        b.insert(Return(self.forward_values(b, op.operands, targets[0]), [], op.loc))

    def _loop(self, targets: list[_Target]) -> _Target:
        return next(t for t in reversed(targets) if t.is_loop)


def differentiate(module: Module, activity: ModuleActivity, vector: bool) -> Module:
    """Tangents of every function that needs one, plus the primal helpers they call."""
    out: list[Function] = []
    for fn in module.functions:
        if activity.needs_derivative(fn.name) or _keeps_tape_tangents(fn, activity):
            if fn.external is not None:
                out.append(_external_tangent(fn, module, activity, vector))
                continue
            if fn.custom_tangent and not vector and \
                    any(f.name == fn.custom_tangent for f in module.functions):
                out.append(_custom_tangent(fn, module, activity))
                continue
            out.append(TangentFunction(fn, module, activity, vector).run())
    suffix = SUFFIX[vector]
    derived = {fn.name for fn in out}
    own = {fn.name for fn in module.functions}
    needed: list[str] = []
    # a primal callee may be named like a tangent (a function 'speed_d', or the functions of a
    # nested derivative, 'f_grad_g_b_d'): it is a helper if the module defines it
    stack = [op.callee for fn in out for op in fn.walk()
             if isinstance(op, Call) and op.callee not in derived
             and (op.callee in own or not op.callee.endswith(suffix))]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.append(name)
        stack.extend(op.callee for op in module.function(name).walk() if isinstance(op, Call))
    helpers = []
    for fn in module.functions:
        if fn.name in needed:
            helpers.append(_clone_static(fn))
    return Module(module.name, module.path, helpers + out, module.source_lines)


def _external_tangent(fn: Function, module: Module, activity: ModuleActivity,
                      vector: bool) -> Function:
    """The declaration of the tangent of a C function given with ``@external``: what
    ``TangentFunction`` makes of a body-less function (every float parameter and result is
    active), named as the user named it."""
    from ..frontend.external import missing
    # the tangent of adjoint IR (not of a module keeping the declaration of an external's C
    # adjoint that a nested grad() calls, which is no derivative code of its own)
    hvp = any(f.mode != "primal" and f.external is None for f in module.functions)
    mode = ("vector-" if vector else "") + ("hvp" if hvp else "forward")
    error = missing(fn, mode)
    if error is not None:
        raise error
    out = TangentFunction(fn, module, activity, vector).run()
    out.external = fn.external
    out.is_static = False
    return out


def _custom_tangent(fn: Function, module: Module, activity: ModuleActivity) -> Function:
    """``@custom_jvp(g)``: ``f_d`` (its signature as the tangent transform makes it) calls
    ``g``, whose signature is ``f_d``'s with every float parameter and result differentiated,
    passing zero tangents for the parameters that have none here, and returns what ``g``
    returns for the results that have a tangent here.  Vector mode and the tangent of adjoint
    IR differentiate the body instead."""
    written = written_params(fn, module)
    if written:
        from ..frontend.diagnostics import AdgenError
        raise AdgenError(fn.loc, f"'{fn.name}' has a custom tangent and writes its array "
                                 f"'{fn.param_names[min(written)]}' (a function with "
                                 "@custom_jvp must only read its arrays; write into an array in "
                                 "a function without it)")
    out = TangentFunction(fn, module, activity, False).run()
    g = module.function(fn.custom_tangent)
    value = dict(zip(out.param_names, out.params, strict=True))
    tangent = {out.tangent_of[n]: v for n, v in value.items() if n in out.tangent_of}
    body = Region(list(out.params))
    b = Builder(body, fn.loc)
    args: list[Value] = []
    for p, name in zip(fn.params, fn.param_names, strict=True):
        args.append(value[name])
        t = p.type
        if isinstance(t, ScalarType) and t.is_float:
            args.append(tangent.get(name) or b.const(0.0, t))
        elif isinstance(t, ArrayType) and t.elem.is_float:
            args.append(tangent.get(name) or
                        b.zeros([b.dim(value[name], k) for k in range(t.ndim)], t, name + "d"))
    floats = [j for j, r in enumerate(fn.results)
              if isinstance(r.type, ScalarType) and r.type.is_float]
    outs = b.call(g.name, args, [r.type for r in fn.results] + [fn.results[j].type for j in floats],
                  [r.name for r in fn.results] + [tangent_name(fn.results[j].name) or "retd"
                                                  for j in floats])
    values = dict(zip([r.name for r in fn.results], outs, strict=False))
    tangents = dict(zip([fn.results[j].name for j in floats], outs[len(fn.results):],
                        strict=True))
    b.insert(Return([tangents[out.tangent_of[r.name]] if r.name in out.tangent_of
                     else values[r.name] for r in out.results], [], fn.loc))
    out.body = body
    return out


def _region_holding(region: Region, op: Op) -> Region:
    """The region (``region`` or one nested in it) whose ops include ``op``."""
    stack = [region]
    while stack:
        r = stack.pop()
        if any(o is op for o in r.ops):
            return r
        stack.extend(inner for o in r.ops for inner in o.regions)
    raise AssertionError(f"{op} is not in the function")


def _keeps_tape_tangents(fn: Function, activity: ModuleActivity) -> bool:
    """A split half of an adjoint (``g_fwd``, ``g_bwd``) works on its caller's tape: once the
    tape carries tangents, every call of it goes to its tangent, which pushes and pops them
    too, so that each push still meets its pop."""
    return fn.tape == "param" and activity.tape.active


def _clone_static(fn: Function) -> Function:
    c = copy.deepcopy(fn)
    c.is_static = True
    return c


def _reloaded(value: Value, array: Value, indices: list[Value], region: Region) -> bool:
    """Whether ``value`` is ``array[indices]`` loaded earlier in ``region`` with nothing
    since that could store there: storing it is a no-op (``xbd[i] = xbd[i]``, the tangent of
    ``xb[i] += sb`` where ``sb`` has none)."""
    load = value.owner
    if not isinstance(load, Load) or load.operands[0] is not array or \
            list(load.operands[1:]) != list(indices) or load not in region.ops:
        return False
    after = region.ops[region.ops.index(load) + 1:]
    return not any(o.regions or isinstance(o, Call) or (isinstance(o, Store)
                                                         and o.operands[0] is array)
                   for o in after)
