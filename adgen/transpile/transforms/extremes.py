"""Running maxima and minima as the value of one iteration, before reverse mode.

A loop that carries a running maximum and nothing else,

    for i in range(...):
        e = ...               # no store, call or exit
        m = max(m, e)

has the derivative of the element it picks: the reverse of the loop itself
would save which operand each ``max`` took (a byte per iteration) and walk
back through all of them to find the one iteration that matters (seed 004's
special rule for reductions by min and max).  This pass rewrites it, in the
IR reverse mode differentiates, into

    k = start - step           # no iteration's index
    for i in range(start, ...):
        e = ...
        k = i if e > m else k  # (the test of ``max``: the first of equal maxima)
        m = max(m, e)
    m = e(k) if k != start - step else m0  # the body computed again for iteration k

The loop now computes an index, which has no derivative, so activity analysis
leaves it out of the adjoint: the forward sweep runs it untaped and the
reverse sweep only differentiates ``e`` at iteration ``k``.  The value is the
same: the body computed again for the same index computes the same ``e``.

``m = max(m, e)`` (``min`` alike), which takes ``e`` only when it is greater,
with a body of loads and arithmetic (no libm call, no inner loop or branch:
cheap to compute again), keeps the loop as it is, a reduction the compiler
vectorises, and finds k after it: the first iteration whose ``e`` equals the
extreme, when the extreme is not the initial value (a search that stops
there, and at the end of the range)::

    for i in range(...):      # unchanged
        e = ...
        m = max(m, e)
    found = False
    if m > m0:
        k = start
        while k < stop and e(k) != m:
            k += step
        found = k < stop
    m = e(k) if found else m0

The loop carrying ``k`` beside ``m`` is not vectorised (the running maximum
and the index form one serial chain): in seed 000's logsumexp of 10,000
values it took about as long as the rest of the gradient.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.core import (
    NOWHERE, Cast, Condition, Const, Dim, For, Function, If, Load, Op, Prim, Region, Value,
    While, Yield,
)
from ..ir.prims import EXPENSIVE
from ..ir.types import BOOL, I64, ScalarType
from ..ir.walk import clone, substitute

#: the comparison each extreme makes: ``max(a, b)`` is ``b > a ? b : a``
_TEST = {"max": "gt", "min": "lt"}
#: the ops a body may hold (loads, arithmetic and pure inner loops and branches)
_PURE = (Prim, Cast, Const, Dim, Load, For, If, Yield)


def running_extremes(fn: Function) -> bool:
    """Rewrite every running max/min loop of ``fn`` (see the module docstring), innermost
    first."""
    return _region(fn, fn.body)


def _region(fn: Function, region: Region) -> bool:
    changed = False
    k = 0
    while k < len(region.ops):
        op = region.ops[k]
        for sub in op.regions:
            changed |= _region(fn, sub)
        extreme = _extreme(op) if isinstance(op, For) else None
        if extreme is not None:
            assert isinstance(op, For)
            k = _rewrite(fn, op, extreme, region, k)
            changed = True
        k += 1
    return changed


def _extreme(op: For) -> Prim | None:
    """The ``max``/``min`` of a loop that carries a running extreme and nothing else."""
    body = op.body
    step = op.operands[2].owner
    if op.parallel or op.directive or len(body.args) != 2 or not isinstance(step, Const):
        return None
    iv, arg = body.args
    if iv.type != I64 or not (isinstance(arg.type, ScalarType) and arg.type.is_float):
        return None
    y = body.terminator
    if not isinstance(y, Yield):
        return None
    for o in body.ops:
        if not all(isinstance(inner, _PURE) for inner in o.walk()):
            return None
    users = [inner for o in body.ops for inner in o.walk()
             if any(v is arg for v in inner.operands)]
    ext = y.operands[0].owner
    if not (isinstance(ext, Prim) and ext.prim in _TEST and users == [ext]
            and sum(v is arg for v in ext.operands) == 1):
        return None
    uses_of_result = [inner for o in body.ops for inner in o.walk()
                      if any(v is ext.result for v in inner.operands)]
    return ext if uses_of_result == [y] else None


def _rewrite(fn: Function, op: For, ext: Prim, region: Region, at: int) -> int:
    """Rewrite ``op`` (at ``region.ops[at]``); returns the position of its last new op."""
    body = op.body
    iv, arg = body.args
    loc = op.loc
    e_first = ext.operands[1] is not arg  # e is the operand max picks when the test holds
    e = ext.operands[1] if e_first else ext.operands[0]
    if e_first and all(isinstance(o, (Prim, Cast, Const, Dim, Load, Yield)) and not (
            isinstance(o, Prim) and o.prim in EXPENSIVE) for o in body.ops):
        return _search_after(fn, op, ext, e, region, at)

    before = Builder(Region(), loc)
    # k starts at an index the loop never takes (the one before its first: ranges may hold
    # negative indices, so -1 will not do)
    unset = before.sub(op.operands[0], op.operands[2])
    region.ops[at:at] = before.region.ops
    at += len(before.region.ops)

    # the index of the iteration whose e the extreme is: k = test ? i : k (or the reverse)
    k_arg = body.add_arg(Value(I64, "k"))
    inner = Builder(Region(), loc)
    test = inner.prim(_TEST[ext.prim], ext.operands[1], ext.operands[0])
    k_next = inner.prim("select", test, iv, k_arg) if e_first else \
        inner.prim("select", test, k_arg, iv)
    y = body.ops[-1]
    body.ops[-1:-1] = inner.region.ops
    y.operands.append(k_next)
    op.operands.append(unset)
    k_res = Value(I64, "k")
    k_res.owner = op
    op.results.append(k_res)

    # after the loop: the extreme is e of iteration k, or the initial value
    after = Builder(Region(), loc)
    found = after.prim("ne", k_res, unset)
    then, other = Region(), Region()
    vmap: dict[Value, Value] = {iv: k_res}
    for o in body.ops[:-1]:
        if o is ext or o.results and o.results[0] is k_next or o is test.owner:
            continue
        then.ops.append(clone(o, vmap))
    then.ops.append(Yield([vmap.get(e, e)], [], loc))
    other.ops.append(Yield([op.inits[0]], [], loc))
    picked = Value(arg.type, arg.name)
    after.insert(If([found], [picked], loc, regions=[then, other]))
    region.ops[at + 1:at + 1] = after.region.ops
    substitute(fn, {op.results[0]: picked})  # (the if yields the initial value itself)
    return at + len(after.region.ops)


def _search_after(fn: Function, op: For, ext: Prim, e: Value, region: Region, at: int) -> int:
    """``m = max(m, e)``: the loop stays; k is the first iteration whose e is the extreme,
    found after it (module docstring).  Returns the position of the last new op."""
    body = op.body
    iv, arg = body.args
    loc = op.loc
    start, stop, step = op.operands[:3]
    s = int(step.owner.value)  # type: ignore[union-attr]
    extreme, initial = op.results[0], op.inits[0]
    picked = Value(arg.type, arg.name)
    substitute(fn, {extreme: picked})  # before the ops below, which read the extreme

    def e_at(index: Value, into: Region) -> Value:
        """The ops computing e for iteration ``index``, appended to ``into``; e's copy."""
        vmap: dict[Value, Value] = {iv: index}
        for o in body.ops[:-1]:
            if o is not ext:
                into.ops.append(clone(o, vmap))
        return vmap.get(e, e)

    def in_range(b: Builder, i: Value) -> Value:
        return b.prim("lt" if s > 0 else "gt", i, stop)

    # while i < stop and e(i) != extreme: i += step
    i_cond, i_body = Value(I64, iv.name), Value(I64, iv.name)
    cond = Region([i_cond])
    cb = Builder(cond, loc)
    inside = in_range(cb, i_cond)
    probe, past = Region(), Region()
    # (the test is adgen's, not the user's: NOWHERE keeps lint's equality warning off it)
    probe.ops.append(Yield([Builder(probe, NOWHERE).prim("ne", e_at(i_cond, probe), extreme)],
                           [], loc))
    past.ops.append(Yield([Builder(past, loc).const(False, BOOL)], [], loc))
    differs = Value(BOOL, None)
    cb.insert(If([inside], [differs], loc, regions=[probe, past]))
    cond.ops.append(Condition([differs], [], loc))
    step_body = Region([i_body])
    sb = Builder(step_body, loc)
    step_body.ops.append(Yield([sb.add(i_body, step) if s > 0 else
                                sb.sub(i_body, sb.const(-s, I64))], [], loc))

    then, other = Region(), Region()
    tb = Builder(then, loc)
    found_at = Value(I64, iv.name)
    tb.insert(While([start], [found_at], loc, regions=[cond, step_body]))
    tb.insert(Yield([in_range(tb, found_at), found_at], [], loc))
    other.ops.append(Yield([Builder(other, loc).const(False, BOOL), start], [], loc))

    after = Builder(Region(), loc)
    moved = after.prim(_TEST[ext.prim], extreme, initial)  # the extreme is not the initial value
    # the extreme is e of iteration k, or the initial value
    found, k = Value(BOOL, "found"), Value(I64, "k")
    after.insert(If([moved], [found, k], loc, regions=[then, other]))
    at_k, none = Region(), Region()
    at_k.ops.append(Yield([e_at(k, at_k)], [], loc))
    none.ops.append(Yield([initial], [], loc))
    after.insert(If([found], [picked], loc, regions=[at_k, none]))
    region.ops[at + 1:at + 1] = after.region.ops
    return at + len(after.region.ops)
