"""Joint sweeps (``ad/joint.py``): the adjoints of ``f_b`` known early run in its forward
sweep.  Which calls become ``g_b`` calls and which loops are reversed iteration by
iteration in the forward sweep (nothing taped), the three-way check of both, what stays
split, the tape sizes reported, and random loops around calls (``loops_of_calls``: about
two in five go joint; ``ADGEN_JOINT_EXAMPLES`` sets how many are drawn, 25 by default)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import adgen
from adgen.api import transpile
from helpers import ROOT, functions_of, module

#: a determinant by expansion in minors: a loop around a recursive call, whose sum is returned
DET = str(ROOT / "benchmarks" / "gradbench" / "det.py")

JOINT = """
def bump(x: Array[f64], t: float, k: int) -> float:
    return math.sin(t * x[k]) + t * t


def mixture(x: Array[f64], w: Array[f64]) -> float:
    s = 1.0
    for k in range(len(x)):
        t = math.exp(x[k] * 0.3)
        s += w[k] * bump(x, t, k)
    return s


def outer(x: Array[f64], w: Array[f64]) -> float:
    return mixture(x, w) + bump(x, 0.5, 0)


def mean_bump(x: Array[f64]) -> float:
    s = 0.0
    for k in range(len(x)):
        s += bump(x, x[k] * 0.5, k)
    return s / len(x)


def twice(x: Array[f64]) -> float:
    return 2.0 * bump(x, 0.25, 1)


def shared(x: Array[f64], t: float) -> float:
    u = t * t
    s = 0.0
    for k in range(len(x)):
        s += bump(x, u, k) * 0.5
    return s


def scaled(x: Array[f64], t: float) -> float:
    return t * x[0]


def two_ifs(x: Array[f64], t: float) -> float:
    s = 0.0
    for k in range(len(x)):
        c = x[k]
        w = scaled(x, t)
        if c > 0.0:
            w = w * t
        if c < 0.5:
            s = s + w
        else:
            s = s - w
    return s


def written_first(x: Array[f64], y: Array[f64]) -> float:
    for k in range(len(x)):
        y[k] = 2.0 * x[k]
    s = 0.0
    for k in range(len(x)):
        s += bump(y, 0.5, k)
    return s


def by_sign(x: Array[f64]) -> float:
    s = 0.0
    for k in range(len(x)):
        if x[k] > 0.0:
            s = s + x[k] * x[k]
        else:
            s = s - math.sin(x[k])
    return s
"""

SPLIT = """
def g(x: Array[f64], k: int) -> float:
    return x[k] * x[(k + 1) % len(x)]


def pairs(x: Array[f64]) -> float:
    s = 0.0
    for k in range(len(x)):
        s += g(x, k) * g(x, (k + 2) % len(x))
    return s


def written(x: Array[f64], y: Array[f64]) -> float:
    s = 0.0
    for k in range(len(x)):
        y[k] = 2.0 * x[k]
        s += g(y, k)
    return s


def squared(x: Array[f64]) -> float:
    u = g(x, 0)
    return u * u
