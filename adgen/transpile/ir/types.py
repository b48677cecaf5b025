"""IR types: scalars, arrays, and the tangent vectors of vector modes."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScalarType:
    name: str  # f64 | f32 | i64 | i32 | bool

    @property
    def is_float(self) -> bool:
        return self.name in ("f64", "f32")

    @property
    def is_int(self) -> bool:
        return self.name in ("i64", "i32")

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def c_name(self) -> str:
        return C_SCALAR[self.name]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ArrayType:
    """A C-contiguous array; ``vector`` shadows carry a trailing direction axis."""

    elem: ScalarType
    ndim: int
    vector: bool = False

    def __str__(self) -> str:
        suffix = ", dirs" if self.vector else ""
        return f"{self.elem}[{self.ndim}d{suffix}]"


@dataclass(frozen=True, slots=True)
class VecType:
    """A tangent vector of a scalar in vector modes: one entry per direction."""

    elem: ScalarType

    def __str__(self) -> str:
        return f"{self.elem}<dirs>"


Type = ScalarType | ArrayType | VecType

F64 = ScalarType("f64")
F32 = ScalarType("f32")
I64 = ScalarType("i64")
I32 = ScalarType("i32")
BOOL = ScalarType("bool")

C_SCALAR = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "bool": "bool"}
SCALARS = {"f64": F64, "f32": F32, "i64": I64, "i32": I32, "bool": BOOL}


def is_float(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def elem_of(t: Type) -> ScalarType:
    if isinstance(t, ScalarType):
        return t
    return t.elem


def promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """The type of ``a op b`` for two typed (non-literal) operands."""
    order = ["bool", "i32", "i64", "f32", "f64"]
    if a.is_float and b.is_float:
        return F64 if "f64" in (a.name, b.name) else F32
    if a.is_float:
        return a
    if b.is_float:
        return b
    return a if order.index(a.name) >= order.index(b.name) else b


def single(value: float) -> float:
    """The float32 that ``value`` rounds to, as a double: inf beyond single precision's
    range, 0 below its smallest subnormal (what an f32 build's C has for the constant)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:  # (beyond FLT_MAX and half its last place)
        return math.copysign(math.inf, value)
