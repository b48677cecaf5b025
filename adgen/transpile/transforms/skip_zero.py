"""Loops of a derivative that only add multiples of one scalar: skipped when it is zero.

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
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir.core import (
    PURE_OPS, Const, For, Function, If, Load, Op, Prim, Region, Store, Value, While, Yield,
    Zeros,
)
from ..ir.types import BOOL, ScalarType
from ..ir.walk import defined_inside, increment, substitute


#: ``outside(v)``: what ``v`` is before a loop (itself, or the initial value of what the loop
#: passes on unchanged), or None for a value the loop computes
Outside = Callable[[Value], "Value | None"]


def skip_zero(fn: Function) -> bool:
    """Guards every loop of ``fn`` that qualifies (see the module docstring)."""
    used = {v for o in fn.walk() for v in o.operands}  # (guarding only drops uses)
    return _region(fn, fn.body, None, used, derivative_values(fn))


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
