"""Dead-code elimination, including dead results and carried values of if/loops.

    %s.1, %t.1 = for ... iter(%s = %a, %t = %b) {     %s.1 = for ... iter(%s = %a) {
      %t.2 = mul %t, %t                                   ...
      yield %s.2, %t.2                            ==>     yield %s.2
    }                                                   }
    return %s.1                                         return %s.1

Liveness starts from effects (stores, calls, asserts, returns, breaks,
continues) and flows backwards through operands; a carried slot is live when
its result or its block argument is; a dead slot is removed from the loop's
inits, block arguments, results and every yield/break/continue.
"""

from __future__ import annotations

from ..ir.core import (
    Assert, Break, Call, Condition, Continue, For, Function, If, Op, Pop, Push, Region, Return,
    Store, Value, While, Yield,
)
from ..ir.walk import Structure, parent_op, structure, substitute

EFFECTS = (Store, Call, Assert, Return, Break, Continue, Push, Pop)


class Liveness:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.s: Structure = structure(fn)
        self.live_ops: set[Op] = set()
        self.live_values: set[Value] = set()
        self.live_slots: set[tuple[Op, int]] = set()  # (op, slot)
        self.work: list[Value] = []
        # terminators that feed each structured op
        self.feeders: dict[Op, list[Op]] = {}
        for op in fn.walk():
            if isinstance(op, (Yield, Condition)):
                parent = self.parent(op)
                if parent is not None:
                    self.feeders.setdefault(parent, []).append(op)
            elif isinstance(op, (Break, Continue)):
                loop = self.s.loop_of.get(op)
                if loop is not None:
                    self.feeders.setdefault(loop, []).append(op)

    def parent(self, op: Op) -> Op | None:
        r = self.s.region_of_op.get(op)
        return self.s.parent_of_region.get(r) if r is not None else None

    def mark_op(self, op: Op) -> None:
        if op in self.live_ops:
            return
        self.live_ops.add(op)
        parent = self.parent(op)
        if parent is not None:
            self.mark_op(parent)
        if isinstance(op, If):
            self.work.append(op.operands[0])
        elif isinstance(op, For):
            self.work.extend(op.operands[:3])
        elif isinstance(op, While):
            cond = op.regions[0].terminator
            assert cond is not None
            self.mark_op(cond)
            self.work.append(cond.operands[0])
        elif isinstance(op, (Yield, Break, Continue, Condition)):
            pass  # operands are live per slot
        else:
            self.work.extend(op.operands)

    def mark_slot(self, op: Op, j: int) -> None:
        key = (op, j)
        if key in self.live_slots:
            return
        self.live_slots.add(key)
        self.mark_op(op)
        if isinstance(op, If):
            for t in self.feeders.get(op, []):
                if isinstance(t, Yield):
                    self.work.append(t.operands[j])
            return
        inits = op.operands[3:] if isinstance(op, For) else op.operands
        self.work.append(inits[j])
        for t in self.feeders.get(op, []):
            if isinstance(t, (Yield, Break, Continue)):
                self.mark_op(t)
                self.work.append(t.operands[j])
        if isinstance(op, For):
            self.live_values.add(op.body.args[j + 1])
        else:
            for r in op.regions:
                self.live_values.add(r.args[j])

    def mark_value(self, v: Value) -> None:
        owner = v.owner
        if isinstance(owner, Region):
            parent = self.s.parent_of_region.get(owner)
            if parent is None:
                return  # a function parameter
            j = owner.args.index(v)
            if isinstance(parent, For):
                if j == 0:
                    self.mark_op(parent)
                else:
                    self.mark_slot(parent, j - 1)
            else:
                self.mark_slot(parent, j)
        elif isinstance(owner, (If, For, While)):
            self.mark_slot(owner, owner.results.index(v))
        elif owner is not None:
            self.mark_op(owner)

    def run(self) -> None:
        for op in self.fn.walk():
            if isinstance(op, EFFECTS):
                self.mark_op(op)
        while self.work:
            v = self.work.pop()
            if v in self.live_values:
                continue
            self.live_values.add(v)
            self.mark_value(v)


