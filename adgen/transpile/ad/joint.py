"""Joint sweeps: the adjoints of ``f_b`` that are known early, used in its forward sweep.

In ``f_b`` (not in the split halves ``f_fwd``/``f_bwd``) the adjoints of the results are
parameters (``retb``): they are known before the forward sweep starts, and so are some of
the adjoints that follow from them.  What needs only those runs in the forward sweep and
tapes nothing:

- a call ``y = g(...)`` whose result's adjoint is known where the call is (``return
  g(...)``: ``retb``; ``return 2.0 * g(...)``: computed from it there, ``_copies``) calls
  ``g_b`` there, ``g``'s whole adjoint at once (its own forward and reverse sweep),
  instead of ``g_fwd`` there, which tapes what ``g_bwd`` needs, and ``g_bwd`` in the
  reverse sweep (``call``);
- a loop whose iterations' adjoints only add up (each active value it carries is a sum,
  ``s = s + e``, so the sum's adjoint is the same in every iteration, see
  ``AdjointFunction.order_free``) and whose sums' adjoints are known where the loop is runs
  the reverse of each iteration at the end of that iteration.  The adjoints of the results
  of the calls in its body are computed before the calls, which become ``g_b`` calls; the
  adjoints the iterations add to values from before the loop are summed by the forward
  loop (``loop``).

A determinant by expansion in minors (``det_m += a[i, j] * det_of_minor(...)`` over a
row, returned) then tapes nothing at any depth of its recursion.  Conditions, beyond
those: ``f`` writes no array that has an adjoint (itself or through a call) at or after
the call or loop, nor in a loop around it (the reverse of a write takes the adjoint of the
element, which must not hold the adjoints of the reads before the write yet); in the
loop, no inner loop, each call at the top of the body, and what the adjoint of a call
needs computed from values known before the call, without reading an array (an if
around those values is split so that its part for the call goes first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis.activity import written_params
from ..emit.names import FWD
from ..ir.builder import Builder
from ..ir.core import PURE_OPS, Call, For, If, Op, Region, Store, Value, While, Yield
from ..ir.types import ArrayType
from ..ir.walk import clone

if TYPE_CHECKING:
    from .reverse import AdjointFunction



def possible(af: AdjointFunction) -> bool:
    """Whether ``af`` (an ``f_b``) may run adjoints in its forward sweep: it is not a split
    half nor a vector adjoint nor one the hvp modes differentiate (a ``retb`` passed to a
    ``g_b`` would need a tangent)."""
    return not (af.split or af.vector or not af.early)


def _written_later(af: AdjointFunction, site: Op) -> bool:
    """Whether an array with an adjoint may be written (stored into, or by a call) at or
    after ``site`` (an op of ``f``), or anywhere in a loop around it: the reverse of that
    write takes the element's adjoint, so the adjoints of the reads before it must not be
    added before the reverse sweep reaches it."""
    if af.joint_writes is None:
        pos: dict[Op, int] = {}
        end: dict[Op, int] = {}
        loops: dict[Op, list[Op]] = {}
        writes: list[int] = []

        def walk(region: Region, around: list[Op]) -> None:
            for op in region.ops:
                pos[op] = len(pos)
                loops[op] = around
                if isinstance(op, Store) and op.operands[0] in af.shadowed or \
                        isinstance(op, Call) and any(
                            op.operands[p] in af.shadowed
                            for p in written_params(af.module.function(op.callee), af.module)):
                    writes.append(pos[op])
                inner = around + [op] if isinstance(op, (For, While)) else around
                for sub in op.regions:
                    walk(sub, inner)
                end[op] = len(pos) - 1

        walk(af.fn.body, [])
        af.joint_writes = (pos, end, loops, writes)
    pos, end, loops, writes = af.joint_writes
    at = pos.get(site)
    return at is None or any(w >= at for w in writes) or any(
        pos[loop] <= w <= end[loop] for loop in loops[site] for w in writes)


def arguments(af: AdjointFunction, op: Call, ybs: list[Value | None]) -> list[Value] | None:
    """The arguments of ``g_b`` for the call ``op`` (the caller's values, the adjoint
    arrays, the adjoints of the results ``ybs``), or None when ``g_b`` may not replace
    ``g_fwd`` and ``g_bwd``: ``g`` has a custom or C adjoint, is a derivative itself, or the
    call is checkpointed; an array ``g`` differentiates has no adjoint array here; a
    result's adjoint is not known."""
    callee = af.module.function(op.callee)
    if callee.custom_adjoint or callee.external is not None or op.directive or \
            op.callee in af.module.nested:
        return None
    c_params = af.activity.active_params(callee)
    args: list[Value] = []
    for p, a in enumerate(op.operands):
        args.append(af.m(a))
        if p in c_params and isinstance(a.type, ArrayType):
            sh = af.shadow.get(a)
            if sh is None:
                return None
            args.append(sh)
    for j in af.activity.active_results(callee):
        yb = ybs[j]
        if yb is None:
            return None
        args.append(yb)
    return args


