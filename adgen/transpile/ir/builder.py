"""Appends ops to a region; the one place that computes result types."""

from __future__ import annotations

from .core import (
    Call, Cast, Const, Dim, Load, Loc, Op, Prim, Region, Store, Value, Zeros,
)
from .prims import PRIMS, result_type
from .types import ArrayType, ScalarType, Type, VecType, elem_of


class Builder:
    def __init__(self, region: Region, loc: Loc) -> None:
        self.region = region
        self.loc = loc

    def insert(self, op: Op) -> Op:
        self.region.ops.append(op)
        return op

    # -- values --------------------------------------------------------------
    def const(self, value: float | int | bool, type: Type, name: str | None = None) -> Value:
        if isinstance(type, ScalarType):
            if type.is_float:
                value = float(value)
            elif type.is_int:
                value = int(value)
            else:
                value = bool(value)
        else:
            value = float(value)
        return self.insert(Const([], [Value(type, name)], self.loc, value=value)).result

    def prim(self, name: str, *args: Value, name_hint: str | None = None) -> Value:
        p = PRIMS[name]
        assert len(args) == p.arity, (name, args)
        elems = [elem_of(a.type) for a in args]
        vector = any(isinstance(a.type, VecType) for a in args)
        if name == "select":
            unified = elems[1]
        else:
            unified = elems[-1] if p.c_op == "?:" else elems[0]
        rt = result_type(p, unified)
        out: Type = VecType(rt) if vector else rt
        return self.insert(Prim(list(args), [Value(out, name_hint)], self.loc, prim=name)).result

    def cast(self, v: Value, to: ScalarType, name: str | None = None) -> Value:
        if elem_of(v.type) == to:
            return v
        out: Type = VecType(to) if isinstance(v.type, VecType) else to
        return self.insert(Cast([v], [Value(out, name or v.name)], self.loc)).result

    # -- arithmetic with the peepholes derivative code needs -------------------
    def is_const(self, v: Value, value: float) -> bool:
        op = defining_op(v)
        return isinstance(op, Const) and op.value == value and not isinstance(op.value, bool)

    def add(self, a: Value, b: Value) -> Value:
        if self.is_const(a, 0.0) and a.type == b.type:
            return b
        if self.is_const(b, 0.0) and a.type == b.type:
            return a
        nb = negated(b)
        if nb is not None:
            return self.prim("sub", a, nb)
        return self.prim("add", a, b)

    def sub(self, a: Value, b: Value) -> Value:
        if self.is_const(b, 0.0) and a.type == b.type:
            return a
        if self.is_const(a, 0.0) and a.type == b.type:
            return self.neg(b)
        return self.prim("sub", a, b)

    def mul(self, a: Value, b: Value) -> Value:
        """``a * b``; a scalar coefficient goes first so that C reads ``c * xd``."""
        if isinstance(a.type, VecType) and not isinstance(b.type, VecType):
            a, b = b, a
        if self.is_const(a, 1.0):
            return b
        if self.is_const(b, 1.0):
            return a
        if self.is_const(a, -1.0):
            return self.neg(b)
        if self.is_const(b, -1.0):
            return self.neg(a)
        na, nb = negated(a), negated(b)
        if na is not None:
            return self.neg(self.mul(na, b))  # -(c) * t reads better as -(c * t)
        if nb is not None:
            return self.neg(self.mul(a, nb))
        return self.prim("mul", a, b)

    def div(self, a: Value, b: Value) -> Value:
        if self.is_const(b, 1.0):
            return a
        return self.prim("div", a, b)

    def neg(self, a: Value) -> Value:
        inner = negated(a)
        if inner is not None:
            return inner
        return self.prim("neg", a)

    # -- arrays and calls --------------------------------------------------------
    def dim(self, array: Value, axis: int, name: str | None = None) -> Value:
        from .types import I64
        return self.insert(Dim([array], [Value(I64, name)], self.loc, axis=axis)).result

    def load(self, array: Value, indices: list[Value], name: str | None = None) -> Value:
        assert isinstance(array.type, ArrayType)
        t: Type = VecType(array.type.elem) if array.type.vector else array.type.elem
        return self.insert(Load([array, *indices], [Value(t, name)], self.loc)).result

    def store(self, array: Value, indices: list[Value], value: Value) -> None:
        self.insert(Store([array, *indices, value], [], self.loc))

    def zeros(self, extents: list[Value], type: ArrayType, name: str | None = None) -> Value:
        return self.insert(Zeros(list(extents), [Value(type, name)], self.loc)).result

    def call(self, callee: str, args: list[Value], result_types: list[Type],
             names: list[str | None] | None = None) -> list[Value]:
        names = names or [None] * len(result_types)
        results = [Value(t, n) for t, n in zip(result_types, names, strict=True)]
        self.insert(Call(list(args), results, self.loc, callee=callee))
        return results


def defining_op(v: Value) -> Op | None:
    return v.owner if isinstance(v.owner, Op) else None


def negated(v: Value) -> Value | None:
    """If ``v`` is ``-w`` (a neg op), ``w``."""
    op = defining_op(v)
    if isinstance(op, Prim) and op.prim == "neg":
        return op.operands[0]
    return None
