"""Adjoint mode: ``f`` -> ``f_b`` (scalar) or ``f_bv`` (many directions).

The input is in single-exit form (``transforms/single_exit.py``).  An
adjoint is a forward sweep (a copy of the primal) followed by a reverse
sweep that visits the ops backwards and, for each active op, adds its
operands' share of the result's adjoint (the rule table, ``rules.adjoint``):

- scalar adjoints are SSA values (``xb``), summed as contributions arrive;
  an ``if`` is reversed by an ``if`` on the same condition whose results
  are the updated adjoints, a ``for`` by a ``for`` over the same indices
  counting down, a ``while`` by a ``for`` over its trip count (counted by
  the forward sweep), with the adjoints of carried values carried back;
- array adjoints are shadow arrays (``ab``), read and written in place:
  ``y = a[i]`` gives ``ab[i] += yb``; ``a[i] = v`` gives ``vb += ab[i];
  ab[i] = 0``, so overwritten elements and arrays written in place need no
  saved old value (the loaded SSA values the sweep uses are the old values);
- a call to a function that needs a derivative becomes ``g_fwd`` in the
  forward sweep and ``g_bwd`` in the reverse sweep; both take the caller's
  tape, ``g_fwd`` saves what ``g_bwd`` needs (split mode).

The reverse sweep is first written as if every forward value were visible
where it is used; ``record.py`` then makes that true: values defined inside
a loop body (or, for ``g_bwd``, anywhere in ``g_fwd``) are recomputed or
saved on the tape, values inside an ``if`` branch become results of the if.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from ..analysis.activity import ModuleActivity, written_params
from ..emit.names import BWD, FWD
from ..frontend.fence import FORWARD_IN_REVERSE
from ..ir.builder import Builder
from ..ir.core import (
    Call, Cast, Condition, Const, Dim, For, Function, If, Load, Module, Op, Prim, Region,
    Result, Return, Store, Value, While, Yield, Zeros, is_array,
)
from ..ir.prims import COMPARISONS
from ..ir.types import I64, ArrayType, ScalarType, Type, VecType
from ..ir.walk import increment, structure
from . import joint, rules
from .forward import tangent_type
from .record import Carried, Recorder, Replays

SUFFIX = {False: "_b", True: "_bv"}


def adjoint_name(name: str | None) -> str | None:
    return None if name is None else name + "b"


@dataclass
class Sweeps:
    """What the builder produced for one function."""

    fwd_top: Region
    rev_top: Region
    primal_results: list[Value]
    mirror: dict[Region, Region] = field(default_factory=dict)
    preseed: dict[tuple[Region, Value], Value] = field(default_factory=dict)


class AdjointFunction:
    def __init__(self, fn: Function, module: Module, activity: ModuleActivity, vector: bool,
                 split: bool, kept_params: set[int] | None = None, early: bool = True) -> None:
        self.fn = fn
        #: whether adjoints known early may run in the forward sweep (``ad/joint.py``)
        self.early = early
        #: split mode: the array parameters every caller keeps unchanged from the call of
        #: ``g_fwd`` to that of ``g_bwd`` (see ``_kept_params``), which ``g_bwd`` may read again
        self.kept_params = kept_params or set()
        self.module = module
        self.activity = activity
        self.act = activity.functions[fn.name]
        self.vector = vector
        self.split = split
        self.map: dict[Value, Value] = {}  # old value -> forward-sweep value
        self.fwd_region: dict[Region, Region] = {}  # old region -> forward-sweep region
        self.fwd_ops: dict[Op, Op] = {}  # old op -> its forward-sweep copy
        self.shadow: dict[Value, Value] = {}  # old array -> its adjoint array
        self.trips: dict[While, Value] = {}  # old while -> forward trip count
        self.mirror: dict[Region, Region] = {}
        self.preseed: dict[tuple[Region, Value], Value] = {}
        self.uses: dict[Value, list[Op]] | None = None  # value -> the ops using it, when needed
        #: adjoint loop body -> (that loop, {forward carried value: (its initial value, its
        #: update, None)}): the inactive values it may carry itself (``reverse_loop``'s
        #: ``replay``); for an adjoint loop that runs backwards (``unwind``): (the forward
        #: loop's final value, its update, (prim, operand) of the inverse update)
        self.replays: Replays = {}
        self.nbdirs: Value | None = None
        self.choices: dict[Prim, tuple[Value, int, int]] = {}  # old min/max/select -> choice
        #: the ops (with regions) of prange bodies computed again in their adjoint loop, and
        #: those loops' bodies, where the values of the recomputation are visible as is
        self.recomputed: set[Op] = set()
        self.recomputing: set[Region] = set()
        self.reloadable_copies: set[Value] = set()  # the reloadable loads of those copies
        #: while ``recompute_unread`` builds its trial: the loads whose element the body
        #: writes later, their copies, and every op ``clone`` makes
        self.unread: set[Op] = set()
        self.unread_copies: set[Value] = set()
        self.clones: set[Op] | None = None
        #: (call, array argument) pairs whose array still holds at the reverse sweep what the
        #: call read (``_kept_call_arrays``), computed when first needed
        self.kept_calls: set[tuple[Op, Value]] | None = None
        #: call -> (its ``g_bwd`` call, the arguments ``g_b`` would take there), for the
        #: calls of a loop whose reverse ``joint.loop`` may move into the forward sweep
        self.joint_calls: dict[Call, tuple[Call, list[Value]]] = {}
        #: where ``f`` writes arrays with an adjoint (``joint._written_later``), when needed
        self.joint_writes: tuple[dict[Op, int], dict[Op, int], dict[Op, list[Op]],
                                 list[int]] | None = None
        active_params = activity.active_params(fn)
        #: arrays with an adjoint: active array parameters and active local arrays
        self.shadowed = {p for i, p in enumerate(fn.params)
                         if i in active_params and isinstance(p.type, ArrayType)}
        self.shadowed |= {op.result for op in fn.walk()
                          if isinstance(op, Zeros) and self.active(op.result)}

    # -- helpers ---------------------------------------------------------------------------
    def m(self, v: Value) -> Value:
        return self.map.get(v, v)

    def active(self, v: Value) -> bool:
        return self.act.active(v)

    def atype(self, t: Type) -> Type:
        return tangent_type(t, self.vector)

    def zero(self, b: Builder, v: Value) -> Value:
        return b.const(0.0, self.atype(v.type))

    def accumulate(self, b: Builder, adj: dict[Value, Value], v: Value,
                   contribution: Value) -> None:
        if not self.active(v) or isinstance(v.type, ArrayType):
            return
        cur = adj.get(v)
        if contribution.name is None:
            contribution.name = adjoint_name(v.name)
        adj[v] = contribution if cur is None else b.add(cur, contribution)
        if adj[v].name is None:
            adj[v].name = adjoint_name(v.name)

    def needs_adjoint_call(self, op: Call) -> bool:
        callee = self.module.function(op.callee)
        written = written_params(callee, self.module)
        need = any(self.active(r) for r in op.results) or any(
            p in written and a in self.shadowed for p, a in enumerate(op.operands))
        return need and self.activity.needs_derivative(callee.name)

    def has_work(self, op: Op) -> bool:
        """Whether reversing ``op`` can change an adjoint."""
        for o in op.walk():
            if o is not op and any(self.active(r) for r in o.results):
                return True
            for r in o.regions:
                if any(self.active(a) for a in r.args):
                    return True
            if isinstance(o, Store) and o.operands[0] in self.shadowed:
                return True
            if isinstance(o, Call) and self.needs_adjoint_call(o):
                return True
        return any(self.active(r) for r in op.results)

    # -- the function ---------------------------------------------------------------------
    def signature(self) -> tuple[list[Value], list[str], dict[str, str], list[Value],
                                 list[Value], list[int], list[int]]:
        """Parameters of the adjoint: each primal one, its shadow after an active array, the
        adjoints of the active results, ``nbdirs``.  Returns (params, names, derivative_of,
        primal params, result adjoint params, active params, active results)."""
        fn = self.fn
        active_params = self.activity.active_params(fn)
        active_results = self.activity.active_results(fn)
        used = set(fn.param_names) | {r.name for r in fn.results}

        def unique(base: str) -> str:
            while base in used:
                base += "_"
            used.add(base)
            return base

        params: list[Value] = []
        names: list[str] = []
        of: dict[str, str] = {}
        primal: list[Value] = []
        for i, (p, name) in enumerate(zip(fn.params, fn.param_names, strict=True)):
            np_ = Value(p.type, p.name)
            params.append(np_)
            primal.append(np_)
            names.append(name)
            self.map[p] = np_
            if i in active_params and isinstance(p.type, ArrayType):
                bname = unique(name + "b")
                sh = Value(self.atype(p.type), bname)
                params.append(sh)
                names.append(bname)
                of[bname] = name
                self.shadow[p] = sh
        ybs: list[Value] = []
        for j in active_results:
            r = fn.results[j]
            bname = unique("retb" if r.name == "return" else r.name + "b")
            yb = Value(self.atype(r.type), bname)
            params.append(yb)
            names.append(bname)
            of[bname] = r.name
            ybs.append(yb)
        if self.vector:
            nb = unique("nbdirs")
            self.nbdirs = Value(I64, nb)
            params.append(self.nbdirs)
            names.append(nb)
        self.scalar_adjoints: list[tuple[int, str]] = []
        for i in active_params:
            p = fn.params[i]
            if not isinstance(p.type, ArrayType):
                self.scalar_adjoints.append((i, unique(fn.param_names[i] + "b")))
        return params, names, of, primal, ybs, active_params, active_results

    def run(self) -> list[Function]:
        fn = self.fn
        if fn.custom_adjoint and not self.vector:
            return self.run_custom()
        if fn.external is not None:
            return self.run_external()
        params, names, of, primal, ybs, _, active_results = self.signature()
        ret = fn.body.terminator
        assert isinstance(ret, Return), "adjoints need single-exit form"
        if self.split:
            fwd_top = Region(list(primal))
            rev_top = Region()
        else:
            fwd_top = Region(params)
            rev_top = Region()
        self.mirror[rev_top] = fwd_top
        self.fwd_region[fn.body] = fwd_top
        # forward sweep
        self.clone_ops(fn.body.ops[:-1], fwd_top)
        primal_results = [self.m(v) for v in ret.operands]
        # reverse sweep
        rb = Builder(rev_top, fn.loc)
        adj: dict[Value, Value] = {}
        self.alloc_shadows(fn.body, rb)
        for j, yb in zip(active_results, ybs, strict=True):
            self.accumulate(rb, adj, ret.operands[j], yb)
        self.reverse_ops(fn.body.ops[:-1], rb, adj)
        adjoints = [adj.get(fn.params[i]) or self.zero(rb, fn.params[i])
                    for i, _ in self.scalar_adjoints]
        loc = ret.loc
        primal_res = [Result(r.name, r.type) for r in fn.results]
        adj_res = [Result(n, self.atype(fn.params[i].type)) for i, n in self.scalar_adjoints]
        for (i, n) in self.scalar_adjoints:
            of[n] = fn.param_names[i]
        if self.split:
            fwd_top.ops.append(Return(primal_results, [], loc))
            rev_top.ops.append(Return(adjoints, [], loc))
        else:
            rev_top.ops.append(Return(primal_results + adjoints, [], loc))
        if self.split:
            # g_bwd has its own copies of the parameters
            bwd_params = [Value(v.type, v.name) for v in params]
            for a in bwd_params:
                rev_top.add_arg(a)
            _substitute_tree(rev_top, dict(zip(params, bwd_params, strict=True)))
            for v, nv in zip(params, bwd_params, strict=True):  # recomputed ops read them too
                self.preseed[(rev_top, v)] = nv
        _simplify_sweep(rev_top, fn)
        Recorder(fwd_top, rev_top, self.mirror, joint=not self.split, preseed=self.preseed,
                 reloadable=self.reloadable(), recomputed=self.recomputed,
                 recomputing=self.recomputing, replays=self.replays).run()
        return self.functions(fwd_top, rev_top, primal_res, adj_res, names, of)

    def run_custom(self) -> list[Function]:
        """``@custom_vjp(g)``: the forward sweep calls ``f`` itself (nothing is taped), the
        reverse sweep calls ``g`` with the arguments, the adjoint arrays and the adjoints of the
        results, and takes the adjoints of the float scalar parameters from what it returns."""
        fn = self.fn
        written = written_params(fn, self.module)
        if written:
            from ..frontend.diagnostics import AdgenError
            raise AdgenError(fn.loc, f"'{fn.name}' has a custom adjoint and writes its array "
                                     f"'{fn.param_names[min(written)]}' (a function with "
                                     "@custom_vjp must only read its arrays; write into an "
                                     "array in a function without it)")
        params, names, of, primal, ybs, _, active_results = self.signature()
        g = self.module.function(fn.custom_adjoint)
        fwd_top = Region(list(primal)) if self.split else Region(params)
        rev_top = Region([Value(v.type, v.name) for v in params]) if self.split else fwd_top
        sub = dict(zip(params, rev_top.args, strict=True)) if self.split else {}
        fb = Builder(fwd_top, fn.loc)
        primal_results = fb.call(fn.name, list(primal), [r.type for r in fn.results],
                                 [r.name for r in fn.results])
        rb = Builder(rev_top, fn.loc)
        args: list[Value] = []
        for p in fn.params:
            value = sub.get(self.m(p), self.m(p))
            args.append(value)
            t = p.type
            if isinstance(t, ArrayType) and t.elem.is_float:
                sh = self.shadow.get(p)
                if sh is None:  # not differentiated: g increments a scratch array
                    sh = rb.zeros([rb.dim(value, k) for k in range(t.ndim)],
                                  ArrayType(t.elem, t.ndim), adjoint_name(p.name))
                args.append(sub.get(sh, sh))
        result_bars = dict(zip(active_results, ybs, strict=True))
        for j, r in enumerate(fn.results):
            if isinstance(r.type, ScalarType) and r.type.is_float:
                yb = result_bars.get(j)
                args.append(sub.get(yb, yb) if yb is not None else rb.const(0.0, r.type))
        floats = [i for i, p in enumerate(fn.params)
                  if isinstance(p.type, ScalarType) and p.type.is_float]
        outs = rb.call(g.name, args, [fn.params[i].type for i in floats],
                       [adjoint_name(fn.params[i].name) for i in floats])
        got = dict(zip(floats, outs, strict=True))
        adjoints = [got[i] for i, _ in self.scalar_adjoints]
        primal_res = [Result(r.name, r.type) for r in fn.results]
        adj_res = [Result(n, self.atype(fn.params[i].type)) for i, n in self.scalar_adjoints]
        for (i, n) in self.scalar_adjoints:
            of[n] = fn.param_names[i]
        if not self.split:  # one region: the call of f, then the call of g
            fwd_top.ops.append(Return(primal_results + adjoints, [], fn.loc))
            return self.functions(fwd_top, Region(), primal_res, adj_res, names, of)
        fwd_top.ops.append(Return(primal_results, [], fn.loc))
        rev_top.ops.append(Return(adjoints, [], fn.loc))
        return self.functions(fwd_top, rev_top, primal_res, adj_res, names, of)

    def run_external(self) -> list[Function]:
        """A C function given with ``@external``: ``f_b`` is the declaration of the user's C
        adjoint (every float parameter independent, every float result dependent); for the
        adjoints of callers, ``f_fwd`` calls the C function (nothing taped) and ``f_bwd`` the C
        adjoint, with the scalar adjoints it increments starting from 0."""
        from ..frontend.external import missing
        fn = self.fn
        ext = fn.external
        assert ext is not None
        error = missing(fn, "vector-reverse" if self.vector else "reverse")
        if error is not None:
            raise error
        params, names, of, primal, _, _, _ = self.signature()
        primal_res = [Result(r.name, r.type) for r in fn.results]
        adj_res = [Result(n, self.atype(fn.params[i].type)) for i, n in self.scalar_adjoints]
        for (i, n) in self.scalar_adjoints:
            of[n] = fn.param_names[i]
        if not self.split:
            [decl] = self.functions(Region(params), Region(), primal_res, adj_res, names, of)
            decl.name, decl.external, decl.tape = ext.adjoint, ext, None
            return [decl]
        fwd_top = Region(list(primal))
        fb = Builder(fwd_top, fn.loc)
        values = fb.call(fn.name, list(primal), [r.type for r in primal_res],
                         [r.name for r in primal_res])
        fwd_top.ops.append(Return(values, [], fn.loc))
        rev_top = Region([Value(v.type, v.name) for v in params])
        rb = Builder(rev_top, fn.loc)
        outs = rb.call(ext.adjoint, list(rev_top.args),
                       [r.type for r in primal_res + adj_res],
                       [r.name for r in primal_res + adj_res])
        rev_top.ops.append(Return(outs[len(primal_res):], [], fn.loc))
        return self.functions(fwd_top, rev_top, primal_res, adj_res, names, of)

    def functions(self, fwd_top: Region, rev_top: Region, primal_res: list[Result],
                  adj_res: list[Result], names: list[str], of: dict[str, str]) -> list[Function]:
        """``f_b`` (one region: forward then reverse sweep), or ``f_fwd`` and ``f_bwd``."""
        fn = self.fn
        mode = "vector-reverse" if self.vector else "reverse"
        base = fn.primal + SUFFIX[self.vector]
        if not self.split:
            fwd_top.ops += rev_top.ops
            # the adjoints of written arrays whose contents on exit reach no dependent (left
            # out of --of): their value on entry is not read
            index = {n: i for i, n in enumerate(fn.param_names)}
            written = written_params(fn, self.module)
            unneeded = [a for a, p in of.items() if p in index and index[p] in written
                        and fn.params[index[p]] not in self.act.useful]
            out = Function(base, fwd_top, primal_res + adj_res, fn.loc, primal=fn.primal, mode=mode,
                           param_names=names, tangent_of=of, returns_tuple=fn.returns_tuple,
                           nbdirs=self.nbdirs.name if self.nbdirs else None,
                           increments=[n for _, n in self.scalar_adjoints], tape="local",
                           is_static=fn.is_static, unneeded_tangents=unneeded)
            return [out]
        fwd = Function(fn.primal + FWD, fwd_top, primal_res, fn.loc, primal=fn.primal, mode=mode,
                       param_names=list(fn.param_names), returns_tuple=fn.returns_tuple,
                       is_static=True, tape="param")
        bwd = Function(fn.primal + BWD, rev_top, adj_res, fn.loc, primal=fn.primal, mode=mode,
                       param_names=names, tangent_of=of, returns_tuple=True, is_static=True,
                       nbdirs=self.nbdirs.name if self.nbdirs else None, tape="param")
        return [fwd, bwd]

    def reloadable(self) -> set[Value]:
        """Forward loads whose array element is still the same when the reverse sweep runs (no
        write to the array after the load, nor in a loop around it): the reverse sweep may
        load them again instead of saving them.  In split mode only from the parameters every
        caller keeps (between ``g_fwd`` and ``g_bwd`` a caller may write the others)."""
        params = {p for i, p in enumerate(self.fn.params)
                  if not self.split or i in self.kept_params} | self.live_local_arrays()
        return {self.map[op.result] for op in _stable_loads(self.fn, self.module)
                if op.operands[0] in params} | self.reloadable_copies

    def live_local_arrays(self) -> set[Value]:
        """The local arrays the reverse sweep may still use: in ``f_b``, those allocated at
        the top level of the body, which live until its return (single-exit form may move
        others into a branch); none in a split adjoint, whose ``_bwd`` runs after ``_fwd``
        has freed them."""
        if self.split:
            return set()
        return {op.result for op in self.fn.body.ops if isinstance(op, Zeros)}

    # -- forward sweep ----------------------------------------------------------------------
    def clone_ops(self, ops: list[Op], new: Region) -> None:
        for op in ops:
            self.clone(op, new)

    def clone(self, op: Op, new: Region) -> Op:
        results = [Value(r.type, r.name) for r in op.results]
        c = copy.copy(op)
        c.operands = [self.m(v) for v in op.operands]
        c.results = results
        for r in results:
            r.owner = c
        for r, nr in zip(op.results, results, strict=True):
            self.map[r] = nr
        self.fwd_ops[op] = c
        if self.clones is not None:
            self.clones.add(c)
            if op in self.unread:
                self.unread_copies.update(results)
        c.regions = []
        for sub in op.regions:
            args = [Value(a.type, a.name) for a in sub.args]
            for a, na in zip(sub.args, args, strict=True):
                self.map[a] = na
            nr = Region(args)
            self.fwd_region[sub] = nr
            c.regions.append(nr)
            self.clone_ops(sub.ops, nr)
        if isinstance(c, Call) and self.needs_adjoint_call(op):  # type: ignore[arg-type]
            if self.checkpointed(op):  # type: ignore[arg-type]
                c.directive = ""  # the primal call: nothing taped here
            else:
                c.callee = c.callee + FWD
        new.ops.append(c)
        if isinstance(op, Prim) and rules.RULES.get(op.prim, rules.Rule()).choice is not None \
                and self.active(op.result):
            # min/max/select: the condition is a forward value, so that the tape saves the
            # condition (1 byte) rather than the operands it compares
            choice = rules.RULES[op.prim].choice
            assert choice is not None
            self.choices[op] = choice(Builder(new, op.loc), c.operands)
        if isinstance(op, While) and self.has_work(op):
            zero = Builder(Region(), op.loc).const(0, I64)
            new.ops.insert(new.ops.index(c), zero.owner)  # type: ignore[arg-type]
            self.count_trips(op, c, zero)  # type: ignore[arg-type]
        return c

    def count_trips(self, old: While, new: While, zero: Value) -> None:
        """Carry an iteration counter through the forward while: its result is the trip count."""
        new.operands = new.operands + [zero]
        cond, body = new.regions
        cond.add_arg(Value(I64, "trips"))
        count = body.add_arg(Value(I64, "trips"))
        y = body.ops.pop()
        assert isinstance(y, Yield)
        bb = Builder(body, old.loc)
        nxt = bb.add(count, bb.const(1, I64))
        body.ops.append(Yield(y.operands + [nxt], [], y.loc))
        n = Value(I64, "trips")
        n.owner = new
        new.results = new.results + [n]
        self.trips[old] = n

    # -- reverse sweep ------------------------------------------------------------------------
    def alloc_shadows(self, old: Region, b: Builder) -> None:
        for op in old.ops:
            if isinstance(op, Zeros) and self.active(op.result):
                at = op.result.type
                assert isinstance(at, ArrayType)
                self.shadow[op.result] = b.zeros(
                    [self.m(e) for e in op.operands], ArrayType(at.elem, at.ndim, self.vector),
                    adjoint_name(op.result.name))

    def reverse_ops(self, ops: list[Op], b: Builder, adj: dict[Value, Value]) -> None:
        increments = self.increments(ops)
        for op in reversed(ops):
            b.loc = op.loc
            if op in increments:
                self.rev_increment(op, increments[op], b, adj)  # type: ignore[arg-type]
                continue
            handler = getattr(self, "rev_" + type(op).__name__, None)
            if handler is not None:
                handler(op, b, adj)

    def increments(self, ops: list[Op]) -> dict[Op, tuple[Value, bool]]:
        """The stores of ``ops`` that increment an element of an array with an adjoint
        (``a[i] = a[i] + e`` or ``a[i] = a[i] - e``, the loaded value used only there, nothing
        but arithmetic and loads in between), with their ``e`` and whether it is subtracted:
        the adjoint of the element passes through unchanged (``eb += ab[i]``), where the
        store and the load reversed one by one would zero it and add it back."""
        if self.uses is None:
            self.uses = structure(self.fn).uses
        at = {o: k for k, o in enumerate(ops)}
        out: dict[Op, tuple[Value, bool]] = {}
        for k, op in enumerate(ops):
            if not isinstance(op, Store) or op.operands[0] not in self.shadow:
                continue
            inc = increment(op)
            value = op.operands[-1]
            if inc is None or self.uses.get(value) != [op]:
                continue
            old, term, subtracted = inc
            if self.uses.get(old.result) == [value.owner] and old in at and \
                    all(isinstance(o, (Prim, Cast, Load, Const, Dim)) for o in ops[at[old] + 1:k]):
                out[op] = (term, subtracted)
        return out

    def rev_increment(self, op: Store, inc: tuple[Value, bool], b: Builder,
                      adj: dict[Value, Value]) -> None:
        e, minus = inc
        if not self.active(e) or isinstance(e.type, ArrayType):
            return
        idx = [self.m(i) for i in op.operands[1:-1]]
        vb = b.load(self.shadow[op.operands[0]], idx, adjoint_name(op.operands[-1].name))
        self.accumulate(b, adj, e, b.neg(vb) if minus else vb)

    def rev_Prim(self, op: Prim, b: Builder, adj: dict[Value, Value]) -> None:
        yb = adj.pop(op.result, None)
        if yb is None or not self.active(op.result):
            return
        wanted = [self.active(a) and not isinstance(a.type, ArrayType) for a in op.operands]
        if not any(wanted):
            return
        contribs = rules.adjoint(b, op.prim, [self.m(a) for a in op.operands], self.m(op.result),
                                 yb, wanted, self.choices.get(op))
        for a, c in zip(op.operands, contribs, strict=True):
            if c is not None:
                self.accumulate(b, adj, a, c)

    def rev_Cast(self, op: Cast, b: Builder, adj: dict[Value, Value]) -> None:
        yb = adj.pop(op.result, None)
        src = op.operands[0]
        if yb is not None and self.active(src):
            st = src.type
            assert isinstance(st, ScalarType)
            self.accumulate(b, adj, src, b.cast(yb, st, adjoint_name(src.name)))

    def rev_Load(self, op: Load, b: Builder, adj: dict[Value, Value]) -> None:
        yb = adj.pop(op.result, None)
        sh = self.shadow.get(op.operands[0])
        if yb is None or sh is None:
            return
        idx = [self.m(i) for i in op.operands[1:]]
        old = b.load(sh, idx)
        b.store(sh, idx, b.add(old, yb))

    def rev_Store(self, op: Store, b: Builder, adj: dict[Value, Value]) -> None:
        sh = self.shadow.get(op.operands[0])
        if sh is None:
            return
        value = op.operands[-1]
        idx = [self.m(i) for i in op.operands[1:-1]]
        sht = sh.type
        assert isinstance(sht, ArrayType)
        vb = b.load(sh, idx, adjoint_name(value.name))
        b.store(sh, idx, b.const(0.0, VecType(sht.elem) if sht.vector else sht.elem))
        self.accumulate(b, adj, value, vb)

    def checkpointed(self, op: Call) -> bool:
        """``# adgen: checkpoint`` on the call: the forward sweep calls the primal ``g`` (no
        tape), the reverse sweep runs ``g_fwd`` right before ``g_bwd``, so the tape holds one
        call's records at a time.  ``g_fwd`` must then see the arrays ``g`` saw."""
        if op.directive != "checkpoint":
            return False
        callee = self.module.function(op.callee)
        written = written_params(callee, self.module)
        for p, a in enumerate(op.operands):
            if not is_array(a):
                continue
            if p in written:
                from ..frontend.diagnostics import AdgenError
                raise AdgenError(op.loc, f"'# adgen: checkpoint' runs '{callee.name}' again in "
                                         f"the reverse sweep, and '{callee.name}' writes its "
                                         f"argument '{a.name}' (remove the directive, or write "
                                         "the array in another call)")
            self.check_array_kept(op, a, "is checkpointed, so it reads")
        return True

    def rev_Call(self, op: Call, b: Builder, adj: dict[Value, Value]) -> None:
        ybs = [adj.pop(r, None) for r in op.results]
        if not self.needs_adjoint_call(op):
            return
        callee = self.module.function(op.callee)
        if self.checkpointed(op):  # its forward sweep again, taping, just before its reverse
            b.call(callee.primal + FWD, [self.m(a) for a in op.operands],
                   [r.type for r in op.results], [r.name for r in op.results])
        c_params = self.activity.active_params(callee)
        c_results = self.activity.active_results(callee)
        args: list[Value] = []
        params = set(self.fn.params) | self.live_local_arrays()
        # its g, or its C adjoint (@external), reads the arrays
        custom = (bool(callee.custom_adjoint) or callee.external is not None) and not self.vector
        for p, a in enumerate(op.operands):
            if custom and isinstance(a.type, ArrayType):
                self.check_array_kept(op, a, "has a custom adjoint, which reads"
                                      if callee.external is None else
                                      "is an external C function, whose C adjoint reads")
                args.append(self.m(a))
            elif isinstance(a.type, ArrayType) and a not in params:
                # g_bwd never reads a primal array (only its extents), and this local array
                # of the caller is gone or out of the reverse sweep's reach: pass the
                # adjoint array in its place
                args.append(self.shadow_or_zero(b, a))
            else:
                args.append(self.m(a))
            if p in c_params and isinstance(a.type, ArrayType):
                args.append(self.shadow_or_zero(b, a))
        for j in c_results:
            args.append(ybs[j] if ybs[j] is not None else self.zero(b, op.results[j]))
        if self.vector:
            assert self.nbdirs is not None
            args.append(self.nbdirs)
        scalars = [p for p in c_params if not isinstance(callee.params[p].type, ArrayType)]
        jargs = None if self.checkpointed(op) else joint.arguments(self, op, ybs)
        if jargs is not None and joint.call(self, op, jargs, scalars, b, adj):
            return  # g_b in the forward sweep
        outs = b.call(callee.primal + BWD, args,
                      [self.atype(callee.params[p].type) for p in scalars],
                      [adjoint_name(op.operands[p].name) for p in scalars])
        if jargs is not None:
            bwd = b.region.ops[-1]
            assert isinstance(bwd, Call)
            self.joint_calls[op] = (bwd, jargs)
        for p, out in zip(scalars, outs, strict=True):
            self.accumulate(b, adj, op.operands[p], out)

    def check_array_kept(self, op: Call, array: Value, reads: str) -> None:
        """A call whose array arguments are read again in the reverse sweep (checkpointed, or
        with a custom adjoint): they must still hold what the call read (nothing writes them
        later, nor in a loop around the call) and still exist (a local array is gone in a
        ``_bwd`` half)."""
        if self.kept_calls is None:
            self.kept_calls = _kept_call_arrays(self.fn, self.module)
        kept = (op, array) in self.kept_calls
        param = next((i for i, p in enumerate(self.fn.params) if p is array), None)
        # in a _bwd half, the array must also be one every caller of this function keeps
        if kept and (not self.split or param in self.kept_params):
            return
        from ..frontend.diagnostics import AdgenError
        f = self.fn.primal
        why = "is written after the call" if not kept else \
            f"is a local array, gone when {f}{BWD} runs" if param is None else \
            f"may be written by a caller of '{f}' between {f}{FWD} and {f}{BWD}"
        callee = self.module.function(op.callee)
        nested = self.module.nested.get(op.callee)
        # named as the source names it: the Python function of a C one, grad(g) for g_grad
        shown = f"'{callee.external.function}'" if callee.external is not None else \
            f"grad({nested.callee})" if nested is not None else f"'{op.callee}'"
        raise AdgenError(op.loc, f"{shown} {reads} its array arguments again in the "
                                 f"reverse sweep, and '{array.name}' {why} (pass an array that "
                                 "keeps its values, or copy it into a new one first)")

    def shadow_or_zero(self, b: Builder, array: Value) -> Value:
        sh = self.shadow.get(array)
        if sh is not None:
            return sh
        at = array.type
        assert isinstance(at, ArrayType)
        new = self.m(array)
        owner = new.owner
        extents = list(owner.operands) if isinstance(owner, Zeros) else \
            [b.dim(new, k) for k in range(at.ndim)]
        return b.zeros(extents, ArrayType(at.elem, at.ndim, self.vector), adjoint_name(array.name))

    def free_values(self, op: Op) -> list[Value]:
        """Active scalars defined outside ``op`` and used inside it, in order of first use."""
        inside: set[Value] = set()
        for o in op.walk():
            if o is not op:
                inside.update(o.results)
            for r in o.regions:
                inside.update(r.args)
        out: list[Value] = []
        seen: set[Value] = set()
        for o in op.walk():
            if o is op:
                continue
            for v in o.operands:
                if v not in inside and v not in seen and self.active(v) and \
                        not isinstance(v.type, ArrayType):
                    seen.add(v)
                    out.append(v)
        return out

    def rev_If(self, op: If, b: Builder, adj: dict[Value, Value]) -> None:
        ybs = [adj.pop(r, None) for r in op.results]
        if all(y is None for y in ybs) and not self.has_work(op):
            return
        free = self.free_values(op)
        new = If([self.m(op.operands[0])], [], op.loc, regions=[Region(), Region()])
        branch_adj: list[dict[Value, Value]] = []
        for old_r, new_r in zip(op.regions, new.regions, strict=True):
            self.mirror[new_r] = self.fwd_region[old_r]
            badj = dict(adj)
            bb = Builder(new_r, op.loc)
            self.alloc_shadows(old_r, bb)
            y = old_r.terminator
            assert isinstance(y, Yield)
            for v, yb in zip(y.operands, ybs, strict=True):
                if yb is not None:
                    self.accumulate(bb, badj, v, yb)
            self.reverse_ops(old_r.ops[:-1], bb, badj)
            branch_adj.append(badj)
        changed = [v for v in free if any(a.get(v) is not adj.get(v) for a in branch_adj)]
        for new_r, badj in zip(new.regions, branch_adj, strict=True):
            bb = Builder(new_r, op.loc)
            outs = [badj.get(v) or self.zero(bb, v) for v in changed]
            new_r.ops.append(Yield(outs, [], op.loc))
        new.results = [Value(self.atype(v.type), adjoint_name(v.name)) for v in changed]
        for r in new.results:
            r.owner = new
        b.insert(new)
        for v, r in zip(changed, new.results, strict=True):
            adj[v] = r

    def reverse_loop(self, op: For | While, b: Builder, adj: dict[Value, Value],
                     start: Value, stop: Value, step: Value, carried: list[Value],
                     iv: tuple[Value, Value] | None, recompute: bool = False,
                     jacobian: bool = False, replay: list[int] | None = None,
                     unwind: dict[int, tuple[str, Value]] | None = None) -> For:
        """The reversed loop: ``for`` over (start, stop, step) whose body reverses ``op``'s
        body; ``carried``: ``op``'s carried block arguments; ``iv``: (forward index, index).
        ``recompute`` (a prange, ``can_recompute``): the body first computes the iteration
        again, so that what its reverse needs is at hand and what inner loops tape is popped
        within the iteration.  ``jacobian`` (a prange marked ``# adgen: forward-in-reverse``,
        with ``recompute``): the body computes the iteration again with its tangents and
        applies the transposed Jacobian (``mixed.py``) instead of reversing the body.
        ``replay`` (a loop whose adjoint runs in the forward order, see ``replayable``): the
        inactive carried values the adjoint loop carries too, from the same initial value
        and by the same update, instead of reading them from the tape.  ``unwind`` (a loop
        whose adjoint runs backwards, see ``unwindable``): slot -> (prim, operand) of the
        inverse update of an inactive integer the adjoint loop carries from the forward
        loop's final value back to its initial one."""
        body = op.body
        slots = [j for j, a in enumerate(carried)
                 if (self.active(a) or self.active(op.results[j])) and not isinstance(a.type, ArrayType)]
        ybs = {j: adj.pop(op.results[j], None) for j in range(len(op.results))}
        free = [v for v in self.free_values(op) if not any(v is c for c in carried)]
        inits = [ybs[j] if ybs[j] is not None else self.zero(b, carried[j]) for j in slots]
        inits += [adj.get(v) or self.zero(b, v) for v in free]
        riv = Value(I64, iv[0].name if iv else "it")
        cb = [Value(self.atype(carried[j].type), adjoint_name(carried[j].name)) for j in slots]
        acc = [Value(self.atype(v.type), adjoint_name(v.name)) for v in free]
        region = Region([riv, *cb, *acc])
        parallel = isinstance(op, For) and op.parallel
        new = For([start, stop, step, *inits], [], op.loc, regions=[region], parallel=parallel,
                  iteration_tape=recompute and parallel)
        saved = (dict(self.map), dict(self.fwd_region), dict(self.choices), dict(self.trips))
        if recompute and not jacobian:
            assert isinstance(op, For)
            # a prange's sums are not needed (their adjoint is the same in every iteration);
            # the values a checkpointed loop carries are those of the forward sweep, which
            # the tape brings back (record.py: block arguments of a loop body)
            zb = Builder(region, op.loc)
            state = [zb.const(0, a.type) for a in body.args[1:]] if op.parallel else None
            self.recompute_iteration(op, region, riv, state)
        self.mirror[region] = self.fwd_region[body]
        if iv is not None:
            self.preseed[(region, iv[1])] = riv
        if replay or unwind:
            y = body.terminator
            assert isinstance(y, Yield)
            # record.py adds the slots the reverse body turns out to use
            slots_of: dict[Value, Carried] = {
                self.m(carried[j]): (self.m(op.inits[j]), self.m(y.operands[j]), None)
                for j in replay or []}
            for j, (prim, delta) in (unwind or {}).items():
                slots_of[self.m(carried[j])] = (
                    self.m(op.results[j]), self.m(y.operands[j]), (prim, self.m(delta)))
            self.replays[region] = (new, slots_of)
        if jacobian:
            from .mixed import IterationJacobian
            assert isinstance(op, For)
            outs = IterationJacobian(self, op).build(new, slots, cb, free, acc)
        else:
            outs = self.reverse_body(op, Builder(region, op.loc), slots, cb, free, acc)
        region.ops.append(Yield(outs, [], op.loc))
        if recompute:  # what follows the loop refers to the forward sweep again
            self.map, self.fwd_region, self.choices, self.trips = saved
            _primal_calls(self.fwd_region[body])  # the forward sweep's loop tapes nothing
        new.results = [Value(a.type, a.name) for a in [*cb, *acc]]
        for r in new.results:
            r.owner = new
        b.insert(new)
        for v, r in zip(free, new.results[len(slots):], strict=True):
            adj[v] = r
        for j, r in zip(slots, new.results[:len(slots)], strict=True):
            self.accumulate(b, adj, op.inits[j], r)
        return new

    def recompute_iteration(self, op: For, region: Region, index: Value,
                            state: list[Value] | None) -> None:
        """Append to ``region`` a copy of ``op``'s body without its stores (the arrays already
        hold what they wrote), for loop index ``index`` and carried values ``state`` (None:
        those of the forward sweep).  The values of the copy are visible as is in
        ``region`` (``record.py``), where the reverse of the body is then built."""
        body = op.body
        self.map[body.args[0]] = index
        if state is not None:
            for a, v in zip(body.args[1:], state, strict=True):
                self.map[a] = v
        start = len(region.ops)
        self.clone_ops(body.ops[:-1], region)
        _drop_stores(region)
        self.computed_again(body, region, start)

    def computed_again(self, body: Region, region: Region, start: int) -> None:
        """``region.ops[start:]`` compute ``body`` again (``self.map`` maps its values to
        theirs): their values are visible as is in ``region``, their loads may be read again
        (every load of the body is stable, see ``can_recompute``) and their nested regions are
        forward regions for ``record.py``."""
        self.reloadable_copies |= {self.map[o.results[0]] for top in body.ops
                                   for o in top.walk() if isinstance(o, Load)}
        self.recomputed.update(o for o in region.ops[start:] if o.regions)
        self.recomputing.add(region)

    def can_recompute(self, op: For) -> bool:
        """Whether the adjoint of ``op`` (a prange, or a loop marked ``# adgen: checkpoint``)
        may compute each iteration again; see ``why_not_recompute``."""
        return (op.parallel or op.directive == "checkpoint") and self.why_not_recompute(op) is None

    def check_checkpointed(self, op: For) -> None:
        """A located error when the loop's directive asks to compute its iterations again and
        they cannot be."""
        why = self.why_not_recompute(op)
        if why is not None:
            from ..frontend.diagnostics import AdgenError
            raise AdgenError(op.loc, f"this loop cannot be checkpointed: {why}, so its iterations "
                                     "cannot be computed again in the reverse sweep (remove "
                                     f"'# adgen: {op.directive}')")

    def recompute_unread(self, op: For, b: Builder, adj: dict[Value, Value], start: Value,
                         stop: Value, step: Value, fwd_iv: Value) -> bool:
        """The adjoint of a prange that reads elements it then writes (``y[i] += e``), each
        iteration computed again as ``can_recompute`` allows, where the reverse of the body
        reads nothing computed from those reads (``y[i]``'s value is not needed for the
        adjoint of a sum): the body computed again reads the element as written, but nothing
        uses it.  False (nothing changed) where the body has other reasons not to be computed
        again or the reverse needs such a value (``y[i] *= e``): the loop then tapes."""
        unstable: list[Load] = []
        if self.why_not_recompute(op, unstable) is not None or not unstable:
            return False
        calls = [(o, o.callee) for top in self.fwd_region[op.body].ops for o in top.walk()
                 if isinstance(o, Call)]
        trial = Builder(Region(), b.loc)
        trial_adj = dict(adj)
        # what building the trial records about the body: its copies replace the forward
        # sweep's ops in ``fwd_ops`` (where the reverse of an inner loop marks the forward
        # loop ``recompute``, or ``joint`` finds a call), and are taken as computed again
        kept = (dict(self.fwd_ops), set(self.recomputed), set(self.recomputing),
                set(self.reloadable_copies), dict(self.joint_calls))
        # a prange nested in one whose trial is being built: that trial's sets, which also
        # take this one's copies (the body of the inner loop is part of the outer one's)
        outer = (self.unread, self.unread_copies, self.clones)
        self.unread, self.unread_copies, self.clones = set(unstable), set(), set()
        try:
            new = self.reverse_loop(op, trial, trial_adj, start, stop, step, op.body.args[1:],
                                    (op.body.args[0], fwd_iv), recompute=True)
            copies, clones = self.unread_copies, self.clones
        finally:
            inner = (self.unread_copies, self.clones)
            self.unread, self.unread_copies, self.clones = outer
            if self.clones is not None:
                self.unread_copies |= inner[0]
                self.clones |= inner[1] or set()
        if _reads_derived(new.body, copies, clones):
            for call, callee in calls:  # the forward sweep's calls tape again
                call.callee = callee
            (self.fwd_ops, self.recomputed, self.recomputing, self.reloadable_copies,
             self.joint_calls) = kept
            return False
        b.region.ops += trial.region.ops
        adj.clear()
        adj.update(trial_adj)
        return True

    def why_not_recompute(self, op: For, unstable: list[Load] | None = None) -> str | None:
        """None when every array the body of ``op`` reads, itself or through a call, still
        holds the same elements in the reverse sweep (see ``reloadable``) and no call in it
        writes an array; else why.  With ``unstable`` given, the loads of parameters that
        are written after they are read are put there instead of being a reason."""
        stable = set(_stable_loads(self.fn, self.module))
        if self.kept_calls is None:
            self.kept_calls = _kept_call_arrays(self.fn, self.module)
        params = {p for i, p in enumerate(self.fn.params)
                  if not self.split or i in self.kept_params}
        every_param = set(self.fn.params)
        if not self.split:  # f_b: its local arrays live until its return, after the sweep
            params |= {inner.result for inner in self.fn.walk() if isinstance(inner, Zeros)}

        def unkept(array: Value) -> str:
            return f"'{array.name}' is a local array" if array not in every_param else \
                f"'{array.name}' may be written by a caller of '{self.fn.primal}' before its " \
                "reverse sweep"

        for o in op.body.ops:
            for inner in o.walk():
                if isinstance(inner, Load):
                    array = inner.operands[0]
                    if inner not in stable and (unstable is None or array not in params):
                        return f"'{array.name}' is written after it is read"
                    if array not in params:
                        return unkept(array)
                    if inner not in stable:
                        unstable.append(inner)
                if isinstance(inner, Call):
                    if written_params(self.module.function(inner.callee), self.module):
                        return f"'{inner.callee}' writes an array"
                    for array in (a for a in inner.operands if is_array(a)):
                        if (inner, array) not in self.kept_calls:
                            return f"'{array.name}' is written after '{inner.callee}' reads it"
                        if array not in params:
                            return unkept(array)
        return None

    def rev_binomial(self, op: For, b: Builder, adj: dict[Value, Value], k: int) -> None:
        """``# adgen: binomial(k)``: the forward sweep runs the loop and saves nothing; the
        reverse sweep keeps at most k snapshots of the carried values (local arrays),
        advances from the latest one to place the next where revolve's binomial rule says
        (``revolve_split``), and reverses the last step not yet reversed from a state one
        advance away:

            snapshots = [(0, inits)]; end = n
            while end > 0:
                t0, state = snapshots[-1]
                if end - t0 > 1 and len(snapshots) < k:
                    m = t0 + revolve_split(end - t0, k - len(snapshots) + 1)
                    snapshots.append((m, advance(state, t0, m)))
                else:
                    reverse step end - 1 from advance(state, t0, end - 1)
                    end -= 1; drop the snapshot if it was at end
        """
        from ..frontend.diagnostics import AdgenError
        self.check_checkpointed(op)
        step_op = op.operands[2].owner
        if not isinstance(step_op, Const):
            raise AdgenError(op.loc, f"'# adgen: {op.directive}' needs a constant step (write "
                                     "range(start, stop) or range(start, stop, 2))")
        body = op.body
        carried = body.args[1:]
        s = int(step_op.value)
        start, stop = self.m(op.operands[0]), self.m(op.operands[1])
        zero, one, kk = b.const(0, I64), b.const(1, I64), b.const(k, I64)
        span = b.prim("sub", stop, start) if s > 0 else b.prim("sub", start, stop)
        if abs(s) != 1:
            span = b.prim("floordiv", b.prim("add", span, b.const(abs(s) - 1, I64)),
                          b.const(abs(s), I64))
        n = b.prim("max", span, zero, name_hint="trips")
        snap_t = b.zeros([kk], ArrayType(I64, 1), "snap_at")
        snaps = []
        for c, init in zip(carried, op.inits, strict=True):
            assert isinstance(c.type, ScalarType)
            arr = b.zeros([kk], ArrayType(c.type, 1), (c.name or "state") + "_snap")
            b.store(arr, [zero], self.m(init))
            snaps.append(arr)
        b.store(snap_t, [zero], zero)
        slots = [j for j, a in enumerate(carried)
                 if (self.active(a) or self.active(op.results[j])) and
                 not isinstance(a.type, ArrayType)]
        ybs = {j: adj.pop(op.results[j], None) for j in range(len(op.results))}
        free = [v for v in self.free_values(op) if not any(v is c for c in carried)]
        inits = [n, one] + [ybs[j] if ybs[j] is not None else self.zero(b, carried[j])
                            for j in slots]
        inits += [adj.get(v) or self.zero(b, v) for v in free]

        def slot_values(names: list[Value]) -> list[Value]:
            return [Value(v.type, v.name) for v in names]

        types = [Value(I64, "end"), Value(I64, "snapshots")]
        types += [Value(self.atype(carried[j].type), adjoint_name(carried[j].name)) for j in slots]
        types += [Value(self.atype(v.type), adjoint_name(v.name)) for v in free]
        cond = Region(slot_values(types))
        loop_body = Region(slot_values(types))
        loop = While(inits, [], op.loc, regions=[cond, loop_body])
        cb = Builder(cond, op.loc)
        cond.ops.append(Condition([cb.prim("gt", cond.args[0], cb.const(0, I64))], [], op.loc))
        wb = Builder(loop_body, op.loc)
        end, size = loop_body.args[0], loop_body.args[1]
        carried_b = loop_body.args[2:2 + len(slots)]
        acc = loop_body.args[2 + len(slots):]
        top = wb.prim("sub", size, wb.const(1, I64))
        t0 = wb.load(snap_t, [top], "t0")
        state = [wb.load(arr, [top], c.name) for arr, c in zip(snaps, carried, strict=True)]
        left = wb.prim("sub", end, t0)
        push = wb.prim("and", wb.prim("gt", left, wb.const(1, I64)), wb.prim("lt", size, kk))
        branch = If([push], [], op.loc, regions=[Region(), Region()])
        wb.insert(branch)
        # store a snapshot further on
        pb = Builder(branch.regions[0], op.loc)
        d = pb.prim("revolve_split", left, pb.prim("add", pb.prim("sub", kk, size),
                                                    pb.const(1, I64)))
        m = pb.prim("add", t0, d)
        ahead = self.advance(op, pb, state, t0, m, start, s)
        pb.store(snap_t, [size], m)
        for arr, v in zip(snaps, ahead, strict=True):
            pb.store(arr, [size], v)
        branch.regions[0].ops.append(Yield([end, pb.prim("add", size, pb.const(1, I64)),
                                            *carried_b, *acc], [], op.loc))
        # reverse the last step not reversed yet
        rr = branch.regions[1]
        rb = Builder(rr, op.loc)
        last = rb.prim("sub", end, rb.const(1, I64))
        before = self.advance(op, rb, state, t0, last, start, s)
        outs = self.reverse_step(op, rr, before, last, start, s, slots, carried_b, free, acc)
        new_size = rb.prim("select", rb.prim("eq", t0, last), rb.prim("sub", size, rb.const(1, I64)),
                           size)
        rr.ops.append(Yield([last, new_size, *outs], [], op.loc))
        branch.results = slot_values(types)
        for r in branch.results:
            r.owner = branch
        loop_body.ops.append(Yield(list(branch.results), [], op.loc))
        loop.results = slot_values(types)
        for r in loop.results:
            r.owner = loop
        b.insert(loop)
        for v, r in zip(free, loop.results[2 + len(slots):], strict=True):
            adj[v] = r
        for j, r in zip(slots, loop.results[2:2 + len(slots)], strict=True):
            self.accumulate(b, adj, op.inits[j], r)

    def iteration_index(self, b: Builder, t: Value, start: Value, s: int) -> Value:
        """The loop variable of step ``t`` (counted from 0) of a loop from ``start`` by ``s``."""
        return b.prim("add", start, t if s == 1 else b.prim("mul", t, b.const(s, I64)))

    def advance(self, op: For, b: Builder, state: list[Value], first: Value, stop: Value,
                start: Value, s: int) -> list[Value]:
        """The carried values after steps ``first`` .. ``stop - 1`` of ``op`` from ``state``:
        a copy of the body without its stores, calling primal functions (it tapes nothing)."""
        body = op.body
        t = Value(I64, "t")
        args = [Value(v.type, v.name) for v in state]
        region = Region([t, *args])
        loop = For([first, stop, b.const(1, I64), *state], [], op.loc, regions=[region])
        lb = Builder(region, op.loc)
        self.map[body.args[0]] = self.iteration_index(lb, t, start, s)
        for a, v in zip(body.args[1:], args, strict=True):
            self.map[a] = v
        self.clone_ops(body.ops[:-1], region)
        _drop_stores(region)
        _primal_calls(region)
        y = body.terminator
        assert isinstance(y, Yield)
        region.ops.append(Yield([self.m(v) for v in y.operands], [], op.loc))
        loop.results = [Value(v.type, v.name) for v in state]
        for r in loop.results:
            r.owner = loop
        b.insert(loop)
        return loop.results

    def reverse_step(self, op: For, region: Region, state: list[Value], t: Value, start: Value,
                     s: int, slots: list[int], carried_b: list[Value], free: list[Value],
                     acc: list[Value]) -> list[Value]:
        """In ``region``: step ``t`` of ``op`` computed again from ``state`` (its inner loops
        tape within the step), then reversed; returns the adjoints of the carried values on
        entry to the step (``slots``) and of the free values."""
        b = Builder(region, op.loc)
        self.recompute_iteration(op, region, self.iteration_index(b, t, start, s), state)
        return self.reverse_body(op, b, slots, carried_b, free, acc)

    def reverse_body(self, op: For | While, b: Builder, slots: list[int], carried_b: list[Value],
                     free: list[Value], acc: list[Value]) -> list[Value]:
        """The reverse of one iteration of ``op``'s body, given the adjoints of the values it
        passes on (``carried_b``, for ``slots``) and of the free values so far (``acc``);
        returns the adjoints of the carried values on entry, then of the free values."""
        body = op.body
        carried = body.args[1:] if isinstance(op, For) else body.args
        badj: dict[Value, Value] = {v: a for v, a in zip(free, acc, strict=True)}
        y = body.terminator
        assert isinstance(y, Yield)
        for j, c in zip(slots, carried_b, strict=True):
            self.accumulate(b, badj, y.operands[j], c)
        self.reverse_ops(body.ops[:-1], b, badj)
        outs = [badj.get(carried[j]) or self.zero(b, carried[j]) for j in slots]
        return outs + [badj[v] for v in free]

    def rev_For(self, op: For, b: Builder, adj: dict[Value, Value]) -> None:
        if not self.has_work(op):
            for r in op.results:
                adj.pop(r, None)
            return
        start, stop, step = (self.m(v) for v in op.operands[:3])
        fwd_iv = self.map[op.body.args[0]]
        if op.directive == FORWARD_IN_REVERSE:
            # the adjoint of each iteration from its Jacobian, computed in forward mode (seed
            # 003): in any order, nothing taped
            self.reverse_loop(op, b, adj, start, stop, step, op.body.args[1:],
                              (op.body.args[0], fwd_iv), recompute=True, jacobian=True)
            return
        if joint.loop(self, op, b, adj, start, stop, step, fwd_iv):
            return  # reversed iteration by iteration in the forward sweep
        if self.order_free(op):
            # the iterations' adjoints only add up: run them in the forward order (which keeps
            # a[i + 1] += ... of one iteration in a register for the next), unless the body
            # needs saved values, which come back in reverse order
            # inactive recurrences (``p = p * t``) are carried along rather than saved
            replay = [] if op.parallel else self.replayable(op)
            trial = Builder(Region(), b.loc)
            trial_adj = dict(adj)
            new = self.reverse_loop(op, trial, trial_adj, start, stop, step, op.body.args[1:],
                                    (op.body.args[0], fwd_iv), replay=replay)
            recompute = not op.directive and not op.parallel and \
                self.needs_record(new.body, op, replay=replay) and \
                not self.needs_record(new.body, op, "recompute", replay)
            if recompute or not self.needs_record(new.body, op, replay=replay):
                if recompute:
                    # only results of libm calls would be saved: computing them again keeps
                    # the loop free of the tape, so both sweeps of it can be vectorised
                    self.fwd_ops[op].directive = "recompute"
                b.region.ops += trial.region.ops
                adj.clear()
                adj.update(trial_adj)
                return
        if op.parallel and self.can_recompute(op):
            # a prange whose adjoint needs values of its body: each adjoint iteration
            # computes its own again (seed 004), in any order, with no tape across iterations;
            # by forward-in-reverse where that is measured faster (mixed.DEFAULT_MAX_DIRECTIONS)
            from .mixed import IterationJacobian
            jacobian = not op.directive and IterationJacobian(self, op).pays_off()
            self.reverse_loop(op, b, adj, start, stop, step, op.body.args[1:],
                              (op.body.args[0], fwd_iv), recompute=True, jacobian=jacobian)
            return
        if op.parallel and self.recompute_unread(op, b, adj, start, stop, step, fwd_iv):
            return
        if op.directive.startswith("binomial("):
            saved = (dict(self.map), dict(self.fwd_region), dict(self.choices), dict(self.trips))
            self.rev_binomial(op, b, adj, int(op.directive[len("binomial("):-1]))
            self.map, self.fwd_region, self.choices, self.trips = saved
            _primal_calls(self.fwd_region[op.body])  # the forward sweep tapes nothing
            return
        rstart, rstop, rstep = _reversed_range(b, start, stop, step)
        if op.directive == "checkpoint":
            # the carried values are taped; each iteration is computed again from them
            self.check_checkpointed(op)
            self.reverse_loop(op, b, adj, rstart, rstop, rstep, op.body.args[1:],
                              (op.body.args[0], fwd_iv), recompute=True)
            return
        self.reverse_loop(op, b, adj, rstart, rstop, rstep, op.body.args[1:],
                          (op.body.args[0], fwd_iv),
                          unwind={} if op.parallel else self.unwindable(op))

    def unwindable(self, op: For) -> dict[int, tuple[str, Value]]:
        """The carried slots of ``op`` that its adjoint loop, counting down, may carry back
        from the final value (``reverse_loop``'s ``unwind``): inactive integers updated by an
        exact inverse, ``k = k + d`` (``k - d`` undoes it) or ``k = k - d``, with ``d``
        available to the reverse body (a constant, the loop index, values before the loop),
        and read in the body by more than comparisons (whose 1-byte results the tape would
        hold instead): a counter ``idx += 1`` used as an index is then saved once per run
        of the loop (its final value), not once per iteration."""
        body = op.body
        y = body.terminator
        assert isinstance(y, Yield)
        available = self.availability(op, None, [])
        out: dict[int, tuple[str, Value]] = {}
        for j, a in enumerate(body.args[1:]):
            if self.active(a) or self.active(op.results[j]) or \
                    not (isinstance(a.type, ScalarType) and a.type.is_int):
                continue
            upd = y.operands[j].owner
            if not isinstance(upd, Prim) or upd.prim not in ("add", "sub"):
                continue
            ops = upd.operands
            if ops[0] is ops[1]:
                continue
            if ops[0] is a:
                delta = ops[1]
            elif upd.prim == "add" and ops[1] is a:
                delta = ops[0]
            else:
                continue
            readers = [o for top in body.ops for o in top.walk()
                       if o is not upd and any(v is a for v in o.operands)]
            if available(self.m(delta)) and any(
                    not (isinstance(o, Prim) and o.prim in COMPARISONS) for o in readers):
                out[j] = ("sub" if upd.prim == "add" else "add", delta)
        return out

    def order_free(self, op: For, calls_allowed: bool = False) -> bool:
        """Whether the reversed iterations may run in any order: the body writes no array
        with an adjoint, calls no adjoint (unless ``calls_allowed``: ``joint.loop`` calls
        ``g_b``, whose adjoints only add up, in the forward sweep), has no while (its trip
        count is recorded), and
        each active carried value is a sum (``s = s + e``, ``s`` used only there), so its
        adjoint is the same in every iteration and the rest are commutative increments.  A
        prange's iterations are independent: only what the tape brings back (adjoints of
        calls, trip counts of whiles) fixes their order."""
        body = op.body
        for o in body.ops:
            for inner in o.walk():
                if isinstance(inner, Store) and inner.operands[0] in self.shadowed \
                        and not op.parallel:
                    return False
                if isinstance(inner, Call) and self.needs_adjoint_call(inner) and \
                        not calls_allowed:
                    return False
                if isinstance(inner, While):
                    return False
        y = body.terminator
        assert isinstance(y, Yield)
        if op.parallel:
            return True
        uses: dict[Value, int] = {}
        for o in body.ops:
            for inner in o.walk():
                for v in inner.operands:
                    uses[v] = uses.get(v, 0) + 1
        for j, arg in enumerate(body.args[1:]):
            if not (self.active(arg) or self.active(op.results[j])):
                continue
            sites = _sum_sites(arg, y.operands[j], uses)
            if sites is None or uses.get(arg) != sites:
                return False
        return True

    def replayable(self, op: For) -> list[int]:
        """The carried slots of ``op`` that the adjoint loop, run in the forward order, may
        carry too (``reverse_loop``'s ``replay``): inactive scalars whose update is computed
        from values available to the reverse body (``p = p * t``: the powers of ``t``), so
        that the forward sweep saves none of them."""
        body = op.body
        y = body.terminator
        assert isinstance(y, Yield)
        slots = [j for j, a in enumerate(body.args[1:])
                 if not (self.active(a) or self.active(op.results[j]))
                 and not isinstance(a.type, ArrayType)]
        while slots:
            available = self.availability(op, None, slots)
            kept = [j for j in slots if available(self.m(y.operands[j]))]
            if kept == slots:
                break
            slots = kept
        return slots

    def needs_record(self, rev_body: Region, op: For, assume: str | None = None,
                     replay: list[int] | None = None) -> bool:
        """Whether the reverse body reads a value of the loop that would be saved (popping
        needs the reverse order); ``assume``: the loop's directive, if not its own;
        ``replay``: the carried slots the adjoint loop carries itself."""
        available = self.availability(op, assume, replay or [])
        return any(not available(v) for top in rev_body.ops for o in top.walk()
                   for v in o.operands)

    def availability(self, op: For, assume: str | None, replay: list[int]) -> Callable[[Value], bool]:
        """Whether a forward value is available to the reverse of ``op``'s body without the
        tape (record.py recomputes it), the carried values of slots ``replay`` given."""
        from .record import recomputable
        directive: dict[Value, str] = {}  # value defined in the loop -> its loop's directive
        ivs: set[Value] = set()

        def index(r: Region, d: str) -> None:
            for a in r.args:
                directive[a] = d
            for o in r.ops:
                for v in o.results:
                    directive[v] = d
                if isinstance(o, For):  # ``fwd`` is the forward copy: its own loop indices
                    ivs.add(o.body.args[0])
                for sub in o.regions:
                    index(sub, o.directive if isinstance(o, (For, While)) else d)
        fwd = self.fwd_region[op.body]
        index(fwd, op.directive if assume is None else assume)
        ivs.add(fwd.args[0])
        ivs.update(fwd.args[1 + j] for j in replay)
        reloadable = self.reloadable()
        known: dict[Value, bool] = {}

        def available(v: Value) -> bool:
            if v not in directive or v in ivs:
                return True
            if v not in known:
                o = v.owner
                known[v] = isinstance(o, Op) and recomputable(o, directive[v], reloadable) \
                    and all(available(x) for x in o.operands)
            return known[v]

        return available

    def rev_While(self, op: While, b: Builder, adj: dict[Value, Value]) -> None:
        if op not in self.trips:
            for r in op.results:
                adj.pop(r, None)
            return
        for o in op.regions[0].ops:
            if isinstance(o, Call) and self.needs_adjoint_call(o):
                from ..frontend.diagnostics import AdgenError
                raise AdgenError(o.loc, "reverse mode does not support a call in a while "
                                 "condition that writes an active array (call it in the loop "
                                 "body and test its result)")
        self.reverse_loop(op, b, adj, b.const(0, I64), self.trips[op], b.const(1, I64),
                          op.body.args, None)