def _locate(top: Region, target: Op) -> list[tuple[Region, int]]:
    """The regions from ``top`` down to ``target``'s, each with the index of the op on the way."""
    for i, op in enumerate(top.ops):
        if op is target:
            return [(top, i)]
        for sub in op.regions:
            path = _locate(sub, target)
            if path:
                return [(top, i)] + path
    return []


def _visible(top: Region, target: Op) -> set[Value]:
    """The values the forward sweep ``top`` has where ``target`` is: the arguments of the
    regions around it and the results of the ops before it in each."""
    out: set[Value] = set()
    for region, i in _locate(top, target):
        out.update(region.args)
        for op in region.ops[:i]:
            out.update(op.results)
    return out


def _copies(values: list[Value], seen: set[Value]) -> tuple[list[Op], list[Value]] | None:
    """``values`` computed where ``seen`` are the values at hand: copies of the ops (each a
    function of its operands) that compute those of them not at hand, in order, and the
    values to use; None when one needs another kind of op (the adjoint of a result is
    final when the reverse sweep reaches the op, so ``0.5 * retb`` may be computed early)."""
    ops: list[Op] = []
    done: dict[Value, Value] = {}

    def get(v: Value) -> Value | None:
        if v in seen:
            return v
        if v not in done:
            o = v.owner
            if not isinstance(o, PURE_OPS) or any(get(x) is None for x in o.operands):
                return None
            ops.append(clone(o, done))  # reads the copies of its operands, maps its results
        return done[v]

    out = [get(v) for v in values]
    if any(v is None for v in out):
        return None
    return ops, out  # type: ignore[return-value]


def _joint_call(af: AdjointFunction, op: Call, fwd: Call, args: list[Value],
                adjoints: list[Value]) -> Call:
    """``g_b`` for the call ``op`` of ``g``, called with ``args``, giving the results of
    ``fwd`` (the ``g_fwd`` call it replaces) and then the adjoints ``adjoints`` of ``g``'s
    float scalar parameters.  The results point back at it once it is in place
    (``_own``): until then ``fwd`` may stay."""
    primal = af.module.function(op.callee).primal
    jc = Call(list(args), list(fwd.results) + list(adjoints), fwd.loc, callee=primal + "_b")
    for r in fwd.results:  # (the constructor made them point at jc)
        r.owner = fwd
    return jc


def _own(call: Call) -> None:
    for r in call.results:
        r.owner = call


