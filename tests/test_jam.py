"""Unroll-and-jam of loops around reductions (``transforms/jam.py``): which loops are
jammed, and derivatives that stay exact (the three-way check) for every remainder of the
trip count, in every mode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from adgen.build import DEFAULT_CFLAGS
from adgen.transpile.transforms.jam import FACTOR
from helpers import compile_strict, functions_of, module, run_cli

JAMMED = """
def matvec(w: Array[f64, 2], x: Array[f64], b: Array[f64], h: Array[f64]) -> float:
    for k in range(w.shape[0]):
        z = b[k]
        for i in range(w.shape[1]):
            z += w[k, i] * x[i]
        h[k] = max(z, 0.0) + math.tanh(z)
    s = 0.0
    for k in range(len(h)):
        s += h[k] * h[k]
    return s


def rows_down(w: Array[f64, 2], x: Array[f64]) -> float:
    total = 0.0
    for k in range(w.shape[0] - 1, -1, -1):
        z = 0.0
        m = -1e300
        for i in range(w.shape[1]):
            z += w[k, i] * x[i]
            m = max(m, w[k, i] * x[i])
        total = total * 0.5 + math.exp(-z * z) + m
    return total


def rows_step(w: Array[f64, 2], x: Array[f64]) -> float:
    total = 0.0
    for k in range(1, w.shape[0], 2):
        z = x[0]
        for i in range(1, w.shape[1]):
            z = z * 0.9 + w[k, i] * w[k - 1, i]
        total += z * z
    return total
"""

LEFT_ALONE = """
def triangular(w: Array[f64, 2], x: Array[f64]) -> float:
    total = 0.0
    for k in range(w.shape[0]):
        z = 0.0
        for i in range(k):
            z += w[k, i] * x[i]
        total += z * z
    return total


def reads_what_it_stores(w: Array[f64, 2], h: Array[f64]) -> float:
    for k in range(1, w.shape[0]):
        z = h[k - 1]
        for i in range(w.shape[1]):
            z += w[k, i]
        h[k] = z * 0.5
    return h[w.shape[0] - 1]


def carried_before_the_inner_loop(w: Array[f64, 2]) -> float:
    z = 0.0
    for k in range(w.shape[0]):
        for i in range(w.shape[1]):
            z += w[k, i]
    return z


def short_inner(w: Array[f64, 2], x: Array[f64]) -> float:
    total = 0.0
    for k in range(w.shape[0]):
        z = 0.0
        for i in range(3):
            z += w[k, i] * x[i]
        total += z * z
    return total


def inner_stores(w: Array[f64, 2], h: Array[f64, 2]) -> float:
    for k in range(w.shape[0]):
        for i in range(w.shape[1]):
            h[k, i] = w[k, i] * 2.0
    return h[0, 0]
