"""Single-exit form, the shape the adjoint transform reverses.

Reverse mode walks each region backwards from its one end.  This pass
removes every early exit so that each loop body ends in its ``yield`` and
the function body in its ``return``:

- the code after an ``if`` with one branch that always leaves (``if c:
  continue``, ``if c: return x``) moves into the other branch ("sinking";
  nothing is duplicated);
- where that is not possible, the ``if`` yields a flag and the exit's
  values, and the rest of the region runs under ``if not flag``;
- a loop left by ``break`` or ``return`` carries an exit code (0: next
  iteration, 1: break, 2: return) and the return values; a ``for`` with
  such exits becomes a ``while`` over its index, and after the loop
  ``if code == 2: return ...`` (or only ``return ...`` after a ``while True``
  that no ``break`` leaves).

Loops without early exits, and functions without early returns, are left
exactly as they were.  The result computes what the input computes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..ir.builder import Builder
from ..ir.core import (
    Break, Condition, Continue, For, Function, If, Module, Op, Region, Return, Value,
    While, Yield,
)
from ..ir.types import BOOL, I64, ScalarType, Type
from ..ir.verifier import always_true, endless, falls_through


def _exits(region: Region, loop_level: bool) -> bool:
    """Whether ``region`` contains an exit of its enclosing loop/function (``loop_level``:
    breaks and continues count; they do not inside nested loops)."""
    for op in region.ops:
        if isinstance(op, Return):
            return True
        if isinstance(op, (Break, Continue)) and loop_level:
            return True
        for sub in op.regions:
            if _exits(sub, loop_level and not isinstance(op, (For, While))):
                return True
    return False


def _always_leaves(region: Region) -> bool:
    return not falls_through(region) and not isinstance(region.terminator, Yield)


def _zero(b: Builder, t: Type) -> Value:
    assert isinstance(t, ScalarType), t
    return b.const(0, t)


@dataclass
class _Ctx:
    """The loop (or function) whose exits are being rewritten."""

    ret_types: list[Type]
    loop: bool = False
    carried_args: list[Value] = field(default_factory=list)
    coded: bool = False  # the state starts with an exit code
    has_return: bool = False
    next_index: Value | None = None  # for a for turned while: the index of the next iteration

    def state(self, b: Builder, code: int, carried: list[Value] | None,
              rets: list[Value] | None) -> list[Value]:
        if not self.loop:
            assert rets is not None
            return list(rets)
        out: list[Value] = []
        if self.coded:
            out.append(b.const(code, I64))
        if self.next_index is not None:
            out.append(self.next_index)
        out += carried if carried is not None else self.carried_args
        if self.has_return:
            out += rets if rets is not None else [_zero(b, t) for t in self.ret_types]
        return out

    def state_types(self) -> list[Type]:
        if not self.loop:
            return list(self.ret_types)
        out: list[Type] = [I64] if self.coded else []
        if self.next_index is not None:
            out.append(I64)
        out += [a.type for a in self.carried_args]
        if self.has_return:
            out += self.ret_types
        return out


@dataclass
class _Form:
    """How a rewritten region ends: with the state of an exit, or (inside a branch that may
    also fall through) with ``[left, *state, *fall values]``."""

    fall_types: list[Type] | None = None  # None: the region always exits

    def exit(self, b: Builder, ctx: _Ctx, state: list[Value]) -> list[Value]:
        if self.fall_types is None:
            return state
        return [b.const(True, BOOL), *state, *[_zero(b, t) for t in self.fall_types]]

    def fall(self, b: Builder, ctx: _Ctx, values: list[Value]) -> list[Value]:
        assert self.fall_types is not None
        dummy = [_zero(b, t) for t in ctx.state_types()]
        return [b.const(False, BOOL), *dummy, *values]


class SingleExit:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        #: results of rewritten loops -> their new values (applied at the end)
        self.renamed: dict[Value, Value] = {}

    def run(self) -> None:
        ctx = _Ctx([r.type for r in self.fn.results])
        body = self.fn.body
        body.ops = self.seq(body.ops, ctx, _Form(), top=True)
        _substitute(body.ops, self.renamed)

    # -- regions ---------------------------------------------------------------------------
    def seq(self, ops: list[Op], ctx: _Ctx, form: _Form, top: bool = False) -> list[Op]:
        """``ops`` rewritten to end in one terminator: ``return`` (function body, ``top``) or
        ``yield`` of what ``form`` asks for."""
        out: list[Op] = []
        ops = list(ops)
        i = 0
        while i < len(ops):
            op = ops[i]
            loc = op.loc
            b = Builder(Region([], out), loc)
            if op.is_terminator:
                self.terminator(op, ctx, form, b, top)
                return out
            if isinstance(op, (For, While)):
                done, pending = self.loop(op, ctx)
                out += done
                ops[i:i + 1] = pending  # the if that returns after a loop left by return
                continue
            if isinstance(op, If) and any(_exits(r, True) for r in op.regions):
                out += self.branch(op, ops[i + 1:], ctx, form, top)
                return out
            if isinstance(op, If):
                for r in op.regions:
                    self.plain(r)
            out.append(op)
            i += 1
        # a region ending in an if that never falls through
        raise AssertionError("region without terminator")

    def finish(self, b: Builder, values: list[Value], top: bool) -> Op:
        return b.insert(Return(values, [], b.loc) if top else Yield(values, [], b.loc))

    def terminator(self, op: Op, ctx: _Ctx, form: _Form, b: Builder, top: bool) -> Op:
        if isinstance(op, Return):
            state = ctx.state(b, 2, None, op.operands)
            return self.finish(b, form.exit(b, ctx, state), top)
        if isinstance(op, Break):
            return self.finish(b, form.exit(b, ctx, ctx.state(b, 1, op.operands, None)), top)
        if isinstance(op, Continue):
            return self.finish(b, form.exit(b, ctx, ctx.state(b, 0, op.operands, None)), top)
        assert isinstance(op, Yield)
        if form.fall_types is not None:
            return self.finish(b, form.fall(b, ctx, op.operands), top)
        # the end of a loop body: the next iteration
        return self.finish(b, ctx.state(b, 0, op.operands, None), top)

    def out_types(self, ctx: _Ctx, form: _Form) -> list[Type]:
        st = ctx.state_types()
        return st if form.fall_types is None else [BOOL, *st, *form.fall_types]

    def branch(self, op: If, rest: list[Op], ctx: _Ctx, form: _Form, top: bool) -> list[Op]:
        """An if with an exit in a branch, followed by ``rest`` (which ends the region)."""
        leaves = [_always_leaves(r) for r in op.regions]
        pure_fall = [not _exits(r, True) for r in op.regions]
        new = If(op.operands, [], op.loc, regions=[Region(), Region()])
        types = self.out_types(ctx, form)
        if all(leaves) or (any(leaves) and any(pure_fall)):
            # sink the rest into the branch that falls through
            for k, r in enumerate(op.regions):
                if leaves[k]:
                    new.regions[k].ops = self.seq(r.ops, ctx, form)
                else:
                    y = r.terminator
                    assert isinstance(y, Yield)
                    _substitute(rest, dict(zip(op.results, y.operands, strict=True)))
                    new.regions[k].ops = self.seq(r.ops[:-1] + rest, ctx, form)
            new.results = [Value(t) for t in types]
            for v in new.results:
                v.owner = new
            b = Builder(Region(), op.loc)
            return [new, self.finish(b, list(new.results), top)]
        # the general case: a flag says whether the branch left
        fall_types = [r.type for r in op.results]
        inner = _Form(fall_types)
        for k, r in enumerate(op.regions):
            new.regions[k].ops = self.seq(r.ops, ctx, inner)
        nstate = len(ctx.state_types())
        new.results = [Value(BOOL, "left")] + [Value(t) for t in ctx.state_types()] + \
            [Value(r.type, r.name) for r in op.results]
        for v in new.results:
            v.owner = new
        left, state, values = new.results[0], new.results[1:1 + nstate], new.results[1 + nstate:]
        _substitute(rest, dict(zip(op.results, values, strict=True)))
        cont = If([left], [], op.loc, regions=[Region(), Region()])
        bl = Builder(cont.regions[0], op.loc)
        bl.insert(Yield(form.exit(bl, ctx, list(state)), [], op.loc))
        cont.regions[1].ops = self.seq(rest, ctx, form)
        cont.results = [Value(t) for t in types]
        for v in cont.results:
            v.owner = cont
        b = Builder(Region(), op.loc)
        return [new, cont, self.finish(b, list(cont.results), top)]

    def plain(self, region: Region) -> None:
        """Rewrite the loops nested in ``region``, which has no exit of its own."""
        out: list[Op] = []
        for op in region.ops:
            if isinstance(op, (For, While)):
                done, pending = self.loop(op, _Ctx([]))
                assert not pending
                out += done
                continue
            if isinstance(op, If):
                for r in op.regions:
                    self.plain(r)
            out.append(op)
        region.ops = out

    # -- loops -------------------------------------------------------------------------------
    def loop(self, op: For | While, outer: _Ctx) -> tuple[list[Op], list[Op]]:
        """(the ops replacing the loop, an if that returns after it, still to be rewritten)."""
        body = op.body
        has_break = _has(body, Break)
        has_return = _exits_by_return(body)
        only_return = isinstance(op, While) and endless(op)  # a while True left by return alone
        coded = has_break or has_return
        carried = body.args[1:] if isinstance(op, For) else body.args
        if not coded:
            # only continues: the loop keeps its shape, its body ends in one yield
            ctx = _Ctx(outer.ret_types, loop=True, carried_args=list(carried))
            body.ops = self.seq(body.ops, ctx, _Form())
            return [op], []
        loc = op.loc
        ret_types = outer.ret_types if has_return else []
        b0 = Builder(Region(), loc)
        pre: list[Op] = []
        inits: list[Value] = [b0.const(0, I64, "exit_code")]
        is_for = isinstance(op, For)
        if is_for:
            inits.append(op.operands[0])
        inits += list(op.inits)
        inits += [_zero(b0, t) for t in ret_types]
        pre += b0.region.ops

        def args() -> list[Value]:
            out = [Value(I64, "exit_code")]
            if is_for:
                out.append(Value(I64, body.args[0].name))
            out += [Value(a.type, a.name) for a in carried]
            out += [Value(t, "ret") for t in ret_types]
            return out

        ncar = len(carried)
        first = 2 if is_for else 1
        # cond: not left, and the loop's own condition
        cond_args = args()
        cond = Region(cond_args)
        bc = Builder(cond, loc)
        still = bc.prim("eq", cond_args[0], bc.const(0, I64))
        if not is_for and always_true(op.regions[0]):
            bc.insert(Condition([still], [], loc))  # while True: it goes on until left
        else:
            guard = If([still], [Value(BOOL)], loc, regions=[Region(), Region()])
            bt = Builder(guard.regions[0], loc)
            if is_for:
                stop, step = op.operands[1:3]
                bt.insert(Yield([_in_range(bt, cond_args[1], stop, step)], [], loc))
            else:
                old_cond = op.regions[0]
                _substitute(old_cond.ops, dict(zip(old_cond.args,
                                                   cond_args[first:first + ncar], strict=True)))
                term = old_cond.ops[-1]
                assert isinstance(term, Condition)
                guard.regions[0].ops = old_cond.ops[:-1] + [Yield([term.operands[0]], [], loc)]
            bf = Builder(guard.regions[1], loc)
            bf.insert(Yield([bf.const(False, BOOL)], [], loc))
            bc.insert(guard)
            bc.insert(Condition([guard.results[0]], [], loc))
        # body
        body_args = args()
        new_body = Region(body_args)
        subst = dict(zip(carried, body_args[first:first + ncar], strict=True))
        ctx = _Ctx(outer.ret_types, loop=True, carried_args=body_args[first:first + ncar],
                   coded=True, has_return=has_return)
        ctx.ret_types = ret_types
        head: list[Op] = []
        if is_for:
            subst[body.args[0]] = body_args[1]
            bh = Builder(Region([], head), loc)
            ctx.next_index = bh.add(body_args[1], op.operands[2])
        _substitute(body.ops, subst)
        new_body.ops = head + self.seq(body.ops, ctx, _Form())
        new = While(inits, [], loc, regions=[cond, new_body], directive=op.directive)
        new.results = args()
        for v in new.results:
            v.owner = new
        self.renamed.update(zip(op.results, new.results[first:first + ncar], strict=True))
        if not has_return:
            return pre + [new], []
        if only_return:  # the loop ends only by its return: nothing follows but the return
            return pre + [new], [Return(new.results[first + ncar:], [], loc)]
        bafter = Builder(Region(), loc)
        code = new.results[0]
        is_ret = bafter.prim("eq", code, bafter.const(2, I64))
        leave = If([is_ret], [], loc, regions=[Region(), Region()])
        leave.regions[0].ops = [Return(new.results[first + ncar:], [], loc)]
        leave.regions[1].ops = [Yield([], [], loc)]
        return pre + [new] + bafter.region.ops, [leave]


def _in_range(b: Builder, i: Value, stop: Value, step: Value) -> Value:
    from ..ir.core import Const
    s = step.owner.value if isinstance(step.owner, Const) else None
    if isinstance(s, int):
        return b.prim("lt" if s > 0 else "gt", i, stop)
    up = b.prim("gt", step, b.const(0, I64))
    return b.prim("select", up, b.prim("lt", i, stop), b.prim("gt", i, stop))


def _has(region: Region, kind: type) -> bool:
    for op in region.ops:
        if isinstance(op, kind):
            return True
        if not isinstance(op, (For, While)):
            for sub in op.regions:
                if _has(sub, kind):
                    return True
    return False


def _exits_by_return(region: Region) -> bool:
    return any(isinstance(op, Return) for top in region.ops for op in top.walk())


def _substitute(ops: list[Op], subst: dict[Value, Value]) -> None:
    if not subst:
        return
    for top in ops:
        for op in top.walk():
            op.operands = [subst.get(v, v) for v in op.operands]


def single_exit(fn: Function) -> Function:
    """A copy of ``fn`` in single-exit form (``fn`` itself when it has no early exits)."""
    if not _needs(fn):
        return fn
    new = copy.deepcopy(fn)
    SingleExit(new).run()
    return new


def _needs(fn: Function) -> bool:
    body = fn.body
    for k, top in enumerate(body.ops):
        for op in top.walk():
            if isinstance(op, (Break, Continue)):
                return True
            if isinstance(op, Return) and not (op is top and k == len(body.ops) - 1):
                return True
    return False


def single_exit_module(module: Module) -> Module:
    return Module(module.name, module.path, [single_exit(fn) for fn in module.functions],
                  module.source_lines, module.nested)