def _sum_sites(arg: Value, v: Value, uses: dict[Value, int]) -> int | None:
    """How many additions make ``v`` (what a loop passes on) ``arg`` (what it got) plus a
    term: ``arg + e``, ``e + arg``, ``arg - e``, or an if whose branches each yield one of
    those or ``arg`` itself; None when ``v`` is not such a sum or is used elsewhere
    (``uses``: how many times each value of the body is read)."""
    if v is arg:
        return 1
    if uses.get(v) != 1:
        return None
    o = v.owner
    if isinstance(o, Prim) and o.prim in ("add", "sub") and o.operands[0] is not o.operands[1] \
            and (o.operands[0] is arg or (o.prim == "add" and o.operands[1] is arg)):
        return 1
    if isinstance(o, If) and o.operands[0] is not arg:
        k = next(k for k, r in enumerate(o.results) if r is v)
        total = 0
        for branch in o.regions:
            y = branch.terminator
            assert isinstance(y, Yield)
            n = _sum_sites(arg, y.operands[k], uses)
            if n is None:
                return None
            total += n
        return total
    return None


def _reversed_range(b: Builder, start: Value, stop: Value, step: Value) -> tuple[Value, Value, Value]:
    """(start, stop, step) of ``reversed(range(start, stop, step))``."""
    one = b.const(1, I64)
    s = step.owner.value if isinstance(step.owner, Const) else None
    if s == 1:
        return b.sub(stop, one), b.sub(start, one), b.const(-1, I64)
    if s == -1:
        return b.add(stop, one), b.add(start, one), one
    zero = b.const(0, I64)
    if isinstance(s, int) and s > 0:
        n = b.prim("max", b.prim("floordiv", b.add(b.sub(stop, start), b.const(s - 1, I64)), step), zero)
    elif isinstance(s, int):
        n = b.prim("max", b.prim("floordiv", b.add(b.sub(start, stop), b.const(-s - 1, I64)),
                                 b.neg(step)), zero)
    else:
        up = b.prim("max", b.prim("floordiv", b.sub(b.add(b.sub(stop, start), step), one), step), zero)
        down = b.prim("max", b.prim("floordiv", b.sub(b.sub(start, stop), b.add(step, one)),
                                    b.neg(step)), zero)
        n = b.prim("select", b.prim("gt", step, zero), up, down)
    if isinstance(s, int) and s < 0:  # start - (n - 1) * 2, not start + (n - 1) * -2
        back = b.const(-s, I64)
        return b.sub(start, b.mul(b.sub(n, one), back)), b.add(start, back), back
    last = b.add(start, b.mul(b.sub(n, one), step))
    return last, b.sub(start, step), b.neg(step)


