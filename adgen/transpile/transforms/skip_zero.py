"""Derivative work that only adds multiples of a scalar: skipped when the scalar is zero.

Two rules, loops of increments and terms of sums.

Loops.

    for i in range(nin):                        if (zb != 0.0) {
        W1b[k, i] += X[r, i] * zb       ==>         for i in range(nin):
                                                        W1b[k, i] += X[r, i] * zb
                                                }

The adjoint of ``z += W1[k, i] * X[r, i]`` adds ``X[r, i] * zb`` to a row of
``W1b`` for every ``k``, and behind a relu (``h = max(z, 0.0)``) ``zb`` is
zero for every unit the relu cut off: about half of them.  Those passes add
zeros to the row, one load and one store per element.  A loop is guarded by
``s != 0.0`` when its body holds nothing but

- pure ops and loads,
- increments ``a[...] = a[...] + e`` (or ``- e``) of derivative arrays, each ``e``
  a product (through ``*`` and negation) with a factor ``s``, the same
  derivative scalar for every increment, computed before the loop (or
  carried through it unchanged),

and each value it carries is passed on unchanged or not used after it.  A
derivative value is one computed from the function's tangent or adjoint
parameters (``derivative_values``); the primal values of a derivative (the
forward sweep of an adjoint, the primal part of a tangent, the copies of
helpers) are never guarded: ``a[i] += x[i] * c`` with ``c`` zero turns an
element ``-0.0`` into ``0.0``, which ``atan2`` tells apart.  With ``s`` zero
each increment adds ``e * 0``, a zero whenever ``e`` is finite, so the loop
changes no derivative but the sign of a zero element; where ``e`` is
infinite or NaN the loop as written would make the element NaN, and the
guarded one leaves it as it was (the contribution of a zero adjoint is
zero).  Only derivatives get it (the primal computes what its source says,
NaN included), and not a ``--debug`` build (whose bounds checks report a bad
index even in a pass that adds zeros).  Run on the IR as it is emitted
(``pipeline.emitted_form``), last.

Terms.

    for kk in range(4):                         for kk in range(4):
        t += tf[b, j, kk] * p[v, kk]                t += tf[b, j, kk] * p[v, kk]
        td += p[v, kk] * tfd[b, j, kk, :]  ==>  if (w[v, b] != 0.0) {
    acc += t * w[v, b]                              for kk in range(4):
    accd += w[v, b] * td                                td += p[v, kk] * tfd[b, j, kk, :]
                                                    accd += w[v, b] * td
                                                }
                                                acc += t * w[v, b]

The tangent of ``acc += t * w[v, b]`` with ``w`` inactive is ``accd += w * td``,
and ``td`` takes a loop over the directions for each ``kk``: the skinning of a
hand model, whose weights are mostly zero (each vertex follows a few bones).
A sum ``r = a + c * x`` (or ``a - c * x``) becomes ``if c != 0.0 { ...; r = a +
c * x } else { r = a }``, the ops that compute ``x`` and nothing else moved into
the branch, when

- ``r`` and ``x`` are derivative values and ``c`` a primal float scalar read
  from an array or made by ``max``/``min`` (a computed factor such as ``1 / s``
  is rarely zero: the test would cost a branch for nothing);
- those ops (the slice) are pure ops, loads and sequential loops and ifs of
  such ops, nothing between them and the sum writes what they read, and they
  hold a loop: over vectors of directions, or of more than 16 iterations (a
  scalar tangent of four multiply-adds costs less than a branch taken at
  random: the scalar tangent of ht's skinning took 140 us without the guards
  and 185 with them);
- the sum is not in a prange (whose sums and increments of arrays are made
  reductions, atomic or thread-private) and not stored back as an increment
  ``a[idx] = a[idx] + c * x`` (the loop rule's business);
- in vector modes, a loop of the slice that also carries primal values (``t``
  above), and no other derivative values (not a loop that ``transforms/jam.py``
  made compute four sums at once), is split: it stays where it was for them
  (with what it reads), and a copy in the branch computes the derivative ones,
  if the two share no floating-point work (loads and index arithmetic only;
  the tangent of ``s += exp(x[i] - a)`` would compute ``exp`` twice).  Not in
  scalar modes, where the copy's second pass over the loads costs about what
  the guard saves (with dense weights a scalar tangent took 0.81 ms split
  against 0.57 ms).

The primal values are computed as before; the derivative ones as the loop
rule says: with ``c`` zero ``r`` is ``a`` where ``a + 0 * x`` would be NaN for
an infinite ``x``, or ``0.0`` for ``a = -0.0``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir.core import (
    PURE_OPS, Break, Call, Cast, Const, Dim, For, Function, If, Load, Op, Prim, Region, Store,
    Value, While, Yield, Zeros, is_float_value,
)
from ..ir.types import BOOL, ScalarType, VecType
from ..ir.walk import clone, defined_inside, increment, substitute, trips
from .dce import dce


#: ``outside(v)``: what ``v`` is before a loop (itself, or the initial value of what the loop
#: passes on unchanged), or None for a value the loop computes
Outside = Callable[[Value], "Value | None"]


def skip_zero(fn: Function) -> bool:
    """Guards every loop and every term of ``fn`` that qualifies (see the module
    docstring)."""
    derivative = derivative_values(fn)
    used = {v for o in fn.walk() for v in o.operands}  # (guarding only drops uses)
    changed = _region(fn, fn.body, None, used, derivative)
    if _terms(fn, fn.body, None, derivative):
        dce(fn)  # the slots a split loop's two copies no longer need
        changed = True
    return changed


def derivative_values(fn: Function) -> set[Value]:
    """The values of ``fn`` computed from its tangent and adjoint parameters (those its
    ``tangent_of`` and ``adjoint_of`` name), and the local arrays such values are stored
    into.  Fewer rather than more: results of calls and values popped from the tape are
    left out (a ``g_b`` returns ``g``'s primal result), so nothing primal is in it."""
    seeds = set(fn.tangent_of) | set(fn.adjoint_of)
    out = {p for p, name in zip(fn.params, fn.param_names, strict=True) if name in seeds}
    ops = list(fn.walk())
    before = -1
    while len(out) != before:
        before = len(out)
        for op in ops:
            if isinstance(op, Store):
                if op.operands[-1] in out and isinstance(op.operands[0].owner, Zeros):
                    out.add(op.operands[0])
            elif isinstance(op, (For, While)):
                # a carried value, slot by slot: its initial value or what the body passes on
                # (a body that ends otherwise, with a break or return, passes on nothing)
                y = op.body.terminator
                nxt = y.operands if isinstance(y, Yield) else []
                args = [r.args[1:] if isinstance(op, For) else r.args for r in op.regions]
                for j, init in enumerate(op.inits):
                    if init in out or (j < len(nxt) and nxt[j] in out):
                        out.update([op.results[j], *(a[j] for a in args)])
            elif isinstance(op, If):
                # (a branch that ends with a break or a return yields nothing)
                ys = [b.terminator.operands for b in op.regions
                      if isinstance(b.terminator, Yield)]
                for j, r in enumerate(op.results):
                    if any(j < len(y) and y[j] in out for y in ys):
                        out.add(r)
            elif isinstance(op, (*PURE_OPS, Load)) and any(v in out for v in op.operands):
                out.update(op.results)
    return out


def _region(fn: Function, region: Region, guard: Value | None, used: set[Value],
            derivative: set[Value]) -> bool:
    """Guards the loops of ``region``, where ``guard`` is known not to be zero (the region is
    the first branch of ``if guard != 0.0``: a loop already guarded)."""
    changed = False
    i = 0
    while i < len(region.ops):
        op = region.ops[i]
        for k, sub in enumerate(op.regions):
            changed |= _region(fn, sub, _nonzero(op) if k == 0 else None, used, derivative)
        factor = _factor(op, used, derivative) if isinstance(op, For) else None
        if isinstance(op, For) and factor is not None and factor is not guard:
            guarded = _guarded(fn, op, factor)
            region.ops[i:i + 1] = guarded
            changed = True
            i += len(guarded) - 1
        i += 1
    return changed


def _nonzero(op: Op) -> Value | None:
    """``s`` when ``op`` is ``if s != 0.0``."""
    if not isinstance(op, If):
        return None
    cond = op.operands[0].owner
    if not (isinstance(cond, Prim) and cond.prim == "ne"):
        return None
    s, zero = cond.operands
    z = zero.owner
    return s if isinstance(z, Const) and z.value == 0.0 else None


def _factor(loop: For, used: set[Value], derivative: set[Value]) -> Value | None:
    """The scalar every increment of ``loop`` is a multiple of, if ``loop`` qualifies (a
    prange stays as it is: its body runs in threads or on the device; ``derivative``: the
    values and arrays ``derivative_values`` finds)."""
    body = loop.body
    y = body.terminator
    if loop.parallel or loop.iteration_tape or not isinstance(y, Yield):
        return None
    inside = defined_inside(loop)
    # what the loop carries unchanged is its initial value in every iteration
    passed = {a: init for a, init, out in zip(body.args[1:], loop.inits, y.operands, strict=True)
              if out is a}
    if any(r in used and a not in passed
           for r, a in zip(loop.results, body.args[1:], strict=True)):
        return None

    def outside(v: Value) -> Value | None:
        v = passed.get(v, v)
        return None if v in inside else v

    factor: Value | None = None
    for op in body.ops[:-1]:
        if isinstance(op, (*PURE_OPS, Load)) and not op.regions:
            continue
        if not isinstance(op, Store) or op.operands[0] not in derivative:
            return None
        s = _increment_factor(op, outside, inside)
        if s is None or (factor is not None and s is not factor):
            return None
        factor = s
    if factor is None or factor not in derivative or \
            not (isinstance(factor.type, ScalarType) and factor.type.is_float):
        return None
    return factor


def _increment_factor(store: Store, outside: Outside, inside: set[Value]) -> Value | None:
    """``s`` when ``store`` is ``a[idx] = a[idx] +/- e`` (the load in the loop, ``inside``)
    with ``e`` a product that has the factor ``s`` from before the loop."""
    inc = increment(store)
    if inc is None or inc[0].result not in inside:
        return None
    return _factor_of(inc[1], outside)


def _factor_of(e: Value, outside: Outside) -> Value | None:
    """A factor of the product ``e`` (through ``mul`` and ``neg``) from before the loop."""
    o = e.owner
    if not isinstance(o, Prim):
        return None
    if o.prim == "neg":
        return _factor_of(o.operands[0], outside)
    if o.prim != "mul":
        return None
    for v in o.operands:
        s = outside(v)
        if s is not None:
            return s
    for v in o.operands:
        s = _factor_of(v, outside)
        if s is not None:
            return s
    return None


def _guarded(fn: Function, loop: For, factor: Value) -> list[Op]:
    """The ops of ``if factor != 0.0 { loop }``.  The values the loop passes on unchanged
    are no longer carried: their uses, in the loop and after it, use the initial values."""
    body = loop.body
    y = body.terminator
    assert isinstance(y, Yield)
    # what the loop passes on unchanged: its initial value, inside the loop and after it
    passed = [j for j, (a, out) in enumerate(zip(body.args[1:], y.operands, strict=True))
              if out is a]
    substitute(fn, {v: loop.inits[j] for j in passed
                    for v in (body.args[1 + j], loop.results[j])})
    kept = [j for j in range(len(loop.results)) if j not in passed]
    loop.operands = [*loop.operands[:3], *(loop.inits[j] for j in kept)]
    loop.results = [loop.results[j] for j in kept]
    body.args = [body.args[0], *(body.args[1 + j] for j in kept)]
    y.operands = [y.operands[j] for j in kept]
    loc = loop.loc
    zero = Const([], [Value(factor.type)], loc, value=0.0)
    cond = Prim([factor, zero.result], [Value(BOOL)], loc, prim="ne")
    then = Region(ops=[loop, Yield([], [], loc)])
    other = Region(ops=[Yield([], [], loc)])
    return [zero, cond, If([cond.result], [], loc, regions=[then, other])]


# --- terms: ``a + c * x`` with the work of ``x`` done only when ``c`` is not zero ----------


@dataclass
class _Term:
    """``r = a + c * x`` (``region.ops[i]``; ``product`` is ``c * x``) and the slice, the
    ops before it that compute ``x`` and nothing else, in program order; ``split`` maps
    each loop of the slice that also carries primal values to the results the slice takes
    from it (a copy of the loop computes them)."""

    c: Value
    a: Value
    product: Op
    ops: list[Op]
    split: dict[Op, list[Value]]


def _terms(fn: Function, region: Region, guard: Value | None, derivative: set[Value]) -> bool:
    """Guards the terms of ``region`` and of the regions nested in it that qualify
    (``guard``: as in ``_region``).  Not in a prange: its sums and its increments of
    arrays are what the emitter makes reductions, atomic or thread-private."""
    changed = False
    for op in region.ops:
        if isinstance(op, For) and op.parallel:
            continue
        for k, sub in enumerate(op.regions):
            changed |= _terms(fn, sub, _nonzero(op) if k == 0 else None, derivative)
    i = 0
    while i < len(region.ops):
        term = _term(region, i, derivative)
        if term is not None and term.c is not guard:
            i = _guard_term(fn, region, i, term, derivative)
            changed = True
        i += 1
    return changed


def _incremented(region: Region, i: int) -> bool:
    """The result of ``region.ops[i]`` is stored back, ``a[idx] = a[idx] + e``: the emitter
    writes ``a[idx] += e`` (the loop rule skips such increments a loop at a time)."""
    r = region.ops[i].result
    return any(isinstance(o, Store) and o.operands[-1] is r and increment(o) is not None
               for o in region.ops[i + 1:])


def _users(region: Region) -> dict[Value, set[Op]]:
    """For each value used in ``region``, the ops of ``region`` that use it (an op nested in
    one of them counts as that op)."""
    out: dict[Value, set[Op]] = {}
    for top in region.ops:
        for o in top.walk():
            for v in o.operands:
                out.setdefault(v, set()).add(top)
    return out


def _term(region: Region, i: int, derivative: set[Value]) -> _Term | None:
    """The term at ``region.ops[i]`` if it qualifies: ``r = a + c * x`` (or ``a - c * x``,
    ``x * c``...) with ``r`` and ``x`` derivative values, ``c`` a primal float scalar that
    may well be zero, the product used there alone, ``r`` not stored back as an increment,
    and a slice worth a branch."""
    r = region.ops[i]
    if not (isinstance(r, Prim) and r.prim in ("add", "sub")) or r.result not in derivative:
        return None
    candidates = []
    for j in ((0, 1) if r.prim == "add" else (1,)):
        m, a = r.operands[j], r.operands[1 - j]
        mo = m.owner
        if not (isinstance(mo, Prim) and mo.prim == "mul"):
            continue
        for c, x in (mo.operands, mo.operands[::-1]):
            if c not in derivative and isinstance(c.type, ScalarType) and c.type.is_float \
                    and _may_be_zero(c) and x in derivative:
                candidates.append((m, a, c, x))
    if not candidates or _incremented(region, i):
        return None
    users = _users(region)  # (only now: it walks the whole region)
    for m, a, c, x in candidates:
        mo = m.owner
        if users.get(m) != {r} or users.get(x) != {mo} or mo not in region.ops:
            continue
        found = _slice(region, region.ops.index(mo), i, users, derivative)
        if found is not None:
            return _Term(c, a, mo, *found)
    return None


def _slice(region: Region, k: int, i: int, users: dict[Value, set[Op]],
           derivative: set[Value]) -> tuple[list[Op], dict[Op, list[Value]]] | None:
    """The slice of the term at ``region.ops[i]`` whose product is ``region.ops[k]`` and
    its loops to split (``_Term``): the ops before the product whose results serve it
    alone (through each other), all derivative values but the primal results of a loop
    to be split; None unless they are worth a branch and may run later, at the term's
    place."""
    product = region.ops[k]
    vector = isinstance(product.result.type, VecType)
    taken: set[Op] = {product}
    split: dict[Op, list[Value]] = {}
    for o in reversed(region.ops[:k]):
        if not o.results or not _pure(o):
            continue
        # (a loop to be split stays where it is: what it reads stays before it)
        mine = [v for v in o.results if v in users and users[v] <= taken - split.keys()]
        if not mine or any(v not in derivative for v in mine):
            continue
        if len(mine) != len(o.results):
            # (not a loop that computes other derivatives too: the four sums of a jammed
            # loop, transforms/jam.py, would each get a loop of their own)
            if not (vector and isinstance(o, For) and _cheap_to_split(o, mine)) or \
                    any(v in derivative and v not in mine for v in o.results):
                continue
            split[o] = mine
        taken.add(o)
    taken.discard(product)
    ops = [o for o in region.ops if o in taken]
    if not _worth_a_branch(ops, product):
        return None
    # nothing between the first of them and the term writes what they read
    read = {o.operands[0] for s in ops for o in s.walk() if isinstance(o, Load)}
    for o in region.ops[region.ops.index(ops[0]):i]:
        if o not in taken and any(isinstance(w, Call) or
                                  (isinstance(w, Store) and w.operands[0] in read)
                                  for w in o.walk()):
            return None
    return ops, split


def _may_be_zero(c: Value) -> bool:
    """``c`` is a factor that is zero often enough to test: an element of an array (sparse
    weights, a mask) or a ``max``/``min`` (a relu).  A computed factor such as ``1 / s`` is
    not: testing it costs a branch and, for a loop to be split, its work twice."""
    o = c.owner
    return isinstance(o, Load) or (isinstance(o, Prim) and o.prim in ("max", "min"))


def _cheap_to_split(loop: For, results: list[Value]) -> bool:
    """A copy of ``loop`` computing ``results`` repeats no floating-point arithmetic of the
    loop's other results: what the two share in the body is loads and integer work."""
    body = loop.body
    y = body.terminator
    if not isinstance(y, Yield) or any(isinstance(o, Break) for o in loop.walk()):
        return False
    wanted = {loop.results.index(v) for v in results}

    def needs(slots: set[int]) -> set[Op]:
        """The ops of the body that the yielded values of ``slots`` are computed from."""
        out: set[Op] = set()
        todo = [y.operands[j] for j in slots]
        while todo:
            v = todo.pop()
            o = v.owner
            if isinstance(o, Region):  # a carried value: what the body passes on for it
                if o is body and v is not body.args[0]:
                    j = body.args.index(v) - 1
                    if j not in slots:
                        slots = slots | {j}
                        todo.append(y.operands[j])
                continue
            if o is None or o in out or o not in body.ops:
                continue
            out.add(o)
            todo.extend(w for n in o.walk() for w in n.operands)
        return out

    shared = needs(wanted) & needs(set(range(len(loop.results))) - wanted)
    return all(isinstance(o, (Load, Const, Dim)) or
               (isinstance(o, (Prim, Cast)) and not is_float_value(o.results[0]))
               for o in shared)


def _worth_a_branch(ops: list[Op], product: Op) -> bool:
    """The slice holds a loop, and either its values are vectors of directions or the
    loop runs more than a few times: a loop of four scalar multiply-adds costs less than
    a branch taken at random (the scalar tangent of a skinning: 140 us without the
    guards, 185 with them)."""
    loops = [o for o in ops if isinstance(o, For)]
    if not loops:
        return False
    if isinstance(product.result.type, VecType):
        return True
    return any((n := trips(loop)) is None or n > 16 for loop in loops)


def _pure(op: Op) -> bool:
    """``op`` has no effect: a pure op, a load, or a sequential loop or an if of such ops."""
    if isinstance(op, (*PURE_OPS, Load)):
        return True
    if not isinstance(op, (For, If)):
        return False
    return all(isinstance(o, (*PURE_OPS, Load, For, If, Yield))
               and not (isinstance(o, For) and o.parallel) for o in op.walk())


def _guard_term(fn: Function, region: Region, i: int, term: _Term,
                derivative: set[Value]) -> int:
    """Replaces the term at ``region.ops[i]`` by ``r = if c != 0.0 { slice; c * x; a + ... }
    else { a }``.  A loop to be split stays where it was for its primal results, and a copy
    of it in the branch computes the others (dce then drops what each copy no longer
    needs; the new values join ``derivative``).  Returns the if's index."""
    r = region.ops[i]
    moved: list[Op] = []
    for o in term.ops:
        if o in term.split:
            twin = clone(o, {})
            derivative.update(twin.results)
            substitute(fn, {v: twin.results[o.results.index(v)] for v in term.split[o]})
            moved.append(twin)
        else:
            moved.append(o)
    gone = {*term.ops, term.product, r} - set(term.split)
    result = r.result
    out = Value(result.type, result.name)
    derivative.add(out)
    substitute(fn, {result: out})
    loc = r.loc
    zero = Const([], [Value(term.c.type)], loc, value=0.0)
    cond = Prim([term.c, zero.result], [Value(BOOL)], loc, prim="ne")
    then = Region(ops=[*moved, term.product, r, Yield([result], [], loc)])
    other = Region(ops=[Yield([term.a], [], loc)])
    guard = If([cond.result], [out], loc, regions=[then, other])
    before = [o for o in region.ops[:i] if o not in gone]
    region.ops = [*before, zero, cond, guard, *region.ops[i + 1:]]
    return len(before) + 2
