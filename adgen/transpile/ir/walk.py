"""Structural queries shared by passes: parents, loop targets, use counts."""

from __future__ import annotations

from dataclasses import dataclass, field

from .core import Break, Continue, For, Function, Op, Region, Value, While


@dataclass
class Structure:
    """Who contains whom in a function."""

    parent_of_region: dict[int, Op] = field(default_factory=dict)
    region_of_op: dict[int, Region] = field(default_factory=dict)
    #: break/continue -> the loop it leaves or continues
    loop_of: dict[int, Op] = field(default_factory=dict)
    uses: dict[int, list[Op]] = field(default_factory=dict)


def structure(fn: Function) -> Structure:
    s = Structure()

    def region(r: Region, parent: Op | None, loops: list[Op]) -> None:
        if parent is not None:
            s.parent_of_region[id(r)] = parent
        for op in r.ops:
            s.region_of_op[id(op)] = r
            for v in op.operands:
                s.uses.setdefault(id(v), []).append(op)
            if isinstance(op, (Break, Continue)) and loops:
                s.loop_of[id(op)] = loops[-1]
            inner = loops + [op] if isinstance(op, (For, While)) else loops
            for sub in op.regions:
                region(sub, op, inner)

    region(fn.body, None, [])
    return s


def parent_op(s: Structure, op: Op) -> Op | None:
    r = s.region_of_op.get(id(op))
    return s.parent_of_region.get(id(r)) if r is not None else None


def substitute(fn: Function, subst: dict[int, Value]) -> None:
    """Replace every use of a key value by its mapped value (chains followed)."""
    if not subst:
        return

    def resolve(v: Value) -> Value:
        while id(v) in subst:
            v = subst[id(v)]
        return v

    for op in fn.walk():
        op.operands = [resolve(v) for v in op.operands]