def _substitute_tree(region: Region, subst: dict[Value, Value]) -> None:
    for top in region.ops:
        for op in top.walk():
            op.operands = [subst.get(v, v) for v in op.operands]


def _stable_loads(fn: Function, module: Module) -> list[Load]:
    """Loads whose array is not written later in program order, nor anywhere in a loop around
    the load (a later iteration would overwrite the element)."""
    reads = _stable_reads(fn, module, lambda op: [op.operands[0]] if isinstance(op, Load) else [])
    return [op for op, _ in reads]  # type: ignore[misc]


def _stable_reads(fn: Function, module: Module,
                  arrays_read: Callable[[Op], list[Value]]) -> list[tuple[Op, Value]]:
    """(op, array) for the arrays ``arrays_read(op)`` names that nothing writes later in
    program order, nor anywhere in a sequential loop around the op: in the reverse sweep they
    still hold what the op read."""
    pos: dict[Op, int] = {}
    end: dict[Op, int] = {}
    writes: dict[Value, list[int]] = {}  # array -> positions of the ops that may write it
    reads: list[tuple[Op, Value, list[Op]]] = []
    counter = 0

    def walk(region: Region, loops: list[Op]) -> None:
        nonlocal counter
        for op in region.ops:
            counter += 1
            pos[op] = counter
            if isinstance(op, Store):
                writes.setdefault(op.operands[0], []).append(counter)
            elif isinstance(op, Call):
                for p in written_params(module.function(op.callee), module):
                    writes.setdefault(op.operands[p], []).append(counter)
            reads.extend((op, a, loops) for a in arrays_read(op))
            inner = loops + [op] if isinstance(op, (For, While)) else loops
            for sub in op.regions:
                walk(sub, inner)
            end[op] = counter

    walk(fn.body, [])
    out = []
    for op, array, loops in reads:
        ws = writes.get(array, [])
        if any(w > pos[op] for w in ws):
            continue
        # other iterations of a prange write other elements than this one reads
        if any(pos[loop] <= w <= end[loop] for loop in loops for w in ws
               if not (isinstance(loop, For) and loop.parallel)):
            continue
        out.append((op, array))
    return out


