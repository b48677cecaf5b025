"""Loops the C compiler may vectorise (``ADGEN_SIMD``) and running maxima/minima in reverse
mode (``transforms/extremes.py``): which loops get the pragma, and derivatives that stay
exact (the three-way check) with no tape."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from helpers import module


def c_text(path: str, mode: str) -> str:
    return transpile(path, [mode]).outputs[mode].source.text  # type: ignore[attr-defined]


def pragmas_before(text: str) -> dict[str, str | None]:
    """Source line of each loop (its comment) -> the ADGEN_SIMD clause before it, or None."""
    out: dict[str, str | None] = {}
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.strip().startswith("for ("):
            head = lines[k - 1].strip()
            comment = next(ln.strip() for ln in reversed(lines[:k]) if ln.strip().startswith("/*"))
            m = re.fullmatch(r"ADGEN_SIMD\(omp simd(.*)\)", head)
            out.setdefault(comment, m.group(1).strip() if m else None)
    return out


LOOPS = """
def loops(x: Array[f64], y: Array[f64], c: float) -> float:
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    for i in range(len(x)):
        y[i] = c * x[i] + y[i]
    for i in range(1, len(y)):
        y[i] = y[i - 1] + x[i]
    p = 1.0
    for i in range(len(x)):
        p = p * x[i]
    q = 0.0
    for i in range(len(x)):
        q += math.exp(x[i] - m)
    n = len(x)
    for i in range(1, n):
        y[i - 1] = y[i - 1] + c * x[i]
    for i in range(n):
        y[n - 1 - i] += x[i] * x[n - 1 - i]
    for i in range(1, n):
        y[i] = y[i] * y[i - 1]
    return s + m + p + q + y[len(y) - 1] + y[0]
"""


def test_which_loops_are_marked_for_vectorisation(tmp_path: Path) -> None:
    """Sums and running maxima are reductions; an element-wise update is independent, also
    at a shifted index (``y[i - 1]``, ``y[n - 1 - i]``); a recurrence through y (read at
    another index than the one written) and a product are not marked."""
    loops = pragmas_before(c_text(module(tmp_path, LOOPS), "primal"))
    assert loops == {
        "/* m.py:9: for i in range(len(x)): */": "reduction(+: s)",
        "/* m.py:12: for i in range(1, len(x)): */": "reduction(max: m)",
        "/* m.py:14: for i in range(len(x)): */": "",
        "/* m.py:16: for i in range(1, len(y)): */": None,
        "/* m.py:19: for i in range(len(x)): */": None,
        "/* m.py:22: for i in range(len(x)): */": "reduction(+: q)",
        "/* m.py:25: for i in range(1, n): */": "",
        "/* m.py:27: for i in range(n): */": "",
        "/* m.py:29: for i in range(1, n): */": None,
    }


def test_shifted_indices_are_marked_in_the_adjoint(tmp_path: Path) -> None:
    """In the reverse sweep, the loop of a shifted update (``yb[i - 1]``) and of an
    element-wise one are marked and written upwards (their order does not matter, and the
    vectorised code of a downward loop reverses the lanes of every load and store); the
    reversed recurrence, and a loop that writes ``xb`` at two indices, are neither."""
    lines = c_text(module(tmp_path, LOOPS), "reverse").splitlines()
    last: dict[str, tuple[str, str]] = {}  # the loop's comment -> (line before, header)
    for k, line in enumerate(lines):
        if line.strip().startswith("for ("):
            comment = next(ln.strip() for ln in reversed(lines[:k]) if ln.strip().startswith("/*"))
            last[comment] = (lines[k - 1].strip(), line.strip())
    for at, marked in ((14, True), (25, True), (27, False), (29, False)):
        head, header = next(v for c, v in last.items() if c.startswith(f"/* m.py:{at}: for"))
        assert head.startswith("ADGEN_SIMD(omp simd") == marked, (at, head)
        assert header.endswith("++i) {" if marked else "--i) {"), (at, header)


def test_vectorised_loops_compute_what_cpython_does(tmp_path: Path) -> None:
    """The three-way check with adgen's default flags (the pragmas on) and with -O3 alone."""
    path = module(tmp_path, LOOPS)
    for cflags in (None, ("-O3",)):
        report = adgen.check(path, modes=("forward", "reverse", "vector-reverse"),
                             cflags=cflags)
        assert report.ok, report.table()


START = """
def top(x: Array[f64]) -> float:
    m = x[0]
    for i in range(1, len(x)):
        m = max(m, x[i])
    return m


def least(x: Array[f64], m0: float) -> float:
    m = m0
    for i in range(len(x)):
        m = min(m, x[i] * 2.0)
    return m
"""


