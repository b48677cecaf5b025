"""Structural queries shared by passes: parents, loop targets, use counts."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .core import (
    Break, Call, Const, Continue, For, Function, Load, Module, Op, Prim, Region, Store, Value,
    While,
)


@dataclass
class Structure:
    """Who contains whom in a function."""

    parent_of_region: dict[Region, Op] = field(default_factory=dict)
    region_of_op: dict[Op, Region] = field(default_factory=dict)
    #: break/continue -> the loop it leaves or continues
    loop_of: dict[Op, Op] = field(default_factory=dict)
    uses: dict[Value, list[Op]] = field(default_factory=dict)


def structure(fn: Function) -> Structure:
    s = Structure()

    def region(r: Region, parent: Op | None, loops: list[Op]) -> None:
        if parent is not None:
            s.parent_of_region[r] = parent
        for op in r.ops:
            s.region_of_op[op] = r
            for v in op.operands:
                s.uses.setdefault(v, []).append(op)
            if isinstance(op, (Break, Continue)) and loops:
                s.loop_of[op] = loops[-1]
            inner = loops + [op] if isinstance(op, (For, While)) else loops
            for sub in op.regions:
                region(sub, op, inner)

    region(fn.body, None, [])
    return s


def calls(fn: Function) -> list[str]:
    """The names of the functions ``fn`` calls."""
    return [op.callee for op in fn.walk() if isinstance(op, Call)]


def calls_and_rules(fn: Function) -> list[str]:
    """The functions ``fn`` calls and its custom derivatives (``@custom_jvp`` tangent,
    ``@custom_vjp`` adjoint, a nested gradient's ``f_grad_vjp``): its derivatives call them."""
    return calls(fn) + [g for g in (fn.custom_tangent, fn.custom_adjoint) if g]


def reachable(module: Module, roots: Iterable[str],
              follow: Callable[[Function], list[str]] = calls) -> set[str]:
    """``roots`` and every name reached from them through ``follow`` (by default, calls),
    transitively; a name that is not a function of ``module`` is kept but not followed."""
    by_name = {fn.name: fn for fn in module.functions}
    seen = set(roots)
    stack = list(seen)
    while stack:
        fn = by_name.get(stack.pop())
        if fn is None:
            continue
        for name in follow(fn):
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return seen


def parent_op(s: Structure, op: Op) -> Op | None:
    r = s.region_of_op.get(op)
    return s.parent_of_region.get(r) if r is not None else None


def substitute(fn: Function, subst: dict[Value, Value]) -> None:
    """Replace every use of a key value by its mapped value (chains followed)."""
    if not subst:
        return

    def resolve(v: Value) -> Value:
        while v in subst:
            v = subst[v]
        return v

    for op in fn.walk():
        op.operands = [resolve(v) for v in op.operands]


def clone(op: Op, vmap: dict[Value, Value]) -> Op:
    """A copy of ``op`` (and its regions) reading ``vmap``'s values for the ones it maps;
    the copy's results and block arguments are added to ``vmap``."""
    c = copy.copy(op)
    c.operands = [vmap.get(v, v) for v in op.operands]
    c.results = [Value(r.type, r.name) for r in op.results]
    for r, nr in zip(op.results, c.results, strict=True):
        nr.owner = c
        vmap[r] = nr
    c.regions = []
    for sub in op.regions:
        nr = Region([Value(a.type, a.name) for a in sub.args])
        for a, na in zip(sub.args, nr.args, strict=True):
            vmap[a] = na
        nr.ops = [clone(o, vmap) for o in sub.ops]
        c.regions.append(nr)
    return c


def defined_inside(op: Op) -> set[Value]:
    """The values defined inside ``op``: the results of the ops nested in it and
    the arguments of its regions and theirs (not ``op``'s own results)."""
    return {r for o in op.walk() if o is not op for r in o.results} | \
        {a for o in op.walk() for r in o.regions for a in r.args}


def trips(loop: For) -> int | None:
    """The number of iterations of ``loop`` when its start, stop and step are constants."""
    start, stop, step = (int_const(v) for v in loop.operands[:3])
    if start is None or stop is None or not step:
        return None
    return max(0, (stop - start + step - (1 if step > 0 else -1)) // step)


def int_const(v: Value) -> int | None:
    """The value of an integer constant, None for anything else."""
    o = v.owner
    return int(o.value) if isinstance(o, Const) and not isinstance(o.value, float) else None


def increment(store: Store) -> tuple[Load, Value, bool] | None:
    """``(load, e, subtracted)`` when ``store`` is ``a[idx] = a[idx] + e`` (either operand
    order) or ``a[idx] = a[idx] - e``: the load of the same element, the term, and whether
    it is subtracted; None otherwise."""
    value = store.operands[-1]
    upd = value.owner
    if not (isinstance(upd, Prim) and upd.prim in ("add", "sub")):
        return None
    array, idx = store.operands[0], store.operands[1:-1]
    for j in ((0, 1) if upd.prim == "add" else (0,)):
        old = upd.operands[j].owner
        if isinstance(old, Load) and old.operands[0] is array and \
                len(old.operands) - 1 == len(idx) and \
                all(a is c for a, c in zip(old.operands[1:], idx)):
            return old, upd.operands[1 - j], upd.prim == "sub"
    return None


def index_dependent(loop: For) -> set[Value]:
    """The values of ``loop``'s body that may differ from one iteration to the next: those
    computed from its index; the index of an inner ``for`` whose start or step is (its stop
    changes how many indices, not which); a value an inner loop carries when its initial
    value or what the loop passes on is; an if's result when its condition or what a branch
    yields is; an inner loop's results when anything in it is."""
    from .core import If, Yield
    varies: set[Value] = {loop.body.args[0]}
    feeders: dict[Op, list[Op]] = {}  # inner loop -> its yields, breaks and continues

    def collect(region: Region, loops: list[Op]) -> None:
        for o in region.ops:
            if isinstance(o, (Break, Continue)) and loops:
                feeders.setdefault(loops[-1], []).append(o)
            if isinstance(o, Yield) and loops and region is loops[-1].regions[-1]:
                feeders.setdefault(loops[-1], []).append(o)
            for sub in o.regions:
                collect(sub, loops + [o] if isinstance(o, (For, While)) else loops)

    collect(loop.body, [])

    def any_varies(values: list[Value]) -> bool:
        return any(v in varies for v in values)

    def touched(op: Op) -> bool:
        return any(any_varies(o.operands) for o in op.walk()) or any(
            any_varies(r.args) for o in op.walk() for r in o.regions)

    def mark(values: list[Value]) -> bool:
        new = [v for v in values if v not in varies]
        varies.update(new)
        return bool(new)

    def visit(region: Region) -> bool:
        grew = False
        for o in region.ops:
            if isinstance(o, (For, While)):
                inits = o.inits if isinstance(o, For) else o.operands
                if isinstance(o, For) and any_varies([o.operands[0], o.operands[2]]):
                    grew |= mark([o.body.args[0]])
                for j, init in enumerate(inits):
                    passed = [f.operands[j] for f in feeders.get(o, [])]
                    if init in varies or any_varies(passed):
                        grew |= mark([r.args[j + 1] if isinstance(o, For) else r.args[j]
                                      for r in o.regions])
            for sub in o.regions:
                grew |= visit(sub)
            if isinstance(o, If):
                ys = [r.terminator for r in o.regions]
                for j, res in enumerate(o.results):
                    if o.operands[0] in varies or any(
                            isinstance(y, Yield) and y.operands[j] in varies for y in ys):
                        grew |= mark([res])
            elif o.regions:
                if touched(o):
                    grew |= mark(o.results)
            elif any_varies(o.operands):
                grew |= mark(o.results)
        return grew

    while visit(loop.body):
        pass
    return varies
