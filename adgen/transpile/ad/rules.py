"""The derivative table: one entry per primitive.

Most primitives are given by their partial derivatives: ``partials(b, args,
y)`` returns one coefficient per operand (``None`` where the operand has no
derivative), built with ``b``.  The tangent is ``sum(c_i * dx_i)`` and the
adjoint contribution of operand i is ``c_i * yb``: both modes read the same
entry.  Primitives whose derivative is a choice between operands (``min``,
``max``, ``select``) give a ``choice`` instead: the condition and which
operand passes when it holds and when it does not, so their tangent is a
``select`` of tangents and their adjoint a ``select`` of ``yb`` and 0 rather
than a product with 0/1 coefficients.

Conventions at kinks (documented in docs/language.md): ``abs(x)`` and
``fabs(x)`` have derivative +1 at 0; ``min``/``max`` follow the operand
Python returns (the first on ties); ``floor``, ``ceil``, ``//``, comparisons
and logic are piecewise constant (derivative 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..ir.builder import Builder
from ..ir.core import Value
from ..ir.prims import PRIMS
from ..ir.types import VecType, elem_of

Partials = Callable[[Builder, list[Value], Value], list[Value | None]]
#: (condition, operand passed when it holds, operand passed otherwise)
Choice = Callable[[Builder, list[Value]], tuple[Value, int, int]]


@dataclass(frozen=True)
class Rule:
    partials: Partials | None = None
    choice: Choice | None = None


RULES: dict[str, Rule] = {}
#: primitives with no derivative at all (their results are never active)
NON_DIFFERENTIABLE: set[str] = {p.name for p in PRIMS.values() if p.piecewise_constant}


def defpartials(name: str, fn: Partials) -> None:
    if name in RULES:
        raise ValueError(f"rule for {name} registered twice")
    RULES[name] = Rule(partials=fn)


def defchoice(name: str, fn: Choice) -> None:
    if name in RULES:
        raise ValueError(f"rule for {name} registered twice")
    RULES[name] = Rule(choice=fn)


def c(b: Builder, value: float, like: Value) -> Value:
    return b.const(value, elem_of(like.type))


# arithmetic
defpartials("add", lambda b, a, y: [c(b, 1.0, y), c(b, 1.0, y)])
defpartials("sub", lambda b, a, y: [c(b, 1.0, y), c(b, -1.0, y)])
defpartials("neg", lambda b, a, y: [c(b, -1.0, y)])
defpartials("mul", lambda b, a, y: [a[1], a[0]])
defpartials("div", lambda b, a, y: [b.div(c(b, 1.0, y), a[1]), b.neg(b.div(y, a[1]))])
defpartials("mod", lambda b, a, y: [c(b, 1.0, y), b.neg(b.prim("floordiv", a[0], a[1]))])


def _pow_base(b: Builder, a: list[Value], y: Value) -> Value:
    """d/da a^b = b a^(b-1), and 0 where a = 0 and b = 0 (a^0 is 1 everywhere): there the
    formula is 0 * inf = NaN, the derivative of x ** n at x = 0 for an integer n = 0 (and
    the second derivative of x ** 1, whose first is 1 * x^0).  Only there: at b = 0 and
    a != 0 the formula's derivative along b is 1 / a (hvp of x ** y).  The test of a
    constant exponent folds away."""
    zero = c(b, 0.0, y)
    formula = b.mul(a[1], b.prim("pow", a[0], b.sub(a[1], c(b, 1.0, y))))
    both = b.prim("and", b.prim("eq", a[1], zero), b.prim("eq", a[0], zero))
    return b.prim("select", both, zero, formula)


defpartials("pow", lambda b, a, y: [
    _pow_base(b, a, y),
    # a^b log(a), and 0 at a = 0 (its limit for b > 0, as JAX has it): log(0) = -inf times
    # a^b = 0 was NaN, which a tangent adds up with the other operand's term (a tangent of
    # pow(0.0, 2.5) along a alone was NaN); at a < 0 it is NaN (no real derivative)
    b.prim("select", b.prim("eq", a[0], c(b, 0.0, y)), c(b, 0.0, y),
           b.mul(y, b.prim("log", a[0]))),
])

# libm
defpartials("sin", lambda b, a, y: [b.prim("cos", a[0])])
defpartials("cos", lambda b, a, y: [b.neg(b.prim("sin", a[0]))])
defpartials("tan", lambda b, a, y: [b.add(c(b, 1.0, y), b.mul(y, y))])
defpartials("asin", lambda b, a, y: [
    b.div(c(b, 1.0, y), b.prim("sqrt", b.sub(c(b, 1.0, y), b.mul(a[0], a[0]))))])
defpartials("acos", lambda b, a, y: [
    b.neg(b.div(c(b, 1.0, y), b.prim("sqrt", b.sub(c(b, 1.0, y), b.mul(a[0], a[0])))))])
defpartials("atan", lambda b, a, y: [
    b.div(c(b, 1.0, y), b.add(c(b, 1.0, y), b.mul(a[0], a[0])))])


def _atan2(b: Builder, a: list[Value], y: Value) -> list[Value | None]:
    r2 = b.add(b.mul(a[0], a[0]), b.mul(a[1], a[1]))
    return [b.div(a[1], r2), b.neg(b.div(a[0], r2))]


defpartials("atan2", _atan2)
defpartials("sinh", lambda b, a, y: [b.prim("cosh", a[0])])
defpartials("cosh", lambda b, a, y: [b.prim("sinh", a[0])])
defpartials("tanh", lambda b, a, y: [b.sub(c(b, 1.0, y), b.mul(y, y))])
defpartials("exp", lambda b, a, y: [y])
defpartials("expm1", lambda b, a, y: [b.add(y, c(b, 1.0, y))])
defpartials("log", lambda b, a, y: [b.div(c(b, 1.0, y), a[0])])
defpartials("log1p", lambda b, a, y: [b.div(c(b, 1.0, y), b.add(c(b, 1.0, y), a[0]))])
defpartials("log2", lambda b, a, y: [b.div(c(b, 1.0 / math.log(2.0), y), a[0])])
defpartials("log10", lambda b, a, y: [b.div(c(b, 1.0 / math.log(10.0), y), a[0])])
defpartials("sqrt", lambda b, a, y: [b.div(c(b, 0.5, y), y)])
defpartials("cbrt", lambda b, a, y: [b.div(c(b, 1.0 / 3.0, y), b.mul(y, y))])
defpartials("hypot", lambda b, a, y: [b.div(a[0], y), b.div(a[1], y)])
defpartials("erf", lambda b, a, y: [
    b.mul(c(b, 2.0 / math.sqrt(math.pi), y), b.prim("exp", b.neg(b.mul(a[0], a[0]))))])
defpartials("erfc", lambda b, a, y: [
    b.mul(c(b, -2.0 / math.sqrt(math.pi), y), b.prim("exp", b.neg(b.mul(a[0], a[0]))))])


def _sign(b: Builder, x: Value, y: Value) -> Value:
    """+1 for x >= 0 (also at 0), -1 otherwise."""
    ge = b.prim("ge", x, c(b, 0.0, x))
    return b.prim("select", ge, c(b, 1.0, y), c(b, -1.0, y))


defpartials("fabs", lambda b, a, y: [_sign(b, a[0], y)])
defpartials("abs", lambda b, a, y: [_sign(b, a[0], y)])
defpartials("copysign", lambda b, a, y: [
    b.mul(b.prim("copysign", c(b, 1.0, y), a[0]), b.prim("copysign", c(b, 1.0, y), a[1])), None])

# choices between operands: the derivative of the operand Python returns
defchoice("min", lambda b, a: (b.prim("lt", a[1], a[0]), 1, 0))
defchoice("max", lambda b, a: (b.prim("gt", a[1], a[0]), 1, 0))
defchoice("select", lambda b, a: (a[0], 1, 2))


def tangent(b: Builder, prim: str, args: list[Value], result: Value,
            tangents: list[Value | None]) -> Value:
    """The tangent of ``prim(args) = result`` given operand tangents (None: zero)."""
    rule = RULES[prim]
    if rule.choice is not None:
        cond, when, otherwise = rule.choice(b, args)
        like = next(t for t in tangents if t is not None)
        a = tangents[when] if tangents[when] is not None else b.const(0.0, like.type)
        z = tangents[otherwise] if tangents[otherwise] is not None else b.const(0.0, like.type)
        return b.prim("select", cond, a, z)
    assert rule.partials is not None
    coefficients = rule.partials(b, args, result)
    terms = [(cf, t) for cf, t in zip(coefficients, tangents, strict=True)
             if cf is not None and t is not None]
    if not terms:  # only operands without a derivative are active, e.g. copysign(1.0, x)
        vector = any(t is not None and isinstance(t.type, VecType) for t in tangents)
        elem = elem_of(result.type)
        return b.const(0.0, VecType(elem) if vector else elem)
    return linear_combination(b, terms)


def adjoint(b: Builder, prim: str, args: list[Value], result: Value, yb: Value,
            wanted: list[bool], choice: tuple[Value, int, int] | None = None
            ) -> list[Value | None]:
    """The contribution of ``yb`` (the adjoint of ``prim(args) = result``) to each operand's
    adjoint, for the operands ``wanted``; None where there is none.  An operand that appears
    twice gets the sum (``x * x`` gives ``2x * yb`` once).  ``choice``: the rule's choice, if
    the caller built it already (reverse mode builds it in the forward sweep)."""
    rule = RULES[prim]
    out: list[Value | None] = [None] * len(args)
    if rule.choice is not None:
        cond, when, otherwise = choice or rule.choice(b, args)
        zero = b.const(0.0, yb.type)
        picks = {when: b.prim("select", cond, yb, zero), otherwise: b.prim("select", cond, zero, yb)}
        for k, v in picks.items():
            if wanted[k]:
                out[k] = v
        return out
    assert rule.partials is not None
    coefficients = rule.partials(b, args, result)
    first: dict[Value, int] = {}
    coef: list[Value | None] = [None] * len(args)
    for k, (a, cf) in enumerate(zip(args, coefficients, strict=True)):
        if cf is None or not wanted[k]:
            continue
        j = first.setdefault(a, k)
        prev = coef[j]
        coef[j] = cf if prev is None else (
            b.mul(b.const(2.0, elem_of(cf.type)), cf) if prev is cf else b.add(prev, cf))
    for k, cf in enumerate(coef):
        if cf is not None:
            out[k] = b.mul(cf, yb)
    return out


def linear_combination(b: Builder, terms: list[tuple[Value, Value]]) -> Value:
    """``sum(coef * t)``, merging repeated tangents (``x*x`` gives ``2x * xd``)."""
    merged: list[tuple[Value, Value]] = []
    for coef, t in terms:
        for k, (c0, t0) in enumerate(merged):
            if t0 is t:
                merged[k] = (b.add(c0, coef) if c0 is not coef else
                             b.mul(b.const(2.0, elem_of(coef.type)), coef), t)
                break
        else:
            merged.append((coef, t))
    total: Value | None = None
    for coef, t in merged:
        term = b.mul(coef, t)
        total = term if total is None else b.add(total, term)
    assert total is not None
    return total


