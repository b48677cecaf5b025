"""Forward-in-reverse: the adjoint of a prange by forward mode inside the reverse sweep.

``# adgen: forward-in-reverse`` on a ``prange`` (seed 003's mixed mode).  Each
iteration of the adjoint loop computes its iteration again together with the
tangents of its values in one direction per input (``forward.py`` with
several directions at once).  The inputs of an iteration are the active
scalars from outside the loop, the sums it adds to, and the elements it loads
from arrays that have an adjoint; its outputs are the elements it stores into
such arrays and what it adds to the sums.  The tangent of an output in
direction k is its partial derivative by input k: a column of the
iteration's Jacobian J.  Then J^T is applied to the adjoints by walking the
body's stores and loads backwards (an ``if`` by an ``if`` on the same
condition): a store consumes and resets its element's adjoint (``vb = ab[i];
ab[i] = 0``) and adds it, times the stored value's tangents, to the adjoint
of every input; a load adds its input's adjoint to its element's
(``ab[i] += xb``).  Those two steps are ``rev_Store`` and ``rev_Load`` of the
ordinary adjoint, so the adjoint semantics (Tapenade's) are the same: an
element stored and loaded again in the iteration passes its adjoint through
the adjoint array, as in the ordinary reverse sweep.

    for i in prange(n):  # adgen: forward-in-reverse    adjoint iteration i (directions
        t = x[i] * w                                      0: w, 1: x[i]):
        y[i] = math.sin(t)                  ==>           t = x[i] * w; td0 = x[i]; td1 = w
                                                          yd0 = cos(t) * td0; yd1 = cos(t) * td1
                                                          yb_i = yb[i]; yb[i] = 0.0
                                                          wb += yd0 * yb_i; xb[i] += yd1 * yb_i

Nothing is taped and no branch is recorded: the forward computation takes
the branches itself.  Loads in different branches of an ``if`` share a
direction, since only one of them runs.  Where the directive cannot apply,
``check`` raises a located error saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.diagnostics import AdgenError
from ..ir.builder import Builder
from ..ir.core import Call, Const, For, If, Load, Op, Prim, Region, Store, Value, While, Yield
from ..ir.types import ScalarType, elem_of
from .forward import TangentFunction, _Target
from .reverse import AdjointFunction, adjoint_name

#: more directions than this make the forward computation of every iteration too long to
#: pay off (each active op is repeated once per direction it reaches)
MAX_DIRECTIONS = 32
#: without the directive, a prange with an inner loop that carries an active value (where the
#: ordinary adjoint usually tapes that value at every inner step, per thread) runs
#: forward-in-reverse when it applies with at most this many inputs: with a 16-step inner
#: loop, the gradient took 0.72, 0.75, 0.94 and 0.89 to 0.94 of the ordinary adjoint's time
#: for 1, 2, 4 and 8 inputs, and 0.99 for 12 (`python benchmarks/mixed_mode.py --inputs K`);
#: where nothing is taped (the HM-LSTM cell) it gains nothing (0.94 to 1.06), so it is not
#: chosen there
DEFAULT_MAX_DIRECTIONS = 8


@dataclass
class Inputs:
    """The directions of one loop body: one per input, loads in different branches of an
    ``if`` sharing one."""

    types: list[ScalarType] = field(default_factory=list)
    names: list[list[str]] = field(default_factory=list)  # what each direction stands for
    adjoints: list[str] = field(default_factory=list)  # a name for each direction's adjoint
    of_value: dict[Value, int] = field(default_factory=dict)  # free or carried value -> direction
    of_load: dict[Op, int] = field(default_factory=dict)  # load -> direction
    owned: dict[If, set[int]] = field(default_factory=dict)  # if -> directions inside

    def add(self, t: ScalarType, name: str, adjoint: str, at: int = -1) -> int:
        """A direction for an input of type ``t``: the first one from ``at`` of that type
        (a direction of another branch), or a new one."""
        d = len(self.types) if at < 0 else at
        while d < len(self.types) and self.types[d] != t:
            d += 1
        if d == len(self.types):
            self.types.append(t)
            self.names.append([])
            self.adjoints.append(adjoint)
        if name not in self.names[d]:
            self.names[d].append(name)
        return d


class BodyTangents(TangentFunction):
    """A loop body computed again with its tangents in every direction: its stores are left
    out (the arrays already hold what they wrote) and each input load seeds its direction."""

    def __init__(self, adj: AdjointFunction, inputs: Inputs) -> None:
        # (an iteration without inputs, storing constants, still has one direction: zero)
        super().__init__(adj.fn, adj.module, adj.activity, False, max(len(inputs.types), 1))
        self.seeds = inputs.of_load
        self.regions: dict[Region, Region] = {}  # old region -> its copy

    def op_Load(self, op: Load, b: Builder, t: list[_Target]) -> None:
        super().op_Load(op, b, t)
        d = self.seeds.get(op)
        if d is not None:
            self.tangents[d][op.result] = b.const(1.0, op.result.type)

    def op_Store(self, op: Store, b: Builder, t: list[_Target]) -> None:
        pass

    def directions_into(self, op: Op) -> list[int] | None:
        outer = super().directions_into(op)
        if outer is None:  # one direction
            return None
        inner = {self.seeds[o] for o in op.walk() if o in self.seeds}
        return sorted(set(outer) | inner)

    def copied(self, op: Op, b: Builder) -> None:
        new = b.region.ops[-1]
        for old_r, new_r in zip(op.regions, new.regions, strict=True):
            self.regions[old_r] = new_r

    def op_If(self, op: If, b: Builder, t: list[_Target]) -> None:
        super().op_If(op, b, t)
        self.copied(op, b)

    def op_For(self, op: For, b: Builder, t: list[_Target]) -> None:
        super().op_For(op, b, t)
        self.copied(op, b)

    def op_While(self, op: While, b: Builder, t: list[_Target]) -> None:
        super().op_While(op, b, t)
        self.copied(op, b)


def index_text(v: Value) -> str:
    """``i``, ``0``, ``i - 1``: an index as the source would write it (``...`` if not short)."""
    op = v.owner
    if isinstance(op, Const):
        return str(op.value)
    if v.name:
        return v.name
    if isinstance(op, Prim) and op.prim in ("add", "sub", "mul") and len(op.operands) == 2:
        a, b = (index_text(x) for x in op.operands)
        if "..." not in a + b and " " not in a + b:
            return f"{a} {dict(add='+', sub='-', mul='*')[op.prim]} {b}"
    return "..."


def element_text(load: Load) -> str:
    """``z[i, 0]`` for a load of ``z`` at the loop variable ``i`` and 0 (for the note)."""
    return f"{load.operands[0].name}[{', '.join(index_text(v) for v in load.operands[1:])}]"


def element_adjoint(load: Load) -> str:
    """``zb_i_0``, a name for the adjoint of the element ``z[i, 0]`` (``tmp`` for ``z[i - 1]``,
    whose name would not say which element)."""
    idx = [index_text(v) for v in load.operands[1:]]
    name = "_".join([f"{load.operands[0].name}b", *idx])
    return name if name.isidentifier() else "tmp"


class IterationJacobian:
    """The body of the adjoint loop of a forward-in-reverse prange ``op``."""

    def __init__(self, adj: AdjointFunction, op: For) -> None:
        self.adj = adj
        self.op = op

    # -- where it applies ------------------------------------------------------------------
    def is_input(self, op: Op) -> bool:
        return isinstance(op, Load) and op.operands[0] in self.adj.shadow and \
            self.adj.active(op.result)

    def is_output(self, op: Op) -> bool:
        return isinstance(op, Store) and op.operands[0] in self.adj.shadow

    def check(self) -> None:
        adj, op = self.adj, self.op
        why = adj.why_not_recompute(op)
        if why is not None:
            raise AdgenError(op.loc, f"this prange cannot run forward-in-reverse: {why}, so its "
                                     "iterations cannot be computed again in the reverse sweep "
                                     "(remove '# adgen: forward-in-reverse')")
        for top in op.body.ops:
            for o in top.walk():
                if isinstance(o, Call) and adj.needs_adjoint_call(o):
                    raise AdgenError(o.loc, "this prange cannot run forward-in-reverse: the call "
                                            f"of '{o.callee}' needs a derivative, and "
                                            "forward-in-reverse differentiates the loop body "
                                            "only (write the callee's computation in the loop "
                                            "body, or remove '# adgen: forward-in-reverse')")
                if isinstance(o, (For, While)):
                    for inner in o.walk():
                        what = "reads" if self.is_input(inner) else \
                            "writes" if self.is_output(inner) else None
                        if what is not None:
                            raise AdgenError(inner.loc, "this prange cannot run "
                                             f"forward-in-reverse: the iteration {what} "
                                             f"'{inner.operands[0].name}' in an inner loop, so "
                                             "the number of its inputs and outputs is not known "
                                             "(read or write the elements outside the inner "
                                             "loop, or remove '# adgen: forward-in-reverse')")

    def pays_off(self) -> bool:
        """Whether to run the prange forward-in-reverse without the directive (see
        ``DEFAULT_MAX_DIRECTIONS``)."""
        adj, op = self.adj, self.op
        inner_carries = any(isinstance(o, (For, While)) and
                            any(adj.active(a) for r in o.regions for a in r.args)
                            for top in op.body.ops for o in top.walk())
        if not inner_carries:
            return False
        sums = [a for j, a in enumerate(op.body.args[1:])
                if (adj.active(a) or adj.active(op.results[j])) and
                isinstance(a.type, ScalarType)]
        free = [v for v in adj.free_values(op) if not any(v is c for c in op.body.args[1:])]
        try:
            self.check()
            count = len(self.directions(free, sums).types)
        except AdgenError:
            return False
        return count <= DEFAULT_MAX_DIRECTIONS

    def directions(self, free: list[Value], carried: list[Value]) -> Inputs:
        inputs = Inputs()
        for v in [*free, *carried]:
            assert isinstance(v.type, ScalarType)
            inputs.of_value[v] = inputs.add(v.type, v.name or "sum",
                                                adjoint_name(v.name) or "tmp")

        def region(r: Region, at: int, seen: dict[tuple[Value, ...], int]) -> int:
            """Directions for the loads of ``r`` from ``at`` on; returns the first one free.
            ``seen``: the element -> direction of the loads before, to share one direction
            for the loads of an element that nothing stores in between."""
            for o in r.ops:
                if self.is_input(o):
                    assert isinstance(o, Load) and isinstance(o.result.type, ScalarType)
                    key = tuple(o.operands)
                    d = seen.get(key)
                    if d is None:
                        d = seen[key] = inputs.add(o.result.type, element_text(o),
                                                   element_adjoint(o), at)
                        at = d + 1
                    inputs.of_load[o] = d
                elif isinstance(o, If):
                    ends = [region(sub, at, dict(seen)) for sub in o.regions]
                    inputs.owned[o] = set(range(at, max(ends)))
                    at = max(ends)
                stored = {x.operands[0] for x in o.walk() if isinstance(x, Store)}
                for key in [k for k in seen if k[0] in stored]:
                    del seen[key]
            return at

        region(self.op.body, len(inputs.types), {})
        if len(inputs.types) > MAX_DIRECTIONS:
            raise AdgenError(self.op.loc, "this prange cannot run forward-in-reverse: an "
                                          f"iteration has {len(inputs.types)} inputs, and "
                                          "forward-in-reverse computes one tangent per input "
                                          f"(at most {MAX_DIRECTIONS}) (read fewer elements per "
                                          "iteration, or remove '# adgen: forward-in-reverse')")
        return inputs

    # -- the adjoint iteration ---------------------------------------------------------------
    def build(self, loop: For, slots: list[int], carried_b: list[Value], free: list[Value],
              acc: list[Value]) -> list[Value]:
        """Fill the body of the adjoint ``loop``: the iteration and its tangents, then J^T
        applied.  ``slots``: the active carried values (sums) with their adjoints
        ``carried_b``; ``free``: the active scalars from outside with their adjoints so far
        ``acc``.  Returns the adjoints of the sums on entry, then of the free values."""
        adj, op = self.adj, self.op
        self.check()
        body, region = op.body, loop.body
        sums = [body.args[1 + j] for j in slots]
        inputs = self.inputs = self.directions(free, sums)
        b = Builder(region, op.loc)
        tf = self.tangents = BodyTangents(adj, inputs)
        tf.map = dict(adj.map)
        tf.map[body.args[0]] = region.args[0]
        for a in body.args[1:]:  # a prange's sums are read only by their increment
            tf.map[a] = b.const(0, a.type)
        for v in [*free, *sums]:
            tf.tangents[inputs.of_value[v]][v] = b.const(1.0, v.type)
        start = len(region.ops)
        for o in body.ops[:-1]:
            tf.op(o, Builder(region, o.loc), [])
        adj.map.update(tf.map)
        adj.computed_again(body, region, start)
        loop.note = self.note()
        # J^T: the sums' increments come last in the iteration, so first in its reverse
        state: dict[int, Value] = {inputs.of_value[v]: a for v, a in zip(free, acc,
                                                                             strict=True)}
        y = body.terminator
        assert isinstance(y, Yield)
        for j, sb in zip(slots, carried_b, strict=True):
            self.distribute(b, state, y.operands[j], sb)
        self.transpose(body.ops[:-1], b, state)
        outs = [state.get(inputs.of_value[v]) or self.zero(b, d)
                for v in sums for d in [inputs.of_value[v]]]
        return outs + [state[inputs.of_value[v]] for v in free]

    def note(self) -> str:
        names = [" or ".join(n) for n in self.inputs.names]
        if not names:
            return ("forward-in-reverse: the iterations have no input, so their outputs' "
                    "adjoints are only reset")
        listed = ", ".join(f"{d}: {n}" for d, n in enumerate(names))
        return (f"forward-in-reverse: each iteration is computed again with its tangents in "
                f"{len(names)} direction{'s' if len(names) != 1 else ''}, one per input "
                f"({listed}); then input adjoints += J^T * output adjoints")

    def zero(self, b: Builder, d: int) -> Value:
        return b.const(0.0, self.adj.atype(self.inputs.types[d]))

    def distribute(self, b: Builder, state: dict[int, Value], value: Value, vb: Value) -> None:
        """Add ``vb`` (the adjoint of an output) times the output's tangent in each direction
        to the adjoint of that direction's input."""
        for d, tangents in enumerate(self.tangents.tangents):
            t = tangents.get(value)
            if t is None:
                continue
            c = b.mul(t, vb)
            if elem_of(c.type) != self.inputs.types[d]:  # an f32 output of an f64 input
                c = b.cast(c, self.inputs.types[d])
            cur = state.get(d)
            state[d] = c if cur is None else b.add(cur, c)

    def transpose(self, ops: list[Op], b: Builder, state: dict[int, Value]) -> None:
        adj = self.adj
        for o in reversed(ops):
            b.loc = o.loc
            if isinstance(o, Store):
                got: dict[Value, Value] = {}
                adj.rev_Store(o, b, got)  # vb = ab[i]; ab[i] = 0
                vb = got.get(o.operands[-1])
                if vb is not None:
                    self.distribute(b, state, o.operands[-1], vb)
            elif isinstance(o, Load) and o in self.inputs.of_load:
                xb = state.pop(self.inputs.of_load[o], None)
                if xb is not None:
                    adj.rev_Load(o, b, {o.result: xb})  # ab[i] += xb
            elif isinstance(o, If):
                self.transpose_if(o, b, state)

    def transpose_if(self, op: If, b: Builder, state: dict[int, Value]) -> None:
        owned = self.inputs.owned.get(op, set())
        new = If([self.adj.m(op.operands[0])], [], op.loc, regions=[Region(), Region()])
        branches: list[dict[int, Value]] = []
        for old_r, new_r in zip(op.regions, new.regions, strict=True):
            self.adj.mirror[new_r] = self.tangents.regions[old_r]
            inner = dict(state)
            self.transpose(old_r.ops[:-1], Builder(new_r, op.loc), inner)
            branches.append(inner)
        # a direction a load outside the if shares with loads in every branch: each branch's
        # load takes its adjoint, so none is left for the load before the if (it was added
        # again there)
        for d in [d for d in state if all(d not in s for s in branches)]:
            del state[d]
        keys = sorted({d for s in branches for d in s} - owned)
        changed: list[int] = [d for d in keys if any(s.get(d) is not state.get(d)
                                                     for s in branches)]
        if not changed and not any(r.ops for r in new.regions):
            return
        for new_r, inner in zip(new.regions, branches, strict=True):
            bb = Builder(new_r, op.loc)
            new_r.ops.append(Yield([inner.get(d) or self.zero(bb, d) for d in changed], [],
                                   op.loc))
        new.results = [Value(self.adj.atype(self.inputs.types[d]), self.inputs.adjoints[d])
                       for d in changed]
        for r in new.results:
            r.owner = new
        b.insert(new)
        for d in owned:  # consumed by the loads inside: none of them runs after the if
            state.pop(d, None)
        for d, r in zip(changed, new.results, strict=True):
            state[d] = r