def _reads_derived(region: Region, copies: set[Value], clones: set[Op]) -> bool:
    """Whether an op of ``region`` that is not one of ``clones`` (a copy of the primal body)
    uses a value computed from ``copies``, through the copies' operations, the values their
    loops carry and the results of their ifs and loops."""
    derived = set(copies)
    ops = [o for top in region.ops for o in top.walk()]
    changed = True
    while changed:
        changed = False
        for o in ops:
            if o not in clones or all(r in derived for r in o.results) and not o.regions:
                continue
            inner = [x for x in o.walk()]
            if not any(v in derived for x in inner for v in x.operands):
                continue
            news = list(o.results)
            for k, sub in enumerate(o.regions):
                news += sub.args[1:] if isinstance(o, For) and k == 0 else sub.args
            fresh = [v for v in news if v not in derived]
            if fresh:
                derived.update(fresh)
                changed = True
    # arithmetic whose value nothing uses does not count (``rules.adjoint`` builds every
    # partial: that of a / b for b reads a / b, where only a's adjoint is wanted)
    pure = (Prim, Cast, Const, Load, Dim)
    used: dict[Value, int] = {}
    for o in ops:
        for v in o.operands:
            used[v] = used.get(v, 0) + 1
    dead: set[Op] = set()
    changed = True
    while changed:
        changed = False
        for o in ops:
            if o not in dead and isinstance(o, pure) and o.results and \
                    not any(used.get(r) for r in o.results):
                dead.add(o)
                changed = True
                for v in o.operands:
                    used[v] -= 1
    return any(v in derived for o in ops if o not in clones and o not in dead
               for v in o.operands)


