"""Second order: ``--mode hvp``, the tangent of the adjoint (``f_b_d``).

Every example is also checked in hvp mode by tests/test_examples.py (against
differences of the gradient, and the symmetry <u, H v> = <v, H u>), and every
random program by tests/test_random_programs.py (``adgen.check`` runs hvp by
default).  Here: Hessians against closed forms, the API around ``hvp``, the
tape of ``f_b_d`` (tangents are pushed beside values), and the C signature.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from helpers import ROOT


def write(tmp_path: Path, text: str, name: str = "m.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def rosenbrock_hessian(x: np.ndarray) -> np.ndarray:
    h = np.zeros((len(x), len(x)))
    for i in range(len(x) - 1):
        h[i, i] += 2.0 - 400.0 * (x[i + 1] - x[i] ** 2) + 800.0 * x[i] ** 2
        h[i, i + 1] -= 400.0 * x[i]
        h[i + 1, i] -= 400.0 * x[i]
        h[i + 1, i + 1] += 200.0
    return h


def test_rosenbrock_hessian_is_the_closed_form() -> None:
    m = adgen.load(str(ROOT / "examples" / "rosenbrock.py"), modes=("hvp",))
    x = np.array([1.0, 2.0, 3.0, -0.5, 0.25])
    h = adgen.hessian(m.rosenbrock, x)
    np.testing.assert_allclose(h, rosenbrock_hessian(x), rtol=1e-13, atol=1e-12)
    assert np.array_equal(h, h.T)
    v = np.linspace(-1.0, 1.0, len(x))
    (hv,) = m.rosenbrock.hvp((x,), (v,))
    np.testing.assert_allclose(hv, rosenbrock_hessian(x) @ v, rtol=1e-13, atol=1e-12)


def test_hessian_through_a_loop_a_branch_and_a_call(tmp_path: Path) -> None:
    # f(x, a) = sum_i w(x[i]) * a with w(t) = t**3 where t > 0, else sin(t): a loop, a branch,
    # a call (w gets its own w_fwd_d / w_bwd_d halves) and a scalar beside an array
    path = write(tmp_path, """
        import math

        from adgen import Array, f64


        def w(t: float) -> float:
            if t > 0.0:
                return t * t * t
            return math.sin(t)


        def f(x: Array[f64], a: float) -> float:
            s = 0.0
            for i in range(len(x)):
                s += w(x[i]) * a
            return s
        """)
    m = adgen.load(path, modes=("hvp",))
    x, a = np.array([0.5, -0.3, 1.5]), 0.7
    h = m.f.hessian(x, a)
    w2 = np.where(x > 0, 6.0 * x, -np.sin(x))   # w''
    w1 = np.where(x > 0, 3.0 * x * x, np.cos(x))  # w'
    want = np.zeros((4, 4))
    want[:3, :3] = np.diag(w2 * a)
    want[:3, 3] = want[3, :3] = w1
    np.testing.assert_allclose(h, want, rtol=1e-13, atol=1e-14)
    report = adgen.check(path, modes=("hvp",))
    assert report.ok, report.table()
    assert {r.check for r in report.rows} >= {"hvp vs differences of the gradient",
                                             "hvp symmetry <u, Hv> = <v, Hu>"}


def test_hvp_weights_tuple_results_and_written_arrays(tmp_path: Path) -> None:
    # H of ybar . f: with two results, hvp(ybar=(1, 0)) is the Hessian of the first alone
    path = write(tmp_path, """
        from adgen import Array, f64


        def g(x: float, y: float, out: Array[f64]) -> tuple[float, float]:
            out[0] = x * x * y
            return x * y * y, x * x
        """)
    m = adgen.load(path, modes=("hvp",))
    x, y = 0.5, 2.0
    v = (1.0, 0.0, None)
    out = np.zeros(1)
    hx, hy, hout = m.g.hvp((x, y, out), v, (1.0, 0.0))  # x y**2: H v = (0, 2 y)
    assert (hx, hy) == (0.0, 2.0 * y)
    assert np.array_equal(hout, [0.0])  # out's value on entry is overwritten: no second order
    hx, hy, _ = m.g.hvp((x, y, out), v, (0.0, 1.0))  # x**2: H v = (2, 0)
    assert (hx, hy) == (2.0, 0.0)
    hx, hy, _ = m.g.hvp((x, y, out), v, None, out_bars={"out": np.array([1.0])})  # x**2 y
    assert (hx, hy) == (2.0 * y, 2.0 * x)
    assert out[0] == x * x * y  # written in place, as by the primal


def test_hvp_tape_carries_tangents(tmp_path: Path) -> None:
    # r = r * x over n trips: f_b saves r (8 bytes a trip), f_b_d saves r and its tangent
    path = write(tmp_path, """
        def power(x: float, n: int) -> float:
            r = 1.0
            for i in range(n):
                r = r * x
            return r
        """)
    m = adgen.load(path, modes=("reverse", "hvp"))
    n = 50
    m.power.grad(1.01, n)
    adjoint = m.tape_bytes("reverse")
    h, none = m.power.hvp((1.01, n), (1.0, None))
    assert none is None
    assert abs(h - n * (n - 1) * 1.01 ** (n - 2)) < 1e-11 * abs(h)
    assert m.tape_bytes("hvp") == 2 * adjoint > 0


def test_signature_and_header(tmp_path: Path) -> None:
    t = transpile(str(ROOT / "examples" / "rosenbrock.py"), ["hvp"])
    emitted = t.outputs["hvp"]
    assert emitted.source.name == "rosenbrock_b_d.c"
    proto = emitted.signatures["rosenbrock_b_d"].prototype()
    assert proto == ("double rosenbrock_b_d(const double *x, const double *xd, double *xb, "
                     "double *xbd, int64_t x_shape0, double retb)")
    assert "xbd: incremented by the tangent of xb" in emitted.header.text


def test_hvp_needs_the_mode() -> None:
    m = adgen.load(str(ROOT / "examples" / "rosenbrock.py"), modes=("reverse",))
    with pytest.raises(RuntimeError, match="modes including 'hvp'"):
        m.rosenbrock.hvp((np.ones(3),), (np.ones(3),))


def test_vector_hvp_and_the_hessian_in_one_sweep() -> None:
    # f_b_dv: n directions in one call; hessian() uses it when the module has vector-hvp
    m = adgen.load(str(ROOT / "examples" / "rosenbrock.py"), modes=("hvp", "vector-hvp"))
    x = np.array([1.0, 2.0, 3.0, -0.5, 0.25])
    V = np.random.default_rng(3).standard_normal((len(x), 3))
    (hv,) = m.rosenbrock.hvp_vec((x,), (V,))
    assert hv.shape == V.shape
    for k in range(3):
        (one,) = m.rosenbrock.hvp((x,), (np.ascontiguousarray(V[:, k]),))
        assert np.array_equal(hv[:, k], one)
    np.testing.assert_allclose(m.rosenbrock.hessian(x), rosenbrock_hessian(x), rtol=1e-13,
                               atol=1e-12)
    t = m.transpiled.outputs["vector-hvp"]
    assert t.signatures["rosenbrock_b_dv"].prototype() == (
        "double rosenbrock_b_dv(const double *x, const double *xd, double *xb, double *xbd, "
        "int64_t x_shape0, double retb, int64_t nbdirs)")


def test_the_hessian_checks_its_arguments_as_a_call_does() -> None:
    """hessian() indexed the arguments before counting them (IndexError, or a message about
    tangents), computed at copies of arrays a call refuses (strided), and with vector-hvp
    failed on an empty array (range() arg 3 must not be zero)."""
    for modes in (("vector-hvp",), ("hvp",)):
        m = adgen.load(str(ROOT / "examples" / "rosenbrock.py"), modes=modes)
        for args in ((), (np.ones(3), np.ones(3))):
            with pytest.raises(TypeError, match=r"^rosenbrock\(\) takes 1 argument\(s\) \(x\), "
                                                rf"got {len(args)}$"):
                m.rosenbrock.hessian(*args)
        with pytest.raises(ValueError, match="argument 'x' must be C-contiguous"):
            m.rosenbrock.hessian(np.arange(8.0)[::2])
        assert m.rosenbrock.hessian(np.zeros(0)).shape == (0, 0)
    # adgen.check(args=...) checks the arrays as given, not copies of them
    with pytest.raises(ValueError, match=r"^check: args\['rosenbrock'\]: argument 'x' must be "
                                         "C-contiguous"):
        adgen.check(str(ROOT / "examples" / "rosenbrock.py"), modes=("forward",),
                    args={"rosenbrock": (np.arange(8.0)[::2],)})


def test_the_tangent_of_an_input_adjoint_is_added_to_where_the_hessian_adds_zero(
        tmp_path: Path) -> None:
    # f is linear in x: xb gets sb added, and its tangent xbd nothing. f_b_d stored
    # xbd[i] = 0.0, losing what the caller had there ("input adjoints and their tangents are
    # added to"); now xbd is left as it is (a const pointer, so said in the header)
    path = write(tmp_path, """
        from adgen import Array, f64


        def f(x: Array[f64], c: float) -> float:
            s = 0.0
            for i in range(len(x)):
                s += x[i]
            return s + c * c
        """)
    m = adgen.load(path, modes=("hvp",))
    x, xd, xb, xbd = np.array([1.0, 2.0, 3.0]), np.ones(3), np.full(3, 10.0), np.full(3, 7.0)
    cb, cbd = m.ffi.new("double *", 0.0), m.ffi.new("double *", 5.0)

    def ptr(a: np.ndarray) -> Any:
        return m.ffi.cast("double *", a.ctypes.data)

    value = m.lib.f_b_d(ptr(x), ptr(xd), ptr(xb), ptr(xbd), 3, 2.0, 1.0, cb, cbd, 1.0)
    assert value == 10.0 and list(xb) == [11.0] * 3 and list(xbd) == [7.0] * 3
    assert cb[0] == 4.0 and cbd[0] == 5.0 + 2.0  # d/dc of 2 c, direction 1, added to 5
    header = m.transpiled.outputs["hvp"].header.text
    assert "xbd: incremented by the tangent of xb, the adjoint of x: (H v) weighted by the " \
           "output adjoints, which is zero here (left as it is)" in header
    # a Hessian that adds to xbd: the same function with x[i] * x[i]
    m2 = adgen.load(write(tmp_path, Path(path).read_text().replace("s += x[i]",
                                                                   "s += x[i] * x[i]"),
                          "m2.py"), modes=("hvp",))
    xb, xbd = np.zeros(3), np.full(3, 7.0)
    m2.lib.f_b_d(ptr(x), ptr(xd), ptr(xb), ptr(xbd), 3, 2.0, 1.0, cb, cbd, 1.0)
    assert list(xbd) == [9.0] * 3  # 7 + 2 * xd
