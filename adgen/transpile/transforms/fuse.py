"""Fusion of adjacent ``for`` loops over the same range that do not depend on each other.

    for i in range(n): s = s + f(x[i])          for i in range(n):
    (pure ops that do not read s)      ==>          s = s + f(x[i])
    for i in range(n): xb[i] += g(x[i]) * sb        xb[i] += g(x[i]) * sb

Run on adjoints, where it merges a forward sweep loop with the reverse loop
that ``ad/reverse.py`` runs in the forward order: one pass over the data,
as a hand-written gradient does.  Two loops fuse when they have the same
start, stop and step and both are pranges or neither is (a prange fused
with a sequential loop would run in sequence), neither reads what the other
computes (results, or arrays the other writes, unless both access those
arrays only at the iteration's own row: ``y[i]`` written by the first and
read by the second), neither touches the tape (but for a tape each
iteration empties again, as the adjoint of a prange that computes its body
again has), calls a function or leaves early, and the ops between them are
pure and independent of the first loop (they move before it).
"""

from __future__ import annotations

from ..ir.core import (
    PURE_OPS, Break, Call, Continue, For, Function, If, Load, Op, Pop, Push, Region, Return,
    Store, Value, Yield,
)


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
            while j < len(region.ops) and isinstance(region.ops[j], PURE_OPS) and \
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
    """No exit, no call, and no tape op but those of a tape each iteration empties again
    (``iteration_tape``: the adjoint of a prange that computes its body again)."""
    tape = () if loop.iteration_tape else (Push, Pop)
    return not any(isinstance(o, (Break, Continue, Return, Call, *tape))
                   for top in loop.body.ops for o in top.walk())


def _reads(op: Op, loop: For) -> bool:
    """Whether ``op`` (or anything nested in it) uses a result of ``loop``."""
    results = set(loop.results)
    return any(v in results for o in op.walk() for v in o.operands)


def _arrays(loop: For) -> tuple[set[Value], set[Value]]:
    loads: set[Value] = set()
    stores: set[Value] = set()
    for top in loop.body.ops:
        for o in top.walk():
            if isinstance(o, Load):
                loads.add(o.operands[0])
            elif isinstance(o, Store):
                stores.add(o.operands[0])
    return loads, stores


def _own_rows(loop: For, arrays: set[Value]) -> bool:
    """Whether every access of ``loop`` to ``arrays`` is at its iteration's row (the loop
    variable as first index): iteration i of one loop then touches only what iteration i of
    the other does."""
    iv = loop.body.args[0]
    return all(o.operands[1] is iv for top in loop.body.ops for o in top.walk()
               if isinstance(o, (Load, Store)) and o.operands[0] in arrays)


def _independent(first: For, second: For) -> bool:
    if any(a is not b for a, b in zip(first.operands[:3], second.operands[:3], strict=True)):
        return False
    if first.parallel != second.parallel:  # one would make the other run in sequence
        return False
    if _reads(second, first):
        return False
    loads1, stores1 = _arrays(first)
    loads2, stores2 = _arrays(second)
    shared = (stores1 & (loads2 | stores2)) | (stores2 & loads1)
    return not shared or _own_rows(first, shared) and _own_rows(second, shared)


def _merge(first: For, second: For) -> For:
    b1, b2 = first.body, second.body
    y1, y2 = b1.ops[-1], b2.ops[-1]
    assert isinstance(y1, Yield) and isinstance(y2, Yield)
    iv = b1.args[0]
    subst = {b2.args[0]: iv}
    ops2 = b2.ops[:-1]
    for top in ops2:
        for o in top.walk():
            o.operands = [subst.get(v, v) for v in o.operands]
    y2_operands = [subst.get(v, v) for v in y2.operands]
    body = Region([iv, *b1.args[1:], *b2.args[1:]])
    body.ops = b1.ops[:-1] + ops2 + [Yield(y1.operands + y2_operands, [], y1.loc)]
    fused = For(first.operands + second.operands[3:], [], first.loc, regions=[body],
                directive=first.directive, parallel=first.parallel,
                iteration_tape=first.iteration_tape or second.iteration_tape,
                note=first.note or second.note)
    fused.results = first.results + second.results
    for r in fused.results:
        r.owner = fused
    return fused



def fuse_ifs(fn: Function) -> bool:
    """Two ifs on the same condition in a region, adjacent or with only loads and pure ops
    between (see ``_partner``), become one, each branch the first's then the second's (what
    the second reads of the first's results becomes what the branch yields):

        %a = if %c { A; yield %x } else { B; yield %y }        %a, %b = if %c {
        %b = if %c { C(%a); yield %z } else { D; yield %w } ==>     A; C(%x); yield %x, %z
                                                                } else { B; D; yield %y, %w }

    (a forward sweep's if and, right after it in a loop reversed in the forward sweep, the
    reverse of the same if: ``ad/joint.py``)."""
    return _fuse_if_region(fn.body)


def _partner(region: Region, i: int) -> int | None:
    """The index of the if on the condition of the if ``region.ops[i]`` that may join it:
    the next op, or a later one with only loads and pure ops before it that it does not
    read, when it neither writes nor touches the tape (it moves up past them)."""
    a = region.ops[i]
    for j in range(i + 1, len(region.ops)):
        b = region.ops[j]
        if isinstance(b, If) and b.operands[0] is a.operands[0] and \
                all(isinstance(r.terminator, Yield) for r in a.regions + b.regions):
            if j == i + 1:
                return j
            between = {r for o in region.ops[i + 1:j] for r in o.results}
            inner = list(b.walk())
            if any(isinstance(o, (Store, Call, Push, Pop)) for o in inner) or \
                    any(v in between for o in inner for v in o.operands):
                return None
            return j
        if not isinstance(b, (*PURE_OPS, Load)):
            return None
    return None


def _fuse_if_region(region: Region) -> bool:
    changed = False
    i = 0
    while i + 1 < len(region.ops):
        a = region.ops[i]
        j = _partner(region, i) if isinstance(a, If) else None
        if j is None:
            i += 1
            continue
        b = region.ops.pop(j)
        assert isinstance(a, If) and isinstance(b, If)
        for ra, rb in zip(a.regions, b.regions, strict=True):
            ya, yb = ra.terminator, rb.terminator
            assert isinstance(ya, Yield) and isinstance(yb, Yield)
            subst = {r: v for r, v in zip(a.results, ya.operands, strict=True)}
            for top in rb.ops:
                for o in top.walk():
                    o.operands = [subst.get(v, v) for v in o.operands]
            ra.ops = ra.ops[:-1] + rb.ops[:-1] + [
                Yield(ya.operands + yb.operands, [], ya.loc)]
        a.results = a.results + b.results
        for r in a.results:
            r.owner = a
        changed = True
    for op in region.ops:
        for sub in op.regions:
            changed |= _fuse_if_region(sub)
    return changed