def test_a_vectorised_running_extreme_keeps_its_start_first(tmp_path: Path) -> None:
    """The lanes of a vectorised max (min) start from -inf (inf) and the start value is
    taken first after the loop, as in the loop as written: a NaN start stays NaN (OpenMP's
    own combination dropped it: 64.0 for nan), a start equal to the extreme is kept."""
    path = module(tmp_path, START)
    assert "adgen_max_f64(m_start, m)" in c_text(path, "primal")
    m = adgen.load(path, modes=("primal", "reverse"))
    ramp = np.arange(1.0, 9.0)
    for x in (np.concatenate([[math.nan], ramp]), np.concatenate([[9.0], ramp]),
              np.concatenate([[-math.inf], -np.full(8, math.inf)])):
        got, want = m.top(x.copy()), max_loop(x)
        assert got == want or math.isnan(got) and math.isnan(want), (x, got, want)
    assert math.isnan(m.least(ramp.copy(), math.nan))
    assert m.least(ramp.copy(), 2.0) == 2.0 and m.least(ramp.copy(), 5.0) == 2.0
    value, grads = m.least.vjp((ramp.copy(), math.nan), 1.0)
    assert math.isnan(value)


SECOND = """
def run_max(x: Array[f64], start: float) -> float:
    m = start
    for i in range(len(x)):
        m = max(x[i], m)
    return m


def run_min(x: Array[f64], c: float) -> float:
    m = c
    for i in range(len(x)):
        m = min(x[i] * c, m)
    return m
"""


def test_a_running_extreme_carried_second_stays_a_loop(tmp_path: Path) -> None:
    """m = max(x[i], m) keeps x[i] unless m is greater: a NaN element is taken, and dropped
    at the next one; lanes merged after the loop gave 1.0 (or the start) where CPython gives
    nan. That order is not vectorised as a reduction: every result is CPython's."""
    path = module(tmp_path, SECOND)
    assert "m_start" not in c_text(path, "primal")
    m = adgen.load(path, modes=("primal",))
    nan, inf = math.nan, math.inf
    cases = [([1.0, nan], 0.0), ([1.0, 2.0], nan), ([nan], -1.0), ([1.0, 2.0, nan], -inf),
             ([nan, 1.0, 3.0, 2.0, nan, 0.5, 7.0, 1.0, 2.0], 0.5)]
    for name, op in (("run_max", max), ("run_min", min)):
        for x, start in cases:
            want = start
            for v in x:
                want = op(v * (start if name == "run_min" else 1.0), want)
            got = getattr(m, name)(np.array(x), start)
            assert got == want or math.isnan(got) and math.isnan(want), (name, x, got, want)


def max_loop(x: np.ndarray) -> float:
    m = float(x[0])
    for v in x[1:]:
        m = max(m, float(v))
    return m


EXTREMES = """
def top(x: Array[f64], w: float) -> float:
    m = -1e300
    for i in range(len(x)):
        m = max(m, w * x[i] * x[i])
    return m


def bottom_last(x: Array[f64]) -> float:
    m = 1e300
    for i in range(len(x)):
        m = min(x[i] * x[i] - x[i], m)
    return m


def nearest(x: Array[f64], c: Array[f64, 2]) -> float:
    best = 1e300
    for k in range(c.shape[0]):
        d2 = 0.0
        for j in range(len(x)):
            d2 += (x[j] - c[k, j]) ** 2
        best = min(best, d2)
    return best


def lse(x: Array[f64]) -> float:
    a = x[0]
    for i in range(1, len(x)):
        a = max(a, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - a)
    return math.log(s) + a
"""


def test_running_extremes_are_exact_and_untaped(tmp_path: Path) -> None:
    path = module(tmp_path, EXTREMES)
    report = adgen.check(path, modes=("forward", "reverse", "vector-reverse", "hvp"))
    assert report.ok, report.table()
    m = adgen.load(path, modes=("reverse",))
    rng = np.random.default_rng(3)
    x = rng.normal(size=20)
    c = rng.normal(size=(7, 20))
    xb, wb = m.top.grad(x, 0.5)
    i = int(np.argmax(x * x))
    assert m.tape_bytes() == 0
    assert np.array_equal(np.nonzero(xb)[0], [i]) and xb[i] == pytest.approx(x[i])
    assert wb == pytest.approx(x[i] ** 2)
    xb, cb = m.nearest.grad(x, c)
    k = int(np.argmin(((x - c) ** 2).sum(axis=1)))
    assert m.tape_bytes() == 0
    assert np.allclose(xb, 2 * (x - c[k]), rtol=1e-13)
    assert np.allclose(cb[k], -2 * (x - c[k]), rtol=1e-13) and not cb[np.arange(7) != k].any()
    (g,) = m.lse.grad(x)
    assert m.tape_bytes() == 0
    assert np.allclose(g, np.exp(x) / np.exp(x).sum(), rtol=1e-13)
    text = c_text(path, "reverse")
    assert "adgen_push" not in text and "adgen_pop" not in text


