"""Unroll-and-jam of a loop around a reduction: several outer iterations share one inner loop.

    for k in range(n):                          for k in range(0, n - 3, 4):
        z = b[k]                                    z0 = b[k]; z1 = b[k + 1]; ...
        for i in range(m):              ==>         for i in range(m):
            z += w[k, i] * x[i]                         z0 += w[k, i] * x[i]
        h[k] = max(z, 0.0)                              z1 += w[k + 1, i] * x[i]; ...
                                                    h[k] = max(z0, 0.0); h[k + 1] = ...
                                                for k in range(rest, n): (the loop as it was)

A dot product in a loop (matrix-vector and matrix-matrix products, the layers of a
network) runs at the latency of one chain of additions, and loads the shared operand
(``x[i]``) once per product; FACTOR chains at once use the floating-point units FACTOR
times better and load ``x[i]`` once for all of them.  Run last, on every module that is
emitted (primal, tangent, adjoint), so the forward sweep of an adjoint gets it too.

A loop ``L`` is jammed when:
- it is a sequential ``for`` (not a prange, nor inside one) with a constant step, whose
  carried values are read after ``M`` only (``total += f(z)``: each copy passes them on);
- its body is: ops without regions, one inner ``for`` ``M``, ops without regions;
- ``M`` carries at least one float, its body has only pure ops and loads, and its range
  is the same in every iteration of ``L`` (values from before ``L``, or pure ops of them);
- the ops before ``M`` have no effect, those after ``M`` none but stores and pushes to
  the tape (the pushes and stores of the copies keep their order), and no array ``L``
  stores into is read before or in ``M``;
- neither loop has a known trip count too small to gain (``L`` under 2 x FACTOR, ``M``
  under MIN_INNER), and ``M``'s body is at most MAX_INNER_OPS ops.

The copies of an iteration are those of ``L``'s iterations k, k + step, ...: each keeps
its own values, in the same order, so the results are those of the loop as written, bit
for bit.
"""

from __future__ import annotations

from ..ir.core import (
    PURE_OPS, Const, Dim, For, Function, Load, Loc, Op, Prim, Push, Region, Store, Value, Yield,
)
from ..ir.types import BOOL, I64, ScalarType
from ..ir.walk import clone, int_const, trips
from .fold import INT64

#: outer iterations per jammed iteration
FACTOR = 4
#: inner loops with a known trip count below this are left alone (their loop costs little)
MIN_INNER = 8
#: inner bodies above this many ops are left alone (FACTOR copies would spill registers)
MAX_INNER_OPS = 40



def jam(fn: Function) -> bool:
    """Jam every loop of ``fn`` that qualifies (see the module docstring)."""
    return _jam_region(fn.body)


def _jam_region(region: Region) -> bool:
    changed = False
    i = 0
    while i < len(region.ops):
        op = region.ops[i]
        if isinstance(op, For) and op.parallel:
            i += 1  # a prange's body runs in threads (or on the device): left as it is
            continue
        for sub in op.regions:
            changed |= _jam_region(sub)
        parts = _parts(op) if isinstance(op, For) else None
        if isinstance(op, For) and parts is not None:
            before = _jammed(op, *parts)
            # the loop as it was does the rest, from where the jammed one left off
            op.operands = [before[-1].results[0], *op.operands[1:3], *before[-1].results[1:]]
            region.ops[i:i] = before
            changed = True
            i += len(before)
        i += 1
    return changed


#: a jammable loop's body: the ops before the inner loop, the inner loop, the ops after it
Parts = tuple[list[Op], For, list[Op]]


def _parts(loop: For) -> Parts | None:
    """``loop``'s body split around its inner loop, if the loop may be jammed (the
    conditions of the module docstring); None otherwise."""
    step = int_const(loop.operands[2])
    body = loop.body
    if loop.iteration_tape or not step or not isinstance(body.terminator, Yield):
        return None  # (a body that ends in break, continue or return runs once at most)
    end = int_const(loop.operands[1])
    if not INT64[0] <= FACTOR * step <= INT64[1] or \
            end is not None and not INT64[0] <= end - (FACTOR - 1) * step <= INT64[1]:
        return None  # the jammed loop's step or stop would not fit in 64 bits
    n = trips(loop)
    if n is not None and n < 2 * FACTOR:
        return None
    ops = body.ops[:-1]
    inner = [j for j, o in enumerate(ops) if o.regions]
    if len(inner) != 1 or not isinstance(ops[inner[0]], For):
        return None
    m = ops[inner[0]]
    assert isinstance(m, For)
    pre, post = ops[:inner[0]], ops[inner[0] + 1:]
    m_ops = m.body.ops[:-1]
    if m.parallel or m.iteration_tape or len(m_ops) > MAX_INNER_OPS or \
            not isinstance(m.body.terminator, Yield) or \
            not any(isinstance(a.type, ScalarType) and a.type.is_float for a in m.body.args[1:]):
        return None
    m_trips = trips(m)
    if m_trips is not None and m_trips < MIN_INNER:
        return None
    if not all(isinstance(o, (*PURE_OPS, Load)) and not o.regions for o in m_ops):
        return None
    if not all(isinstance(o, (*PURE_OPS, Load)) for o in pre) or \
            not all(isinstance(o, (*PURE_OPS, Load, Store, Push)) for o in post):
        return None
    # what the loop carries is read after the inner loop only (the copies after it pass it on)
    early = {v for top in [*pre, m] for o in top.walk() for v in o.operands}
    if any(a in early for a in body.args[1:]):
        return None
    defined = {body.args[0]} | set(m.body.args) | \
        {v for o in ops for inner_op in o.walk() for v in inner_op.results}
    # M's range: the same in every iteration (values from before L, or pure ops of them)
    invariant: set[Value] = set()
    for o in pre:
        if isinstance(o, PURE_OPS) and all(v not in defined or v in invariant
                                        for v in o.operands):
            invariant.update(o.results)
    if any(v in defined and v not in invariant for v in m.operands[:3]):
        return None
    # the copies of what comes before M run before the stores of the copies of earlier
    # iterations: they must not read what those store (after M, each copy runs in order)
    stored = {o.operands[0] for o in post if isinstance(o, Store)}
    if any(isinstance(o, Load) and o.operands[0] in stored
           for top in [*pre, m] for o in top.walk()):
        return None
    return pre, m, post


