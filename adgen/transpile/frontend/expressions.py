"""Lowering of expressions: literals, names, arithmetic, comparisons, calls.

Typing happens here: literals are weak (they take the type of the typed
operand next to them, as in NumPy 2: ``x32 * 2.0`` stays f32), mixed
int/float arithmetic promotes to float, ``/`` always gives a float, and
``//``/``%`` keep Python's meaning.  ``and``/``or`` and ``a if c else b``
evaluate lazily when an operand could fault (an index, a call, an integer
division), as Python does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ..ir.builder import Builder
from ..ir.core import Call, Const, If, Loc, Prim, Region, Value, Yield, Zeros
from ..ir.prims import CONSTANTS, INTRINSICS, PRIMS
from ..ir.types import BOOL, I64, ArrayType, ScalarType, Type, is_float, promote
from ..ir.walk import int_const
from .diagnostics import AdgenError, Diagnostics, Note
from .signatures import ADGEN_NAMES, ScopeReader, Signature

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
#: a negative constant to a fractional constant power: complex in CPython, NaN in C's pow
COMPLEX_POWER = ("a negative constant raised to a fractional power is a complex number, which "
                 "adgen does not compute (write math.nan for C's value)")


@dataclass
class Binding:
    type: Type
    loc: Loc


@dataclass
class LoopContext:
    carried: list[str]
    parallel: bool = False  # a prange


class ExpressionLowering:
    """Expressions, calls and the typing rules they share with statements."""

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
        #: the call directive of the statement being lowered (``# adgen: checkpoint``), and the
        #: calls it was given to
        self.call_directive = ""
        self.directed_calls: list[Call] = []
        #: names that exist only on some paths: name -> why (for the error message)
        self.undefined_why: dict[str, tuple[Loc, str]] = {}
        self.weak: set[Value] = set()  # values that are untyped literals
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
        self.weak.add(v)
        return v

    def is_weak(self, v: Value) -> bool:
        return v in self.weak

    def const_value(self, v: Value) -> float | int | bool | None:
        op = v.owner
        return op.value if isinstance(op, Const) else None

    def static_test(self, v: Value) -> bool | None:
        """The value of the condition ``v`` when it is known here: a constant, or comparisons
        and logic of values known here (``SCALE != 0.0`` of a module constant); None
        otherwise. (In ``f64`` and ``i64`` only: the C computes single precision itself.)"""
        def value(v: Value) -> float | int | bool | None:
            op = v.owner
            if isinstance(op, Const):
                return op.value
            if not isinstance(op, Prim) or PRIMS[op.prim].fold is None or any(
                    isinstance(a.type, ScalarType) and a.type.name in ("f32", "i32")
                    for a in (*op.operands, op.result)):
                return None
            args = [value(a) for a in op.operands]
            if any(a is None for a in args):
                return None
            try:
                return PRIMS[op.prim].fold(*args)  # type: ignore[misc]
            except (ArithmeticError, ValueError):
                return None
        known = value(v)
        return known if isinstance(known, bool) else None

    def static_int(self, v: Value) -> int | None:
        """``v``'s value when it is an integer known here: a constant, or integer arithmetic
        of constants (``N + 1`` with ``N`` a module constant); None otherwise."""
        op = v.owner
        if isinstance(op, Const):
            return int_const(v)
        if not isinstance(op, Prim) or op.prim not in ("add", "sub", "mul", "neg") or \
                op.result.type != I64:
            return None
        args = [self.static_int(a) for a in op.operands]
        if any(a is None for a in args):
            return None
        return PRIMS[op.prim].fold(*args)

    def check_constant_index(self, node: cst.CSTNode, name: str, array: Value, axis: int,
                             index: Value) -> None:
        """Reject a constant index outside a local array whose extent is a constant
        (``t = zeros(3)``, ``t[5]`` or ``t[-4]``): CPython raises IndexError there, and the C
        would read or write past the array."""
        owner = array.owner
        if not isinstance(owner, Zeros):
            return
        c, extent = self.static_int(index), self.static_int(owner.operands[axis])
        if c is None or extent is None or -extent <= c < extent:
            return
        where = f" on axis {axis}" if array.type.ndim > 1 else ""
        raise self.error(node, f"index {c} is out of range{where} of '{name}', which has "
                               f"{extent} element(s) (use an index from 0 to {extent - 1}, or "
                               f"from -{extent} to -1 from the end)",
                         [Note(owner.loc, "created here")])

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
            self.check_literal_fits(node, v, to)
            return self.at(node).cast(v, to)
        hint = ("use int(...) to convert" if to.is_int and t.is_float else
                "compare explicitly, e.g. x != 0" if to.is_bool else "use 1.0 if b else 0.0")
        raise self.error(node, f"{what}: expected {to}, got {t} ({hint})")

    def returns_tuple(self, call: cst.Call) -> bool:
        if isinstance(call.func, cst.Name) and call.func.value in self.scope.functions:
            return self.scope.functions[call.func.value].returns_tuple
        if isinstance(call.func, cst.Call):  # grad(f, argnums=(0, 1))(...) gives a tuple
            return any(a.keyword is not None and a.keyword.value == "argnums" and
                       isinstance(a.value, cst.Tuple) for a in call.func.args)
        return isinstance(call.func, cst.Name) and call.func.value == "jvp"

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

    @functools.cached_property
    def local_names(self) -> set[str]:
        """The names Python makes local to this function: its parameters and every name it
        assigns or annotates, anywhere in its body (a use before the assignment is
        UnboundLocalError, not the module's name or the builtin)."""
        from .lower import assigned_names  # (lower.py builds on this module)
        return {p.name for p in self.sig.params} | \
            assigned_names(self.sig.node.body, declared=True)

    def not_a_local(self, node: cst.Name, what: str) -> None:
        """Refuse ``node`` as ``what`` (a function, a module, an imported name) where Python
        reads it as a local variable of this function."""
        name = node.value
        if name in self.local_names:
            kind = "a parameter" if any(p.name == name for p in self.sig.params) else \
                "assigned in this function"
            raise self.error(node, f"'{name}' is {kind}, which makes it a local variable in all "
                                   f"of the function (as in Python), not {what} (rename the "
                                   "variable)")

    def name_value(self, node: cst.Name) -> Value:
        name = node.value
        if name in self.env:
            return self.env[name]
        if name in self.scope.imported:
            self.not_a_local(node, f"the imported '{name}'")
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
                self.not_a_local(node.value, f"the module {mod}")
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
            raise self.error(node.value, f"only arrays can be indexed, this is a {array.type} "
                                         "(index an array parameter or a local array from zeros)")
        elems = node.slice
        if len(elems) != array.type.ndim:
            raise self.error(node, f"a {array.type.ndim}-d array needs {array.type.ndim} "
                                   f"index(es), got {len(elems)} (write "
                                   f"{spelled(node.value)}[{', '.join('ijkl'[:array.type.ndim])}])")
        indices = []
        for axis, e in enumerate(elems):
            if not isinstance(e.slice, cst.Index):
                raise self.error(e, "slicing is not supported (index single elements inside a loop)")
            idx = self.int_value(e.slice.value, self.expr(e.slice.value), "an index")
            self.check_constant_index(e.slice.value, spelled(node.value), array, axis, idx)
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
        for v in (a, b):
            self.check_literal_fits(node, v, target)
        bld = self.at(node)
        return self.coerce(bld, a, target), self.coerce(bld, b, target)

    def check_literal_fits(self, node: cst.CSTNode, v: Value, t: ScalarType) -> None:
        """A literal taking an i32's type (an operand's, a variable's, a parameter's, an array
        element's, a return value's) must fit in 32 bits: it wrapped in the C."""
        c = self.const_value(v)
        if t.name == "i32" and self.is_weak(v) and isinstance(c, int) and \
                not isinstance(c, bool) and not -2**31 <= c < 2**31:
            raise self.error(node, f"the integer {c} does not fit in 32 bits, the type (i32) it "
                                   "takes here (compute in 64 bits: int, or int() of the i32)")

    def coerce(self, b: Builder, v: Value, t: ScalarType) -> Value:
        if v.type == t:
            return v
        c = self.const_value(v)
        if c is not None and self.is_weak(v):
            nv = b.const(c, t)
            self.weak.add(nv)
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
        if op in ("div", "floordiv", "mod") and self.const_value(b) == 0 and \
                not isinstance(self.const_value(b), bool):
            raise self.error(right_node or node, "division by the constant zero (CPython raises "
                                                 "ZeroDivisionError here)")
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
                value = base ** c  # type: ignore[operator]
            except (ZeroDivisionError, OverflowError):
                raise self.error(node, "cannot evaluate this constant power (use a smaller "
                                       "exponent or a float base)") from None
            if isinstance(value, complex):  # CPython's (-8.0) ** 0.5; C's pow gives NaN
                raise self.error(node, COMPLEX_POWER)
            return self.literal(node, value)
        base = self.const_value(a)
        if _real(base) and _real(c) and base < 0 and _complex_power(base, c):
            raise self.error(node, COMPLEX_POWER)  # a module constant's: NEG ** 0.5
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
        if isinstance(v.type, ArrayType):
            raise self.error(node, "an array is not a condition (test its elements, e.g. "
                                   "a[i] > 0.0, or its length, len(a) > 0)")
        t = self.scalar(node, v)
        if t.is_bool:
            return v
        zero = self.coerce(self.at(node), self.literal(node, 0), t)
        return self.at(node).prim("ne", v, zero)

    def comparison(self, node: cst.Comparison) -> Value:
        """``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once; as with ``and``, an
        operand that may fault or write (an index, a call) is evaluated only when the
        comparisons before it hold."""
        return self.compare_chain(node, self.expr(node.left), node.left, list(node.comparisons))

    def compare_chain(self, node: cst.Comparison, left: Value, left_node: cst.BaseExpression,
                      rest: list[cst.ComparisonTarget], held: Value | None = None) -> Value:
        """The comparisons ``rest`` from ``left`` on, and-ed to ``held`` (those before)."""
        target = rest[0]
        op = COMPARES.get(type(target.operator))
        if op is None:
            spelled = UNSUPPORTED_COMPARES.get(type(target.operator), "this comparison")
            raise self.error(target.operator, f"'{spelled}' is not supported (compare numbers "
                                              "with < <= > >= == !=)")
        right = self.expr(target.comparator)
        ta, tb = self.scalar(left_node, left), self.scalar(target.comparator, right)
        if ta.is_bool != tb.is_bool:
            raise self.error(target.operator, "comparing a boolean with a number is not "
                                              "supported (compare numbers with numbers, "
                                              "booleans with booleans)")
        a, b = self.unify(node, left, right)
        cmp = self.at(node).prim(op, a, b)
        if held is not None:
            cmp = self.at(node).prim("and", held, cmp)
        if len(rest) == 1:
            return cmp
        if is_safe_expression(rest[1].comparator):
            return self.compare_chain(node, right, target.comparator, rest[1:], cmp)
        false = self.at(node).const(False, BOOL)
        return self.lazy_select(node, cmp, false, right_first=True,
                                build=lambda: self.compare_chain(node, right, target.comparator,
                                                                 rest[1:]))

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

        def build() -> Value:
            right = self.expr(node.right)
            self.check_bool(node.right, right, opname)
            return right
        return self.lazy_select(node, left, short, right_first=(opname == "and"), build=build,
                                lazy_node=node.right)

    def check_bool(self, node: cst.CSTNode, v: Value, opname: str) -> None:
        if not (isinstance(v.type, ScalarType) and v.type.is_bool):
            raise self.error(node, f"'{opname}' needs boolean operands (compare explicitly, e.g. x != 0)")

    def lazy_select(self, node: cst.CSTNode, cond: Value, other: Value, right_first: bool,
                    build: Callable[[], Value], lazy_node: cst.CSTNode | None = None) -> Value:
        """``build()`` where ``cond`` is true (``right_first``) or false, ``other`` elsewhere:
        the ops ``build`` adds run only on their side of the branch."""
        b = self.at(node)
        op = If([cond], [], b.loc, regions=[Region(), Region()])
        b.insert(op)
        outer = self.builder.region
        lazy_region, other_region = (op.regions[0], op.regions[1]) if right_first else \
            (op.regions[1], op.regions[0])
        self.builder.region = lazy_region
        v = build()
        lazy_region.ops.append(Yield([v], [], self.loc_of(lazy_node or node)))
        other_region.ops.append(Yield([other], [], self.loc_of(node)))
        self.builder.region = outer
        result = Value(v.type)
        op.results = [result]
        result.owner = op
        return result

    def if_expression(self, node: cst.IfExp) -> Value:
        """A ``select`` (both arms computed, one kept: no branch in the loop) where evaluating
        the arms eagerly cannot fault and their partial derivatives are finite; a branch
        otherwise, as CPython evaluates only the arm it takes.  (The adjoint of a select
        multiplies the partials of the arm not taken by a zero adjoint: the ``-inf`` of
        ``1.0 / y`` at ``y = 0``, or the NaN of ``x ** 1.5`` at ``x < 0``, times zero is NaN.)"""
        cond = self.to_bool(node.test, self.expr(node.test))
        # (a test known when compiling still lowers both arms, unlike an if statement: the
        # expression's type is that of both arms, 1 if DEBUG else 2.5 a float)
        arms = (node.body, node.orelse)
        if all(is_safe_expression(arm) and has_finite_partials(arm) for arm in arms):
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
    def not_through_adgen(self, node: cst.BaseExpression) -> None:
        """Rejects ``adgen.prange`` and the like: adgen's names are imported, then written
        bare (the subset resolves names, not attributes of the adgen module)."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
                node.value.value == "adgen" and node.attr.value in ADGEN_NAMES:
            raise self.error(node, f"adgen.{node.attr.value} is not supported (import the "
                                   f"name, from adgen import {node.attr.value}, and write "
                                   f"{node.attr.value})")

    def callee_name(self, func: cst.BaseExpression) -> tuple[str, str] | None:
        """(module, name) of an intrinsic or builtin, or None for a module function."""
        if isinstance(func, cst.Name):
            if func.value in self.bindings:
                # Python calls the local (a number): not a function of the module
                raise self.error(func, f"'{func.value}' is a variable here, not a function (it "
                                       "shadows the function of that name; rename the variable)",
                                 [Note(self.bindings[func.value].loc, "bound here")])
            self.not_a_local(func, "a function")
            if func.value in self.scope.functions:
                return None
            if func.value in self.scope.constants:
                raise self.error(func, f"'{func.value}' is a module constant, not a function "
                                       "(rename the constant)",
                                 [Note(self.scope.constants[func.value].loc, "defined here")])
            if func.value in self.scope.imported:
                return self.scope.imported[func.value]
            return ("", func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            mod = self.scope.modules.get(func.value.value)
            if mod is not None:
                self.not_a_local(func.value, f"the module {mod}")
                return (mod, func.attr.value)
            self.not_through_adgen(func)
        raise self.error(func, "calling this is not supported (only module functions, math/numpy "
                               "intrinsics and builtins can be called)")

    def call(self, node: cst.Call, allow_none: bool = False, allow_tuple: bool = False) -> list[Value]:
        for a in node.args:
            if a.keyword is not None:
                raise self.error(a, "keyword arguments are not supported (pass arguments by position)")
            if a.star:
                raise self.error(a, "starred arguments are not supported (pass arguments one by "
                                    "one)")
        if isinstance(node.func, cst.Call):
            return self.nested_grad(node, allow_tuple)
        key = self.callee_name(node.func)
        if key is None:
            return self.module_call(node, allow_none, allow_tuple)
        mod, name = key
        if mod == "" and name == "jvp":
            return self.nested_jvp(node, allow_tuple)
        if mod == "" and name == "grad":
            raise self.error(node, "grad(f) is a function: call it with the arguments of f "
                                   "(grad(f)(x, y))")
        if mod == "math" and name == "log" and len(node.args) == 2:
            raise self.error(node, "math.log with a base is not supported (use log(x) / log(b))")
        if mod == "" and name == "pow" and len(node.args) == 2:
            # the builtin is the ** operator: int ** int stays an int, as in Python
            a, b = (self.expr(arg.value) for arg in node.args)
            return [self.binary(node, "pow", a, b, right_node=node.args[1].value)]
        if (mod, name) in INTRINSICS:
            return [self.intrinsic(node, INTRINSICS[(mod, name)], name)]
        if mod in ("", "numpy") and name == "zeros":
            if mod == "":
                self.scope.require_adgen("zeros", lambda msg: self.error(node.func, msg))
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
            for a, v in zip(node.args, args, strict=True):
                if self.scalar(a, v).is_bool:
                    raise self.error(a, f"{spelled} of a boolean is not supported (use a number, "
                                        "e.g. 1 if b else 0, or and/or)")
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
        args = self.arguments(node, [a.value for a in node.args], sig)
        if not sig.results and not allow_none:
            raise self.error(node, f"'{sig.name}' returns nothing and has no value (call it as a "
                                   f"statement: {sig.name}(...))")
        if sig.returns_tuple and not allow_tuple:
            raise self.error(node, f"'{sig.name}' returns a tuple; unpack it (a, b = {sig.name}(...))")
        outs = self.at(node).call(sig.name, args, list(sig.results))
        if self.call_directive:
            op = self.builder.region.ops[-1]
            assert isinstance(op, Call) and op.callee == sig.name
            op.directive = self.call_directive
            self.directed_calls.append(op)
        return outs

    def arguments(self, node: cst.CSTNode, values: list[cst.BaseExpression],
                  sig: Signature) -> list[Value]:
        """The arguments of a call of ``sig``, checked and converted to the parameter types."""
        if len(values) != len(sig.params):
            raise self.error(node, f"'{sig.name}' takes {len(sig.params)} argument(s), got "
                                   f"{len(values)} (pass one value per parameter)",
                             [Note(sig.loc, "defined here")])
        args = []
        for a, p in zip(values, sig.params, strict=True):
            v = self.expr(a)
            if isinstance(p.type, ArrayType) or isinstance(v.type, ArrayType):
                if v.type != p.type:
                    raise self.error(a, f"argument '{p.name}' of '{sig.name}' is "
                                        f"{type_spelled(p.type)}, got {type_spelled(v.type)} "
                                        "(pass a value of the declared type)",
                                     [Note(p.loc, "parameter declared here")])
            else:
                assert isinstance(p.type, ScalarType)
                v = self.convert(a, v, p.type, f"argument '{p.name}' of '{sig.name}'")
            args.append(v)
        return args

    # -- derivatives inside the module -------------------------------------------------------------
    def derivative_target(self, node: cst.Call, what: str) -> Signature:
        """The module function ``grad(f)`` / ``jvp(f, ...)`` differentiates: one float result."""
        self.scope.require_adgen(what, lambda msg: self.error(node.func, msg))
        example = "grad(f)(x, y)" if what == "grad" else "jvp(f, (x, y), (xd, yd))"
        first = node.args[0] if node.args else None
        if first is None or first.keyword is not None or first.star or \
                not isinstance(first.value, cst.Name):
            raise self.error(node, f"{what} takes the function to differentiate first ({example})")
        name = first.value.value
        sig = self.scope.functions.get(name)
        if sig is None:
            raise self.error(first, f"{what} of '{name}' is not supported (differentiate a "
                                    f"function of this module: {example})")
        if len(sig.results) != 1 or sig.returns_tuple or not is_float(sig.results[0]):
            returns = ", ".join(map(type_spelled, sig.results)) or "nothing"
            raise self.error(first, f"{what} of '{name}' needs a function returning one float "
                                    f"(it returns {returns})",
                             [Note(sig.loc, "defined here")])
        return sig

    def nested_call(self, node: cst.Call, kind: str, sig: Signature, wrt: tuple[int, ...],
                    name: str, args: list[Value], results: list[Type]) -> list[Value]:
        from ..ir.core import Nested
        self.scope.nested.setdefault(name, Nested(name, kind, sig.name, wrt, self.loc_of(node)))
        return self.at(node).call(name, args, results)

    def nested_grad(self, node: cst.Call, allow_tuple: bool) -> list[Value]:
        """``grad(f)(args)``, ``grad(f, argnums=i)(args)`` or ``grad(f, argnums=(i, j))(args)``:
        the gradient of f's float result with respect to the chosen float scalar parameters,
        as JAX's ``grad``: one value for an integer ``argnums`` (default 0), a tuple for a
        tuple."""
        inner = node.func
        assert isinstance(inner, cst.Call)
        if not (isinstance(inner.func, cst.Name) and inner.func.value == "grad"):
            raise self.error(inner, "calling this is not supported (only module functions, "
                                    "math/numpy intrinsics, builtins and grad(f) can be called)")
        sig = self.derivative_target(inner, "grad")
        argnums: cst.BaseExpression | None = None
        for a in inner.args[1:]:
            if a.keyword is None or a.keyword.value != "argnums" or argnums is not None:
                raise self.error(a, "grad takes the function and argnums only "
                                    "(grad(f), grad(f, argnums=1), grad(f, argnums=(0, 1)))")
            argnums = a.value
        items = ([e.value for e in argnums.elements] if isinstance(argnums, cst.Tuple) else
                 [argnums] if argnums is not None else [])
        if not all(isinstance(e, cst.Integer) for e in items) or \
                (isinstance(argnums, cst.Tuple) and not items):
            raise self.error(argnums or inner, "argnums must be an integer or a tuple of integers, "
                                               "written as literals (argnums=(0, 1))")
        wrt = tuple(int(e.evaluated_value) for e in items) or (0,)  # type: ignore[union-attr]
        for e, i in zip(items or [inner], wrt, strict=True):
            if not 0 <= i < len(sig.params):
                raise self.error(e, f"argnums {i} is out of range ('{sig.name}' has "
                                    f"{len(sig.params)} parameter(s))")
            p = sig.params[i]
            if not (isinstance(p.type, ScalarType) and p.type.is_float):
                raise self.error(e, f"grad with respect to '{p.name}' ({type_spelled(p.type)}) "
                                    "is not supported (differentiate with respect to float "
                                    "scalar parameters)", [Note(p.loc, "parameter declared here")])
        if len(set(wrt)) != len(wrt):
            raise self.error(argnums or inner, "argnums names a parameter twice (name each once)")
        as_tuple = isinstance(argnums, cst.Tuple)
        if as_tuple and not allow_tuple:
            raise self.error(node, "grad(f, argnums=(...)) returns a tuple; unpack it "
                                   "(a, b = grad(f, argnums=(0, 1))(x, y))")
        floats = tuple(i for i, p in enumerate(sig.params)
                       if isinstance(p.type, ScalarType) and p.type.is_float)
        name = f"{sig.name}_grad" + ("" if wrt == floats else
                                     "_" + "_".join(sig.params[i].name for i in wrt))
        args = self.arguments(node, [a.value for a in node.args], sig)
        return self.nested_call(node, "grad", sig, wrt, name, args,
                                [sig.params[i].type for i in wrt])

    def nested_jvp(self, node: cst.Call, allow_tuple: bool) -> list[Value]:
        """``jvp(f, (args), (tangents))``, as JAX's: f's value and its derivative in the
        direction of the tangents, one per parameter (``None`` for those that are not float
        scalars)."""
        sig = self.derivative_target(node, "jvp")
        if len(node.args) != 3 or any(a.keyword is not None or a.star for a in node.args) or \
                not all(isinstance(a.value, cst.Tuple) for a in node.args[1:]):
            raise self.error(node, "jvp takes the function, a tuple of arguments and a tuple of "
                                   "tangents (y, yd = jvp(f, (x, n), (xd, None)))")
        primals = [e.value for e in node.args[1].value.elements]  # type: ignore[attr-defined]
        tangents = [e.value for e in node.args[2].value.elements]  # type: ignore[attr-defined]
        args = self.arguments(node.args[1].value, primals, sig)
        if len(tangents) != len(sig.params):
            raise self.error(node.args[2].value, f"jvp of '{sig.name}' needs {len(sig.params)} "
                                                 f"tangent(s), got {len(tangents)} (one per "
                                                 "parameter, None for those that are not floats)")
        wrt: list[int] = []
        for i, (t, p) in enumerate(zip(tangents, sig.params, strict=True)):
            none = isinstance(t, cst.Name) and t.value == "None"
            if isinstance(p.type, ScalarType) and p.type.is_float:
                if none:
                    raise self.error(t, f"the tangent of '{p.name}' is a float (write 0.0 for no "
                                        "change)")
                args.append(self.convert(t, self.expr(t), p.type, f"tangent of '{p.name}'"))
                wrt.append(i)
            elif not none:
                raise self.error(t, f"'{p.name}' ({type_spelled(p.type)}) has no tangent (write "
                                    "None)")
        if not allow_tuple:
            raise self.error(node, "jvp returns the value and its tangent; unpack them "
                                   "(y, yd = jvp(f, (x,), (xd,)))")
        t = sig.results[0]
        return self.nested_call(node, "jvp", sig, tuple(wrt), f"{sig.name}_jvp", args, [t, t])


def _complex_power(base: float, exponent: float) -> bool:
    """Whether CPython's ``base ** exponent`` is a complex number (``-8.0 ** 0.5``; not
    ``-8.0 ** math.inf``, which is inf)."""
    try:
        return isinstance(float(base) ** exponent, complex)
    except (OverflowError, ZeroDivisionError):
        return False


def _real(value: object) -> bool:
    """An int or float constant (not a bool, not unknown)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_spelled(t: Type) -> str:
    """A type as an annotation spells it: f64, Array[f64], Array[f64, 2]."""
    if isinstance(t, ArrayType):
        return f"Array[{t.elem}]" if t.ndim == 1 else f"Array[{t.elem}, {t.ndim}]"
    return str(t)