def _primal_calls(region: Region) -> None:
    """Make the split forward halves (``g_fwd``) called in ``region`` primal calls (``g``):
    code whose values the reverse sweep does not read tapes nothing."""
    for o in (x for top in region.ops for x in top.walk()):
        if isinstance(o, Call) and o.callee.endswith(FWD):
            o.callee = o.callee[:-len(FWD)]


def _drop_stores(region: Region) -> None:
    for op in region.ops:
        for sub in op.regions:
            _drop_stores(sub)
    region.ops = [op for op in region.ops if not isinstance(op, Store)]


def _simplify_sweep(rev_top: Region, fn: Function) -> None:
    """Fold, CSE and DCE of the reverse sweep alone (before the tape is laid out, so that
    only values the simplified sweep still uses are recorded)."""
    from ..pipeline import simplify
    tmp = Function(fn.name + "_rev", rev_top, [], fn.loc)
    simplify(tmp, verify=False)


def _split_needed(module: Module, activity: ModuleActivity, derived: list[str]) -> set[str]:
    """Functions whose adjoint is called from another adjoint (they get ``_fwd``/``_bwd``)."""
    out: set[str] = set()
    for name in derived:
        fn = module.function(name)
        builder = AdjointFunction(fn, module, activity, False, False)
        for op in fn.walk():
            if isinstance(op, Call) and builder.needs_adjoint_call(op):
                out.add(op.callee)
    return out


