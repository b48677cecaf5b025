"""Common-subexpression elimination over structured SSA.

    %a = load %x, %i          %a = load %x, %i
    %b = load %x, %i   ==>    %c = mul %a, %a
    %c = mul %a, %b

Pure ops are shared with any equal op that dominates them (same region or
an enclosing one).  So are whole loops and ifs that only compute (no store,
call, tape op, allocation or early exit) and are op for op the same as one
before them in their region, under the same conditions as loads for the
arrays they read: the adjoint of an iteration that computes the iteration
again, fused with the forward loop, finds the argmin of ``kmeans_cost``
once, not twice.  A loop whose only effects are pushes of its own values,
and which is otherwise the same as a loop before it, takes that loop's
place when no tape op comes between the two (the tape then gets the same
values in the same order), provided the earlier loop only computes and what
the loop's own ops use is defined at that place: the forward loop of
``mixture.loglik`` sums the exps that its adjoint's pass over the iteration
computes again to push them, and the fused iteration computes them once.
A loop or an if is dropped only when nothing outside it uses a value defined
inside it (the reverse sweep of an adjoint refers into the loops it mirrors
until ``ad/record.py`` lays out the tape).  Loads are shared only within
one region and only while no store to their array and no call (nested or
not) could have written it in between: arrays that a function writes never
overlap other arrays it gets (the language's rule, checked by the binding
and at calls), so a store to ``y`` leaves the loads of ``x`` valid.  (One exception: an adjoint called
for ``g(x, x)``, where ``g`` only reads both, gets ``xb`` twice.  Those
adjoints are only incremented, each load right before its store, so no
load of one is shared across a store into the other.)
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Hashable
from dataclasses import fields

from ..ir.core import (
    Assert, Break, Call, Cast, Const, Continue, Dim, For, Function, If, Load, Op, Pop, Prim,
    Push, Region, Return, Store, Value, While, Zeros,
)
from ..ir.walk import defined_inside, substitute


def _key(op: Op, epoch: tuple[int, int], region: Region) -> Hashable | None:
    operands = tuple(op.operands)
    if isinstance(op, Const):
        return ("const", str(op.result.type), repr(op.value))
    if isinstance(op, Prim):
        return ("prim", op.prim, str(op.result.type), operands)
    if isinstance(op, Cast):
        return ("cast", str(op.result.type), operands)
    if isinstance(op, Dim):
        return ("dim", op.axis, operands)
    if isinstance(op, Load):
        return ("load", region, epoch, operands)
    return None


def _writes(op: Op) -> tuple[bool, set[Value]]:
    """Whether ``op`` (or an op nested in it) calls a function, which may write any array it
    gets, and the arrays it stores into."""
    calls, stored = False, set()
    for o in op.walk():
        if isinstance(o, Call):
            calls = True
        elif isinstance(o, Store):
            stored.add(o.operands[0])
    return calls, stored


#: what a loop that is shared with an equal one before it may not hold
EFFECTS = (Store, Call, Push, Pop, Zeros, Assert, Break, Continue, Return)
#: the fields of an op that are not attributes of what it computes
NOT_ATTRIBUTES = {"operands", "results", "regions", "loc", "note"}


def _loop_key(loop: Op, resolve: Callable[[Value], Value],
              pushes: bool = False) -> Hashable | None:
    """The structure of a loop (or an if) that only computes: its ops in order with their
    attributes, result types and operands (values of the loop by position, others by
    identity); None for one with an effect.  With ``pushes``, the structure of one whose
    only effects are pushes of its own values on the tape, leaving the pushes out (None
    when it pushes none)."""
    effects = tuple(e for e in EFFECTS if e is not Push) if pushes else EFFECTS
    if any(isinstance(o, effects) for o in loop.walk()):
        return None
    local: dict[Value, int] = {}
    if pushes:
        own = defined_inside(loop)
        pushed = [o for o in loop.walk() if isinstance(o, Push)]
        if not pushed or any(v not in own for o in pushed for v in o.operands):
            return None

    def name(v: Value) -> Hashable:
        v = resolve(v)
        return ("local", local[v]) if v in local else ("outer", v)

    def region_key(r: Region) -> Hashable:
        for a in r.args:
            local[a] = len(local)
        return (tuple(str(a.type) for a in r.args),
                tuple(op_key(o) for o in r.ops if not (pushes and isinstance(o, Push))))

    def op_key(o: Op) -> Hashable:
        attrs = tuple((f.name, repr(getattr(o, f.name))) for f in fields(o)
                      if f.name not in NOT_ATTRIBUTES)
        operands = tuple(name(v) for v in o.operands)
        regions = tuple(region_key(r) for r in o.regions)
        for res in o.results:
            local[res] = len(local)
        return (type(o).__name__, attrs, operands, tuple(str(r.type) for r in o.results),
                regions)

    return op_key(loop)


def _tape_free(out: list[Op], since: Op) -> bool:
    """Whether no op after ``since`` in ``out`` (nested ones included) pushes or pops."""
    k = next((k for k, o in enumerate(out) if o is since), None)
    return k is not None and not any(isinstance(o, (Push, Pop))
                                     for top in out[k + 1:] for o in top.walk())


def cse(fn: Function) -> bool:
    subst: dict[Value, Value] = {}
    changed = False
    # who uses each value: a loop or an if may be dropped only if nothing outside it uses a
    # value defined inside it (the reverse sweep of an adjoint under construction refers
    # into the loops it mirrors until ``ad/record.py`` lays out the tape)
    users: dict[Value, list[Op]] = {}
    for o in fn.walk():
        for v in o.operands:
            users.setdefault(v, []).append(o)

    def sealed(op: Op) -> bool:
        ops = set(op.walk())
        return all(u in ops for v in defined_inside(op) for u in users.get(v, ()))

    def resolve(v: Value) -> Value:
        while v in subst:
            v = subst[v]
        return v

    def region(r: Region, table: ChainMap[Hashable, Value | Op]) -> None:
        nonlocal changed
        calls = 0  # the calls so far in this region
        stores: dict[Value, int] = {}  # array -> the stores into it so far in this region
        out: list[Op] = []
        for op in r.ops:
            op.operands = [resolve(v) for v in op.operands]
            called, stored = _writes(op)
            calls += called
            for array in stored:
                stores[array] = stores.get(array, 0) + 1
            epoch = (calls, stores.get(op.operands[0], 0)) if isinstance(op, Load) else (0, 0)
            key = _key(op, epoch, r)
            compound = isinstance(op, (For, While, If))
            shape = _loop_key(op, resolve) if compound else None
            pushing = _loop_key(op, resolve, pushes=True) if compound and shape is None \
                else None
            if shape is not None or pushing is not None:
                # a loop (or if) that only computes: the same as one before?
                read = {o.operands[0] for o in op.walk() if isinstance(o, Load)}
                loop_key = ("loop", r, calls, frozenset((a, stores.get(a, 0)) for a in read),
                            shape if shape is not None else pushing)
                same = table.get(loop_key)
                if isinstance(same, Op) and shape is not None and sealed(op):
                    for mine, theirs in zip(op.results, same.results, strict=True):
                        if theirs.name is None:
                            theirs.name = mine.name
                        subst[mine] = theirs
                    changed = True
                    continue
                if isinstance(same, Op) and shape is None and same in pure and \
                        _tape_free(out, same) and sealed(same):
                    # the same as a pure one before, and pushing what it computes: it takes
                    # the place of the earlier one (no tape op between, so the tape gets the
                    # same values in the same order), if what its own ops share with ops
                    # before them is there already at that place
                    for sub in op.regions:
                        region(sub, table.new_child())
                    at = next(k for k, o in enumerate(out) if o is same)
                    later = {v for o in out[at + 1:] for v in o.results}
                    if all(v not in later for o in op.walk() for v in o.operands):
                        for theirs, mine in zip(same.results, op.results, strict=True):
                            if mine.name is None:
                                mine.name = theirs.name
                            subst[theirs] = mine
                        out[at] = op
                        pure.discard(same)
                        changed = True
                    else:
                        out.append(op)
                    continue
                if shape is not None:
                    table[loop_key] = op
                    pure.add(op)
            if key is not None:
                prev = table.get(key)
                if isinstance(prev, Value) and prev.type == op.result.type:
                    if prev.name is None:
                        prev.name = op.result.name
                    subst[op.result] = prev
                    changed = True
                    continue
                table[key] = op.result
            for sub in op.regions:
                region(sub, table.new_child())
            out.append(op)
        r.ops = out

    pure: set[Op] = set()  # the loops in the table that only compute (no push)
    region(fn.body, ChainMap())
    substitute(fn, subst)
    return changed
