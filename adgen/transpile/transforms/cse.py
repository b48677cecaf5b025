"""Common-subexpression elimination over structured SSA.

    %a = load %x, %i          %a = load %x, %i
    %b = load %x, %i   ==>    %c = mul %a, %a
    %c = mul %a, %b

Pure ops are shared with any equal op that dominates them (same region or
an enclosing one).  Loads are shared only within one region and only while
no store to their array and no call (nested or not) could have written it in
between: arrays that a function writes never overlap other arrays it gets
(the language's rule, checked by the binding and at calls), so a store to
``y`` leaves the loads of ``x`` valid.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Hashable

from ..ir.core import Call, Cast, Const, Dim, Function, Load, Op, Prim, Region, Store, Value
from ..ir.walk import substitute


def _key(op: Op, epoch: tuple[int, int], region: Region) -> Hashable | None:
    ids = tuple(id(v) for v in op.operands)
    if isinstance(op, Const):
        return ("const", str(op.result.type), repr(op.value))
    if isinstance(op, Prim):
        return ("prim", op.prim, str(op.result.type), ids)
    if isinstance(op, Cast):
        return ("cast", str(op.result.type), ids)
    if isinstance(op, Dim):
        return ("dim", op.axis, ids)
    if isinstance(op, Load):
        return ("load", id(region), epoch, ids)
    return None


def _writes(op: Op) -> tuple[bool, set[int]]:
    """Whether ``op`` (or an op nested in it) calls a function, which may write any array it
    gets, and the arrays it stores into."""
    calls, stored = False, set()
    for o in op.walk():
        if isinstance(o, Call):
            calls = True
        elif isinstance(o, Store):
            stored.add(id(o.operands[0]))
    return calls, stored


def cse(fn: Function) -> bool:
    subst: dict[int, Value] = {}
    changed = False

    def resolve(v: Value) -> Value:
        while id(v) in subst:
            v = subst[id(v)]
        return v

    def region(r: Region, table: ChainMap[Hashable, Value]) -> None:
        nonlocal changed
        calls = 0  # the calls so far in this region
        stores: dict[int, int] = {}  # array -> the stores into it so far in this region
        out: list[Op] = []
        for op in r.ops:
            op.operands = [resolve(v) for v in op.operands]
            called, stored = _writes(op)
            calls += called
            for array in stored:
                stores[array] = stores.get(array, 0) + 1
            epoch = (calls, stores.get(id(op.operands[0]), 0)) if isinstance(op, Load) else (0, 0)
            key = _key(op, epoch, r)
            if key is not None:
                prev = table.get(key)
                if prev is not None and prev.type == op.result.type:
                    if prev.name is None:
                        prev.name = op.result.name
                    subst[id(op.result)] = prev
                    changed = True
                    continue
                table[key] = op.result
            for sub in op.regions:
                region(sub, table.new_child())
            out.append(op)
        r.ops = out

    region(fn.body, ChainMap())
    substitute(fn, subst)
    return changed