def differentiate(module: Module, activity: ModuleActivity, vector: bool,
                  early: bool = True) -> Module:
    """Adjoints of every function that needs one, their split halves when another adjoint
    calls them, and the primal helpers they call.  ``early``: whether adjoints known early
    may run in the forward sweep (``ad/joint.py``); not in the adjoint that the hvp modes
    differentiate, where ``retb`` stays a constant."""
    skipped = adjoint_only(module, vector)
    derived = [fn.name for fn in module.functions
               if activity.needs_derivative(fn.name) and fn.name not in skipped]
    split = _split_needed(module, activity, derived)
    kept = _kept_params(module, derived, split)
    out: list[Function] = []
    for name in derived:
        fn = module.function(name)
        if name in split:
            out += AdjointFunction(fn, module, activity, vector, True, kept[name]).run()
        out += AdjointFunction(fn, module, activity, vector, False, early=early).run()
    out = _called_halves(out)
    names = {f.name for f in out}
    needed: list[str] = []
    stack = [op.callee for f in out for op in f.walk() if isinstance(op, Call) and op.callee not in names]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.append(name)
        stack.extend(op.callee for op in module.function(name).walk() if isinstance(op, Call))
    helpers = [_clone_static(fn) for fn in module.functions if fn.name in needed]
    return Module(module.name, module.path, helpers + out, module.source_lines)