def call(af: AdjointFunction, op: Call, args: list[Value], scalars: list[int],
         b: Builder, adj: dict[Value, Value]) -> bool:
    """``g_b`` in place of ``g_fwd`` where every argument of it is known (``arguments``);
    the adjoints of the float scalar arguments it returns are added in the reverse sweep.
    False (nothing changed) where that is not so."""
    fwd = af.fwd_ops.get(op)
    top = af.fwd_region[af.fn.body]
    if not isinstance(fwd, Call) or not fwd.callee.endswith(FWD) or not possible(af) or \
            _written_later(af, op):
        return False
    path = _locate(top, fwd)
    # in a loop the adjoint of the result is the adjoint loop's (a call there whose adjoint
    # is known is in a loop ``loop`` runs in the forward sweep); not in a copy the reverse
    # sweep makes (a checkpointed loop computed again)
    if not path or any(isinstance(region.ops[i], (For, While)) for region, i in path[:-1]):
        return False
    made = _copies(args, _visible(top, fwd))
    if made is None:
        return False
    early, args = made
    callee = af.module.function(op.callee)
    names = [op.operands[p].name for p in scalars]
    adjoints = [Value(af.atype(callee.params[p].type), None if n is None else n + "b")
                for p, n in zip(scalars, names, strict=True)]
    region, i = path[-1]
    af.fwd_ops[op] = jc = _joint_call(af, op, fwd, args, adjoints)
    region.ops[i:i + 1] = [*early, jc]
    _own(jc)
    for p, out in zip(scalars, adjoints, strict=True):
        af.accumulate(b, adj, op.operands[p], out)
    return True


def loop(af: AdjointFunction, op: For, b: Builder, adj: dict[Value, Value], start: Value,
         stop: Value, step: Value, fwd_iv: Value) -> bool:
    """The reverse of each iteration of ``op`` at the end of the iteration in the forward
    sweep, its calls turned into ``g_b`` calls; nothing in the reverse sweep but the
    adjoints of the sums' initial values.  False (nothing changed) where the conditions of
    the module docstring do not hold."""
    if op.parallel or op.directive or not possible(af) or _written_later(af, op):
        return False
    body = op.body
    calls: list[Call] = []
    for top in body.ops:
        for o in top.walk():
            if isinstance(o, (For, While)):
                return False
            if isinstance(o, Call) and af.needs_adjoint_call(o):
                if o is not top:
                    return False
                calls.append(o)
    if not calls or not af.order_free(op, calls_allowed=True):
        return False
    fwd_loop = af.fwd_ops[op]
    fwd_top = af.fwd_region[af.fn.body]
    fb = af.fwd_region[body]
    path = _locate(fwd_top, fwd_loop)
    # not in a copy the reverse sweep makes, nor in a prange (its threads would share the
    # record of the tapes' sizes)
    if not path or any(isinstance(r.ops[i], For) and r.ops[i].parallel for r, i in path[:-1]):
        return False
    before = _visible(fwd_top, fwd_loop)
    trial = Builder(Region(), b.loc)
    new = af.reverse_loop(op, trial, dict(adj), start, stop, step, body.args[1:],
                          (body.args[0], fwd_iv))
    rev = new.body
    y = rev.terminator
    assert isinstance(y, Yield)
    # the adjoints of the sums are the same in every iteration and known here; those of the
    # values from before the loop (``free``) are too, or add up over the iterations: the
    # forward loop then carries their sums, from 0
    free = [v for v in af.free_values(op) if not any(v is c for c in body.args[1:])]
    carried = rev.args[1:]
    passed = [_passed_on(v) is a for v, a in zip(y.operands, carried, strict=True)]
    sums = [k for k, same in enumerate(passed) if not same]
    if any(k < len(carried) - len(free) for k in sums):
        return False
    same = [k for k, same in enumerate(passed) if same]
    made = _copies([new.operands[3 + k] for k in same], before)
    if made is None:
        return False
    early, inits = made
    subst = {rev.args[0]: fwd_iv}
    subst.update((carried[k], v) for k, v in zip(same, inits, strict=True))
    added = [Value(carried[k].type, carried[k].name) for k in sums]
    subst.update((carried[k], a) for k, a in zip(sums, added, strict=True))
    ops = rev.ops[:-1]
    inside = {v for o in ops for x in o.walk() for v in x.results}
    inside |= {a for o in ops for x in o.walk() for r in x.regions for a in r.args}
    here = before | set(fb.args) | {r for o in fb.ops for r in o.results}
    if any(v not in inside and v not in subst and v not in here
           for o in ops for x in o.walk() for v in x.operands):
        return False
    placed = _hoist_calls(af, calls, ops, fb, before | set(subst))
    if placed is None:
        return False
    hoisted, rest = placed
    for o in [*hoisted, *rest]:
        for x in o.walk():
            x.operands = [subst.get(v, v) for v in x.operands]
    fb.ops[-1:-1] = rest
    # the sums of the adjoints of the free values: carried by the forward loop
    zb = Builder(Region(), op.loc)
    fy = fb.terminator
    assert isinstance(fy, Yield)
    for k, a in zip(sums, added, strict=True):
        fwd_loop.operands.append(zb.const(0.0, a.type))
        fb.add_arg(a)
        fy.operands.append(subst.get(y.operands[k], y.operands[k]))
        total = Value(a.type, a.name)
        total.owner = fwd_loop
        fwd_loop.results.append(total)
        af.accumulate(b, adj, free[k - (len(carried) - len(free))], total)
    region, i = path[-1]
    region.ops[i:i] = early + zb.region.ops
    # the sums' initial values get the adjoint the sums have
    ybs = {j: adj.pop(r, None) for j, r in enumerate(op.results)}
    for j, a in enumerate(body.args[1:]):
        if (af.active(a) or af.active(op.results[j])) and ybs[j] is not None:
            af.accumulate(b, adj, op.inits[j], ybs[j])
    return True