def _offset(v: Value, by: int, loc: Loc, result: Value) -> list[Op]:
    """The ops of ``v + by`` (``v - |by|`` for ``by`` below zero) into ``result``."""
    c = Const([], [Value(I64)], loc, value=abs(by))
    return [c, Prim([v, c.result], [result], loc, prim="add" if by > 0 else "sub")]


def _saturated(stop: Value, back: int, start: Value, shifted: Value, loc: Loc) -> list[Op]:
    """``stop - back`` where it does not pass a 64-bit limit, else ``start`` (no jammed
    iteration: the loop as written does them all).  A stop near INT64_MIN (INT64_MAX for a
    step below zero), an integer argument, wrapped around: the jammed loop ran far past
    the range (a crash where CPython ran none)."""
    limit = Const([], [Value(I64)], loc, value=INT64[0] + back if back > 0 else INT64[1] + back)
    near = Prim([stop, limit.result], [Value(BOOL)], loc, prim="lt" if back > 0 else "gt")
    pick = Prim([near.results[0], start, shifted], [Value(I64)], loc, prim="select")
    return [limit, near, pick]


def _jammed(loop: For, pre: list[Op], m: For, post: list[Op]) -> list[Op]:
    """The loop over the first FACTOR x (trips // FACTOR) iterations of ``loop`` (its body:
    ``pre``, the inner loop ``m``, ``post``), FACTOR at a time, after the ops of its stop and
    step; its results are the index where the rest starts and what the loop carries."""
    start, stop, step_v = loop.operands[:3]
    step = int_const(step_v)
    assert step
    loc = loop.loc
    body = loop.body
    iv = body.args[0]

    # for k in range(start, stop - (FACTOR - 1) * step, FACTOR * step), carrying where the
    # rest starts (k + FACTOR * step after each iteration) and what the loop carries
    k = Value(I64, iv.name)
    rest = Value(I64, f"{iv.name}_rest" if iv.name and iv.name != "_" else "rest")
    carried = [Value(a.type, a.name) for a in body.args[1:]]
    region = Region([k, rest, *carried])
    vmaps: list[dict[Value, Value]] = [{iv: k} for _ in range(FACTOR)]
    for u in range(1, FACTOR):  # k + u * step
        index = _offset(k, u * step, loc, Value(I64, iv.name))
        region.ops += index
        vmaps[u][iv] = index[-1].result
    for vmap in vmaps:
        for o in pre:
            region.ops.append(clone(o, vmap))

    # the inner loop, carrying the values of every copy
    m_body = m.body
    i = Value(m_body.args[0].type, m_body.args[0].name)
    fused = Region([i])
    inits: list[Value] = []
    yields: list[Value] = []
    y = m_body.terminator
    assert isinstance(y, Yield)
    for vmap in vmaps:
        vmap[m_body.args[0]] = i
        for a, init in zip(m_body.args[1:], m.inits, strict=True):
            vmap[a] = fused.add_arg(Value(a.type, a.name))
            inits.append(vmap.get(init, init))
        for o in m_body.ops[:-1]:
            fused.ops.append(clone(o, vmap))
        yields += [vmap.get(v, v) for v in y.operands]
    fused.ops.append(Yield(yields, [], y.loc))
    results = [Value(r.type, r.name) for _ in vmaps for r in m.results]
    new_m = For([*(vmaps[0].get(v, v) for v in m.operands[:3]), *inits], results, m.loc,
                regions=[fused],
                directive=m.directive, note=m.note)
    region.ops.append(new_m)
    for u, vmap in enumerate(vmaps):
        for r, nr in zip(m.results, results[u * len(m.results):(u + 1) * len(m.results)],
                         strict=True):
            vmap[r] = nr
    # the copies of what follows, in order: each passes what the loop carries to the next
    y = body.terminator
    assert isinstance(y, Yield)
    passed = carried
    for vmap in vmaps:
        vmap.update((a, v) for a, v in zip(body.args[1:], passed, strict=True))
        for o in post:
            region.ops.append(clone(o, vmap))
        passed = [vmap.get(v, v) for v in y.operands]
    nxt = _offset(k, FACTOR * step, loc, Value(I64))
    region.ops += [*nxt, Yield([nxt[-1].result, *passed], [], loc)]

    # stop - (FACTOR - 1) * step, written stop + c for a step below zero
    back = (FACTOR - 1) * step
    before: list[Op] = []
    end = int_const(stop)
    if end is not None:
        before.append(Const([], [Value(I64)], loc, value=end - back))
    else:
        before += _offset(stop, -back, loc, Value(I64))
        if not isinstance(stop.owner, Dim):  # (an extent is far from the limits)
            before += _saturated(stop, back, start, before[-1].result, loc)
    main_step = Const([], [Value(I64)], loc, value=FACTOR * step)
    main = For([start, before[-1].result, main_step.result, start, *loop.inits],
               [Value(I64, rest.name), *(Value(a.type, a.name) for a in carried)], loc,
               regions=[region], directive=loop.directive, note=loop.note)
    return before + [main_step, main]
