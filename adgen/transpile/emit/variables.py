"""Out of SSA: which values become C expressions and which C variables hold the rest.

A value is inlined into the expression of its single user when that is safe
(pure arithmetic may move past other statements; a load may not move past a
write to its array).  The other values get C variables named after the
source variable they came from, and a variable is reused by a later value of
the same name once the old value is dead (liveness over the structured IR,
where a use inside a loop keeps a value alive to the end of the loop).  A
loop's carried value, block argument and result share one variable; an
``if``'s result may take the variable of the value it replaces, and a value
yielded to a loop or ``if`` slot may live directly in the slot's variable,
so ``r = r * x`` in a loop body needs no temporary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir.core import (
    Break, Call, Cast, Const, Continue, Dim, For, Function, If, Load, Module, Op, Pop, Prim,
    Push, Region, Store, Value, While, Yield, Zeros,
)
from ..ir.prims import PRIMS
from ..ir.types import BOOL, ArrayType, Type, VecType, elem_of
from .names import c_base, reserved
from .signature import CSignature, root_param


#: the modes whose functions add to adjoint arrays they are given
ADJOINT_MODES = ("reverse", "vector-reverse", "hvp", "vector-hvp")


@dataclass
class Var:
    """One C variable, shared by the values whose live ranges do not overlap."""

    name: str
    ctype: str
    vector: bool
    hint: str
    decl_region: Region | None
    end: int = -1
    declared: bool = False
    values: list[Value] = field(default_factory=list)


def filling(module: Module) -> set[str]:
    """The functions that push or pop on the tape their caller gives them, or call one that
    does: a split adjoint ``g_fwd`` / ``g_bwd`` takes the tape whether or not it uses it
    (one that only writes an array records nothing), and a call of one that does not is
    given NULL.  A whole adjoint ``g_b`` (a tape of its own, ``grad(g)`` in a prange) never
    touches its caller's."""
    return pushing(module, [fn for fn in module.functions if fn.tape != "local"], set())