def test_ties_and_empty_loops_match_the_sequential_adjoint(tmp_path: Path) -> None:
    """Of equal extremes, the one the primal keeps gets the adjoint, as the loop's own
    reverse gives it: max(m, e) keeps the first (e must be larger), min(e, m) the last (m
    must be smaller); an empty loop passes the adjoint to the initial value."""
    path = module(tmp_path, EXTREMES)
    m = adgen.load(path, modes=("reverse",))
    x = np.array([-0.5, 2.0, -1.5, -2.0, 1.5])  # x*x - x: 0.75 at 0 and 4 -> the last, 4
    (xb,) = m.bottom_last.grad(x)
    assert np.array_equal(np.nonzero(xb)[0], [4]) and xb[4] == pytest.approx(2.0)
    y = np.array([1.0, -3.0, 3.0, 2.0])  # w*y*y: 9 at 1 and 2 -> index 1
    yb, _ = m.top.grad(y, 1.0)
    assert np.array_equal(np.nonzero(yb)[0], [1]) and yb[1] == pytest.approx(-6.0)
    (g,) = m.lse.grad(np.array([0.7]))
    assert g[0] == pytest.approx(1.0)


def test_a_cheap_extreme_stays_vectorised_and_its_index_is_searched_after(tmp_path: Path) -> None:
    """``m = max(m, e)`` with a body of loads and arithmetic: the adjoint keeps the loop a
    ``reduction(max: ...)`` and searches the first iteration whose e is the maximum after
    it, so ties go to the first, an extreme equal to the initial value to the initial value,
    and ranges with other starts and steps (``min`` alike) as the primal has them."""
    path = module(tmp_path, """
    def first_max(x: Array[f64], w: float) -> float:
        m = x[0] * w
        for i in range(1, len(x)):
            m = max(m, x[i] * w)
        return m


    def stepped_min(x: Array[f64]) -> float:
        m = 10.0
        for i in range(len(x) - 1, 0, -2):
            m = min(m, x[i] - 0.5 * x[i - 1])
        return m
    """)
    text = c_text(path, "reverse")
    # (a loop by -2 is not marked: only steps of 1 and -1 are)
    assert "ADGEN_SIMD(omp simd reduction(max: " in text and text.count("while (") == 2, text
    m = adgen.load(path, modes=("reverse",))
    x = np.array([1.0, 3.0, -2.0, 3.0, 0.5])
    xb, wb = m.first_max.grad(x, 2.0)  # 3 * 2 at 1 and 3: the first, 1
    assert np.array_equal(np.nonzero(xb)[0], [1]) and xb[1] == 2.0 and wb == 3.0
    xb, _ = m.first_max.grad(np.array([3.0, 1.0, 3.0]), 2.0)  # the initial value ties: x[0]
    assert np.array_equal(np.nonzero(xb)[0], [0]) and xb[0] == 2.0
    y = np.array([0.0, -1.0, 4.0, -1.0, 0.0, -3.0])  # i = 5, 3, 1: -3, -3, -1 -> 5 and 4
    (yb,) = m.stepped_min.grad(y)
    assert yb.tolist() == [0.0, 0.0, 0.0, 0.0, -0.5, 1.0]
    (yb,) = m.stepped_min.grad(np.array([0.0, -40.0, 0.0]))  # 20 > 10: the initial value
    assert not yb.any()
    assert m.tape_bytes() == 0
    report = adgen.check(path, modes=("forward", "reverse", "vector-reverse", "hvp"))
    assert report.ok, report.table()


def test_extremes_over_negative_indices(tmp_path: Path) -> None:
    """A running extreme whose loop runs over negative indices: the index of the element it
    keeps may be negative (no -1 for "none"), searched after the loop or carried in it."""
    path = module(tmp_path, """
    def cheap(x: Array[f64]) -> float:
        m = -1e300
        for i in range(-2, len(x) - 2):
            m = max(m, x[i + 2] * x[i + 2])
        return m


    def costly(x: Array[f64]) -> float:
        m = -1e300
        for i in range(-2, len(x) - 2):
            m = max(m, math.exp(x[i + 2]))
        return m
    """)
    m = adgen.load(path, modes=("reverse",))
    x = np.array([3.0, -1.0, 0.5, 2.0])  # the extreme at i = -2
    (xb,) = m.cheap.grad(x)
    assert xb.tolist() == [6.0, 0.0, 0.0, 0.0]
    (xb,) = m.costly.grad(x)
    assert xb.tolist() == [math.exp(3.0), 0.0, 0.0, 0.0]


def test_a_value_overwritten_in_every_iteration_is_not_a_sum(tmp_path: Path) -> None:
    """``v = e`` in a loop carries v without adding to it: no reduction clause (the last
    iteration's e is the result, not a sum of them), and the loop stays sequential."""
    path = module(tmp_path, """
    def last(x: Array[f64], w: float) -> float:
        v = 0.0
        for i in range(len(x)):
            v = math.pow(w, x[i])
        return v
    """)
    assert pragmas_before(c_text(path, "primal")) == {
        "/* m.py:9: for i in range(len(x)): */": None}
    report = adgen.check(path, modes=("forward", "reverse"))
    assert report.ok, report.table()
