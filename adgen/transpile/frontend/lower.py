"""Lowering: a fenced LibCST function body to structured SSA IR.

Variables become SSA values through an environment (name -> value).  At an
``if``, each branch lowers with its own copy of the environment and the
names that differ become the ``if``'s results; a loop's carried values are
the names it assigns that were defined before it.  Types are inferred here:
a local keeps the type of its first binding, literals adapt to the typed
operand next to them (``x32 * 2.0`` stays f32), and every mismatch is a
located error with a note at the first binding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from ..ir.builder import Builder
from ..ir.core import (
    Assert, Break, Condition, Const, Continue, For, Function, If, Loc, Op, Region,
    Result, Return, Value, While, Yield,
)
from ..ir.prims import CONSTANTS, INTRINSICS, PRIMS
from ..ir.types import BOOL, F64, I64, ArrayType, ScalarType, Type, promote
from ..ir.verifier import falls_through
from .diagnostics import AdgenError, Diagnostics, Note
from .signatures import ScopeReader, Signature

BINOPS: dict[type, str] = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "div",
    cst.FloorDivide: "floordiv", cst.Modulo: "mod", cst.Power: "pow",
}
UNSUPPORTED_BINOPS: dict[type, str] = {
    cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>", cst.BitAnd: "&",
    cst.BitOr: "|", cst.BitXor: "^",
}
UNSUPPORTED_COMPARES: dict[type, str] = {
    cst.Is: "is", cst.IsNot: "is not", cst.In: "in", cst.NotIn: "not in",
}
COMPARES: dict[type, str] = {
    cst.LessThan: "lt", cst.LessThanEqual: "le", cst.GreaterThan: "gt",
    cst.GreaterThanEqual: "ge", cst.Equal: "eq", cst.NotEqual: "ne",
}
I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1
#: float ** small integer constant becomes multiplication (DESIGN.md section 1)
MAX_POWER_BY_MULTIPLICATION = 4


@dataclass
class Binding:
    type: Type
    loc: Loc


@dataclass
class LoopContext:
    carried: list[str]


class FunctionLowering:
    def __init__(self, sig: Signature, annotations: ScopeReader,
                 loc_of: Callable[[cst.CSTNode], Loc], diags: Diagnostics) -> None:
        self.sig = sig
        self.annotations = annotations
        scope, options = annotations.scope, annotations.options
        self.scope = scope
        self.options = options
        self.loc_of = loc_of
        self.diags = diags
        self.env: dict[str, Value] = {}
        self.bindings: dict[str, Binding] = {}
        #: names that exist only on some paths: name -> why (for the error message)
        self.undefined_why: dict[str, tuple[Loc, str]] = {}
        self.weak: set[int] = set()  # ids of values that are untyped literals
        self.loops: list[LoopContext] = []
        self.builder = Builder(Region(), Loc("", 0, 0))
        self.top_region = self.builder.region

    # -- helpers ----------------------------------------------------------------
    def error(self, node: cst.CSTNode, message: str, notes: list[Note] | None = None) -> AdgenError:
        return AdgenError(self.loc_of(node), message, notes)

    def at(self, node: cst.CSTNode) -> Builder:
        self.builder.loc = self.loc_of(node)
        return self.builder

    @property
    def float_type(self) -> ScalarType:
        return self.options.float_type

    def literal(self, node: cst.CSTNode, value: float | int | bool) -> Value:
        if isinstance(value, bool):
            return self.at(node).const(value, BOOL)
        if isinstance(value, int) and not I64_MIN <= value <= I64_MAX:
            raise self.error(node, f"the integer {value if abs(value) < 10 ** 30 else 'constant'} "
                                   "does not fit in 64 bits (integers are 64-bit; write a float, "
                                   "e.g. 1e30)")
        t = I64 if isinstance(value, int) else self.float_type
        v = self.at(node).const(value, t)
        self.weak.add(id(v))
        return v

    def is_weak(self, v: Value) -> bool:
        return id(v) in self.weak

    def const_value(self, v: Value) -> float | int | bool | None:
        op = v.owner
        return op.value if isinstance(op, Const) else None

    def convert(self, node: cst.CSTNode, v: Value, to: ScalarType, what: str) -> Value:
        """Implicit conversion for assignment, arguments and returns: int -> float only."""
        t = v.type
        if t == to:
            return v
        if not isinstance(t, ScalarType):
            raise self.error(node, f"{what}: expected {to}, got an array (use one element, "
                                   "e.g. a[i])")
        if to.is_float and (t.is_int or t.is_float and self.is_weak(v)):
            return self.at(node).cast(v, to)
        if to.is_float and t.is_float:
            # f32 <-> f64 between typed values: explicit float()/f32 casts are not in the
            # subset, so allow the conversion C would do and keep CPython agreeing.
            return self.at(node).cast(v, to)
        if to.is_int and t.is_int:
            return self.at(node).cast(v, to)
        hint = ("use int(...) to convert" if to.is_int and t.is_float else
                "compare explicitly, e.g. x != 0" if to.is_bool else "use 1.0 if b else 0.0")
        raise self.error(node, f"{what}: expected {to}, got {t} ({hint})")

    # -- function ------------------------------------------------------------------
    def lower(self) -> Function:
        params: list[Value] = []
        for p in self.sig.params:
            v = Value(p.type, p.name)
            params.append(v)
            self.env[p.name] = v
            self.bindings[p.name] = Binding(p.type, p.loc)
        region = Region(params)
        self.builder = Builder(region, self.sig.loc)
        self.top_region = region
        body = self.sig.node.body
        self.statements(body.body if isinstance(body, cst.IndentedBlock) else [body])
        if falls_through(region):
            if self.sig.results:
                end = self.sig.node
                raise AdgenError(self._last_line_loc(end),
                                 f"function '{self.sig.name}' can reach its end without returning "
                                 "a value (add a return)")
            # the implicit return at the end of a -> None function has no source line
            self.builder.insert(Return([], [], Loc(self.sig.loc.file, 0, 0)))
        names = (["return"] if len(self.sig.results) == 1 else
                 [f"ret{i}" for i in range(len(self.sig.results))])
        params = {p.name for p in self.sig.params}
        for k, n in enumerate(names):
            while n in params:
                n += "_"
            names[k] = n
        results = [Result(n, t) for n, t in zip(names, self.sig.results, strict=True)]
        return Function(self.sig.name, region, results, self.sig.loc, primal=self.sig.name,
                        param_names=[p.name for p in self.sig.params],
                        returns_tuple=self.sig.returns_tuple)

    def _last_line_loc(self, node: cst.FunctionDef) -> Loc:
        stmts = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
        return self.loc_of(stmts[-1]) if stmts else self.loc_of(node)

    # -- statements -----------------------------------------------------------------
    def statements(self, stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> None:
        for i, stmt in enumerate(stmts):
            if not falls_through(self.builder.region):
                return  # unreachable code after return/break/continue
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if not falls_through(self.builder.region):
                        return
                    self.small_statement(small, first=(i == 0))
            elif isinstance(stmt, cst.If):
                self.if_statement(stmt)
            elif isinstance(stmt, cst.For):
                self.for_statement(stmt)
            elif isinstance(stmt, cst.While):
                self.while_statement(stmt)
            elif isinstance(stmt, cst.BaseSmallStatement):
                self.small_statement(stmt, first=(i == 0))
            elif isinstance(stmt, cst.FunctionDef):
                raise self.error(stmt, "nested functions are not supported (define it at module level)")
            else:
                raise self.error(stmt, f"this statement is not supported ({type(stmt).__name__})")

    def block(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.statements(suite.body)
        else:
            self.statements(suite.body)  # type: ignore[attr-defined]

    def small_statement(self, node: cst.BaseSmallStatement, first: bool) -> None:
        if isinstance(node, cst.Assign):
            self.assign(node)
        elif isinstance(node, cst.AnnAssign):
            self.ann_assign(node)
        elif isinstance(node, cst.AugAssign):
            self.aug_assign(node)
        elif isinstance(node, cst.Return):
            self.return_statement(node)
        elif isinstance(node, cst.Pass):
            return
        elif isinstance(node, cst.Break):
            loop = self.current_loop(node, "break")
            self.at(node).insert(Break([self.lookup_env(n) for n in loop.carried], [], self.builder.loc))
        elif isinstance(node, cst.Continue):
            loop = self.current_loop(node, "continue")
            self.at(node).insert(Continue([self.lookup_env(n) for n in loop.carried], [],
                                          self.builder.loc))
        elif isinstance(node, cst.Assert):
            cond = self.to_bool(node.test, self.expr(node.test))
            msg = ""
            if isinstance(node.msg, cst.SimpleString):
                msg = str(node.msg.evaluated_value)
            self.at(node).insert(Assert([cond], [], self.builder.loc, message=msg))
        elif isinstance(node, cst.Expr):
            if isinstance(node.value, cst.SimpleString) and first:
                return  # docstring
            if isinstance(node.value, cst.Call):
                self.call(node.value, allow_none=True, allow_tuple=True)
                return
            raise self.error(node, "this expression statement has no effect (assign its value "
                                   "or remove it)")
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            raise self.error(node, "imports inside functions are not supported (import at module level)")
        else:
            raise self.error(node, f"this statement is not supported ({type(node).__name__})")

    def current_loop(self, node: cst.CSTNode, what: str) -> LoopContext:
        if not self.loops:
            raise self.error(node, f"'{what}' outside a loop (use it inside a for or while loop)")
        return self.loops[-1]

    def lookup_env(self, name: str) -> Value:
        return self.env[name]

    # -- assignment -----------------------------------------------------------------
    def assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        if isinstance(node.value, cst.Tuple) or any(isinstance(t, cst.Tuple) for t in targets):
            if len(targets) != 1 or not isinstance(targets[0], cst.Tuple):
                raise self.error(node, "this tuple assignment is not supported (unpack into one "
                                       "tuple of names: a, b = ...)")
            self.unpack(targets[0], node.value)
            return
        if isinstance(node.value, cst.Call) and self.returns_tuple(node.value):
            raise self.error(node.value, "this call returns a tuple; unpack it "
                                         f"(a, b = {_spelled(node.value.func)}(...))")
        value = self.expr(node.value)
        for t in targets:
            self.bind_target(t, value)

    def unpack(self, target: cst.Tuple, value_node: cst.BaseExpression) -> None:
        elems = [e.value for e in target.elements]
        if isinstance(value_node, cst.Tuple):
            values = [self.expr(e.value) for e in value_node.elements]
        elif isinstance(value_node, cst.Call):
            values = self.call(value_node, allow_tuple=True)
            if not self.returns_tuple(value_node):
                raise self.error(value_node, "this call does not return a tuple (assign its value "
                                             "to one name)")
        else:
            raise self.error(value_node, "this value cannot be unpacked (unpack a tuple of values "
                                         "or a call returning a tuple)")
        if len(values) != len(elems):
            raise self.error(target, f"cannot unpack {len(values)} values into {len(elems)} names "
                                     "(use one name per value)")
        for t, v in zip(elems, values, strict=True):
            self.bind_target(t, v)

    def returns_tuple(self, call: cst.Call) -> bool:
        if isinstance(call.func, cst.Name) and call.func.value in self.scope.functions:
            return self.scope.functions[call.func.value].returns_tuple
        return False

    def bind_target(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            self.bind(target, target.value, value)
        elif isinstance(target, cst.Subscript):
            array, indices = self.subscript_parts(target)
            self.store(target, array, indices, value)
        else:
            raise self.error(target, "assigning to this is not supported (assign to a name or an "
                                     "array element)")

    def bind(self, node: cst.CSTNode, name: str, value: Value, declared: Type | None = None) -> None:
        if name in self.scope.functions:
            raise self.error(node, f"'{name}' is a function of this module and cannot be assigned "
                                   "(use another name)")
        if name in self.scope.constants:
            raise self.error(node, f"'{name}' is a module constant and cannot be assigned "
                                   "(module-level names must not change)",
                             [Note(self.scope.constants[name].loc, "defined here")])
        prev = self.bindings.get(name)
        if isinstance(value.type, ArrayType):
            if prev is not None:
                raise self.error(node, f"array variable '{name}' cannot be rebound "
                                       "(assign elements, or use a new name)",
                                 [Note(prev.loc, f"'{name}' first bound here")])
            self.bindings[name] = Binding(value.type, self.loc_of(node))
            if value.name is None:
                value.name = name
            self.env[name] = value
            self.undefined_why.pop(name, None)
            return
        want = declared or (prev.type if prev is not None else None)
        if want is None:
            if self.is_weak(value):
                value = self.strong(value)
            want = value.type
        elif value.type != want:
            assert isinstance(want, ScalarType)
            if isinstance(want, ScalarType) and self._convertible(value, want):
                value = self.at(node).cast(value, want)
            else:
                notes = [Note(prev.loc, f"'{name}' first bound here as {prev.type}")] if prev else []
                hint = " (a local keeps the type of its first binding; use a new name)"
                if want.is_int and isinstance(value.type, ScalarType) and value.type.is_float:
                    hint = f" (initialise it with a float, e.g. {name} = 0.0, or use int(...))"
                raise self.error(node, f"'{name}' has type {want} but is assigned a {value.type}{hint}",
                                 notes)
        if prev is None:
            self.bindings[name] = Binding(want, self.loc_of(node))
        if value.name is None and isinstance(value.owner, Op):
            value.name = name
        self.env[name] = value
        self.undefined_why.pop(name, None)

    def _convertible(self, value: Value, want: ScalarType) -> bool:
        t = value.type
        if not isinstance(t, ScalarType):
            return False
        if want.is_float and t.is_int:
            return True  # Python keeps the int; the numbers agree
        if want.is_float and t.is_float:
            return self.is_weak(value)
        if want.is_int and t.is_int:
            return self.is_weak(value)
        return False

    def strong(self, v: Value) -> Value:
        """A weak literal bound to a name gets its default type."""
        c = self.const_value(v)
        assert c is not None
        nv = self.builder.const(c, v.type)
        return nv

    def ann_assign(self, node: cst.AnnAssign) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "this annotation is not supported (annotate a local "
                                          "name, e.g. k: int = 0)")
        declared = self.annotations.annotation(node.annotation.annotation)
        name = node.target.value
        prev = self.bindings.get(name)
        if prev is not None and prev.type != declared:
            raise self.error(node.annotation, f"'{name}' is annotated {declared} but was bound as "
                             f"{prev.type} (a local keeps one type; use a new name)",
                             [Note(prev.loc, "first bound here")])
        if node.value is None:
            self.bindings[name] = Binding(declared, self.loc_of(node.target))
            return
        value = self.expr(node.value)
        if isinstance(declared, ScalarType) and value.type != declared:
            value = self.convert(node.value, value, declared, f"'{name}'")
        self.bind(node.target, name, value, declared)

    def aug_assign(self, node: cst.AugAssign) -> None:
        opname = AUG_OPS.get(type(node.operator))
        if opname is None:
            raise self.error(node.operator, "this augmented assignment operator is not supported "
                                            "(use += -= *= /= //= %= **=)")
        if isinstance(node.target, cst.Name):
            current = self.name_value(node.target)
            rhs = self.expr(node.value)
            result = self.binary(node, opname, current, rhs)
            self.bind(node.target, node.target.value, result)
        elif isinstance(node.target, cst.Subscript):
            array, indices = self.subscript_parts(node.target)
            current = self.at(node.target).load(array, indices)
            rhs = self.expr(node.value)
            result = self.binary(node, opname, current, rhs)
            self.store(node.target, array, indices, result)
        else:
            raise self.error(node.target, "assigning to this is not supported (assign to a name or "
                                          "an array element)")

    def store(self, node: cst.CSTNode, array: Value, indices: list[Value], value: Value) -> None:
        assert isinstance(array.type, ArrayType)
        elem = array.type.elem
        if value.type != elem:
            value = self.convert(node, value, elem, "array element")
        self.at(node).store(array, indices, value)

    # -- return -----------------------------------------------------------------------
    def return_statement(self, node: cst.Return) -> None:
        want = self.sig.results
        if node.value is None or isinstance(node.value, cst.Name) and node.value.value == "None":
            values: list[Value] = []
        elif isinstance(node.value, cst.Tuple):
            values = [self.expr(e.value) for e in node.value.elements]
        elif isinstance(node.value, cst.Call) and self.returns_tuple(node.value):
            values = self.call(node.value, allow_tuple=True)
        else:
            values = [self.expr(node.value)]
        if len(values) != len(want):
            raise self.error(node, f"'{self.sig.name}' returns {len(want)} value(s) by its "
                                   f"annotation, this return gives {len(values)} (return "
                                   "what the annotation says, or change the annotation)",
                             [Note(self.sig.loc, "annotated here")])
        values = [self.convert(node, v, t, "return value") if v.type != t else v  # type: ignore[arg-type]
                  for v, t in zip(values, want, strict=True)]
        self.at(node).insert(Return(values, [], self.builder.loc))

    # -- if ------------------------------------------------------------------------------
    def if_statement(self, node: cst.If) -> None:
        cond = self.to_bool(node.test, self.expr(node.test))
        b = self.at(node)
        op = If([cond], [], b.loc, regions=[Region(), Region()])
        b.insert(op)
        outer = self.builder.region
        before = dict(self.env)
        assigned = assigned_names(node.body) | (assigned_names(node.orelse) if node.orelse else set())

        ends: list[dict[str, Value] | None] = []
        for region, suite in ((op.regions[0], node.body), (op.regions[1], node.orelse)):
            self.env = dict(before)
            self.builder.region = region
            if isinstance(suite, cst.If):
                self.if_statement(suite)
            elif isinstance(suite, cst.Else):
                self.block(suite.body)
            elif suite is not None:
                self.block(suite)
            ends.append(dict(self.env) if falls_through(region) else None)
        self.builder.region = outer
        live = [e for e in ends if e is not None]
        merged: list[str] = []
        for name in sorted(assigned, key=_order_key(node)):
            if live and all(name in e for e in live):
                if name in before and all(e[name] is before[name] for e in live):
                    continue
                merged.append(name)
        results = [Value(live[0][n].type, n) for n in merged] if live else []
        if any(isinstance(r.type, ArrayType) for r in results):
            raise self.error(node, "an array variable is bound differently in the branches of this "
                                   "if (bind the array once, before the if)")
        op.results = results
        for r in results:
            r.owner = op
        for region, end in zip(op.regions, ends, strict=True):
            if end is not None:
                region.ops.append(Yield([end[n] for n in merged], [], self.loc_of(node)))
        self.env = dict(before)
        for n, r in zip(merged, results, strict=True):
            self.env[n] = r
        for name in assigned:
            if name not in self.env:
                self.undefined_why[name] = (self.loc_of(node),
                                            "it is assigned in only some branches of this if")

    # -- loops -------------------------------------------------------------------------------
    def carried_names(self, body: cst.CSTNode, exclude: str | None = None) -> list[str]:
        return [n for n in assigned_names_ordered(body)
                if n in self.env and n != exclude and not isinstance(self.env[n].type, ArrayType)]

    def for_statement(self, node: cst.For) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "the loop variable must be a single name "
                                          "(write for i in range(...))")
        it = node.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
                and it.func.value in ("range", "prange")):
            raise self.error(it, "this loop is not supported (write for i in range(...); for an "
                                 "array, for i in range(len(a)))")
        if it.func.value == "prange":
            raise self.error(it.func, "prange is not yet supported (use range)")
        if any(a.keyword is not None for a in it.args) or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range takes 1 to 3 positional integer arguments (write "
                                 "range(stop), range(start, stop) or range(start, stop, step))")
        bounds = [self.int_value(a.value, self.expr(a.value), "range argument") for a in it.args]
        b = self.at(node)
        if len(bounds) == 1:
            start, stop, step = b.const(0, I64), bounds[0], b.const(1, I64)
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], b.const(1, I64)
        else:
            start, stop, step = bounds
            if self.const_value(step) == 0:
                raise self.error(it.args[2], "range step must not be zero (use a positive or a "
                                             "negative step)")
        var = node.target.value
        if var in self.env or var in self.bindings and self.bindings[var].type != I64:
            prev = self.bindings[var]
            raise self.error(node.target, f"loop variable '{var}' reuses a variable defined before "
                                          "the loop (use a new name)",
                             [Note(prev.loc, f"'{var}' bound here")])
        carried = self.carried_names(node.body, exclude=var)
        iv = Value(I64, var)
        args = [Value(self.env[n].type, n) for n in carried]
        body = Region([iv, *args])
        op = For([start, stop, step, *[self.env[n] for n in carried]],
                 [Value(a.type, a.name) for a in args], b.loc, regions=[body])
        b.insert(op)
        self.bindings.setdefault(var, Binding(I64, self.loc_of(node.target)))
        self.loop_body(node, op, body, carried, {var: iv, **dict(zip(carried, args, strict=True))})
        self.undefined_why[var] = (self.loc_of(node.target),
                                   "a loop variable is not available after its loop")
        self.env.pop(var, None)

    def while_statement(self, node: cst.While) -> None:
        carried = self.carried_names(node.body)
        b = self.at(node)
        cond_args = [Value(self.env[n].type, n) for n in carried]
        cond_region = Region(cond_args)
        body_args = [Value(self.env[n].type, n) for n in carried]
        body = Region(body_args)
        op = While([self.env[n] for n in carried], [Value(a.type, a.name) for a in cond_args],
                   b.loc, regions=[cond_region, body])
        b.insert(op)
        outer_region, before = self.builder.region, dict(self.env)
        self.builder.region = cond_region
        self.env.update(dict(zip(carried, cond_args, strict=True)))
        cond = self.to_bool(node.test, self.expr(node.test))
        cond_region.ops.append(Condition([cond], [], self.loc_of(node.test)))
        self.builder.region = outer_region
        self.env = before
        self.loop_body(node, op, body, carried, dict(zip(carried, body_args, strict=True)))

    def loop_body(self, node: cst.For | cst.While, op: For | While, body: Region,
                  carried: list[str], entry: dict[str, Value]) -> None:
        outer_region, before = self.builder.region, dict(self.env)
        self.builder.region = body
        self.env.update(entry)
        self.loops.append(LoopContext(carried))
        self.block(node.body)
        self.loops.pop()
        if falls_through(body):
            body.ops.append(Yield([self.env[n] for n in carried], [], self.loc_of(node)))
        self.builder.region = outer_region
        inner = self.env
        self.env = before
        for n, r in zip(carried, op.results, strict=True):
            self.env[n] = r
        for name in inner:
            if name not in self.env:
                self.undefined_why[name] = (self.loc_of(node), "it is assigned only inside this loop "
                                            "(assign it before the loop to use it after)")

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> Value:
        if isinstance(node, cst.Integer):
            return self.literal(node, int(node.evaluated_value))
        if isinstance(node, cst.Float):
            return self.literal(node, float(node.evaluated_value))
        if isinstance(node, cst.Name):
            return self.name_value(node)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.UnaryOperation):
            return self.unary(node)
        if isinstance(node, cst.BinaryOperation):
            op = BINOPS.get(type(node.operator))
            if op is None:
                sym = UNSUPPORTED_BINOPS.get(type(node.operator), "?")
                raise self.error(node.operator, f"operator '{sym}' is not supported "
                                                "(arithmetic is + - * / // % **)")
            left, right = self.expr(node.left), self.expr(node.right)
            self.scalar(node.left, left)  # locate an array operand at the operand
            self.scalar(node.right, right)
            return self.binary(node, op, left, right, right_node=node.right)
        if isinstance(node, cst.BooleanOperation):
            return self.boolean(node)
        if isinstance(node, cst.Comparison):
            return self.comparison(node)
        if isinstance(node, cst.IfExp):
            return self.if_expression(node)
        if isinstance(node, cst.Call):
            values = self.call(node)
            return values[0]
        if isinstance(node, cst.Tuple):
            raise self.error(node, "a tuple is not a value here (tuples are only supported in "
                                   "return and unpacking assignments)")
        raise self.error(node, f"this expression is not supported ({type(node).__name__})")

    def name_value(self, node: cst.Name) -> Value:
        name = node.value
        if name in self.env:
            return self.env[name]
        if name in ("True", "False"):
            return self.at(node).const(name == "True", BOOL)
        if name == "None":
            raise self.error(node, "None is not a value in adgen modules (only scalars and arrays; "
                                   "a function annotated -> None returns with a bare return)")
        if name in self.scope.constants:
            c = self.scope.constants[name]
            return self.at(node).const(c.value, c.type, name=None)
        if name in self.scope.imported and self.scope.imported[name] in CONSTANTS:
            return self.literal(node, CONSTANTS[self.scope.imported[name]])
        if name in self.undefined_why:
            loc, why = self.undefined_why[name]
            raise self.error(node, f"'{name}' may be undefined here (assign it on every path "
                                   "before this use)", [Note(loc, why)])
        if name in self.bindings:
            raise self.error(node, f"'{name}' is declared but never assigned before this use "
                                   "(assign it first)")
        if name in self.scope.functions:
            raise self.error(node, f"function '{name}' can only be called, not used as a value "
                                   f"(call it: {name}(...))")
        raise self.error(node, f"unknown name '{name}' (use a parameter, a local variable or a "
                               "module constant)")

    def attribute(self, node: cst.Attribute) -> Value:
        if isinstance(node.value, cst.Name):
            mod = self.scope.modules.get(node.value.value)
            if mod is not None:
                key = (mod, node.attr.value)
                if key in CONSTANTS:
                    return self.literal(node, CONSTANTS[key])
                raise self.error(node, f"'{node.value.value}.{node.attr.value}' is not supported "
                                       "here (call an intrinsic or use math.pi, math.e, math.inf)")
        if node.attr.value == "shape":
            raise self.error(node, "this use of .shape is not supported (use a.shape[k] with a "
                                   "constant k)")
        raise self.error(node, "attributes are not supported (only a.shape[k] and math/numpy names)")

    def subscript_parts(self, node: cst.Subscript) -> tuple[Value, list[Value]]:
        array = self.expr(node.value)
        if not isinstance(array.type, ArrayType):
            raise self.error(node.value, f"only arrays can be indexed (this is {array.type})")
        elems = node.slice
        if len(elems) != array.type.ndim:
            raise self.error(node, f"a {array.type.ndim}-d array needs {array.type.ndim} "
                                   f"index(es), got {len(elems)} (write "
                                   f"{_spelled(node.value)}[{', '.join('ijkl'[:array.type.ndim])}])")
        indices = []
        for axis, e in enumerate(elems):
            if not isinstance(e.slice, cst.Index):
                raise self.error(e, "slicing is not supported (index single elements in a loop)")
            idx = self.int_value(e.slice.value, self.expr(e.slice.value), "an index")
            c = self.const_value(idx)
            if isinstance(c, int) and c < 0:
                b = self.at(e)
                idx = b.prim("add", b.dim(array, axis), b.const(c, I64))
            indices.append(idx)
        return array, indices

    def subscript(self, node: cst.Subscript) -> Value:
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            array = self.expr(node.value.value)
            if not isinstance(array.type, ArrayType):
                raise self.error(node.value.value, f"a {array.type} has no shape (only arrays have "
                                                   "a shape)")
            if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
                raise self.error(node, "this use of .shape is not supported (use a.shape[k] with a "
                                       "constant k)")
            k = node.slice[0].slice.value
            kv = self.expr(k)
            axis = self.const_value(kv)
            if not isinstance(axis, int) or isinstance(axis, bool):
                raise self.error(k, "the axis in a.shape[k] must be a constant integer (write "
                                    "a.shape[0], a.shape[1], ...)")
            nd = array.type.ndim
            if not -nd <= axis < nd:
                raise self.error(k, f"axis {axis} is out of range for a {nd}-d array (use 0 to "
                                    f"{nd - 1})")
            return self.at(node).dim(array, axis % nd)
        array, indices = self.subscript_parts(node)
        return self.at(node).load(array, indices)

    def int_value(self, node: cst.CSTNode, v: Value, what: str) -> Value:
        t = v.type
        if isinstance(t, ScalarType) and t.is_int:
            return self.at(node).cast(v, I64) if t != I64 else v
        hint = "use int(...) to convert" if isinstance(t, ScalarType) and t.is_float else \
            "use an integer expression"
        raise self.error(node, f"{what} must be an integer, got {t} ({hint})")

    def scalar(self, node: cst.CSTNode, v: Value) -> ScalarType:
        if not isinstance(v.type, ScalarType):
            raise self.error(node, "arithmetic on whole arrays is not supported (write a loop over "
                                   "the elements)")
        return v.type

    def unify(self, node: cst.CSTNode, a: Value, b: Value, floats: bool = False) -> tuple[Value, Value]:
        ta, tb = self.scalar(node, a), self.scalar(node, b)
        wa, wb = self.is_weak(a), self.is_weak(b)
        if wa and not wb:
            target = tb if not (ta.is_float and tb.is_int) else self.float_type
        elif wb and not wa:
            target = ta if not (tb.is_float and ta.is_int) else self.float_type
        else:
            target = promote(ta, tb)
            if ta.is_float != tb.is_float and (wa and wb):
                target = self.float_type
        if floats and not target.is_float:
            target = self.float_type
        bld = self.at(node)
        return self.coerce(bld, a, target), self.coerce(bld, b, target)

    def coerce(self, b: Builder, v: Value, t: ScalarType) -> Value:
        if v.type == t:
            return v
        c = self.const_value(v)
        if c is not None and self.is_weak(v):
            nv = b.const(c, t)
            self.weak.add(id(nv))
            return nv
        return b.cast(v, t)

    def binary(self, node: cst.CSTNode, op: str, a: Value, b: Value,
               right_node: cst.CSTNode | None = None) -> Value:
        ta, tb = self.scalar(node, a), self.scalar(node, b)
        if ta.is_bool or tb.is_bool:
            raise self.error(node, "arithmetic on booleans is not supported (use if/else)")
        weak = self.is_weak(a) and self.is_weak(b)
        if op == "pow":
            return self.power(node, a, b, right_node or node)
        a, b = self.unify(node, a, b, floats=(op == "div"))
        bld = self.at(node)
        if weak:
            ca, cb = self.const_value(a), self.const_value(b)
            try:
                folded = PRIMS[op].fold(ca, cb)  # type: ignore[misc]
            except ZeroDivisionError:
                raise self.error(node, "division by zero in a constant expression (divide by a "
                                       "nonzero value)") from None
            return self.literal(node, folded)
        return bld.prim(op, a, b)

    def power(self, node: cst.CSTNode, a: Value, b: Value, right: cst.CSTNode) -> Value:
        ta, tb = self.scalar(node, a), self.scalar(node, b)
        bld = self.at(node)
        c = self.const_value(b)
        if self.is_weak(a) and self.is_weak(b):
            base = self.const_value(a)
            if isinstance(base, int) and isinstance(c, int) and abs(base) > 1 and c > 64:
                raise self.error(node, "the integer constant this power computes does not fit in "
                                       "64 bits (integers are 64-bit; use a float base)")
            try:
                return self.literal(node, base ** c)  # type: ignore[operator]
            except (ZeroDivisionError, OverflowError):
                raise self.error(node, "cannot evaluate this constant power (use a smaller "
                                       "exponent or a float base)") from None
        if ta.is_int and tb.is_int:
            if not (isinstance(c, int) and self.is_weak(b) and c >= 0):
                raise self.error(right, "an integer raised to a power needs a constant exponent >= 0 "
                                        "(its type would depend on the sign; convert with float())")
            return self._power_by_multiplication(bld, a, c, I64)
        if isinstance(c, (int, float)) and not isinstance(c, bool) and self.is_weak(b) \
                and float(c).is_integer() and abs(c) <= MAX_POWER_BY_MULTIPLICATION:
            base = self.coerce(bld, a, ta if ta.is_float else self.float_type)
            assert isinstance(base.type, ScalarType)
            n = int(c)
            if n == 0:
                return bld.const(1.0, base.type)
            p = self._power_by_multiplication(bld, base, abs(n), base.type)
            return p if n > 0 else bld.prim("div", bld.const(1.0, base.type), p)
        x, y = self.unify(node, a, b, floats=True)
        return bld.prim("pow", x, y)

    def _power_by_multiplication(self, b: Builder, x: Value, n: int, t: ScalarType) -> Value:
        if n == 0:
            return b.const(1, t)
        result = x
        for _ in range(n - 1):
            result = b.prim("mul", result, x)
        return result

    def unary(self, node: cst.UnaryOperation) -> Value:
        if isinstance(node.operator, cst.Not):
            v = self.to_bool(node.expression, self.expr(node.expression))
            return self.at(node).prim("not", v)
        if isinstance(node.operator, cst.BitInvert):
            raise self.error(node.operator, "operator '~' is not supported (use not for booleans)")
        if isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
            return self.literal(node, -int(node.expression.evaluated_value))  # -2**63 fits
        v = self.expr(node.expression)
        t = self.scalar(node, v)
        if t.is_bool:
            raise self.error(node, "arithmetic on booleans is not supported (use if/else)")
        if isinstance(node.operator, cst.Plus):
            return v
        if self.is_weak(v):
            return self.literal(node, -self.const_value(v))  # type: ignore[operator]
        return self.at(node).prim("neg", v)

    def to_bool(self, node: cst.CSTNode, v: Value) -> Value:
        t = self.scalar(node, v)
        if t.is_bool:
            return v
        zero = self.coerce(self.at(node), self.literal(node, 0), t)
        return self.at(node).prim("ne", v, zero)

    def comparison(self, node: cst.Comparison) -> Value:
        left, left_node = self.expr(node.left), node.left
        result: Value | None = None
        for target in node.comparisons:
            op = COMPARES.get(type(target.operator))
            if op is None:
                spelled = UNSUPPORTED_COMPARES.get(type(target.operator), "this comparison")
                raise self.error(target.operator, f"'{spelled}' is not supported (compare numbers "
                                                  "with < <= > >= == !=)")
            right = self.expr(target.comparator)
            ta, tb = self.scalar(left_node, left), self.scalar(target.comparator, right)
            if ta.is_bool != tb.is_bool:
                raise self.error(node, "comparing a boolean with a number is not supported "
                                       "(compare numbers with numbers, booleans with booleans)")
            a, b = self.unify(node, left, right)
            cmp = self.at(node).prim(op, a, b)
            result = cmp if result is None else self.at(node).prim("and", result, cmp)
            left, left_node = right, target.comparator
        assert result is not None
        return result

    def boolean(self, node: cst.BooleanOperation) -> Value:
        opname = "and" if isinstance(node.operator, cst.And) else "or"
        left = self.expr(node.left)
        if not (isinstance(left.type, ScalarType) and left.type.is_bool):
            raise self.error(node.left, f"'{opname}' needs boolean operands (compare explicitly, "
                                        "e.g. x != 0)")
        right_safe = is_safe_expression(node.right)
        if right_safe:
            right = self.expr(node.right)
            self.check_bool(node.right, right, opname)
            return self.at(node).prim(opname, left, right)
        # the right operand may fault (an index, a call): evaluate it only when needed
        short = self.at(node).const(opname == "or", BOOL)
        return self.lazy_select(node, left, node.right, short, right_first=(opname == "and"),
                                check=lambda n, v: self.check_bool(n, v, opname))

    def check_bool(self, node: cst.CSTNode, v: Value, opname: str) -> None:
        if not (isinstance(v.type, ScalarType) and v.type.is_bool):
            raise self.error(node, f"'{opname}' needs boolean operands (compare explicitly, e.g. x != 0)")

    def lazy_select(self, node: cst.CSTNode, cond: Value, lazy: cst.BaseExpression, other: Value,
                    right_first: bool, check: Callable[[cst.CSTNode, Value], None]) -> Value:
        b = self.at(node)
        op = If([cond], [], b.loc, regions=[Region(), Region()])
        b.insert(op)
        outer = self.builder.region
        lazy_region, other_region = (op.regions[0], op.regions[1]) if right_first else \
            (op.regions[1], op.regions[0])
        self.builder.region = lazy_region
        v = self.expr(lazy)
        check(lazy, v)
        lazy_region.ops.append(Yield([v], [], self.loc_of(lazy)))
        other_region.ops.append(Yield([other], [], self.loc_of(node)))
        self.builder.region = outer
        result = Value(v.type)
        op.results = [result]
        result.owner = op
        return result

    def if_expression(self, node: cst.IfExp) -> Value:
        cond = self.to_bool(node.test, self.expr(node.test))
        if is_safe_expression(node.body) and is_safe_expression(node.orelse):
            a, b = self.expr(node.body), self.expr(node.orelse)
            a, b = self.unify(node, a, b)
            return self.at(node).prim("select", cond, a, b)
        bld = self.at(node)
        op = If([cond], [], bld.loc, regions=[Region(), Region()])
        bld.insert(op)
        outer = self.builder.region
        values = []
        for region, branch in zip(op.regions, (node.body, node.orelse), strict=True):
            self.builder.region = region
            values.append(self.expr(branch))
            self.builder.region = outer
        ta, tb = self.scalar(node.body, values[0]), self.scalar(node.orelse, values[1])
        target = promote(ta, tb) if ta != tb else ta
        for region, v, branch in zip(op.regions, values, (node.body, node.orelse), strict=True):
            self.builder.region = region
            region.ops.append(Yield([self.coerce(self.at(branch), v, target)], [], self.loc_of(branch)))
        self.builder.region = outer
        result = Value(target)
        op.results = [result]
        result.owner = op
        return result

    # -- calls -----------------------------------------------------------------------------------
    def callee_name(self, func: cst.BaseExpression) -> tuple[str, str] | None:
        """(module, name) of an intrinsic or builtin, or None for a module function."""
        if isinstance(func, cst.Name):
            if func.value in self.scope.functions:
                return None
            if func.value in self.scope.imported:
                return self.scope.imported[func.value]
            return ("", func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            mod = self.scope.modules.get(func.value.value)
            if mod is not None:
                return (mod, func.attr.value)
        raise self.error(func, "calling this is not supported (only module functions, math/numpy "
                               "intrinsics and builtins can be called)")

    def call(self, node: cst.Call, allow_none: bool = False, allow_tuple: bool = False) -> list[Value]:
        for a in node.args:
            if a.keyword is not None:
                raise self.error(a, "keyword arguments are not supported (pass arguments by position)")
            if a.star:
                raise self.error(a, "starred arguments are not supported (pass arguments one by "
                                    "one)")
        key = self.callee_name(node.func)
        if key is None:
            return self.module_call(node, allow_none, allow_tuple)
        mod, name = key
        if mod == "math" and name == "log" and len(node.args) == 2:
            raise self.error(node, "math.log with a base is not supported (use log(x) / log(b))")
        if mod == "" and name == "pow" and len(node.args) == 2:
            # the builtin is the ** operator: int ** int stays an int, as in Python
            a, b = (self.expr(arg.value) for arg in node.args)
            return [self.binary(node, "pow", a, b, right_node=node.args[1].value)]
        if (mod, name) in INTRINSICS:
            return [self.intrinsic(node, INTRINSICS[(mod, name)], name)]
        if mod in ("", "numpy") and name == "zeros":
            return [self.zeros(node)]
        if mod == "" and name in ("int", "float"):
            return [self.conversion(node, name)]
        if mod == "" and name == "len":
            if len(node.args) != 1:
                raise self.error(node, "len takes one array (write len(a))")
            array = self.expr(node.args[0].value)
            if not isinstance(array.type, ArrayType):
                raise self.error(node.args[0], f"len of a {array.type} is not supported (len takes "
                                               "an array)")
            return [self.at(node).dim(array, 0)]
        if mod == "" and name in ("range", "prange"):
            raise self.error(node, f"{name}(...) is only supported as the iterable of a for loop "
                                   f"(write for i in {name}(...))")
        what = f"{mod}.{name}" if mod else name
        if mod:
            raise self.error(node.func, f"'{what}' is not a supported intrinsic (see the language "
                                        "reference for the list)")
        raise self.error(node.func, f"unknown function '{name}' (call a function of this module, "
                                    "an intrinsic or a builtin)")

    def intrinsic(self, node: cst.Call, prim: str, spelled: str) -> Value:
        p = PRIMS[prim]
        args = [self.expr(a.value) for a in node.args]
        if prim in ("min", "max") and len(args) >= 2:
            result = args[0]
            for nxt in args[1:]:
                x, y = self.unify(node, result, nxt)
                result = self.at(node).prim(prim, x, y)
            return result
        if len(args) != p.arity:
            raise self.error(node, f"{spelled} takes {p.arity} argument(s), got {len(args)} "
                                   "(pass one value per parameter)")
        for a, v in zip(node.args, args, strict=True):
            t = self.scalar(a, v)
            if t.is_bool:
                raise self.error(a, f"{spelled} of a boolean is not supported (use a number, e.g. "
                                    "1.0 if b else 0.0)")
        if p.arity == 2:
            x, y = self.unify(node, args[0], args[1], floats=p.float_only)
            args = [x, y]
        elif p.float_only:
            t = args[0].type
            assert isinstance(t, ScalarType)
            args = [self.coerce(self.at(node), args[0], t if t.is_float else self.float_type)]
        if all(self.is_weak(a) for a in args) and p.fold is not None:
            try:
                return self.literal(node, p.fold(*[self.const_value(a) for a in args]))
            except (ValueError, OverflowError, ZeroDivisionError):
                pass
        return self.at(node).prim(prim, *args)

    def conversion(self, node: cst.Call, name: str) -> Value:
        if len(node.args) != 1:
            raise self.error(node, f"{name}(...) takes one argument (write {name}(x))")
        v = self.expr(node.args[0].value)
        t = self.scalar(node.args[0], v)
        if name == "int":
            if t.is_bool:
                raise self.error(node, "int() of a boolean is not supported (use 1 if b else 0)")
            return self.at(node).cast(v, I64) if t != I64 else v
        return self.at(node).cast(v, self.float_type) if t != self.float_type else v

    def zeros(self, node: cst.Call) -> Value:
        if self.builder.region is not self.top_region:
            raise self.error(node, "zeros(...) is only supported at the top level of a function body "
                                   "(not inside a loop or branch)")
        if len(node.args) != 1:
            raise self.error(node, "zeros takes one argument (a length or a tuple of extents: "
                                   "zeros(n) or zeros((n, m)); the elements are floats)")
        shape = node.args[0].value
        parts = [e.value for e in shape.elements] if isinstance(shape, cst.Tuple) else [shape]
        if not 1 <= len(parts) <= 4:
            raise self.error(shape, f"a local array of {len(parts)} dimensions is not supported "
                                    "(local arrays have 1 to 4 dimensions)")
        extents = [self.int_value(p, self.expr(p), "an extent") for p in parts]
        return self.at(node).zeros(extents, ArrayType(self.float_type, len(extents)))

    def module_call(self, node: cst.Call, allow_none: bool, allow_tuple: bool) -> list[Value]:
        assert isinstance(node.func, cst.Name)
        sig = self.scope.functions[node.func.value]
        if len(node.args) != len(sig.params):
            raise self.error(node, f"'{sig.name}' takes {len(sig.params)} argument(s), got "
                                   f"{len(node.args)} (pass one value per parameter)",
                             [Note(sig.loc, "defined here")])
        args = []
        for a, p in zip(node.args, sig.params, strict=True):
            v = self.expr(a.value)
            if isinstance(p.type, ArrayType) or isinstance(v.type, ArrayType):
                if v.type != p.type:
                    raise self.error(a, f"argument '{p.name}' of '{sig.name}' is "
                                        f"{_type_spelled(p.type)}, got {_type_spelled(v.type)} "
                                        "(pass a value of the declared type)",
                                     [Note(p.loc, "parameter declared here")])
            else:
                assert isinstance(p.type, ScalarType)
                v = self.convert(a, v, p.type, f"argument '{p.name}' of '{sig.name}'")
            args.append(v)
        if not sig.results and not allow_none:
            raise self.error(node, f"'{sig.name}' returns nothing and has no value (call it as a "
                                   f"statement: {sig.name}(...))")
        if sig.returns_tuple and not allow_tuple:
            raise self.error(node, f"'{sig.name}' returns a tuple; unpack it (a, b = {sig.name}(...))")
        return self.at(node).call(sig.name, args, list(sig.results))


AUG_OPS: dict[type, str] = {
    cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul",
    cst.DivideAssign: "div", cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod",
    cst.PowerAssign: "pow",
}


def _type_spelled(t: Type) -> str:
    """A type as an annotation spells it: f64, Array[f64], Array[f64, 2]."""
    if isinstance(t, ArrayType):
        return f"Array[{t.elem}]" if t.ndim == 1 else f"Array[{t.elem}, {t.ndim}]"
    return str(t)


def _spelled(node: cst.BaseExpression) -> str:
    """A name as written, for hints in messages ('a' for anything else)."""
    return node.value if isinstance(node, cst.Name) else "a"


def is_safe_expression(node: cst.CSTNode) -> bool:
    """No index, call or integer division: evaluating it eagerly cannot fault."""
    unsafe = False

    class V(cst.CSTVisitor):
        def visit_Subscript(self, n: cst.Subscript) -> bool:
            nonlocal unsafe
            unsafe = True
            return False

        def visit_Call(self, n: cst.Call) -> bool:
            nonlocal unsafe
            unsafe = True
            return False

        def visit_BinaryOperation(self, n: cst.BinaryOperation) -> bool:
            nonlocal unsafe
            if isinstance(n.operator, (cst.FloorDivide, cst.Modulo)):
                unsafe = True
            return True

        def visit_IfExp(self, n: cst.IfExp) -> bool:
            nonlocal unsafe
            unsafe = True
            return False

        def visit_BooleanOperation(self, n: cst.BooleanOperation) -> bool:
            return True

    node.visit(V())
    return not unsafe


def assigned_names_ordered(node: cst.CSTNode | None) -> list[str]:
    """Names bound anywhere inside ``node``, in order of first appearance."""
    out: list[str] = []
    if node is None:
        return out

    def add(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            if target.value not in out:
                out.append(target.value)
        elif isinstance(target, cst.Tuple):
            for e in target.elements:
                add(e.value)

    class V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                add(t.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            add(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            if n.value is not None:
                add(n.target)

        def visit_For(self, n: cst.For) -> None:
            add(n.target)

    node.visit(V())
    return out


def assigned_names(node: cst.CSTNode | None) -> set[str]:
    return set(assigned_names_ordered(node))


def _order_key(node: cst.If) -> Callable[[str], int]:
    order = assigned_names_ordered(node)
    return lambda n: order.index(n) if n in order else len(order)


__all__ = ["FunctionLowering", "assigned_names"]
