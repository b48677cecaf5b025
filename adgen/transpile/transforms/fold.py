"""Constant folding and the algebraic identities that are exact in IEEE arithmetic.

    %a = const 2.0            %c = const 6.0
    %b = const 3.0     ==>    %y = mul %x, %c
    %c = mul %a, %b
    %y = mul %x, %c

Also ``x * 1 -> x``, ``x + 0 -> x`` (integers), casts of constants, and an
``if`` on a constant condition becomes its taken branch.
"""

from __future__ import annotations

import math

from ..frontend.diagnostics import AdgenError
from ..ir.core import Cast, Const, Function, If, Op, Prim, Region, Value, Yield
from ..ir.prims import COMPARISONS, PRIMS
from ..ir.types import ScalarType, VecType, single
from ..ir.walk import substitute

INT64 = (-(2**63), 2**63 - 1)


def _const(v: Value) -> float | int | bool | None:
    return v.owner.value if isinstance(v.owner, Const) else None


def _fold_prim(op: Prim) -> float | int | bool | None:
    p = PRIMS[op.prim]
    t = op.result.type
    if p.fold is None or not isinstance(t, ScalarType) or t.name == "f32":
        return None
    args = [_const(v) for v in op.operands]
    if any(a is None for a in args):
        return None
    if any(isinstance(v.type, ScalarType) and v.type.name in ("f32", "i32") for v in op.operands):
        # a comparison is exact in any precision; of f32 constants single precision holds
        # exactly (2.5, 0.0), the C has those values whatever rounds the decimal it writes
        # (near a midpoint, the compiler's rounding of 1.0000000596046448f and single()'s
        # of the double differ)
        if op.prim not in COMPARISONS or any(
                isinstance(v.type, ScalarType) and v.type.name == "f32" and single(a) != a
                for a, v in zip(args, op.operands, strict=True)):
            return None
    try:
        r = p.fold(*args)
    except (ArithmeticError, ValueError):
        return None
    if t.is_float:
        r = float(r)
        if math.isnan(r):
            return None
    elif t.is_int:
        if isinstance(r, int) and not isinstance(r, bool) and not INT64[0] <= r <= INT64[1]:
            # N * 2 of a module constant N = 2**62: C would wrap it (gcc: -Woverflow)
            what = f"{r}, which does" if abs(r) < 10**30 else "an integer that does"
            raise AdgenError(op.loc, f"an integer computation of constant values here gives "
                                     f"{what} not fit in 64 bits (integers are 64-bit; compute "
                                     "in floats)")
        if isinstance(r, float) or not INT64[0] <= int(r) <= INT64[1]:
            return None
        r = int(r)
    else:
        r = bool(r)
    return r


def _identity(op: Prim) -> Value | None:
    """``x * 1``, ``1 * x``, ``x - 0``, ``x + 0`` and ``(x + c) - c`` for integers, ``select`` on
    equal arms or a constant condition, ``and`` of a constant."""
    if op.prim == "select" and op.operands[1] is op.operands[2]:
        return op.operands[1]
    if op.prim == "select" and isinstance(_const(op.operands[0]), bool):
        return op.operands[1] if _const(op.operands[0]) else op.operands[2]
    if op.prim == "and":  # (both operands are pure: false and x is false, true and x is x)
        for k in (0, 1):
            if isinstance(_const(op.operands[k]), bool):
                return op.operands[1 - k] if _const(op.operands[k]) else op.operands[k]
    inner = op.operands[0].owner
    if op.prim in ("neg", "not") and isinstance(inner, Prim) and inner.prim == op.prim:
        return inner.operands[0]  # -(-x) is x exactly; not not b is b
    if len(op.operands) != 2:
        return None
    a, b = op.operands
    ca, cb = _const(a), _const(b)
    same = a.type == b.type == op.result.type
    if not same:
        return None
    if op.prim == "mul":
        if cb == 1 and not isinstance(cb, bool):
            return a
        if ca == 1 and not isinstance(ca, bool):
            return b
    # x - 0.0 is exact; x + 0.0 is not for x = -0.0, so only integers drop an added 0
    if op.prim == "sub" and cb == 0 and not isinstance(cb, bool):
        return a
    if op.prim == "add" and isinstance(op.result.type, ScalarType) and op.result.type.is_int:
        if cb == 0 and not isinstance(cb, bool):
            return a
        if ca == 0 and not isinstance(ca, bool):
            return b
    # integers: (x + c) - c and (x - c) + c are x (the bounds of reversed loops, i + 1 - 1)
    if op.prim in ("add", "sub") and isinstance(op.result.type, ScalarType) and \
            op.result.type.is_int and cb is not None and not isinstance(cb, bool) and \
            isinstance(inner, Prim) and inner.prim == ("sub" if op.prim == "add" else "add") \
            and len(inner.operands) == 2 and _const(inner.operands[1]) == cb and \
            inner.operands[0].type == op.result.type:
        return inner.operands[0]
    return None


def fold(fn: Function) -> bool:
    subst: dict[Value, Value] = {}
    changed = False

    def resolve(v: Value) -> Value:
        while v in subst:
            v = subst[v]
        return v

    def region(r: Region) -> None:
        nonlocal changed
        out: list[Op] = []
        ops = list(r.ops)
        i = 0
        while i < len(ops):
            op = ops[i]
            i += 1
            op.operands = [resolve(v) for v in op.operands]
            if isinstance(op, Prim) and not isinstance(op.result.type, VecType):
                value = _fold_prim(op)
                if value is not None:
                    new = Const([], [Value(op.result.type, op.result.name)], op.loc, value=value)
                    subst[op.result] = new.result
                    out.append(new)
                    changed = True
                    continue
                same = _identity(op)
                if same is not None:
                    subst[op.result] = same
                    changed = True
                    continue
            if isinstance(op, Cast):
                c = _const(op.operands[0])
                t = op.result.type
                if c is not None and isinstance(t, ScalarType) and t.name in ("f64", "i64"):
                    if t.is_int and isinstance(c, float) and not (
                            math.isfinite(c) and INT64[0] <= int(c) <= INT64[1]):
                        # CPython's int(1e30) is a big integer; C's conversion is undefined
                        raise AdgenError(op.loc, f"int() of the constant {c!r} does not fit in "
                                                 "64 bits (integers are 64-bit)")
                    value = float(c) if t.is_float else int(c)
                    new = Const([], [Value(t, op.result.name)], op.loc, value=value)
                    subst[op.result] = new.result
                    out.append(new)
                    changed = True
                    continue
            if isinstance(op, If):
                c = _const(op.operands[0])
                if isinstance(c, bool):
                    taken = op.regions[0] if c else op.regions[1]
                    for inner in taken.ops:
                        inner.operands = [resolve(v) for v in inner.operands]
                    term = taken.ops[-1] if taken.ops else None
                    body = taken.ops[:-1] if isinstance(term, Yield) else taken.ops
                    if isinstance(term, Yield):
                        for res, v in zip(op.results, term.operands, strict=True):
                            subst[res] = v
                    ops[i:i] = body
                    changed = True
                    if not isinstance(term, Yield):
                        del ops[i + len(body):]
                    continue
            for sub in op.regions:
                region(sub)
            out.append(op)
        r.ops = out

    region(fn.body)
    substitute(fn, subst)
    return changed
