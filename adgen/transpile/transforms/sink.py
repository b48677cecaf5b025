"""Stores sunk to the end of a GPU thread's iteration (the CUDA target).

    hb = h_newb[i]                          hb = h_newb[i]
    h_newb[i] = 0.0                         cb = c_newb[i] + ... * hb
    cb = c_newb[i] + ... * hb       ==>     zb[i, 3] += ...
    zb[i, 3] += ...                         h_newb[i] = 0.0

A thread of a kernel runs one iteration of a ``prange`` in program order, and
nvcc does not move a global load above an earlier global store it cannot prove
apart from it (``__restrict__`` does not make it do so either): every load
after a store waits for its own trip to memory instead of being in flight with
the others.  An adjoint iteration stores early (the zeroed adjoint of an
element the primal wrote, ``ad/reverse.py``'s rule for a store) and loads
late (the adjoints it increments), so the HM-LSTM adjoint of
``examples/kernels.py`` took 8.4 times its primal on an H200 with its stores
where the rules put them, and 2.9 times with the zeroing store moved to the
end of the iteration.

A plain store (one whose value does not come from a load of its own array:
not an increment ``a[i] = a[i] + v``) moves down its region,
past every op that does not touch its array (loads, stores and increments of
other arrays, pure ops, ifs and inner loops without an access to the array),
and stops before the first op that does, before a call, a tape push or pop,
an assert, or the region's terminator.  Stores stopped by the same op keep
their order.  Moving a store past accesses of other arrays is sound because
an array a function writes overlaps none of its other arrays (DESIGN.md
section 1; adjoints passed twice for ``g(x, x)`` are the one exception, and
they are only incremented, never stored plainly, so they do not move).
Increments stay where they are: two of them into one element through two
names would not commute as a load and a store apart.
"""

from __future__ import annotations

from ..ir.core import (
    PURE_OPS, Assert, Break, Call, Continue, For, Function, Load, Op, Pop, Push, Region,
    Return, Store, Value,
)


def sink_stores(fn: Function) -> bool:
    """Sinks the plain stores in the iterations of ``fn``'s parallel loops."""
    changed = False
    for op in list(fn.walk()):
        if isinstance(op, For) and op.parallel:
            for inner in op.walk():
                for region in inner.regions:
                    changed |= _sink_region(region)
    return changed


def _plain(op: Op) -> bool:
    """A store whose value does not come from a load of its own array (through pure ops):
    not an increment ``a[i] = a[i] + v``, in any form."""
    if not isinstance(op, Store):
        return False
    array = op.operands[0]
    seen: set[Op] = set()
    stack = [op.operands[-1]]
    while stack:
        owner = stack.pop().owner
        if owner in seen or not isinstance(owner, (Load, *PURE_OPS)):
            continue
        seen.add(owner)
        if isinstance(owner, Load):
            if owner.operands[0] is array:
                return False
            continue
        stack += owner.operands
    return True


def _stops(op: Op, array: Value) -> bool:
    """Whether a store into ``array`` cannot move past ``op`` (not the region's terminator)."""
    return any(isinstance(o, (Call, Push, Pop, Assert, Break, Continue, Return)) or
               any(v is array for v in o.operands) for o in op.walk())


def _sink_region(region: Region) -> bool:
    ops = region.ops
    moving = [k for k, op in enumerate(ops) if _plain(op)]
    if not moving:
        return False
    moved = set(moving)
    stop_of: dict[int, int] = {}  # store index -> index of the op it stops before
    for k in moving:
        array = ops[k].operands[0]
        stop = k + 1
        while stop < len(ops) and not ops[stop].is_terminator and \
                (stop in moved or not _stops(ops[stop], array)):
            stop += 1
        stop_of[k] = stop
    waiting: dict[int, list[Op]] = {}
    for k in moving:
        waiting.setdefault(stop_of[k], []).append(ops[k])
    out: list[Op] = []
    for t, op in enumerate(ops):
        out += waiting.get(t, [])
        if t not in moved:
            out.append(op)
    out += waiting.get(len(ops), [])
    if all(a is b for a, b in zip(out, ops, strict=True)):
        return False
    region.ops = out
    return True
