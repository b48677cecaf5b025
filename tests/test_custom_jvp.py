"""Custom tangents: ``@custom_jvp(g)`` makes forward mode call ``g`` instead of
differentiating the body (the rejected forms are in tests/test_diagnostics.py)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen

MODULE = '''
import math

from adgen import Array, custom_jvp, f64


def softplus_tangent(x: f64, xd: f64, k: int) -> tuple[f64, f64]:
    """log(1 + exp(x)) without overflow, and its tangent sigmoid(x) xd"""
    y = max(x, 0.0) + math.log1p(math.exp(-abs(x)))
    return y * k, k * xd / (1.0 + math.exp(-x))


@custom_jvp(softplus_tangent)
def softplus(x: f64, k: int) -> f64:
    return math.log(1.0 + math.exp(x)) * k


def norm_tangent(a: Array[f64], ad: Array[f64], s: f64, sd: f64) -> tuple[f64, f64]:
    t = 0.0
    td = 0.0
    for i in range(len(a)):
        t += a[i] * a[i]
        td += 2.0 * a[i] * ad[i]
    return s * math.sqrt(t), sd * math.sqrt(t) + s * td / (2.0 * math.sqrt(t))


@custom_jvp(norm_tangent)
def norm(a: Array[f64], s: f64) -> f64:
    t = 0.0
    for i in range(len(a)):
        t += a[i] * a[i]
    return s * math.sqrt(t)


def model(w: Array[f64], x: f64) -> f64:
    return softplus(x * w[0], 2) + norm(w, x) * softplus(w[1], 1)
'''


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def test_the_custom_tangent_is_called_and_checked(tmp_path: Path) -> None:
    path = write(tmp_path, MODULE)
    report = adgen.check(path)
    assert report.ok, report.table()
    # the tangents are the user's; the adjoints are the bodies' (checked against them)
    assert {r.function for r in report.rows} >= {"softplus", "norm", "model"}
    m = adgen.load(path, modes=("forward", "reverse"))
    text = m.transpiled.outputs["forward"].source.text
    body = text[text.index("double softplus_d("):]
    assert "softplus_tangent(x, xd, k, &return_, &returnd);" in body[:body.index("\n}\n")]
    body = text[text.index("double norm_d("):]
    assert "norm_tangent(a, a_shape0, ad, a_shape0, s, sd, " in body[:body.index("\n}\n")]
    # where exp(x) overflows, the body is inf but the custom tangent's value is finite
    y, yd = m.softplus.jvp((800.0, 1), (1.0, None))
    assert (y, yd) == (800.0, 1.0)
    assert math.isinf(m.softplus(800.0, 1))
    # a tangent of norm with respect to s only: a zero direction for a is passed
    w = np.array([0.3, -1.2, 2.0])
    _, td = m.norm.jvp((w, 0.5), (None, 1.0))
    assert td == pytest.approx(np.linalg.norm(w), rel=1e-15)


def test_a_wrong_custom_tangent_fails_the_check(tmp_path: Path) -> None:
    path = write(tmp_path, """
        from adgen import custom_jvp


        def cube_tangent(x: float, xd: float) -> tuple[float, float]:
            return x * x * x, 2.0 * x * x * xd  # should be 3 x**2


        @custom_jvp(cube_tangent)
        def cube(x: float) -> float:
            return x * x * x
        """)
    report = adgen.check(path, modes=("forward", "reverse"))
    rows = {r.check: r for r in report.rows if r.function == "cube"}
    assert not rows["tangent vs finite differences"].ok
    assert not rows["adjoint vs tangent (dot product)"].ok  # the adjoint is the body's


def test_the_check_does_not_compare_a_custom_tangent_s_value_with_the_body_s(
        tmp_path: Path) -> None:
    """f_d returns g's value, which a stable formula computes where the body does not (at
    x = -40, log(1 + exp(x)) rounds to 0): neither it nor its caller's value is compared
    with the primal's (the check of returned values failed them, rel. error 4e+282)."""
    path = tmp_path / "sp.py"
    path.write_text(
        "import math\n\nfrom adgen import custom_jvp, f64\n\n\n"
        "def softplus_tangent(x: f64, xd: f64, k: int) -> tuple[f64, f64]:\n"
        "    y = max(x, 0.0) + math.log1p(math.exp(-abs(x)))\n"
        "    return y * k, k * xd / (1.0 + math.exp(-x))\n\n\n"
        "@custom_jvp(softplus_tangent)\n"
        "def softplus(x: f64, k: int) -> f64:\n"
        "    return math.log(1.0 + math.exp(x)) * k\n\n\n"
        "def caller(x: f64) -> f64:\n    return softplus(x, 2) * x\n")
    report = adgen.check(str(path), modes=("forward",),
                         args={"softplus": (-40.0, 1), "caller": (-40.0,)})
    assert report.ok, report.table()


def test_a_custom_tangent_in_single_precision_is_checked_to_its_tolerances(
        tmp_path: Path) -> None:
    """An f64 function whose custom tangent computes in f32 has f32's digits in its
    derivatives, and so has its caller: their rows use the f32 tolerances (the dot-product
    test failed at 4e-8 for 1e-12); an f64 function of the module keeps the f64 ones."""
    from adgen.validate import TOLERANCE, TOLERANCE_F32

    path = write(tmp_path, """
        import math

        from adgen import custom_jvp, f32, f64


        def sp_tangent(x: f64, xd: f64) -> tuple[f64, f64]:
            y: f32 = math.log(1.0 + math.exp(x))
            s: f32 = 1.0 / (1.0 + math.exp(-x))
            return y, s * xd


        @custom_jvp(sp_tangent)
        def sp(x: f64) -> f64:
            return math.log(1.0 + math.exp(x))


        def caller(x: f64) -> f64:
            return sp(x) * x


        def plain(x: f64) -> f64:
            return math.exp(x) * x
        """)
    report = adgen.check(path, modes=("forward", "reverse"))
    assert report.ok, report.table()
    for row in report.rows:
        if row.check == "adjoint vs tangent (dot product)":
            tol = TOLERANCE if row.function == "plain" else TOLERANCE_F32
            assert row.tolerance == tol["reverse"], row
