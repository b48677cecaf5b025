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


def index_dependent(loop: For) -> set[int]:
    """The values of ``loop``'s body that may differ from one iteration to the next: those
    computed from its index, and the indices and carried values of inner loops whose bounds
    or initial values are (a carried value also when its loop computes one)."""
    varies: set[int] = {id(loop.body.args[0])}

    def touched(op: Op) -> bool:
        return any(id(v) in varies for o in op.walk() for v in o.operands) or any(
            id(a) in varies for o in op.walk() for r in o.regions for a in r.args)

    def visit(region: Region) -> bool:
        grew = False
        for o in region.ops:
            before = len(varies)
            if isinstance(o, (For, While)):
                if isinstance(o, For) and any(id(v) in varies for v in o.operands[:3]):
                    varies.add(id(o.body.args[0]))
                carried = [a for r in o.regions for a in (r.args[1:] if isinstance(o, For)
                                                           else r.args)]
                if any(id(v) in varies for v in (o.inits if isinstance(o, For) else o.operands)):
                    varies.update(id(a) for a in carried)
            for sub in o.regions:
                visit(sub)
            if isinstance(o, (For, While)) and touched(o):
                varies.update(id(a) for r in o.regions
                              for a in (r.args[1:] if isinstance(o, For) else r.args))
            if o.regions and touched(o) or any(id(v) in varies for v in o.operands):
                varies.update(id(r) for r in o.results)
            grew |= len(varies) != before
        return grew

    while visit(loop.body):
        pass
    return varies