def _passed_on(v: Value) -> Value:
    """``v``, or what it is when it is the result of ifs whose branches all yield that."""
    while isinstance(v.owner, If):
        o = v.owner
        k = next(k for k, r in enumerate(o.results) if r is v)
        ys = [branch.terminator.operands[k] for branch in o.regions]
        if any(w is not ys[0] for w in ys):
            break
        v = ys[0]
    return v


def _hoist_calls(af: AdjointFunction, calls: list[Call], ops: list[Op], fb: Region,
                 known: set[Value]) -> tuple[list[Op], list[Op]] | None:
    """Put into ``fb`` (the forward loop body) each call of ``calls`` as a ``g_b`` call,
    after what its arguments need: ops of ``ops`` (the reversed iteration) and ops of
    ``fb`` after the call, which move before it; returns the ops of ``ops`` moved and the
    rest, or None (``fb`` unchanged) when an argument needs an op that is not a function of
    its operands, or the call's own results."""
    saved = list(fb.ops)
    rest = list(ops)
    hoisted: list[Op] = []
    placed: dict[Op, Call] = {}  # call -> its g_b call (af.fwd_ops once all are placed)
    known = known | set(fb.args)
    i = 0
    while i < len(fb.ops):
        fwd = fb.ops[i]
        call_op = next((c for c in calls if af.fwd_ops.get(c) is fwd), None)
        entry = af.joint_calls.get(call_op) if call_op is not None else None
        if call_op is not None and entry is None:
            fb.ops[:] = saved
            return None
        if entry is None:
            known.update(fwd.results)
            i += 1
            continue
        assert call_op is not None
        bwd, args = entry
        later = fb.ops[i + 1:-1]
        moved = _slice(args, rest, later, known, bwd)
        if moved is None:
            fb.ops[:] = saved
            return None
        earlier, sliced, args = moved
        jc = _joint_call(af, call_op, fwd, args, list(bwd.results))
        tail = [o for o in fb.ops[i + 1:] if not any(o is e for e in earlier)]
        fb.ops[i:] = [*earlier, *sliced, jc, *tail]
        hoisted += [*sliced, jc]
        rest = [o for o in rest if o is not bwd]
        placed[call_op] = jc
        for o in [*earlier, *sliced, jc]:
            known.update(o.results)
        i += len(earlier) + len(sliced) + 1
    af.fwd_ops.update(placed)
    for jc in placed.values():
        _own(jc)
    return hoisted, rest


