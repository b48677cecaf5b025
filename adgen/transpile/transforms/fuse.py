"""Fusion of adjacent ``for`` loops over the same range that do not depend on each other.

    for i in range(n): s = s + f(x[i])          for i in range(n):
    (pure ops that do not read s)      ==>          s = s + f(x[i])
    for i in range(n): xb[i] += g(x[i]) * sb        xb[i] += g(x[i]) * sb

Run on adjoints, where it merges a forward sweep loop with the reverse loop
that ``ad/reverse.py`` runs in the forward order: one pass over the data,
as a hand-written gradient does.  Two loops fuse when they have the same
start, stop and step, neither reads what the other computes (results or
arrays the other writes), neither touches the tape, calls a function or
leaves early, and the ops between them are pure and independent of the
first loop (they move before it).
"""

from __future__ import annotations

from ..ir.core import (
    Break, Call, Cast, Const, Continue, Dim, For, Function, Load, Op, Pop, Prim, Push, Region,
    Return, Store, Yield,
)

PURE = (Const, Prim, Cast, Dim)


def fuse(fn: Function) -> bool:
    changed = False
    for op in list(fn.walk()):
        for region in op.regions:
            changed |= _fuse_region(region)
    return _fuse_region(fn.body) or changed


def _fuse_region(region: Region) -> bool:
    changed = False
    i = 0
    while i < len(region.ops):
        first = region.ops[i]
        if isinstance(first, For) and _simple(first):
            j = i + 1
            while j < len(region.ops) and isinstance(region.ops[j], PURE) and \
                    not _reads(region.ops[j], first):
                j += 1
            second = region.ops[j] if j < len(region.ops) else None
            if isinstance(second, For) and _simple(second) and _independent(first, second):
                between = region.ops[i + 1:j]
                fused = _merge(first, second)
                region.ops[i:j + 1] = between + [fused]
                changed = True
                continue  # the fused loop may fuse with the next one
        i += 1
    return changed


def _simple(loop: For) -> bool:
    return not any(isinstance(o, (Break, Continue, Return, Push, Pop, Call))
                   for top in loop.body.ops for o in top.walk())


def _reads(op: Op, loop: For) -> bool:
    """Whether ``op`` (or anything nested in it) uses a result of ``loop``."""
    results = {id(r) for r in loop.results}
    return any(id(v) in results for o in op.walk() for v in o.operands)


def _arrays(loop: For) -> tuple[set[int], set[int]]:
    loads: set[int] = set()
    stores: set[int] = set()
    for top in loop.body.ops:
        for o in top.walk():
            if isinstance(o, Load):
                loads.add(id(o.operands[0]))
            elif isinstance(o, Store):
                stores.add(id(o.operands[0]))
    return loads, stores


def _independent(first: For, second: For) -> bool:
    if any(a is not b for a, b in zip(first.operands[:3], second.operands[:3], strict=True)):
        return False
    if _reads(second, first):
        return False
    loads1, stores1 = _arrays(first)
    loads2, stores2 = _arrays(second)
    return not (stores1 & (loads2 | stores2)) and not (stores2 & loads1)


def _merge(first: For, second: For) -> For:
    b1, b2 = first.body, second.body
    y1, y2 = b1.ops[-1], b2.ops[-1]
    assert isinstance(y1, Yield) and isinstance(y2, Yield)
    iv = b1.args[0]
    subst = {id(b2.args[0]): iv}
    ops2 = b2.ops[:-1]
    for top in ops2:
        for o in top.walk():
            o.operands = [subst.get(id(v), v) for v in o.operands]
    y2_operands = [subst.get(id(v), v) for v in y2.operands]
    body = Region([iv, *b1.args[1:], *b2.args[1:]])
    body.ops = b1.ops[:-1] + ops2 + [Yield(y1.operands + y2_operands, [], y1.loc)]
    fused = For(first.operands + second.operands[3:], [], first.loc, regions=[body],
                directive=first.directive, parallel=first.parallel and second.parallel,
                note=first.note or second.note)
    fused.results = first.results + second.results
    for r in fused.results:
        r.owner = fused
    return fused