"""


def _source(path: str) -> str:
    return transpile(path, ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]


def _body(text: str, name: str) -> str:
    return functions_of(text)[name]


def _det_args(ell: int, rng: np.random.Generator) -> list[object]:
    return [rng.uniform(-1, 1, ell * ell), ell, np.zeros(ell + 1, np.int64),
            np.zeros(ell + 1, np.int64)]


def test_which_adjoints_run_in_the_forward_sweep(tmp_path: Path) -> None:
    # no split halves: every call of an adjoint is a g_b call in a forward sweep
    for text in (_source(DET), _source(module(tmp_path, JOINT, "joint"))):
        assert "_fwd(" not in text and "_bwd(" not in text and "adgen_push" not in text
    text = _source(DET)
    det_minor = _body(text, "det_of_minor_b")
    # the minor's adjoint before the recursion, the row element's after it, in the loop
    assert re.search(r"det_sb = m0j \* retb;.*det_of_minor_b\(a, ab, .*det_sb\);"
                     r".*m0jb = det_s \* retb;.*ab\[\w+\] \+= m0jb;", det_minor, re.S)
    assert "det_of_minor_b(a, ab, a_shape0, ell, ell, r, r_shape0, c, c_shape0, retb)" in \
        _body(text, "det_b")
    text = _source(module(tmp_path, JOINT, "joint"))
    # bump_b returns the adjoint of t, a value of the iteration
    assert re.search(r"double tb = 0\.0;\s*double \w+ = bump_b\(x, xb, x_shape0, t, &tb, ",
                     _body(text, "mixture_b"))
    assert "mixture_b(x, xb, x_shape0, w, wb, w_shape0, retb)" in _body(text, "outer_b")
    # adjoints computed from retb alone are computed before the loop or the call
    assert re.search(r"double sb = 1\.0 / tmp \* retb;\s*/\*.*\*/\s*double s = 0\.0;\s*for ",
                     _body(text, "mean_bump_b"))
    assert "bump_b(x, xb, x_shape0, 0.25, &tmp_1, 1, 2.0 * retb)" in _body(text, "twice_b")
    # the adjoint of u, read by every iteration, is summed by the forward loop
    assert re.search(r"double ub = 0\.0;\s*for \(int64_t k_1 = 0; k_1 < x_shape0; \+\+k_1\) \{"
                     r".*bump_b\(x, xb, x_shape0, u, &ub_1, k_1, 0\.5 \* retb\);"
                     r".*ub = ub \+ ub_1;.*\*tb \+= 2\.0 \* t \* ub;",
                     _body(text, "shared_b"), re.S)
    # y is written before the loop that reads it: the reverse of the writes comes after
    assert re.search(r"bump_b\(y, yb, y_shape0, 0\.5, ", _body(text, "written_first_b"))


def test_what_stays_split(tmp_path: Path) -> None:
    text = _source(module(tmp_path, SPLIT, "split"))
    # the adjoint of the first call needs the second's result; y has an adjoint and is
    # written; u's adjoint (2 u retb) is not known before the call
    for name in ("pairs_b", "written_b", "squared_b"):
        assert "g_fwd(" in _body(text, name), name


@pytest.mark.parametrize("ell", [1, 2, 4])
def test_three_way(tmp_path: Path, ell: int) -> None:
    rng = np.random.default_rng(ell)
    minor = _det_args(ell, rng)
    r, c = minor[2], minor[3]
    r[:ell], c[:ell] = np.arange(1, ell + 1), np.arange(1, ell + 1)  # type: ignore[index]
    report = adgen.check(DET, modes=("forward", "reverse", "vector-reverse", "hvp"),
                         args={"det": _det_args(ell, rng),
                               "det_of_minor": [minor[0], ell, ell, r, c]})
    assert report.ok, report.table()
    x = rng.uniform(-1, 1, 5)
    args = {"bump": [x, 0.7, 2], "mixture": [x, rng.uniform(-1, 1, 5)],
            "outer": [x, rng.uniform(-1, 1, 5)], "by_sign": [x], "mean_bump": [x],
            "twice": [x], "written_first": [x, np.zeros(5)], "shared": [x, 0.7],
            "scaled": [x, 0.7], "two_ifs": [x, 0.7]}
    report = adgen.check(module(tmp_path, JOINT, "joint"),
                         modes=("forward", "reverse", "vector-reverse", "hvp"), args=args)
    assert report.ok, report.table()
    split = module(tmp_path, SPLIT, "split")
    report = adgen.check(split, modes=("reverse", "vector-reverse", "hvp"),
                         args={"g": [x, 3], "pairs": [x], "written": [x, np.zeros(5)],
                               "squared": [x]})
    assert report.ok, report.table()


def test_determinant_gradient_tapes_nothing() -> None:
    """det(A) A^-T, with no byte of tape at any depth of the recursion."""
    m = adgen.load(DET, modes=("primal", "reverse"))
    rng = np.random.default_rng(3)
    ell = 6
    a, _, r, c = _det_args(ell, rng)
    value = m.det(a, ell, r, c)
    grad = m.det.grad(a, ell, r, c)[0]
    mat = np.asarray(a).reshape(ell, ell)
    expected = np.linalg.det(mat) * np.linalg.inv(mat).T
    assert value == pytest.approx(np.linalg.det(mat), rel=1e-12)
    assert np.allclose(np.asarray(grad).reshape(ell, ell), expected, rtol=1e-10, atol=1e-12)
    assert m.tape_bytes() == 0


NESTED_TAPE = """
def inner(x: Array[f64], t: float) -> float:
    p = t
    for i in range(len(x)):
        p = p * math.sin(x[i])
    return p


def outer(x: Array[f64]) -> float:
    s = 0.0
    for k in range(3):
        s += inner(x, x[k])
    return s


def own(x: Array[f64], nested_tape_bytes: float) -> float:
    q = nested_tape_bytes
    for i in range(len(x)):
        q = q * math.cos(x[i] * q)
    return q


def both(x: Array[f64], nested_tape_bytes: float) -> float:
    q = own(x, nested_tape_bytes)
    s = 0.0
    for k in range(3):
        s += inner(x, x[k] * q)
    return s
"""


def test_tape_bytes_count_the_tapes_of_whole_adjoints(tmp_path: Path) -> None:
    """``inner_b``, called whole in the forward sweep of ``outer_b``, tapes its loop on a
    tape of its own: ``tape_bytes`` after ``outer``'s gradient is the most it held, after
    ``both``'s the most both tapes held at once.  (A parameter may be named like the
    variable that keeps that size.)"""
    path = module(tmp_path, NESTED_TAPE, "nested")
    assert "nested_tape_bytes = adgen_size_max(nested_tape_bytes, adgen_tape_bytes_last);" in \
        _body(_source(path), "outer_b")
    m = adgen.load(path, modes=("primal", "reverse"))
    x = np.linspace(0.1, 1.0, 50)
    m.inner.grad(x, 0.5)
    inner_bytes = m.tape_bytes()
    assert inner_bytes >= 50 * 8
    m.outer.grad(x)
    assert m.tape_bytes() == inner_bytes
    # both_b's own tape (own's loop) is alive while inner_b runs: the peak is the sum
    m.own.grad(x, 0.5)
    own_bytes = m.tape_bytes()
    assert own_bytes > 0
    m.both.grad(x, 0.5)
    assert m.tape_bytes() == own_bytes + inner_bytes
    report = adgen.check(path, modes=("reverse", "hvp"))
    assert report.ok, report.table()


CALLEES = """
def g(x: Array[f64], t: float, k: int) -> float:
    return math.sin(t * x[k]) + t * x[k] * x[k]