def spelled(node: cst.BaseExpression) -> str:
    """A name as written, for hints in messages ('a' for anything else)."""
    return node.value if isinstance(node, cst.Name) else "a"


def _literal_value(node: cst.BaseExpression) -> float | None:
    """The value of a number literal, possibly negated, or None."""
    sign = 1.0
    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        sign = -sign if isinstance(node.operator, cst.Minus) else sign
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return sign * float(node.evaluated_value)
        except OverflowError:  # an integer literal beyond a double: refused when lowered
            return None
    return None


def has_finite_partials(node: cst.CSTNode) -> bool:
    """No ``/`` but by a nonzero number literal and no ``**`` but to a literal whole
    exponent of 0 or more: the partial derivatives of the expression's operations are
    finite wherever its operands are (``+ - *`` and negation; an index or a call is
    ``is_safe_expression``'s business)."""
    finite = True

    class V(cst.CSTVisitor):
        def visit_BinaryOperation(self, n: cst.BinaryOperation) -> bool:
            nonlocal finite
            if isinstance(n.operator, cst.Divide):
                value = _literal_value(n.right)
                finite = finite and value is not None and value != 0.0
            elif isinstance(n.operator, cst.Power):
                value = _literal_value(n.right)
                finite = finite and value is not None and value >= 0.0 and value == int(value)
            return True

    node.visit(V())
    return finite


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