def _slice(args: list[Value], rest: list[Op], later: list[Op], known: set[Value],
           bwd: Call) -> tuple[list[Op], list[Op], list[Value]] | None:
    """What ``args`` need: the ops of ``later`` (after the call in the forward loop body)
    and of ``rest`` (the reversed iteration), the latter taken out of ``rest``; an if of
    ``rest`` that computes some of them is split in two, its part for them taken out.
    Returns those of ``later``, those of ``rest`` (each in order) and the arguments to use;
    None (``rest`` unchanged) when they need ``bwd``, a value not in ``known`` nor computed
    there, or an op that is not a function of its operands."""
    owner = {r: o for o in rest for r in o.results}
    fwd_owner = {r: o for o in later for r in o.results}
    need_ops: set[Op] = set()
    need_results: dict[If, set[int]] = {}  # if -> indices of the results needed
    work = list(args)
    seen: set[Value] = set()
    while work:
        v = work.pop()
        if v in seen or v in known:
            continue
        seen.add(v)
        o = owner.get(v, fwd_owner.get(v))
        if o is None or o is bwd:
            return None
        if isinstance(o, If) and v in owner:
            k = next(k for k, r in enumerate(o.results) if r is v)
            need_results.setdefault(o, set()).add(k)
            work.append(o.operands[0])
            for region in o.regions:
                part = _branch_slice(region, k)
                if part is None:
                    return None
                work.extend(part)
            continue
        if not isinstance(o, PURE_OPS):
            return None
        need_ops.add(o)
        work.extend(o.operands)
    earlier = [o for o in later if o in need_ops]
    sliced: list[Op] = []
    subst: dict[Value, Value] = {}
    kept: list[Op] = []
    for o in rest:
        for x in o.walk():  # (the branches of a needed if may read an if split before)
            x.operands = [subst.get(v, v) for v in x.operands]
        if o in need_ops:
            sliced.append(o)
        elif o in need_results:
            assert isinstance(o, If)
            ks = sorted(need_results[o])
            first = _split_if(o, ks)
            for k, r in zip(ks, first.results, strict=True):
                subst[o.results[k]] = r
            _drop_results(o, ks)
            sliced.append(first)
            kept.append(o)
        else:
            kept.append(o)
    for o in kept:  # uses inside regions of later ops
        for x in o.walk():
            x.operands = [subst.get(v, v) for v in x.operands]
    rest[:] = kept
    return earlier, sliced, [subst.get(v, v) for v in args]


def _branch_slice(region: Region, k: int) -> list[Value] | None:
    """The values from outside ``region`` (a branch of an if) that its ``k``-th yielded
    value needs, or None when that takes an op that is not a function of its operands."""
    y = region.terminator
    assert isinstance(y, Yield)
    owner = {r: o for o in region.ops for r in o.results}
    out: list[Value] = []
    work = [y.operands[k]]
    seen: set[Value] = set()
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        o = owner.get(v)
        if o is None:
            out.append(v)
        elif isinstance(o, PURE_OPS):
            work.extend(o.operands)
        else:
            return None
    return out


def _split_if(op: If, ks: list[int]) -> If:
    """A copy of ``op`` that yields only its results ``ks`` and computes only them."""
    first = clone(op, {})
    _keep_results(first, ks)
    for branch in first.regions:  # only what the yields need (``_branch_slice``)
        needed = set(branch.terminator.operands)
        kept: list[Op] = []
        for o in reversed(branch.ops[:-1]):
            if any(r in needed for r in o.results):
                kept.append(o)
                needed.update(o.operands)
        branch.ops = [*reversed(kept), branch.ops[-1]]
    return first


def _drop_results(op: If, ks: list[int]) -> None:
    _keep_results(op, [k for k in range(len(op.results)) if k not in ks])


def _keep_results(op: If, ks: list[int]) -> None:
    for branch in op.regions:
        y = branch.terminator
        assert isinstance(y, Yield)
        y.operands = [y.operands[k] for k in ks]
    op.results = [op.results[k] for k in ks]