def pushing(module: Module, candidates: list[Function], through: set[str]) -> set[str]:
    """The ``candidates`` that push or pop, or call one of them or one of ``through``."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for fn in candidates:
            if fn.name not in out and any(
                    isinstance(op, (Push, Pop)) or isinstance(op, Call)
                    and (op.callee in out or op.callee in through) for op in fn.walk()):
                out.add(fn.name)
                changed = True
    return out


def constant_branch(r: Region) -> bool:
    """Whether the branch ``r`` of an ``if`` only yields one constant."""
    y = r.ops[-1]
    return isinstance(y, Yield) and len(y.operands) == 1 and \
        isinstance(y.operands[0].owner, Const) and all(isinstance(o, Const) for o in r.ops[:-1])


@dataclass
class _Layout:
    pos: dict[Op, int] = field(default_factory=dict)
    end: dict[Op, int] = field(default_factory=dict)
    region_of: dict[Op, Region] = field(default_factory=dict)
    parent_of: dict[Op, Op] = field(default_factory=dict)
    loops_of: dict[Op, list[Op]] = field(default_factory=dict)  # enclosing loops per op
    index: dict[Op, int] = field(default_factory=dict)  # position of an op in its region


class Variables:
    """Inlining decisions and the allocation of C variables for one function."""


    def __init__(self, fn: Function, sig: CSignature, sigs: dict[str, CSignature],
                 module: Module, options: Any) -> None:
        self.fn = fn
        self.sig = sig
        self.sigs = sigs
        self.module = module
        self.options = options
        self.lines: list[str] = []
        self.layout = _Layout()
        self.uses: dict[Value, list[Op]] = {}
        self.inlined: set[Value] = set()
        self.var_of: dict[Value, Var] = {}
        self.vars: list[Var] = []
        self.names: set[str] = set()
        self.shapes: dict[Value, list[str]] = {}
        #: (position, C name, region) of local arrays, freed at a return or at the end of
        #: the if branch that allocates them
        self.zeros: list[tuple[int, str, Region]] = []
        self.dir = "k"
        self.nbdirs: str | None = None
        self.last_line = 0
        self.region_parent: dict[Region, Op] = {}
        self.last_use_cache: dict[Value, int] = {}
        self.iv_names: set[str] = set()
        self.active_ivs: list[str] = []
        self.uses_tape = False
        #: the functions that push or pop, directly or not (``filling``), once asked for
        self.filling: set[str] | None = None
        #: the whole adjoints that may fill a tape of their own (``c.taping``), and whether
        #: this function calls one
        self.taping: set[str] = set()
        self.nested_tapes = False
        self.nested_name = "nested_tape_bytes"
        self.nested_lines: list[int] = []  # the lines that take the callee's size
        self.pending_tape_free: list[tuple[int, int]] = []  # (line, depth) of each return
        #: the prange loops written as OpenMP loops (``plan_parallel``), and their bodies
        self.omp_loops: set[For] = set()
        self.omp_bodies: dict[Region, For] = {}
        #: inside a parallel loop: the arrays its iterations share (``c.shared_arrays``)
        self.atomic_arrays: set[Value] | None = None
        #: the adjoints called inside a prange (``module.parallel_adjoints``), when needed
        self.shared_adjoints: set[str] | None = None
        #: inside a parallel loop whose iterations pop what they push: each thread's tape
        self.thread_tape: str | None = None
        #: inside a parallel loop: arrays each thread adds to a copy of (``c.share``)
        self.private_names: dict[Value, str] = {}
        #: CUDA: the kernels of this function's pranges, emitted before it
        self.kernels: list[str] = []
        #: the index variables of the host loops around the op being emitted (a kernel in
        #: one may read them: they are its parameters then)
        self.host_ivs: list[str] = []
        #: pushes and pops through a block of the tape (``c.tape_block``): block, byte offset
        self.block_slots: dict[Op, tuple[str, str]] = {}

    # -- analysis -------------------------------------------------------------------
    def number(self) -> None:
        counter = 0
        lay = self.layout

        def region(r: Region, parent: Op | None, loops: list[Op]) -> None:
            nonlocal counter
            for k, op in enumerate(r.ops):
                counter += 1
                lay.index[op] = k
                lay.pos[op] = counter
                lay.region_of[op] = r
                lay.loops_of[op] = loops
                if parent is not None:
                    lay.parent_of[op] = parent
                for v in op.operands:
                    self.uses.setdefault(v, []).append(op)
                inner = loops + [op] if isinstance(op, (For, While)) else loops
                for sub in op.regions:
                    self.region_parent[sub] = op
                    region(sub, op, inner)
                lay.end[op] = counter

        region(self.fn.body, None, [])

    def plan_parallel(self) -> None:
        """Which prange loops run in parallel: the outermost ones with a constant step (an
        OpenMP canonical loop) that use no tape (pushes and pops need the sequential order;
        a nested prange runs in sequence in its thread)."""
        cuda = self.options.target == "cuda"

        def region(r: Region) -> None:
            for op in r.ops:
                if isinstance(op, For) and op.parallel and cuda:
                    why = "its adjoint needs a tape across iterations" if \
                        self.uses_tape_in(op) and not op.iteration_tape else \
                        self.parallel_reason(op)
                    if why is not None:
                        from ..frontend.diagnostics import AdgenError
                        raise AdgenError(op.loc, f"this prange cannot be a CUDA kernel: {why} "
                                                 "(not supported on the CUDA target yet; use "
                                                 "the C target)")
                if isinstance(op, For) and op.parallel and self.parallel_reason(op) is None:
                    self.omp_loops.add(op)
                    self.omp_bodies[op.body] = op
                    continue
                for sub in op.regions:
                    region(sub)

        region(self.fn.body)

    def parallel_reason(self, op: For) -> str | None:
        """Why the prange ``op`` runs in sequence (None: it may run in parallel)."""
        if not isinstance(op.operands[2].owner, Const):
            return "its step is not a constant"
        if not all(self.is_sum(a) for a in self.sums(op)):
            return "a value it carries is not a sum"
        if self.uses_tape_in(op) and not op.iteration_tape:
            return "it uses the tape, in order"
        # a call of g_bwd adds to the adjoints of what g reads, which other iterations may
        # read too: its increments are atomic (module.parallel_adjoints), but for an
        # external C adjoint's, which adgen does not write
        from ..analysis.activity import written_params
        from ..ir.walk import reachable
        if self.shared_adjoints is None:
            from .module import parallel_adjoints
            self.shared_adjoints = parallel_adjoints(self.module)
        called = reachable(self.module, [o.callee for o in op.walk() if isinstance(o, Call)])
        for name in sorted(called & self.shared_adjoints):
            callee = self.module.function(name)
            if callee.external is not None and written_params(callee, self.module):
                return f"'{name}' (an external C function) adds to adjoint arrays other " \
                       "iterations share"
        return None

    def uses_tape_in(self, op: Op) -> bool:
        """Whether ``op`` pushes or pops, or calls a function that does."""
        if self.filling is None:
            self.filling = filling(self.module)
        return any(isinstance(inner, (Push, Pop)) or isinstance(inner, Call)
                   and inner.callee in self.filling for inner in op.walk())

    def sums(self, op: For) -> list[Value]:
        """The carried values of ``op`` that change (the others, which every iteration passes
        on unchanged, such as the adjoint of a sum, are shared by the iterations)."""
        feeders = [t for t in op.walk() if isinstance(t, (Yield, Break, Continue)) and (
            self.region_parent.get(self.layout.region_of[t]) is op
            if isinstance(t, Yield) else self.layout.loops_of[t][-1] is op)]
        return [a for j, a in enumerate(op.body.args[1:])
                if not all(t.operands[j] is a for t in feeders)]

    def is_sum(self, arg: Value) -> bool:
        """Whether the carried value ``arg`` of a loop only collects a sum: its partial sums
        are only added to (``s + e``, ``s - e``) and passed on, never read otherwise."""
        partial, work = {arg}, [arg]
        while work:
            v = work.pop()
            for user in self.uses.get(v, []):
                new: list[Value] = []
                if isinstance(user, Prim) and (user.prim == "add" or user.prim == "sub" and
                                               user.operands[1] is not v):
                    if sum(o in partial for o in user.operands) > 1:
                        return False
                    new = user.results
                elif isinstance(user, Yield):
                    parent = self.region_parent.get(self.layout.region_of[user])
                    if isinstance(parent, If):
                        new = [parent.results[j] for j, o in enumerate(user.operands) if o is v]
                elif isinstance(user, (For, While)):
                    inits = user.inits
                    for j, o in enumerate(inits):
                        if o is v:
                            new.append(user.results[j])
                            new += [r.args[j + 1 if isinstance(user, For) else j]
                                    for r in user.regions]
                elif not isinstance(user, (Break, Continue)):
                    return False
                for n in new:
                    if n not in partial:
                        partial.add(n)
                        work.append(n)
        return True

    def simd_reductions(self, op: For, blocked: bool = False) -> list[tuple[str, Value]] | None:
        """The reductions (operator, carried value) of ``op`` when its iterations may run in
        SIMD lanes (``ADGEN_SIMD``), else None.  That needs a C loop with step 1 or -1 whose
        body is straight-line arithmetic, loads and stores (no call, branch or inner loop,
        nothing per direction; no tape but, when ``blocked``, its own pushes or pops through
        a block of the tape, one place per iteration), that reads and writes every array it writes at one
        index only, the same in every access and holding the loop index or the loop index
        plus or minus a value fixed during the loop (``a[i]``, ``a[i - 1, j]``: so no
        iteration reads what another writes), and whose changing carried values are sums or
        running minima/maxima (``s = s + e``, ``m = max(m, e)``)."""
        step = op.operands[2].owner
        if self.options.target == "cuda" or not (isinstance(step, Const)
                                                 and step.value in (1, -1)):
            return None
        body = op.body
        inside = set(body.ops)
        written: dict[Value, tuple[Value, ...]] = {}
        kinds = (Prim, Cast, Const, Dim, Load, Store, Yield) + ((Push, Pop) if blocked else ())
        for o in body.ops:
            if not isinstance(o, kinds) or any(
                    isinstance(v.type, VecType) for v in (*o.operands, *o.results)):
                return None
            if isinstance(o, Store):
                at = tuple(o.operands[1:-1])
                if written.setdefault(o.operands[0], at) != at or not any(
                        _shifts(i, body.args[0], inside) for i in o.operands[1:-1]):
                    return None
        if any(isinstance(o, Load) and o.operands[0] in written and
               tuple(o.operands[1:]) != written[o.operands[0]]
               for o in body.ops):
            return None
        out: list[tuple[str, Value]] = []
        for arg in self.sums(op):
            kind = "+" if self.is_sum(arg) and self.adds_to(op, arg) else \
                self.running_extreme(op, arg)
            if kind is None:
                return None
            out.append((kind, arg))
        return out

    def adds_to(self, op: For, arg: Value) -> bool:
        """Whether the straight-line body of ``op`` passes on ``arg`` plus or minus terms (not
        a value computed without it, which ``is_sum`` also accepts: ``v = e`` in a loop)."""
        partial = {arg}
        for o in op.body.ops:
            if isinstance(o, Prim) and o.prim in ("add", "sub") and \
                    any(v in partial for v in o.operands):
                partial.add(o.results[0])
        j = op.body.args.index(arg) - 1
        y = op.body.terminator
        return y is not None and y.operands[j] in partial

    def running_extreme(self, op: For, arg: Value) -> str | None:
        """``"max"`` or ``"min"`` when the carried value ``arg`` of ``op`` is a running
        maximum or minimum: its one use is ``max(arg, e)`` (or min), yielded as is.  Not
        ``max(e, arg)``: Python's max keeps its first argument unless the second is greater,
        so that order takes a NaN ``e`` and drops it again at the next element, which lanes
        merged at the end do not reproduce (they gave 1.0 where CPython gives nan)."""
        users = self.uses.get(arg, [])
        if len(users) != 1 or not isinstance(users[0], Prim) or \
                users[0].prim not in ("max", "min") or users[0].operands.count(arg) != 1 or \
                users[0].operands[0] is not arg and elem_of(arg.type).is_float:
            return None  # (integers have no NaN, and equal ones are one value)
        new = users[0].results[0]
        y = op.body.terminator
        j = op.body.args.index(arg) - 1
        if self.uses.get(new, []) != [y] or y.operands.count(new) != 1 or \
                y.operands[j] is not new:
            return None
        return users[0].prim

    def crosses_parallel(self, var: Var, r: Region) -> bool:
        """Whether a value of region ``r`` may not take ``var``: it is declared outside the
        parallel loop around ``r`` (shared by its threads) and is not one of its sums."""
        assert var.decl_region is not None
        cur: Region | None = r
        while cur is not None:
            if cur is var.decl_region:
                return False
            loop = self.omp_bodies.get(cur)
            if loop is not None:
                return not any(self.var_of.get(a) is var for a in self.sums(loop))
            parent = self._region_parent(cur)
            cur = self.layout.region_of.get(parent) if parent is not None else None
        return False

    def def_pos(self, v: Value) -> int:
        owner = v.owner
        if isinstance(owner, Op):
            return self.layout.pos[owner]
        parent = self._region_parent(owner)
        return self.layout.pos[parent] if parent is not None else 0

    def _region_parent(self, region: object) -> Op | None:
        return self.region_parent.get(region)

    def def_loops(self, v: Value) -> list[Op]:
        owner = v.owner
        if isinstance(owner, Op):
            return self.layout.loops_of[owner]
        parent = self._region_parent(owner)
        if parent is None:
            return []
        return self.layout.loops_of[parent] + ([parent] if isinstance(parent, (For, While)) else [])

    def decide_inlining(self) -> None:
        def region(r: Region) -> None:
            for op in reversed(r.ops):
                for sub in op.regions:
                    region(sub)
                if isinstance(op, (Const, Dim)) or self.can_inline(op, r) or \
                        isinstance(op, If) and self.is_logical(op, r):
                    self.inlined.add(op.results[0])

        region(self.fn.body)

    def is_logical(self, op: If, r: Region) -> bool:
        """Whether the ``if`` is Python's ``a and b`` (``a or b``): one bool result, one
        branch yielding a constant and the other an expression (all its ops inlined), read
        by the statement right after it; it is then written ``a && b`` (``a || b``) there."""
        if len(op.results) != 1 or op.results[0].type != BOOL:
            return False
        users = self.uses.get(op.results[0], [])
        if len(users) != 1 or isinstance(users[0], (While, Zeros, For)) or \
                self.layout.region_of.get(users[0]) is not r:
            return False
        ops = r.ops
        after = ops[self.layout.index[op] + 1:self.layout.index[users[0]]]
        if any(not (o.results and all(v in self.inlined for v in o.results)) for o in after):
            return False
        consts = [constant_branch(b) for b in op.regions]
        if consts.count(True) != 1:
            return False
        expr = op.regions[consts.index(False)]
        # (the value it yields is then an expression: defined outside or by an inlined op)
        return len(expr.ops[-1].operands) == 1 and all(
            isinstance(o, (Prim, Cast, Load, Const, Dim)) and o.results[0] in self.inlined
            for o in expr.ops[:-1])

    def can_inline(self, op: Op, r: Region) -> bool:
        """Whether ``op``'s value can be written inside the expression of its one user.

        Pure arithmetic can move past other statements: the variables it reads stay
        allocated to their values until its user (``last_use`` counts the user's
        statement).  A load cannot move past anything that may write memory.
        """
        if not isinstance(op, (Prim, Cast, Load)):
            return False
        v = op.results[0]
        users = self.uses.get(v, [])
        if len(users) != 1 or users[0].operands.count(v) != 1:
            return False
        user = users[0]
        if self.layout.region_of.get(user) is not r:
            return False
        if isinstance(user, (While, Zeros)):
            return False
        if isinstance(user, For):
            return v in user.operands[:3] and _cheap_bound(v)
        if isinstance(user, Call) and isinstance(v.type, VecType):
            return False
        if not isinstance(v.type, VecType) and isinstance(op, (Prim, Cast)) and \
                _is_vector_statement(user):
            return False
        # the loads this value's expression may contain move with it
        arrays = self.loaded_arrays(op, r)
        if arrays:
            ops = r.ops
            first, last = self.layout.index[op], self.layout.index[user]
            for mid in ops[first + 1:last]:
                if any(_may_write(mid, a) for a in arrays):
                    return False
        return True

    def loaded_arrays(self, op: Op, r: Region) -> list[Value]:
        """Arrays read by ``op`` and by the operands that may be inlined into it."""
        if isinstance(op, Load):
            return [op.operands[0]]
        out: list[Value] = []
        if isinstance(op, (Prim, Cast)):
            for v in op.operands:
                d = v.owner
                if isinstance(d, (Prim, Cast, Load)) and self.layout.region_of.get(d) is r \
                        and len(self.uses.get(v, [])) == 1:
                    out += self.loaded_arrays(d, r)
        return out

    def last_use(self, v: Value) -> int:
        """Position after which ``v`` is dead (uses in later iterations of a loop count)."""
        cached = self.last_use_cache.get(v)
        if cached is None:
            cached = self.last_use_cache[v] = self._last_use(v)
        return cached

    def _last_use(self, v: Value) -> int:
        end = self.def_pos(v)
        def_loops = self.def_loops(v)
        for user in self.uses.get(v, []):
            if isinstance(user, Zeros):
                return 1 << 30  # extents of a local array are read by every index
            p = self.statement_pos(user)
            stmt = self.statement_of(user)
            if isinstance(stmt, For) and self.in_bounds(user, v, stmt):
                p = self.layout.end[stmt]  # bounds are re-read at every iteration
            for loop in self.layout.loops_of[stmt]:
                if not any(loop is d for d in def_loops):
                    p = max(p, self.layout.end[loop])
                    break
            end = max(end, p)
        return end

    def statement_of(self, op: Op) -> Op:
        """The op whose statement contains ``op`` (itself unless ``op`` is inlined; the ops of
        an ``if`` written ``a && b`` are in the statement of its user)."""
        while True:
            if op.results and op.results[0] in self.inlined:
                users = self.uses.get(op.results[0], [])
                if not users:
                    break
                op = users[0]
            else:
                parent = self.layout.parent_of.get(op)
                if not (isinstance(op, Yield) and isinstance(parent, If) and
                        parent.results and parent.results[0] in self.inlined):
                    break
                op = parent
        return op

    def in_bounds(self, user: Op, v: Value, loop: For) -> bool:
        """Whether ``v`` is read (maybe through inlined ops) by the bounds of ``loop``."""
        op, val = user, v
        while op is not loop:
            val = op.results[0]
            op = self.uses[val][0]
        return any(o is val for o in loop.operands[:3])

    def statement_pos(self, op: Op) -> int:
        return self.layout.pos[self.statement_of(op)]

    # -- naming ------------------------------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        base = c_base(hint) if hint.isidentifier() else "tmp"
        functions = set(self.sigs)
        name, k = base, 1
        # a local must not hide a function it calls, a C library name or a macro
        while name in self.names or name in self.iv_names or reserved(name, functions) or \
                name in PRIMS:
            name = f"{base}_{k}" if not reserved(base, functions) or k > 1 else base + "_"
            k += 1
        self.names.add(name)
        return name

    def loop_index_name(self, hint: str) -> str:
        """Loop indices are scoped to their loop: siblings may share a name."""
        hint = c_base(hint)
        name, k = hint, 1
        while name in self.names or name in self.active_ivs or reserved(name, set(self.sigs)):
            name = f"{hint}_{k}"
            k += 1
        self.iv_names.add(name)
        return name

    def hint(self, v: Value) -> str:
        if v.name:
            return v.name
        op = v.owner
        if isinstance(op, Load):
            arr = op.operands[0]
            idx = op.operands[1:]
            if arr.name and all(i.name for i in idx):
                return "_".join([arr.name, *[i.name for i in idx]])  # type: ignore[list-item]
        return "tmp"

    def bind(self, v: Value, var: Var) -> None:
        self.var_of[v] = var
        var.values.append(v)

    def ctype(self, t: Type) -> str:
        return elem_of(t).c_name

    def allocate(self) -> None:
        # parameters and their shapes
        for p in self.sig.params:
            self.names.add(p.name)
        if self.fn.tape is not None:
            self.names.add("tape")
        if self.taping:  # the most bytes the tapes of the whole adjoints it calls held
            while self.nested_name in self.names:
                self.nested_name += "_"
            self.names.add(self.nested_name)
        cname = {p.source[1]: p.name for p in self.sig.params if p.source[0] == "value"}
        shape_names: dict[int, list[str]] = {}
        for p in self.sig.params:
            if p.source[0] == "shape":
                shape_names.setdefault(p.source[1], []).append(p.name)
        index = {n: i for i, n in enumerate(self.fn.param_names)}
        for i, v in enumerate(self.fn.params):
            name = cname[i]
            # (nbdirs is read by every loop over directions, which the IR does not show)
            live_to_end = isinstance(v.type, (ArrayType, VecType)) or \
                self.fn.param_names[i] == self.fn.nbdirs
            var = Var(name, self.ctype(v.type), isinstance(v.type, VecType), name, self.fn.body,
                      end=1 << 30 if live_to_end else self.last_use(v), declared=True)
            self.bind(v, var)
            self.vars.append(var)
            if isinstance(v.type, ArrayType):
                primal = index[root_param(self.fn, self.fn.param_names[i])]
                self.shapes[v] = shape_names[primal]
            if self.fn.param_names[i] == self.fn.nbdirs:
                self.nbdirs = name
        hints = {v.name for op in self.fn.walk() for v in op.results if v.name}
        for cand in ("k", "kd", "dir", "dir_"):
            if cand not in hints and cand not in self.names:
                self.dir = cand
                break
        self.names.add(self.dir)
        # everything else, in program order
        self.allocate_region(self.fn.body)

    def allocate_region(self, r: Region) -> None:
        for op in r.ops:
            if isinstance(op, (For, While)):
                self.allocate_loop(op, r)
            elif isinstance(op, If):
                pos = self.layout.pos[op]
                for res in op.results:
                    prefer = self.if_preference(op, res) or \
                        self.yield_target(res, r, pos, False, start=self.layout.end[op])
                    self.assign_var(res, r, pos, prefer=prefer)
            elif isinstance(op, Zeros):
                v = op.results[0]
                name = self.fresh_name(self.hint(v))
                var = Var(name, self.ctype(v.type), False, name, r, end=1 << 30)
                self.bind(v, var)
                self.vars.append(var)
                self.zeros.append((self.layout.pos[op], name, r))
                self.shapes[v] = [self.expr(e).text for e in op.operands]
            else:
                strict = isinstance(op, Call)
                for res in op.results:
                    if res not in self.inlined:
                        pos = self.layout.pos[op]
                        self.assign_var(res, r, pos, strict=strict,
                                        prefer=self.yield_target(res, r, pos, strict))
            for sub in op.regions:
                if isinstance(op, For):
                    iv = sub.args[0]
                    name = self.loop_index_name(iv.name or "i")
                    var = Var(name, "int64_t", False, "", sub, end=1 << 30, declared=True)
                    self.bind(iv, var)
                    self.active_ivs.append(name)
                    self.allocate_region(sub)
                    self.active_ivs.pop()
                else:
                    self.allocate_region(sub)

    def if_preference(self, op: If, res: Value) -> Var | None:
        j = op.results.index(res)
        pos = self.layout.pos[op]
        for region in op.regions:
            t = region.terminator
            if isinstance(t, Yield):
                src = t.operands[j]
                var = self.var_of.get(src)
                if var is not None and self.def_pos(src) < pos and not var.vector and \
                        self.last_use(src) <= self.layout.end[op] and \
                        var.hint == (res.name or "tmp") and var.end <= self.layout.end[op] \
                        and self._in_scope(var, op):
                    return var
        return None

    def yield_target(self, v: Value, r: Region, pos: int, strict: bool,
                     start: int | None = None) -> Var | None:
        """The variable of the if/loop slot ``v`` is yielded to, when ``v`` can live there.

        ``r = r * x`` in a loop body writes the carried variable directly instead of a
        temporary copied at the end of the iteration.
        """
        t = r.terminator
        parent = self.region_parent.get(r)
        if not isinstance(t, Yield) or parent is None:
            return None
        slots = [j for j, o in enumerate(t.operands) if o is v]
        if len(slots) != 1:
            return None
        j = slots[0]

        # the position from which v occupies the variable (an if's results are written
        # at the end of its branches)
        start = pos if start is None else start

        def dead(u: Value) -> bool:
            last = self.last_use(u)
            return last < start or (last == start and not strict)

        if isinstance(parent, If):
            target = parent.results[j]
            var = self.var_of.get(target)
            if var is None or not all(dead(u) for u in var.values if u is not target):
                return None
        elif isinstance(parent, (For, While)) and r is parent.regions[-1]:
            arg = parent.body.args[j + 1] if isinstance(parent, For) else r.args[j]
            var = self.var_of.get(arg)
            if var is None or not dead(arg):
                return None
            for op in parent.walk():
                if isinstance(op, (Yield, Break, Continue)) and op is not t and \
                        self.layout.pos[op] > pos and self._targets(op, parent) and \
                        op.operands[j] is not v:
                    return None
        else:
            return None
        if var.ctype != self.ctype(v.type) or var.vector != isinstance(v.type, VecType):
            return None
        return var

    def _targets(self, term: Op, loop: Op) -> bool:
        if isinstance(term, Yield):
            return self.region_parent.get(self.layout.region_of[term]) is loop
        loops = self.layout.loops_of[term]
        return bool(loops) and loops[-1] is loop

    def _in_scope(self, var: Var, op: Op) -> bool:
        r = self.layout.region_of[op]
        return self._region_in_scope(var, r) and not self.crosses_parallel(var, r)

    def allocate_loop(self, op: For | While, r: Region) -> None:
        pos = self.layout.pos[op]
        end = self.layout.end[op]
        if isinstance(op, For):
            members = [[op.results[j], op.body.args[j + 1]] for j in range(len(op.results))]
        else:
            members = [[op.results[j], op.regions[0].args[j], op.regions[1].args[j]]
                       for j in range(len(op.results))]
        for j, group in enumerate(members):
            init = op.inits[j]
            res = op.results[j]
            last = max(end, self.last_use(res))
            var: Var | None = None
            init_var = self.var_of.get(init)
            if init_var is not None and init not in self.inlined and init_var.end <= pos and \
                    self.last_use(init) <= pos and init_var.ctype == self.ctype(res.type) and \
                    init_var.vector == isinstance(res.type, VecType) and \
                    (init_var.hint == (res.name or "tmp")) and self._in_scope(init_var, op):
                var = init_var
            if var is None:
                var = self.reuse(res, r, pos)
            if var is None:
                name = self.fresh_name(self.hint(res))
                var = Var(name, self.ctype(res.type), isinstance(res.type, VecType),
                          res.name or "tmp", r)
                self.vars.append(var)
            var.end = last
            for m in group:
                self.bind(m, var)

    def reuse(self, v: Value, r: Region, pos: int, strict: bool = False) -> Var | None:
        hint = v.name or "tmp"
        if hint == "tmp":
            return None
        for var in self.vars:
            if var.hint != hint or var.ctype != self.ctype(v.type) or \
                    var.vector != isinstance(v.type, VecType):
                continue
            free = var.end < pos or (var.end == pos and not strict)
            if free and self._region_in_scope(var, r) and not self.crosses_parallel(var, r):
                return var
        return None

    def _region_in_scope(self, var: Var, r: Region) -> bool:
        assert var.decl_region is not None
        return self._region_in_scope_of(var.decl_region, r)

    def _region_in_scope_of(self, decl: Region, r: Region) -> bool:
        """Whether ``r`` is ``decl`` or nested in it."""
        cur: Region | None = r
        while cur is not None:
            if cur is decl:
                return True
            parent = self._region_parent(cur)
            cur = self.layout.region_of.get(parent) if parent is not None else None
        return False

    def assign_var(self, v: Value, r: Region, pos: int, prefer: Var | None = None,
                   strict: bool = False) -> None:
        last = self.last_use(v)
        var = prefer or self.reuse(v, r, pos, strict)
        if var is None:
            name = self.fresh_name(self.hint(v))
            var = Var(name, self.ctype(v.type), isinstance(v.type, VecType), v.name or "tmp", r)
            self.vars.append(var)
        var.end = max(var.end, last)
        self.bind(v, var)

    def expr(self, v: Value, rename: dict[str, str] | None = None, vec: bool = False) -> Any:
        """The C expression of ``v`` (the emitter's; extents of local arrays need it)."""
        raise NotImplementedError


def _shifts(v: Value, index: Value, inside: set[Op]) -> bool:
    """Whether ``v`` is the loop index ``index`` shifted by values fixed during the loop
    (``i``, ``i + 1``, ``n - 1 - i``; ``inside``: the loop body's operations):
    one to one, so distinct iterations see distinct elements."""
    if v is index:
        return True
    o = v.owner
    if not isinstance(o, Prim) or o.prim not in ("add", "sub") or o not in inside:
        return False
    a, b = o.operands
    return _shifts(a, index, inside) and _fixed(b, index, inside) or \
        _fixed(a, index, inside) and _shifts(b, index, inside)


def _fixed(v: Value, index: Value, inside: set[Op]) -> bool:
    """Whether ``v`` keeps its value through the iterations of the loop: defined before the
    loop, a constant or an array's length, or arithmetic of such values."""
    o = v.owner
    if isinstance(o, Op):
        return isinstance(o, (Const, Dim)) or o not in inside or isinstance(o, Prim) and \
            all(_fixed(a, index, inside) for a in o.operands)
    return o is not index.owner


def _is_vector_statement(op: Op) -> bool:
    """A statement that loops over directions (scalars inside it are recomputed per direction)."""
    return (isinstance(op, (Prim, Cast, Load)) and isinstance(op.results[0].type, VecType)) or (
        isinstance(op, Store) and isinstance(op.operands[-1].type, VecType))


def _may_write(op: Op, array: Value) -> bool:
    """Whether ``op`` may write ``array``.  Distinct arrays never overlap (the binding
    rejects overlapping arguments when one is written, DESIGN.md section 1)."""
    for o in op.walk():
        if isinstance(o, Store) and o.operands[0] is array:
            return True
        if isinstance(o, Call) and any(a is array for a in o.operands):
            return True
    return False


def _cheap_bound(v: Value) -> bool:
    """Integer arithmetic on variables: fine to re-evaluate in a for header."""
    op = v.owner
    if isinstance(op, (Const, Dim)) or not isinstance(op, Op):
        return True
    if isinstance(op, Prim) and op.prim in ("add", "sub", "mul", "neg"):
        return all(_cheap_bound(o) for o in op.operands)
    if isinstance(op, Cast):
        return _cheap_bound(op.operands[0])
    return False
