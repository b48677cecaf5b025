"""To-be-recorded analysis: make the forward values the reverse sweep uses available.

The reverse sweep (``reverse.py``) is built referring to forward-sweep values
directly.  Each reverse region mirrors a forward region (the reverse of a
loop body mirrors the body, the reverse of an if branch the branch).  A use,
in reverse region R, of a value v defined in forward region F is resolved
in the reverse region that mirrors F:

- F is the function body of a joint adjoint (``f_b``): v is visible as is.
  Straight-line code therefore records nothing.
- v is cheap to recompute from values that are themselves available
  (arithmetic, comparisons, casts, constants, array extents, and loads of
  elements nothing writes between the load and the end of the forward sweep): the op is repeated at the start of
  the reverse region (seed 004's redundant execution).  Transcendental
  functions are saved rather than recomputed, except in a loop whose
  iterations only add up and would save nothing else (``reverse.rev_For``
  then treats it as marked ``recompute``: no tape, so it can be vectorised).
  A loop marked
  ``# adgen: recompute`` recomputes them too; one marked ``# adgen: store``
  saves every value of its body (constants aside).
- F is an if branch: v becomes an extra result of the if (the other branch
  yields a zero), and is resolved from the enclosing region.
- v is carried by a loop whose adjoint loop runs in the forward order and
  may carry it too (``AdjointFunction.replayable``): it becomes a new carried
  value of the adjoint loop, from the same initial value and by the same
  update (``carry``); or by a loop whose adjoint loop counts down, v an
  integer with an exact inverse update (``AdjointFunction.unwindable``):
  the adjoint loop carries it back from the final value.
- F is a loop body, or the body of a split forward sweep (``g_fwd``): v is
  pushed on the tape at the end of F and popped at the start of the reverse
  region, in last-in first-out order.
- The adjoint loop of a prange may start by computing its iteration again
  (``reverse.recompute_iteration``): values of that copy are visible as is in
  the loop body, and the regions nested in it (inner loops) are forward
  regions like any other, pushing and popping within the iteration.

Every reverse region that pops does so before anything else, and every
forward region pushes after everything else (nested loops and calls push
earlier, and their reverses pop later), so the tape is a stack.
"""

from __future__ import annotations

import copy

from ..ir.builder import Builder
from ..ir.core import (
    Cast, Const, Dim, For, If, Load, Loc, Op, Pop, Prim, Push, Region, Value, While, Yield,
    Zeros,
)
from ..ir.prims import EXPENSIVE
from ..ir.types import BOOL, ArrayType, ScalarType


def recomputable(op: Op, directive: str, reloadable: set[Value]) -> bool:
    """Whether the reverse sweep repeats ``op`` rather than saving its result (``directive``:
    that of the loop around it; ``reloadable``: loads whose element does not change before
    the reverse sweep reads it again)."""
    if isinstance(op, Const):
        return True
    if directive == "store":
        return False
    if isinstance(op, (Dim, Cast)):
        return True
    if isinstance(op, Prim):
        return op.prim not in EXPENSIVE or directive == "recompute"
    if isinstance(op, Load):
        return op.results[0] in reloadable
    return False


#: a value an adjoint loop carries itself: (initial value, update, None) when it runs in the
#: forward order, (final value, update, (prim, operand) of the inverse update) counting down
Carried = tuple[Value, Value, tuple[str, Value] | None]
#: adjoint loop body -> (that loop, {forward carried value: Carried})
Replays = dict[Region, tuple[For, dict[Value, Carried]]]


