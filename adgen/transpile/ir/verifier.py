"""Checks the invariants every pass must keep; tests run it after each pass.

- every operand is defined before its use, in the same region or an
  enclosing one (SSA dominance for structured control flow);
- every region ends in a terminator, or in an op that never falls through
  (an ``if`` whose branches all leave, or a ``while True`` without a
  ``break`` of its own);
- terminators match their parent: yields of an ``if`` carry its results,
  loop yields/continues/breaks carry its carried values, ``return`` the
  function's results; ``condition`` ends a while's cond region only;
- types agree across those edges and for loads, stores and primitives.
"""

from __future__ import annotations

from .core import (
    Break, Condition, Const, Continue, For, Function, If, Load, Module, Op, Prim, Region,
    Return, Store, Value, While, Yield,
)
from .prims import PRIMS
from .types import ArrayType, VecType, elem_of


class VerifyError(Exception):
    pass


def falls_through(region: Region) -> bool:
    """Whether control can reach the end of ``region`` without a terminator."""
    if not region.ops:
        return True
    last = region.ops[-1]
    if last.is_terminator:
        return False
    if isinstance(last, If):
        return any(_branch_continues(r) for r in last.regions)
    if isinstance(last, While):
        return not endless(last)
    return True


def endless(op: While) -> bool:
    """Whether ``op`` is a ``while True`` that no ``break`` of its own leaves: control
    goes on after it only through a ``return`` in its body (a ``break`` of a loop nested
    in its body leaves that loop, not this one)."""
    return always_true(op.regions[0]) and not _breaks(op.body)


def always_true(cond: Region) -> bool:
    """Whether a while's condition region is the constant True and nothing else (ops before
    it, a call that writes an array, run on each test: the loop is not ``while True``)."""
    term = cond.terminator
    if not isinstance(term, Condition):
        return False
    owner = term.operands[0].owner
    return isinstance(owner, Const) and owner.value is True and \
        all(isinstance(op, Const) for op in cond.ops[:-1])


def _breaks(region: Region) -> bool:
    """Whether ``region`` holds a ``break`` of the loop whose body it is (or is in)."""
    for op in region.ops:
        if isinstance(op, Break):
            return True
        if not isinstance(op, (For, While)) and any(_breaks(r) for r in op.regions):
            return True
    return False


def _branch_continues(region: Region) -> bool:
    t = region.ops[-1] if region.ops else None
    if isinstance(t, Yield):
        return True
    if t is not None and t.is_terminator:
        return False
    return falls_through(region)


class Verifier:
    def __init__(self, fn: Function) -> None:
        self.fn = fn

    def fail(self, op: Op | None, msg: str) -> None:
        where = f" at {op.loc} ({op.mnemonic})" if op is not None else ""
        raise VerifyError(f"{self.fn.name}{where}: {msg}")

    def run(self) -> None:
        self.region(self.fn.body, set(), parents=[])

    def region(self, region: Region, visible: set[Value], parents: list[Op]) -> None:
        scope = set(visible)
        for a in region.args:
            if a.owner is not region:
                self.fail(None, f"block argument {a} does not belong to its region")
            scope.add(a)
        for i, op in enumerate(region.ops):
            if op.is_terminator and i != len(region.ops) - 1:
                self.fail(op, "terminator in the middle of a region")
            for v in op.operands:
                if v not in scope:
                    self.fail(op, f"operand {v} is not defined before its use")
            for r in op.results:
                if r.owner is not op:
                    self.fail(op, f"result {r} does not point back at its op")
            self.check_op(op, parents)
            for sub in op.regions:
                self.region(sub, scope, parents + [op])
            for r in op.results:
                scope.add(r)
        if falls_through(region):
            self.fail(parents[-1] if parents else None, "region does not end in a terminator")

    def expect_types(self, op: Op, got: list[Value], want: list[Value], what: str) -> None:
        if len(got) != len(want):
            self.fail(op, f"{what}: {len(got)} values for {len(want)} slots")
        for g, w in zip(got, want, strict=True):
            if g.type != w.type:
                self.fail(op, f"{what}: {g.type} flows into a slot of type {w.type}")

    def check_op(self, op: Op, parents: list[Op]) -> None:
        parent = parents[-1] if parents else None
        loop = next((p for p in reversed(parents) if isinstance(p, (For, While))), None)
        if isinstance(op, Prim):
            p = PRIMS.get(op.prim)
            if p is None or len(op.operands) != p.arity:
                self.fail(op, f"bad primitive {op.prim}/{len(op.operands)}")
            elems = {elem_of(v.type) for v in op.operands[1:]} if op.prim == "select" else \
                {elem_of(v.type) for v in op.operands}
            if len(elems) > 1:
                self.fail(op, f"operands of {op.prim} have different types {elems}")
        elif isinstance(op, (Load, Store)):
            arr = op.operands[0].type
            if not isinstance(arr, ArrayType):
                self.fail(op, "load/store of a non-array")
                return
            nidx = len(op.operands) - 1 - (1 if isinstance(op, Store) else 0)
            if nidx != arr.ndim:
                self.fail(op, f"{nidx} indices for a {arr.ndim}-d array")
            if isinstance(op, Store):
                val = op.operands[-1].type
                want = VecType(arr.elem) if arr.vector else arr.elem
                if val != want:
                    self.fail(op, f"storing {val} into {arr}")
        elif isinstance(op, If):
            if len(op.regions) != 2:
                self.fail(op, "if needs two regions")
        elif isinstance(op, For):
            body = op.body
            if len(body.args) != 1 + len(op.inits):
                self.fail(op, "for: block arguments do not match inits")
            self.expect_types(op, op.inits, body.args[1:], "for inits")
            self.expect_types(op, op.results, body.args[1:], "for results")
        elif isinstance(op, While):
            cond, body = op.regions
            self.expect_types(op, op.inits, cond.args, "while inits")
            self.expect_types(op, op.inits, body.args, "while body arguments")
            self.expect_types(op, op.results, cond.args, "while results")
            if not isinstance(cond.terminator, Condition):
                self.fail(op, "while cond region must end in condition")
        elif isinstance(op, Yield):
            if isinstance(parent, If):
                self.expect_types(op, op.operands, parent.results, "yield")
            elif isinstance(parent, For):
                self.expect_types(op, op.operands, parent.body.args[1:], "yield")
            elif isinstance(parent, While) and op is parent.body.terminator:
                self.expect_types(op, op.operands, parent.body.args, "yield")
            else:
                self.fail(op, "yield outside if or loop body")
        elif isinstance(op, (Break, Continue)):
            if loop is None:
                self.fail(op, f"{op.mnemonic} outside a loop")
            else:
                self.expect_types(op, op.operands, loop.results, op.mnemonic)
        elif isinstance(op, Condition):
            if not isinstance(parent, While) or len(op.operands) != 1:
                self.fail(op, "condition outside a while cond region")
        elif isinstance(op, Return):
            types = [r.type for r in self.fn.results]
            if [v.type for v in op.operands] != types:
                self.fail(op, f"return of {[str(v.type) for v in op.operands]}, "
                              f"function returns {[str(t) for t in types]}")


def verify_function(fn: Function) -> None:
    if fn.external is not None:  # a declaration: no body
        assert not fn.body.ops, fn.name
        return
    Verifier(fn).run()


def verify_module(module: Module) -> None:
    for fn in module.functions:
        verify_function(fn)