def _called_halves(functions: list[Function]) -> list[Function]:
    """``functions`` without the split halves no adjoint calls (``joint``: the callers of
    ``g`` call ``g_b`` instead)."""
    from ..ir.walk import calls

    by_name = {f.name: f for f in functions}
    seen = {f.name for f in functions if not f.name.endswith((FWD, BWD))}
    stack = list(seen)
    while stack:
        f = by_name.get(stack.pop())
        for name in calls(f) if f is not None else []:
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return [f for f in functions if f.name in seen]


def adjoint_only(module: Module, vector: bool = False) -> set[str]:
    """Functions no adjoint needs: those reached only through functions whose adjoint is a
    custom one (their bodies run in the forward sweep, as primal code, and are not
    differentiated; in vector mode custom adjoints are not used) or only from the static custom
    adjoints of nested derivatives (``ad.nested``), which reverse sweeps alone run."""
    from ..ir.walk import calls, reachable

    reached = reachable(module, [fn.name for fn in module.functions if not fn.is_static],
                        lambda fn: [] if fn.custom_adjoint and not vector else calls(fn))
    return {fn.name for fn in module.functions} - reached


def _kept_call_arrays(fn: Function, module: Module) -> set[tuple[Op, Value]]:
    """(call, array) for the array arguments of calls in ``fn`` that nothing writes
    after the call (nor in a loop around it)."""
    reads = _stable_reads(fn, module,
                          lambda o: [x for x in o.operands if is_array(x)] if isinstance(o, Call)
                          else [])
    return {(op, a) for op, a in reads}


