"""The derivative table: complete, and every rule right in every mode (tangent vs finite
differences, adjoint vs tangent by the dot-product test, vector modes vs scalar ones, the
second order of hvp against differences of the gradient)."""

from __future__ import annotations

from pathlib import Path

import pytest

import adgen
from adgen.api import transpile
from adgen.transpile.ad.rules import NON_DIFFERENTIABLE, RULES
from adgen.transpile.ir.prims import INTRINSICS, PRIMS


def test_every_primitive_has_a_rule_or_is_non_differentiable() -> None:
    for name, p in PRIMS.items():
        assert (name in RULES) != (name in NON_DIFFERENTIABLE), name
        assert p.c_op is not None or p.c_func is not None, f"{name} has no C spelling"


def test_every_intrinsic_spelling_names_a_primitive() -> None:
    for key, prim in INTRINSICS.items():
        assert prim in PRIMS, key


# expression of x (and y), evaluated where it is smooth (x, y in [0.5, 1.5])
UNARY = {
    "sin": "math.sin(x)", "cos": "math.cos(x)", "tan": "math.tan(x)", "asin": "math.asin(x - 0.9)",
    "acos": "math.acos(x - 0.9)", "atan": "math.atan(x)", "sinh": "math.sinh(x)",
    "cosh": "math.cosh(x)", "tanh": "math.tanh(x)", "exp": "math.exp(x)", "expm1": "math.expm1(x)",
    "log": "math.log(x)", "log1p": "math.log1p(x)", "log2": "math.log2(x)",
    "log10": "math.log10(x)", "sqrt": "math.sqrt(x)", "cbrt": "math.cbrt(x)",
    "fabs": "math.fabs(x - 2.0)", "abs": "abs(x - 2.0)", "erf": "math.erf(x)",
    "erfc": "math.erfc(x)", "neg": "-x", "floor": "np.floor(x) * x", "ceil": "np.ceil(x) * x",
    "np_arcsin": "np.arcsin(x - 0.9)", "pow_const": "x ** 2.5", "pow_int": "x ** 3 + x ** -2",
}
BINARY = {
    "add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y", "pow": "x ** y",
    "math_pow": "math.pow(x, y)", "atan2": "math.atan2(y, x)", "hypot": "math.hypot(x, y)",
    "min": "min(x, 2.0 * y)", "max": "max(x, 2.0 * y)", "copysign": "math.copysign(x, y - 1.0)",
    "mod": "(3.0 * x) % y", "floordiv": "((3.0 * x) // y) * x", "select": "x if x < y else y * y",
}


def module_text() -> str:
    lines = ["import math", "import numpy as np", ""]
    for name, expr in UNARY.items():
        lines += [f"def u_{name}(x: float) -> float:", f"    return {expr}", ""]
    for name, expr in BINARY.items():
        lines += [f"def b_{name}(x: float, y: float) -> float:", f"    return {expr}", ""]
    return "\n".join(lines)


def test_table_covers_every_differentiable_primitive() -> None:
    text = module_text()
    for name in RULES:
        assert name in UNARY or name in BINARY or f"{name}(" in text, name