class Recorder:
    def __init__(self, fwd_top: Region, rev_top: Region, mirror: dict[Region, Region],
                 joint: bool, preseed: dict[tuple[Region, Value], Value], reloadable: set[Value],
                 recomputed: set[Op] | None = None, recomputing: set[Region] | None = None,
                 replays: Replays | None = None) -> None:
        self.fwd_top = fwd_top
        self.rev_top = rev_top
        self.mirror = mirror
        self.joint = joint
        self.cache: dict[tuple[Region, Value], Value] = dict(preseed)
        self.reloadable = reloadable
        self.def_region: dict[Value, Region] = {}
        self.parent_op: dict[Region, Op] = {}  # forward region -> the op owning it
        self.region_of_op: dict[Op, Region] = {}
        self.rev_parent: dict[Region, Region] = {}
        #: reverse region -> (region, pops in order, recomputed ops in order): its prologue
        self.prologue: dict[Region, tuple[Region, list[Op], list[Op]]] = {}
        self.exported: dict[Value, Value] = {}
        #: ops computing a prange iteration again inside its adjoint loop (their regions are
        #: forward regions), and the adjoint loop bodies holding them (visible as is)
        self.recomputed = recomputed or set()
        self.visible = recomputing or set()
        self.copied: set[Region] = set()  # the regions nested in recomputed ops
        #: values adjoint loops carry themselves (``AdjointFunction.replays``)
        self.replays = replays or {}

    # -- indexes ---------------------------------------------------------------------------
    def index_forward(self, region: Region) -> None:
        for a in region.args:
            self.def_region[a] = region
        for op in region.ops:
            self.region_of_op[op] = region
            for r in op.results:
                self.def_region[r] = region
            for sub in op.regions:
                self.parent_op[sub] = op
                self.index_forward(sub)

    def uses(self, region: Region, out: list[tuple[Op, int, Region]],
             at: Region | None = None) -> None:
        """The uses of forward values in reverse ``region``; ``at``: inside a recomputed op,
        the reverse region its uses of outer values are resolved in."""
        for op in region.ops:
            for k, v in enumerate(op.operands):
                # (inside a recomputed op, its own values are forward values used forwards)
                if v in self.def_region and not (
                        at is not None and self.def_region[v] in self.copied):
                    out.append((op, k, at or region))
            for sub in op.regions:
                if at is None and op not in self.recomputed:
                    self.rev_parent[sub] = region
                self.uses(sub, out, at or (region if op in self.recomputed else None))

    def index_recomputed(self, region: Region) -> None:
        for op in region.ops:
            if op in self.recomputed:
                self.region_of_op[op] = region
                for r in op.results:
                    self.def_region[r] = region
                for sub in op.regions:
                    self.parent_op[sub] = op
                    self.index_forward(sub)
                    self.copied.update(_regions(sub))
            else:
                for sub in op.regions:
                    self.index_recomputed(sub)

    def run(self) -> None:
        self.index_forward(self.fwd_top)
        if self.recomputed:
            self.index_recomputed(self.rev_top)
        found: list[tuple[Op, int, Region]] = []
        self.uses(self.rev_top, found)
        for op, k, region in found:
            op.operands[k] = self.resolve(op.operands[k], region)
        for region, pops, recomputed in self.prologue.values():
            region.ops[0:0] = pops + recomputed

    def _prologue(self, region: Region) -> tuple[Region, list[Op], list[Op]]:
        return self.prologue.setdefault(region, (region, [], []))

    # -- resolution ------------------------------------------------------------------------
    def mirror_of(self, fwd: Region, rev: Region) -> Region:
        """The reverse region enclosing ``rev`` (or ``rev``) that mirrors ``fwd``."""
        cur: Region | None = rev
        while cur is not None:
            if self.mirror.get(cur) is fwd:
                return cur
            cur = self.rev_parent.get(cur)
        raise AssertionError("a reverse region uses a value outside the forward region it mirrors")

    def resolve(self, v: Value, rev: Region) -> Value:
        fwd = self.def_region.get(v)
        if fwd is None:
            return v  # not a forward value (already a reverse one)
        if fwd is self.fwd_top and self.joint or fwd in self.visible:
            return v
        target = self.mirror_of(fwd, rev)
        key = (target, v)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        owner = v.owner
        if isinstance(owner, Op) and self.recomputable(owner, self.directive(fwd)) and not (
                v.type == BOOL and not all(self.cheap(o, target) for o in owner.operands)):
            # (a condition whose operands would have to be saved is saved itself: 1 byte)
            out = self.recompute(owner, v, target)
        elif fwd in self.parent_op and isinstance(self.parent_op[fwd], If):
            out = self.resolve(self.export(v, fwd), rev)
        elif self.carries(target, v):
            return self.carry(v, target)
        else:
            out = self.save(v, fwd, target)
        self.cache[key] = out
        return out

    def cheap(self, v: Value, rev: Region) -> bool:
        """Whether ``v`` is available in ``rev`` without saving anything new."""
        fwd = self.def_region.get(v)
        if fwd is None or (fwd is self.fwd_top and self.joint) or fwd in self.visible:
            return True
        target = self.mirror_of(fwd, rev)
        if (target, v) in self.cache or self.carries(target, v):
            return True
        owner = v.owner
        return isinstance(owner, Op) and self.recomputable(owner, self.directive(fwd)) and \
            all(self.cheap(o, target) for o in owner.operands)

    def directive(self, fwd: Region) -> str:
        """The directive of the innermost loop around forward region ``fwd``."""
        cur: Region | None = fwd
        while cur is not None:
            op = self.parent_op.get(cur)
            if op is None:
                return ""
            if isinstance(op, (For, While)):
                return op.directive
            cur = self.region_of_op.get(op)
        return ""

    def recomputable(self, op: Op, directive: str) -> bool:
        return recomputable(op, directive, self.reloadable)

    def recompute(self, op: Op, v: Value, target: Region) -> Value:
        if isinstance(op, Dim):
            arr = op.operands[0]
            if isinstance(arr.owner, Zeros):  # the extent it was allocated with
                return self.resolve(arr.owner.operands[op.axis], target)
        c = copy.copy(op)
        c.operands = [self.resolve(o, target) for o in op.operands]
        c.results = [Value(r.type, r.name) for r in op.results]
        for r in c.results:
            r.owner = c
        c.regions = []
        self._prologue(target)[2].append(c)
        return c.results[op.results.index(v)]

    def export(self, v: Value, branch: Region) -> Value:
        """``v`` (defined in an if branch) as a new result of that if."""
        hit = self.exported.get(v)
        if hit is not None:
            return hit
        op = self.parent_op[branch]
        assert isinstance(op, If)
        res = Value(v.type, v.name)
        res.owner = op
        op.results.append(res)
        for r in op.regions:
            y = r.ops[-1]
            assert isinstance(y, Yield)
            if r is branch:
                y.operands.append(v)
            else:
                b = Builder(r, y.loc)
                r.ops.pop()
                zero = _placeholder(b, v)
                r.ops.append(y)
                y.operands.append(zero)
        self.def_region[res] = self.region_of_op[op]
        self.exported[v] = res
        return res

    def carries(self, target: Region, v: Value) -> bool:
        """Whether ``target``'s adjoint loop may carry ``v`` itself (``replays``)."""
        entry = self.replays.get(target)
        return entry is not None and v in entry[1]

    def carry(self, v: Value, target: Region) -> Value:
        """``v``, a value the forward loop carries, as a new value carried by ``target``'s
        loop: run in the forward order, from the same initial value by the same update;
        counting down, from the final value by the inverse update, each computed at the
        start of the iteration."""
        loop, carried = self.replays[target]
        init, update, inverse = carried[v]
        arg = Value(v.type, v.name)
        target.add_arg(arg)
        loop.operands.append(self.resolve(init, self.rev_parent[target]))
        y = target.ops[-1]
        assert isinstance(y, Yield)
        if inverse is None:
            self.cache[(target, v)] = arg  # (the update may read it)
            y.operands.append(self.resolve(update, target))
            out = arg
        else:
            # counting down, ``arg`` holds the value after the iteration: the inverse update
            # gives the one before it, v's value here and what the earlier iteration gets
            prim, delta = inverse
            c = Prim([arg, self.resolve(delta, target)], [Value(v.type, v.name)],
                     update.owner.loc, prim=prim)  # type: ignore[union-attr]
            self._prologue(target)[2].append(c)
            out = self.cache[(target, v)] = c.results[0]
            y.operands.append(out)
        res = Value(v.type, v.name)
        res.owner = loop
        loop.results.append(res)
        return out

    def save(self, v: Value, fwd: Region, target: Region) -> Value:
        """Push ``v`` at the end of ``fwd``, pop it at the start of ``target``."""
        assert not isinstance(v.type, ArrayType), "arrays are never saved on the tape"
        loc = self._loc(fwd)
        push = Push([v], [], loc)
        term = fwd.ops[-1] if fwd.ops and fwd.ops[-1].is_terminator else None
        if term is not None:
            fwd.ops.insert(len(fwd.ops) - 1, push)
        else:
            fwd.ops.append(push)
        self.region_of_op[push] = fwd
        out = Value(v.type, v.name)
        pop = Pop([], [out], loc)
        self._prologue(target)[1].insert(0, pop)
        return out

    def _loc(self, fwd: Region) -> Loc:
        op = self.parent_op.get(fwd)
        if op is not None:
            return op.loc
        return fwd.ops[-1].loc if fwd.ops else self.rev_top.ops[-1].loc


def _regions(region: Region) -> list[Region]:
    """``region`` and every region nested in it."""
    out = [region]
    for op in region.ops:
        for sub in op.regions:
            out += _regions(sub)
    return out


def _placeholder(b: Builder, v: Value) -> Value:
    t = v.type
    assert isinstance(t, ScalarType), t
    return b.const(0, t)