def _kept_params(module: Module, derived: list[str], split: set[str]) -> dict[str, set[int]]:
    """For each function with split halves, the array parameters whose contents ``g_bwd`` may
    read again: at every call of ``g`` (in the functions that get adjoints) the argument is a
    parameter of the caller that nothing writes after the call (nor in a loop around it) and,
    when the caller is split as well, one that the caller's own callers keep.  Optimistic start,
    then a fixed point that removes what a call site breaks."""
    kept = {g: {i for i, p in enumerate(module.function(g).params) if is_array(p)}
            for g in split}
    stable = {name: _kept_call_arrays(module.function(name), module) for name in derived}
    changed = True
    while changed:
        changed = False
        for name in derived:
            caller = module.function(name)
            index = {p: i for i, p in enumerate(caller.params)}
            for op in caller.walk():
                if not isinstance(op, Call) or op.callee not in kept:
                    continue
                for k in list(kept[op.callee]):
                    a = op.operands[k]
                    ok = a in index and (op, a) in stable[name] and \
                        (name not in split or index[a] in kept[name])
                    if not ok:
                        kept[op.callee].discard(k)
                        changed = True
    return kept


def _clone_static(fn: Function) -> Function:
    c = copy.deepcopy(fn)
    c.is_static = True
    return c
