"""Warnings for legal code whose derivative is probably not what the user meant.

Both need the activity analysis (what depends on an independent input):

- a value that depends on an independent flows into ``floor``/``ceil``/``//``
  of floats or ``int()``: the result is piecewise constant, so that path
  contributes nothing to the derivative (documented convention, but often a
  surprise);
- floats compared for equality (``==``/``!=``) where an operand depends on an
  independent: the branch taken is decided by an exact value that any
  perturbation changes, so the derivative describes a single point.

And, in every mode, ``single_precision_constants``: a float constant that single
precision cannot hold (beyond its range: inf; below its smallest subnormal: 0), which the
C of an f32 build then has (``--precision f32``, or ``f32`` annotations).

``adgen --werror`` (``werror=True`` in the API) turns them into errors.
"""

from __future__ import annotations

import math

from ..frontend.diagnostics import Warning_
from ..ir.core import NOWHERE, Cast, Const, Loc, Module, Prim
from ..ir.types import ScalarType, single
from .activity import ModuleActivity

SPELLING = {"floor": "floor", "ifloor": "math.floor", "ceil": "ceil", "iceil": "math.ceil",
            "floordiv": "//"}


def lint(module: Module, activity: ModuleActivity) -> list[Warning_]:
    out: list[Warning_] = []
    seen: set[tuple[Loc, str]] = set()

    def warn(loc: Loc, message: str) -> None:
        if (loc, message) not in seen:
            seen.add((loc, message))
            out.append(Warning_(loc, message))

    for fn in module.functions:
        act = activity.functions.get(fn.name)
        if act is None or not activity.needs_derivative(fn.name):
            continue
        varied = act.varied
        for op in fn.walk():
            if op.loc == NOWHERE:  # what a transform added (or a copy of it), not the user's code
                continue
            if isinstance(op, Prim) and op.prim in SPELLING and any(
                    v in varied and _is_float(v.type) for v in op.operands):
                warn(op.loc, f"'{SPELLING[op.prim]}' of a value that depends on an independent "
                             "input: its derivative is taken as 0 (the result is piecewise "
                             "constant)")
            elif isinstance(op, Cast) and _is_float(op.operands[0].type) and \
                    _is_int(op.result.type) and op.operands[0] in varied:
                warn(op.loc, "int() of a value that depends on an independent input: its "
                             "derivative is taken as 0 (the result is piecewise constant)")
            elif isinstance(op, Prim) and op.prim in ("eq", "ne") and \
                    any(_is_float(v.type) and v in varied for v in op.operands):
                warn(op.loc, "floats compared for equality on a value that depends on an "
                             "independent input: the derivative holds only at points where the "
                             "comparison does not change (compare with a tolerance)")
    out.sort(key=lambda w: (w.loc.file, w.loc.line, w.loc.col))
    return out


def _is_float(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def _is_int(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_int


def single_precision_constants(module: Module) -> list[Warning_]:
    """A warning for each float constant of single precision (an f32 literal, or a module
    constant where an f32 is) that is inf or 0 there though finite and nonzero as written:
    the C has INFINITY (0.0f), where gcc's own warning ('floating constant exceeds range')
    never fires.  Run on the module as parsed (before folding: the user's constants)."""
    out: dict[tuple[str, int, float], Warning_] = {}
    for fn in module.functions:
        for op in fn.walk():
            if not isinstance(op, Const) or op.loc == NOWHERE or \
                    not isinstance(op.result.type, ScalarType) or op.result.type.name != "f32":
                continue
            value = float(op.value)
            if not math.isfinite(value) or value == 0.0:
                continue
            rounded = single(value)
            sign = "-" if value < 0 else ""
            if math.isinf(rounded):
                why = f"{sign}inf in single precision (f32): beyond its range (write " \
                      f"{sign}math.inf"
            elif rounded == 0.0:
                why = f"{sign}0 in single precision (f32): below its smallest value (write " \
                      f"{sign}0.0"
            else:
                continue
            # (-1e300 is the literal and its negation: one warning, at the first column)
            key = (op.loc.file, op.loc.line, abs(value))
            if key not in out or op.loc.col < out[key].loc.col:
                out[key] = Warning_(op.loc, f"the constant {value!r} is {why} if that is meant)")
    return sorted(out.values(), key=lambda w: (w.loc.file, w.loc.line, w.loc.col))