"""


def test_which_loops_are_jammed(tmp_path: Path) -> None:
    jammed = module(tmp_path, JAMMED, "jammed")
    alone = module(tmp_path, LEFT_ALONE, "alone")
    for mode in ("primal", "forward", "reverse"):
        text = transpile(jammed, [mode]).outputs[mode].source.text  # type: ignore[attr-defined]
        bodies = functions_of(text)
        # (the forward sweep of rows_down tapes the comparisons of its inner max: left alone)
        for name in ("matvec", "rows_step") + (("rows_down",) if mode != "reverse" else ()):
            body = next(b for f, b in bodies.items() if f.startswith(name))
            assert re.search(rf"k [+-]= {FACTOR}\b|k \+= {2 * FACTOR}\b", body), (mode, name)
        text = transpile(alone, [mode]).outputs[mode].source.text  # type: ignore[attr-defined]
        assert "_rest" not in text, mode
    primal = transpile(jammed, ["primal"]).outputs["primal"].source.text  # type: ignore[attr-defined]
    # FACTOR sums in one vectorised inner loop, then the loop as written for the rest
    assert "reduction(+: z, z_1, z_2, z_3)" in primal
    assert "for (int64_t k = k_rest; k < w_shape0; ++k)" in primal
    assert "for (int64_t k = k_rest; k >= 0; --k)" in primal
    assert "for (int64_t k = k_rest; k < w_shape0; k += 2)" in primal


def test_jammed_code_compiles_without_warnings(tmp_path: Path) -> None:
    path = module(tmp_path, JAMMED, "jammed")
    modes = ("primal", "forward", "reverse", "vector-reverse", "hvp")
    result = run_cli(path, *[a for m in modes for a in ("--mode", m)], "-o", str(tmp_path), "-q")
    assert result.returncode == 0, result.stderr
    for c_file in sorted(tmp_path.glob("*.c")):
        for extra in ([], list(DEFAULT_CFLAGS)):
            cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"), *extra)
            assert cc.returncode == 0, f"{c_file.name} {extra}:\n{cc.stderr}"


@pytest.mark.parametrize("rows", [0, 1, FACTOR - 1, FACTOR, FACTOR + 1, 2 * FACTOR + 3])
def test_every_remainder_is_exact(tmp_path: Path, rows: int) -> None:
    """The three-way check with trip counts that leave 0 to FACTOR - 1 iterations to the
    loop that does the rest, and none for the jammed one."""
    path = module(tmp_path, JAMMED, "jammed")
    rng = np.random.default_rng(rows)
    w = rng.uniform(-1, 1, (rows, 11))
    x = rng.uniform(-1, 1, 11)
    args = {"matvec": [w, x, rng.uniform(-1, 1, rows), np.zeros(rows)],
            "rows_down": [w, x], "rows_step": [w, x]}
    report = adgen.check(path, modes=("forward", "reverse", "vector-reverse", "hvp"), args=args)
    assert report.ok, report.table()


def test_jammed_results_equal_the_loop_as_written(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Each copy keeps its own sums in their own order: without vectorisation (-O2), the
    jammed primal and adjoint give the bits of those built with the pass switched off."""
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (13, 29))
    x = rng.uniform(-1, 1, 29)
    b = rng.uniform(-1, 1, 13)

    def run(path: str) -> list[np.ndarray]:
        m = adgen.load(path, modes=("primal", "reverse"), cflags=["-O2"])
        assert ("k_rest" in m.transpiled.outputs["primal"].source.text) == (  # type: ignore[attr-defined]
            "plain" not in path)
        h = np.zeros(13)
        out = [np.array([m.matvec(w, x, b, h), m.rows_down(w, x), m.rows_step(w, x)]), h]
        out += [np.asarray(g) for g in m.matvec.grad(w, x, b, np.zeros(13))[:3]]
        out += [np.asarray(g) for g in m.rows_down.grad(w, x)]
        out += [np.asarray(g) for g in m.rows_step.grad(w, x)]
        return out

    jammed = run(module(tmp_path, JAMMED, "jammed"))
    monkeypatch.setattr("adgen.transpile.pipeline.jam", lambda fn: False)
    plain = run(module(tmp_path, JAMMED, "plain"))
    for a, b_ in zip(jammed, plain, strict=True):
        assert np.array_equal(a, b_)


def test_a_stop_near_the_64_bit_limits_runs_no_jammed_iteration(tmp_path: Path) -> None:
    """range(n) with n near INT64_MIN (range(5, n, -1) with n near INT64_MAX): the jammed
    loop's stop n - 3 (n + 3) wrapped around, and the loop ran far past the range (a crash
    where CPython runs none); an extent's stop needs no such guard."""
    path = module(tmp_path, """
        def up(W: Array[f64, 2], x: Array[f64], n: int) -> float:
            total = 0.0
            for i in range(n):
                acc = 0.0
                for j in range(len(x)):
                    acc += W[i, j] * x[j]
                total += acc
            return total

        def down(W: Array[f64, 2], x: Array[f64], n: int) -> float:
            total = 0.0
            for i in range(5, n, -1):
                acc = 0.0
                for j in range(len(x)):
                    acc += W[i, j] * x[j]
                total += acc
            return total
        """)
    m = adgen.load(path)
    W, x = np.ones((6, 9)), np.ones(9)
    for n in (-2**63, -2**63 + 1, -2**63 + 2):
        assert m.up(W, x, n) == 0.0
    for n in (2**63 - 1, 2**63 - 2, 2**63 - 3):
        assert m.down(W, x, n) == 0.0
    assert m.up(W, x, 6) == 54.0 and m.down(W, x, -1) == 54.0


def test_debug_builds_keep_the_loop_as_written(tmp_path: Path) -> None:
    """A bounds check fails at the first bad index in the source's order, as CPython's
    IndexError does: the jammed copies would read x[6] before h[5] is stored."""
    path = module(tmp_path, """
    def oob(w: Array[f64, 2], x: Array[f64], h: Array[f64]) -> float:
        total = 0.0
        for k in range(w.shape[0]):
            a = x[k]
            z = 0.0
            for i in range(w.shape[1]):
                z += w[k, i] * a
            h[k] = z
            total += z
        return total
    """)
    assert "k_rest" in transpile(path, ["primal"]).outputs["primal"].source.text  # type: ignore[attr-defined]
    debug = transpile(path, ["primal"], debug=True).outputs["primal"].source.text  # type: ignore[attr-defined]
    assert "k_rest" not in debug
    code = ("import numpy as np, adgen\n"
            f"m = adgen.load({path!r}, modes=('primal',), debug=True)\n"
            "m.oob(np.ones((9, 10)), np.ones(6), np.zeros(5))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode != 0
    assert "m.py:14: index 5 out of range for extent 5" in r.stderr, r.stderr  # h[k] = z
