"""Derivative work skipped behind a zero factor (``transforms/skip_zero.py``), on random
variants of one shape: a sum ``acc += c * s`` per (v, b), ``s`` from a loop that also
computes a primal value ``t``, ``c`` a weight or a relu of it, mostly zero.

Each variant is checked three ways (compiled primal against CPython, tangent against
differences, vector tangent against scalar tangents, adjoint against tangent), its
Jacobian against the formula, and the guards are where the rule says: in vector mode
unless the loop's copy would repeat floating-point work (``exp``), not in scalar mode
(where the loop would have to be split), never in the primal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adgen

TEMPLATE = """
import math

from adgen import Array, f64


def f(x: Array[f64], w: Array[f64, 2], y: Array[f64], out: Array[f64]) -> None:
    for v in range(w.shape[0]):
        acc = {init}
        for b in range(w.shape[1]):
            t = 0.0
            s = 0.0
            for kk in range({trips}):
{body}
            c = {factor}
            acc {op} {product}
            acc += 0.5 * t
        out[v] = acc
"""

BODIES = {
    # what the loop's copy would share with the primal loop: loads only
    "loads": ("                t += y[kk] * y[kk]\n"
              "                s += y[kk] * x[b * 4 + kk]"),
    # exp: the copy would compute it again, so no guard
    "exp": ("                e = math.exp(0.5 * y[kk])\n"
            "                t += e\n"
            "                s += e * x[b * 4 + kk]"),
}
FACTORS = {
    "weight": "w[v, b]",
    "relu": "max(w[v, b] - 0.5, 0.0)",
    "negative relu": "min(w[v, b] - 0.5, 0.0)",
}


@st.composite
def variants(draw: Any) -> dict[str, Any]:
    return {
        "init": draw(st.sampled_from(["0.0", "x[v]"])),
        "trips": draw(st.sampled_from(["4", "len(y)"])),
        "body": draw(st.sampled_from(sorted(BODIES))),
        "factor": draw(st.sampled_from(sorted(FACTORS))),
        "op": draw(st.sampled_from(["+=", "-="])),
        "order": draw(st.booleans()),
        "density": draw(st.sampled_from([0.0, 0.3, 1.0])),
        "seed": draw(st.integers(0, 2**16)),
    }


def source(var: dict[str, Any]) -> str:
    return TEMPLATE.format(init=var["init"], trips=var["trips"], body=BODIES[var["body"]],
                           factor=FACTORS[var["factor"]], op=var["op"],
                           product="c * s" if var["order"] else "s * c")


def inputs(var: dict[str, Any]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(var["seed"])
    nv, nb = 5, 3
    x = rng.uniform(0.5, 1.5, size=nb * 4)
    w = rng.uniform(0.0, 1.0, size=(nv, nb)) * (rng.uniform(size=(nv, nb)) < var["density"])
    y = rng.uniform(-1.0, 1.0, size=4)
    return x, w, y, np.zeros(nv)


def expected_jacobian(var: dict[str, Any], x: np.ndarray, w: np.ndarray, y: np.ndarray
                      ) -> np.ndarray:
    """d out / d x (w and y held): out[v] = init(v) +/- sum_b c(v, b) * s(b) + ...,
    s(b) = sum_kk g(y[kk]) * x[4 b + kk]."""
    nv, nb = w.shape
    g = np.exp(0.5 * y) if var["body"] == "exp" else y
    c = {"weight": w, "relu": np.maximum(w - 0.5, 0.0),
         "negative relu": np.minimum(w - 0.5, 0.0)}[var["factor"]]
    sign = 1.0 if var["op"] == "+=" else -1.0
    jac = np.zeros((nv, nb * 4))
    for v in range(nv):
        for b in range(nb):
            jac[v, 4 * b:4 * b + 4] = sign * c[v, b] * g
        if var["init"] == "x[v]":
            jac[v, v] += 1.0
    return jac


@settings(max_examples=25, deadline=None, database=None, derandomize=bool(os.environ.get("CI")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(var=variants())
def test_guarded_terms_give_the_derivatives_of_the_code_as_written(
        tmp_path_factory: Any, var: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("skip") / "terms.py"
    path.write_text(source(var))
    m = adgen.load(str(path), modes=("primal", "forward", "vector-forward", "reverse"),
                   wrt=("x",))
    text = {mode: m.transpiled.outputs[mode].source.text
            for mode in ("primal", "forward", "vector-forward")}
    guarded = var["body"] == "loads"
    assert ("!= 0.0) {" in text["vector-forward"]) == guarded, text["vector-forward"]
    assert "!= 0.0) {" not in text["forward"]  # scalar: no split, and the loop needs one
    assert "!= 0.0" not in text["primal"]
    x, w, y, out = inputs(var)
    report = adgen.check(str(path), modes=("forward", "vector-forward", "reverse"),
                         wrt=("x",), args={"f": [x, w, y, out]})
    assert report.ok, report.table()
    jac = adgen.jacobian(m.f, (x, w, y, out), wrt="x", of="out", mode="forward")
    np.testing.assert_allclose(jac.matrix, expected_jacobian(var, x, w, y), rtol=1e-14,
                               atol=1e-15)


PRANGE_AND_JAM = """
from adgen import Array, f64, prange