def dce(fn: Function) -> bool:
    live = Liveness(fn)
    live.run()
    changed = False

    def keep(op: Op, j: int) -> bool:
        return (op, j) in live.live_slots

    def sweep(region: Region) -> None:
        nonlocal changed
        out = []
        for op in region.ops:
            if op not in live.live_ops and not op.is_terminator:
                changed = True
                continue
            if isinstance(op, (If, For, While)):
                slots = [j for j in range(len(op.results)) if keep(op, j)]
                if len(slots) != len(op.results):
                    changed = True
                    _drop_slots(op, slots, live)
            for sub in op.regions:
                sweep(sub)
            out.append(op)
        region.ops = out

    sweep(fn.body)
    return changed


def _drop_slots(op: Op, slots: list[int], live: Liveness) -> None:
    feeders = live.feeders.get(op, [])
    for t in feeders:
        if isinstance(t, (Yield, Break, Continue)):
            t.operands = [t.operands[j] for j in slots]
    op.results = [op.results[j] for j in slots]
    if isinstance(op, For):
        op.operands = op.operands[:3] + [op.operands[3 + j] for j in slots]
        body = op.body
        body.args = [body.args[0]] + [body.args[1 + j] for j in slots]
    elif isinstance(op, While):
        op.operands = [op.operands[j] for j in slots]
        for r in op.regions:
            r.args = [r.args[j] for j in slots]


def same_yields(fn: Function) -> bool:
    """An if's result both branches yield is that value:

        %r = if %c { ...; yield %a } else { ...; yield %a }   ==>   uses of %a

    (the adjoint of a sum read in both branches, the same in every iteration of its loop, is
    one; the loop then passes it on unchanged)."""
    subst: dict[Value, Value] = {}
    for op in fn.walk():
        if not isinstance(op, If):
            continue
        ys = [r.terminator for r in op.regions]
        if not all(isinstance(y, Yield) for y in ys):
            continue
        for j, res in enumerate(op.results):
            first = ys[0].operands[j]  # type: ignore[union-attr]
            if all(y.operands[j] is first for y in ys):  # type: ignore[union-attr]
                subst[res] = first
    if not subst:
        return False
    substitute(fn, subst)
    return True


def prange_invariants(fn: Function) -> bool:
    """A value a prange (or a loop inside one) carries and every iteration passes on unchanged
    (the adjoint of a sum) is its initial value:

        %s.1 = prange ... iter(%s = %a) { ... use %s ...; yield %s }   ==>   uses of %a

    so that the iterations share it instead of carrying it (``dce`` then drops the slot).
    Loops outside pranges keep such slots (and the adjoint's names: ``totalb``)."""
    s = structure(fn)
    feeders: dict[Op, list[Op]] = {}
    for op in fn.walk():
        if isinstance(op, Yield):
            parent = parent_op(s, op)
            if isinstance(parent, (For, While)) and s.region_of_op[op] is parent.regions[-1]:
                feeders.setdefault(parent, []).append(op)
        elif isinstance(op, (Break, Continue)) and op in s.loop_of:
            feeders.setdefault(s.loop_of[op], []).append(op)
    loops: list[Op] = []
    for op in fn.walk():
        if isinstance(op, For) and op.parallel:
            loops += [o for o in op.walk() if isinstance(o, (For, While))]
    subst: dict[Value, Value] = {}
    for op in dict.fromkeys(loops):  # (nested pranges are walked twice)
        inits = op.operands[3:] if isinstance(op, For) else op.operands
        for j, init in enumerate(inits):
            args = [r.args[j + 1] if isinstance(op, For) else r.args[j] for r in op.regions]
            body_arg = args[-1]
            if all(t.operands[j] is body_arg for t in feeders.get(op, [])) and \
                    op.results[j] not in subst:
                subst[op.results[j]] = init
                for a in args:
                    subst[a] = init
    if not subst:
        return False
    substitute(fn, subst)
    return True