def h(t: float, u: float) -> float:
    return t * u + math.cos(t)
"""

FLOAT_TERMS = ("c", "t", "u", "0.5", "1.5")
CONDITIONS = ("c > 0.0", "c < 0.5", "k % 2 == 0", "t > 0.3", "k > 1", "u < 0.9")
RETURNS = ("s", "s / len(x)", "2.0 * s + t", "s * t", "s + q", "s + q * u", "0.5 * s - u")


@st.composite
def _expr(draw: st.DrawFn, names: list[str], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(names + list(FLOAT_TERMS)))
    op = draw(st.sampled_from(["+", "-", "*", "sin", "cos"]))
    if op in ("sin", "cos"):
        return f"math.{op}({draw(_expr(names, depth - 1))})"
    return f"({draw(_expr(names, depth - 1))} {op} {draw(_expr(names, depth - 1))})"


@st.composite
def loops_of_calls(draw: st.DrawFn) -> str:
    """A loop summing values of the iteration (calls of g and h, ifs, products) into s,
    maybe into q too, and a return of the sums: the loops ``ad/joint.py`` may reverse in
    the forward sweep, and some it may not (s * t, s + q * u)."""
    names: list[str] = []
    lines = [f"w0 = g(x, {draw(st.sampled_from(['c', 't', 'u']))} * 0.5, k)"]
    names.append("w0")
    for n in range(1, draw(st.integers(1, 5))):
        w = f"w{n}"
        kind = draw(st.sampled_from(["g", "h", "expr", "if", "scaled"]))
        if kind == "g":
            lines.append(f"{w} = g(x, {draw(_expr(names, 1))}, k)")
        elif kind == "h":
            lines.append(f"{w} = h({draw(_expr(names, 1))}, {draw(_expr(names, 1))})")
        elif kind == "expr":
            lines.append(f"{w} = {draw(_expr(names))}")
        elif kind == "if":
            lines += [f"if {draw(st.sampled_from(CONDITIONS))}:", f"    {w} = {draw(_expr(names))}",
                      "else:", f"    {w} = {draw(_expr(names))}"]
        else:
            lines += [f"{w} = {draw(st.sampled_from(names))}",
                      f"if {draw(st.sampled_from(CONDITIONS))}:",
                      f"    {w} = {w} * {draw(_expr(names, 1))}"]
        names.append(w)
    term = " + ".join(draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)))
    form = draw(st.integers(0, 2))
    if form == 0:
        lines.append(f"s = s + ({term}) * {draw(_expr(names, 1))}")
    else:
        lines += [f"if {draw(st.sampled_from(CONDITIONS))}:", f"    s = s + {term}"]
        if form == 1:
            lines += ["else:", f"    s = s - ({term}) * {draw(_expr(names, 1))}"]
    if draw(st.booleans()):
        lines.append(f"q = q + {draw(_expr(names, 1))}")
    pre = draw(st.sampled_from(["u = t * t", "u = math.sin(t) + 1.0", "u = g(x, t, 0)"]))
    body = "\n".join("        " + line for line in lines)
    return CALLEES + f"""

def f(x: Array[f64], t: float) -> float:
    {pre}
    s = 0.0
    q = 0.0
    for k in range(len(x)):
        c = x[k]
{body}
    return {draw(st.sampled_from(RETURNS))}
"""


@settings(max_examples=int(os.environ.get("ADGEN_JOINT_EXAMPLES", "25")), deadline=None,
          derandomize=bool(os.environ.get("CI")), suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(loops_of_calls())
@example(CALLEES + """

def f(x: Array[f64], t: float) -> float:
    u = t * t
    s = 0.0
    q = 0.0
    for k in range(len(x)):
        c = x[k]
        w0 = g(x, t * 0.5, k)
        w1 = h((t - u), c)
        w2 = math.cos(w1)
        w3 = c
        if u < 0.9:
            w4 = w0
        else:
            w4 = math.cos(w3)
        s = s + (w4 + w2) * w3
        q = q + math.sin(t)
    return 2.0 * s + t
""")  # h's adjoint needs w2, computed after it: g placed first, then the loop left as is
def test_random_loops_of_calls(source: str) -> None:
    """The three-way check of random loops around calls, joint or not."""
    with tempfile.TemporaryDirectory() as tmp:
        path = module(Path(tmp), source, "loops")
        x = np.array([0.3, -0.7, 1.1, 0.4, -0.1])
        report = adgen.check(path, modes=("reverse",),
                             args={"f": [x, 0.6], "g": [x, 0.6, 1], "h": [0.6, 0.3]})
        assert report.ok, source + "\n" + report.table()