def f(x: Array[f64], y: Array[f64], z: Array[f64], w: Array[f64], out: Array[f64]) -> None:
    for v in prange(len(w)):
        a = w[v] * x[v % 2]
        s = 0.0
        for i in range(len(z)):
            s += a * z[i]
        q = 0.0
        for i in range(len(y)):
            q += y[i] * y[i] * x[i]
        out[v] = s * s + q


def g(x: Array[f64], u: Array[f64], y: Array[f64], out: Array[f64]) -> None:
    for v in range(len(x)):
        s = 0.0
        for i in range(len(y)):
            s += y[i] * x[i]
        out[v] = x[v] + u[v] * s
"""


def test_no_terms_in_a_prange_nor_in_a_jammed_loop(tmp_path: Path) -> None:
    """In a prange the adjoint ``xb[v % 2] += w[v] * ab`` stays an increment, which the
    emitter makes thread-private (guarded, it was a plain read and write of the shared
    array: lost updates with OpenMP); and the four tangents of a loop that
    transforms/jam.py made compute four sums stay in that one loop (each guarded term
    took a loop of its own: slower with dense weights).  Only g's last iterations, one
    at a time, are guarded."""
    path = tmp_path / "pj.py"
    path.write_text(PRANGE_AND_JAM)
    m = adgen.load(str(path), modes=("primal", "forward", "vector-forward", "reverse",
                                      "vector-reverse"), wrt=("x", "y"), openmp=True)
    text = {mode: m.transpiled.outputs[mode].source.text
            for mode in ("vector-forward", "reverse", "vector-reverse")}
    for mode, t in text.items():
        f_body = t[t.index("void f_"):t.index("void g_")]
        assert "!= 0.0" not in f_body, mode
    assert "ADGEN_PRIVATE(double, xb, x_shape0)" in text["reverse"]
    g_dv = text["vector-forward"][text["vector-forward"].index("void g_dv"):]
    assert g_dv.count("if (u_v") == 1, g_dv
    rng = np.random.default_rng(2)
    w = rng.uniform(size=9) * (rng.uniform(size=9) < 0.5)
    args = {"f": [rng.uniform(size=6), rng.uniform(size=6), rng.uniform(size=5), w,
                  np.zeros(9)],
            "g": [rng.uniform(size=9), w.copy(), rng.uniform(size=9), np.zeros(9)]}
    report = adgen.check(str(path), modes=("forward", "vector-forward", "reverse",
                                           "vector-reverse"), wrt=("x", "y"), args=args,
                         openmp=True)
    assert report.ok, report.table()