@pytest.mark.parametrize("seed", [0, 1])
def test_each_rule_against_finite_differences(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "intrinsics.py"
    path.write_text(module_text())
    report = adgen.check(str(path), seed=seed)
    # primal, tangent, vector tangent, adjoint, vector adjoint, hvp and its symmetry
    assert len(report.rows) == 7 * (len(UNARY) + len(BINARY))
    assert report.ok, "\n" + report.table()


def test_conventions_at_kinks_agree_in_both_modes(tmp_path: Path) -> None:
    """abs/fabs: +1 at 0; min/max: the operand Python returns (the first on ties)."""
    path = tmp_path / "kinks.py"
    path.write_text("import math\n\n\ndef f(x: float, y: float) -> float:\n"
                    "    return 3.0 * abs(x) + 5.0 * math.fabs(x) + 7.0 * min(x, y) + 11.0 * max(y, x)\n")
    m = adgen.load(str(path), modes=("forward", "reverse"))
    _, grads = m.f.vjp((0.0, 0.0), 1.0)
    assert grads == (3.0 + 5.0 + 7.0, 11.0)
    assert m.f.jvp((0.0, 0.0), (1.0, 0.0))[1] == 15.0
    assert m.f.jvp((0.0, 0.0), (0.0, 1.0))[1] == 11.0


def test_a_power_of_zero_has_no_nan_in_its_tangent(tmp_path: Path) -> None:
    """d/db a^b = a^b log(a) is 0 at a = 0 (its limit for b > 0), not 0 * -inf = NaN: the
    tangent along a alone, which adds the b term times a zero tangent, was NaN, while the
    gradient's a entry was right (forward and reverse mode disagreed)."""
    path = tmp_path / "pw.py"
    path.write_text("def pw(a: float, b: float) -> float:\n    return a ** b + 2.0 * a\n")
    m = adgen.load(str(path), modes=("forward", "vector-forward", "reverse"))
    assert m.pw.jvp((0.0, 2.5), (1.0, 0.0)) == (0.0, 2.0)
    assert m.pw.grad(0.0, 2.5) == (2.0, 0.0)
    _, tangents = m.pw.jvp_vec((0.0, 2.5), ([1.0, 0.0], [0.0, 1.0]))
    assert list(tangents) == [2.0, 0.0]
    value, tangent = m.pw.jvp((2.0, 2.5), (1.0, 0.5))  # a > 0: as before
    assert tangent == pytest.approx(2.5 * 2.0 ** 1.5 + 0.5 * 2.0 ** 2.5 * 0.6931471805599453 + 2.0)


def test_a_power_with_a_zero_exponent_has_a_zero_derivative_at_zero(tmp_path: Path) -> None:
    """d/da a^b = b a^(b-1) is 0 at a = 0 and b = 0 (a^0 is 1 everywhere), not 0 * 0^-1 =
    0 * inf = NaN: x ** n of an integer n = 0 at x = 0 had a NaN derivative in every mode,
    and so had the second derivative of x ** 1 (its first is 1 * x^0), and adgen.check
    failed there."""
    path = tmp_path / "pz.py"
    path.write_text("import math\n\n\ndef pwi(x: float, n: int) -> float:\n    return x ** n\n\n\n"
                    "def pf(x: float) -> float:\n    return math.pow(x, 1.0)\n\n\n"
                    "def pxy(x: float, y: float) -> float:\n    return x ** y\n")
    m = adgen.load(str(path), modes=("forward", "vector-forward", "reverse", "hvp"))
    assert m.pwi.jvp((0.0, 0), (1.0, None)) == (1.0, 0.0)
    assert list(m.pwi.jvp_vec((0.0, 0), ([1.0, 2.0], None))[1]) == [0.0, 0.0]
    assert m.pwi.vjp((0.0, 0), 1.0) == (1.0, (0.0, None))
    assert m.pwi.hvp((0.0, 1), (1.0, None)) == (0.0, None)
    assert m.pf.hvp((0.0,), (1.0,)) == (0.0,)
    assert m.pwi.jvp((2.0, 3), (1.0, None)) == (8.0, 12.0)  # (elsewhere as before)
    # only at a = 0: at b = 0 and a != 0 the partial's derivative along b is 1 / a
    assert m.pxy.hvp((2.0, 0.0), (0.0, 1.0))[0] == pytest.approx(0.5)
    for args in ({"pwi": (0.0, 0), "pf": (0.0,), "pxy": (2.0, 0.0)},
                 {"pwi": (0.0, 1), "pf": (0.5,), "pxy": (0.5, 1.0)}):
        report = adgen.check(str(path), modes=("forward", "reverse", "hvp"), args=args)
        assert report.ok, report.table()
    # a constant exponent's test is folded away (in f32: of an exponent single precision
    # holds exactly), in first order
    for precision in ("f64", "f32"):
        text = transpile(str(path), ["forward"], precision=precision).outputs[
            "forward"].source.text  # type: ignore[attr-defined]
        assert "false ?" not in text and "1.0f == 0.0f" not in text, text


def test_f32_comparisons_of_constants_fold_only_where_exact(tmp_path: Path) -> None:
    """A comparison of f32 constants folds only when single precision holds them exactly:
    1.0000000596046448 lies halfway between two floats, single() of the double gives 1.0
    and gcc's rounding of the literal 1.0000000596046448f the float above, so a folded
    A == 1.0 was true where the C compares false."""
    path = tmp_path / "mid.py"
    path.write_text("A = 1.0000000596046448\n\n\ndef fa(x: float) -> float:\n"
                    "    if A == 1.0:\n        return x\n    return 2.0 * x\n")
    assert adgen.load(str(path), modes=(), precision="f32").fa(1.0) == 2.0
