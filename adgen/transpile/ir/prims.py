"""The primitives of the IR: arithmetic, comparisons, logic and intrinsics.

One entry per primitive says everything that is not a derivative: how many
operands, which Python names spell it, its result type, its C spelling and
how to fold it.  Derivatives live in ``ad/rules.py``; a test checks that
every primitive here has a rule there or is declared non-differentiable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .types import BOOL, F64, I64, ScalarType

Number = float | int | bool


def _py_floordiv(a: Number, b: Number) -> Number:
    return a // b


def _py_mod(a: Number, b: Number) -> Number:
    return a % b


@dataclass(frozen=True, slots=True)
class PrimDef:
    name: str
    arity: int
    #: how the result type follows from the (already unified) operand type
    result: str  # "same" | "float" | "bool" | "int"
    #: infix/prefix C operator, or None for a function call
    c_op: str | None = None
    #: C function per element type, e.g. {"f64": "sin", "f32": "sinf"}
    c_func: dict[str, str] | None = None
    fold: Callable[..., Number] | None = None
    #: operands must be float (ints are converted first)
    float_only: bool = False
    #: piecewise constant: the derivative is zero wherever it exists
    piecewise_constant: bool = False


PRIMS: dict[str, PrimDef] = {}


def _register(p: PrimDef) -> None:
    if p.name in PRIMS:
        raise ValueError(f"primitive {p.name} registered twice")
    PRIMS[p.name] = p


def _binop(name: str, op: str, fold: Callable[..., Number], result: str = "same") -> None:
    _register(PrimDef(name, 2, result, c_op=op, fold=fold))


def _libm(name: str, arity: int, fold: Callable[..., Number] | None, c: str | None = None) -> None:
    c = c or name
    _register(PrimDef(name, arity, "float", c_func={"f64": c, "f32": c + "f"}, fold=fold,
                      float_only=True))


# arithmetic (operands unified to one type first)
_binop("add", "+", lambda a, b: a + b)
_binop("sub", "-", lambda a, b: a - b)
_binop("mul", "*", lambda a, b: a * b)
_register(PrimDef("div", 2, "float", c_op="/", fold=lambda a, b: a / b, float_only=True))
_register(PrimDef("floordiv", 2, "same", fold=_py_floordiv, piecewise_constant=True,
                  c_func={"f64": "adgen_floordiv_f64", "f32": "adgen_floordiv_f32",
                          "i64": "adgen_floordiv_i64", "i32": "adgen_floordiv_i32"}))
_register(PrimDef("mod", 2, "same", fold=_py_mod,
                  c_func={"f64": "adgen_mod_f64", "f32": "adgen_mod_f32",
                          "i64": "adgen_mod_i64", "i32": "adgen_mod_i32"}))
_register(PrimDef("neg", 1, "same", c_op="-", fold=lambda a: -a))

# comparisons and logic
_COMPARE = [
    ("lt", "<", lambda a, b: a < b), ("le", "<=", lambda a, b: a <= b),
    ("gt", ">", lambda a, b: a > b), ("ge", ">=", lambda a, b: a >= b),
    ("eq", "==", lambda a, b: a == b), ("ne", "!=", lambda a, b: a != b),
]
for _name, _op, _fn in _COMPARE:
    _register(PrimDef(_name, 2, "bool", c_op=_op, fold=_fn, piecewise_constant=True))
#: the comparison primitives
COMPARISONS = frozenset(name for name, _, _ in _COMPARE)
_register(PrimDef("and", 2, "bool", c_op="&&", fold=lambda a, b: a and b, piecewise_constant=True))
_register(PrimDef("or", 2, "bool", c_op="||", fold=lambda a, b: a or b, piecewise_constant=True))
_register(PrimDef("not", 1, "bool", c_op="!", fold=lambda a: not a, piecewise_constant=True))
#: select(c, a, b) is C's ``c ? a : b``; both arms are already computed
_register(PrimDef("select", 3, "same", c_op="?:", fold=lambda c, a, b: a if c else b))

# libm, float only
_libm("sin", 1, math.sin)
_libm("cos", 1, math.cos)
_libm("tan", 1, math.tan)
_libm("asin", 1, math.asin)
_libm("acos", 1, math.acos)
_libm("atan", 1, math.atan)
_libm("atan2", 2, math.atan2)
_libm("sinh", 1, math.sinh)
_libm("cosh", 1, math.cosh)
_libm("tanh", 1, math.tanh)
_libm("exp", 1, math.exp)
_libm("expm1", 1, math.expm1)
_libm("log", 1, math.log)
_libm("log1p", 1, math.log1p)
_libm("log2", 1, math.log2)
_libm("log10", 1, math.log10)
_libm("sqrt", 1, math.sqrt)
_libm("cbrt", 1, None)
_libm("pow", 2, math.pow)
_libm("fabs", 1, math.fabs)
_libm("hypot", 2, math.hypot)
_libm("erf", 1, math.erf)
_libm("erfc", 1, math.erfc)
_libm("copysign", 2, math.copysign)
_register(PrimDef("floor", 1, "float", c_func={"f64": "floor", "f32": "floorf"}, fold=math.floor,
                  float_only=True, piecewise_constant=True))
_register(PrimDef("ceil", 1, "float", c_func={"f64": "ceil", "f32": "ceilf"}, fold=math.ceil,
                  float_only=True, piecewise_constant=True))
# math.floor / math.ceil return Python ints
_register(PrimDef("ifloor", 1, "int", c_func={"f64": "adgen_ifloor_f64", "f32": "adgen_ifloor_f32"},
                  fold=math.floor, float_only=True, piecewise_constant=True))
_register(PrimDef("iceil", 1, "int", c_func={"f64": "adgen_iceil_f64", "f32": "adgen_iceil_f32"},
                  fold=math.ceil, float_only=True, piecewise_constant=True))
# polymorphic: ints stay ints (Python's abs/min/max)
_register(PrimDef("abs", 1, "same", fold=abs,
                  c_func={"f64": "fabs", "f32": "fabsf", "i64": "adgen_abs_i64", "i32": "adgen_abs_i32"}))
_register(PrimDef("min", 2, "same", fold=lambda a, b: b if b < a else a,
                  c_func={t: f"adgen_min_{t}" for t in ("f64", "f32", "i64", "i32")}))
_register(PrimDef("max", 2, "same", fold=lambda a, b: b if b > a else a,
                  c_func={t: f"adgen_max_{t}" for t in ("f64", "f32", "i64", "i32")}))

def revolve_split(l: int, s: int) -> int:
    """Binomial checkpointing (revolve): with ``l`` loop steps left to reverse from a snapshot
    and ``s`` snapshots (that one included), how many steps to advance before storing the next
    one.  With r the least number of sweeps such that C(s + r, s) >= l, the left part must
    be reversible with s snapshots in r - 1 sweeps and the right part with s - 1 snapshots in
    r sweeps; the right part takes as many steps as it can, so no step is computed more than
    r + 1 times."""
    if s <= 1 or l <= 1:
        return max(l - 1, 1)
    r, beta = 0, 1
    while beta < l:
        r += 1
        beta = beta * (s + r) // r
    right = beta * s // (s + r)
    return min(max(l - right, 1), l - 1)


# the adjoint of a loop with '# adgen: binomial(k)' (reverse mode's own, not an intrinsic)
_register(PrimDef("revolve_split", 2, "same", c_func={"i64": "adgen_revolve_split"},
                  fold=revolve_split, piecewise_constant=True))

#: Python spellings of intrinsics: (module, name) -> primitive.  The module is
#: "math", "numpy" or "" for builtins; ``from math import sin`` resolves here too.
INTRINSICS: dict[tuple[str, str], str] = {}
for _n in ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp",
           "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "pow", "fabs", "hypot",
           "erf", "erfc", "copysign"]:
    INTRINSICS[("math", _n)] = _n
for _n in ["sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p", "log2",
           "log10", "sqrt", "cbrt", "fabs", "hypot", "copysign", "floor", "ceil", "abs"]:
    INTRINSICS[("numpy", _n)] = _n
INTRINSICS.update({
    ("numpy", "arcsin"): "asin", ("numpy", "arccos"): "acos", ("numpy", "arctan"): "atan",
    ("numpy", "arctan2"): "atan2", ("numpy", "power"): "pow", ("numpy", "absolute"): "abs",
    ("numpy", "minimum"): "min", ("numpy", "maximum"): "max",
    ("math", "floor"): "ifloor", ("math", "ceil"): "iceil",
    ("", "abs"): "abs", ("", "min"): "min", ("", "max"): "max", ("", "pow"): "pow",
})
#: primitives that cost a libm call: worth saving on the tape rather than recomputing
#: (``ad/record.py``), and kept out of loops the running-extremes rewrite duplicates
EXPENSIVE = {name for name, p in PRIMS.items() if p.c_func is not None and p.c_op is None} - {
    "abs", "fabs", "min", "max", "copysign", "floor", "ceil", "floordiv", "mod"}
#: named constants: (module, name) -> value
CONSTANTS: dict[tuple[str, str], float] = {
    ("math", "pi"): math.pi, ("math", "e"): math.e, ("math", "tau"): math.tau,
    ("math", "inf"): math.inf, ("numpy", "pi"): math.pi, ("numpy", "e"): math.e,
    ("numpy", "inf"): math.inf,
}


def result_type(p: PrimDef, operand: ScalarType) -> ScalarType:
    """Result type of ``p`` applied to operands already unified to ``operand``."""
    if p.result == "bool":
        return BOOL
    if p.result == "int":
        return I64
    if p.result == "float" and not operand.is_float:
        return F64
    return operand
