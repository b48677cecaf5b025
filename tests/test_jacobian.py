"""Jacobians from the vector modes: ``adgen.jacobian`` and ``--mode jacobian``.

The dense Jacobian is compared with Jacobians stacked from the scalar modes
(one ``vjp`` per row with a unit output adjoint, one ``jvp`` per column with a
unit tangent); compressed seeding of a 1-D stencil (tridiagonal) needs exactly
3 sweeps whatever the size and gives the dense matrix.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from helpers import ROOT, run_cli

MODULE = """
import math

from adgen import Array, f64


def mix(a: float, x: Array[f64], y: Array[f64]) -> tuple[float, float]:
    n = len(x)
    s = 0.0
    p = 1.0
    for i in range(n):
        y[i] = math.sin(a * x[i]) + x[i] * x[(i + 1) % n]
        s += y[i] * y[i]
        p *= 1.0 + 0.1 * x[i] * a
    return s * a, p


def stencil(u: Array[f64], y: Array[f64]) -> None:
    n = len(u)
    for i in range(n):
        s = 2.0 * u[i] + u[i] * u[i] * u[i]
        if i > 0:
            s -= u[i - 1]
        if i < n - 1:
            s -= math.sin(u[i + 1])
        y[i] = s


def squares(u: Array[f64], y: Array[f64]) -> float:
    total = 0.0
    for i in range(len(u)):
        y[i] = u[i] * u[i]
        total += math.exp(u[i])
    return total
"""

ALL_MODES = ("forward", "reverse", "vector-forward", "vector-reverse")


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("jac") / "jac.py"
    path.write_text(textwrap.dedent(MODULE).lstrip("\n"))
    return adgen.load(str(path), modes=ALL_MODES)


def mix_args() -> tuple[float, np.ndarray, np.ndarray]:
    return 0.7, np.array([0.3, -1.2, 0.8, 1.5]), np.full(4, 9.0)


def stacked_vjps(f: Any, args: tuple[Any, ...]) -> np.ndarray:
    """Rows from f.vjp with a unit weight on one output: mix's two results, then y."""
    a, x, y = args
    rows = []
    for r in range(2 + len(y)):
        ybar = tuple(1.0 if r == k else 0.0 for k in range(2))
        ybar_y = np.zeros(len(y))
        if r >= 2:
            ybar_y[r - 2] = 1.0
        _, (ga, gx, gy) = f.vjp((a, x.copy(), y.copy()), ybar, out_bars={"y": ybar_y})
        rows.append(np.concatenate([[ga], gx, gy]))
    return np.array(rows)


def stacked_jvps(f: Any, args: tuple[Any, ...]) -> np.ndarray:
    """Columns from f.jvp with a unit tangent on one input: a, then x, then y's entry."""
    a, x, y = args
    cols = []
    for c in range(1 + len(x) + len(y)):
        e = np.zeros(1 + len(x) + len(y))
        e[c] = 1.0
        yd = e[1 + len(x):].copy()  # in/out: the entry direction, then the tangent on exit
        _, (t0, t1) = f.jvp((a, x.copy(), y.copy()), (e[0], e[1:1 + len(x)], yd))
        cols.append(np.concatenate([[t0, t1], yd]))
    return np.array(cols).T


def test_dense_jacobian_is_stacked_vjps_and_jvps(m: Any) -> None:
    args = mix_args()
    y_before = args[2].copy()
    by_rows, by_cols = stacked_vjps(m.mix, args), stacked_jvps(m.mix, args)
    np.testing.assert_allclose(by_rows, by_cols, rtol=1e-12, atol=1e-13)
    for mode in ("forward", "reverse"):
        jac = adgen.jacobian(m.mix, args, mode=mode)
        assert jac.mode == mode and jac.colors is None and jac.calls == 1
        assert jac.matrix.shape == (6, 9)
        np.testing.assert_allclose(jac.matrix, by_rows, rtol=1e-12, atol=1e-13)
        assert jac.sweeps == (9 if mode == "forward" else 6)
        assert jac.value == pytest.approx(m.mix(args[0], args[1], np.zeros(4)), rel=1e-15)
    assert jac.rows[:3] == [("return", (0,)), ("return", (1,)), ("y", (0,))]
    assert jac.columns[:3] == [("a", ()), ("x", (0,)), ("x", (1,))]
    assert jac.columns[-1] == ("y", (3,))
    np.testing.assert_array_equal(args[2], y_before)  # the caller's y is not written
    # y's entry contents do not matter (mix overwrites y): zero columns
    assert not jac.matrix[:, 5:].any()


def test_wrt_and_of_select_blocks(m: Any) -> None:
    args = mix_args()
    full = adgen.jacobian(m.mix, args).matrix
    jac = adgen.jacobian(m.mix, args, wrt=["x"], of="y")
    assert jac.rows == [("y", (i,)) for i in range(4)]
    assert jac.columns == [("x", (i,)) for i in range(4)]
    np.testing.assert_allclose(jac.matrix, full[2:, 1:5], rtol=1e-13)
    with pytest.raises(ValueError, match="wrt names 'n'.*choose from a, x, y"):
        adgen.jacobian(m.mix, args, wrt=["n"])
    with pytest.raises(ValueError, match="of names 'x'"):
        adgen.jacobian(m.mix, args, of=["x"])


def test_auto_mode_picks_forward_for_tall_and_reverse_for_wide(m: Any) -> None:
    args = mix_args()
    tall = adgen.jacobian(m.mix, args, wrt="a")  # 6 x 1
    assert tall.mode == "forward" and tall.sweeps == 1 and tall.matrix.shape == (6, 1)
    wide = adgen.jacobian(m.mix, args, of="return")  # 2 x 9
    assert wide.mode == "reverse" and wide.sweeps == 2 and wide.matrix.shape == (2, 9)
    full = adgen.jacobian(m.mix, args, mode="reverse").matrix
    np.testing.assert_allclose(tall.matrix, full[:, :1], rtol=1e-13)
    np.testing.assert_allclose(wide.matrix, full[:2], rtol=1e-13)
    assert str(wide) == "jacobian of mix: 2 x 9, reverse mode, 2 sweeps (one per row)"


def tridiagonal(n: int) -> np.ndarray:
    i = np.arange(n)
    return (np.abs(i[:, None] - i[None, :]) <= 1)


def test_compressed_seeding_of_a_stencil_takes_3_sweeps(m: Any) -> None:
    n = 200
    u = np.linspace(-1.0, 1.0, n)
    args = (u, np.zeros(n))
    dense = adgen.jacobian(m.stencil, args, wrt="u", mode="forward")
    assert dense.sweeps == n
    expected = np.diag(2.0 + 3.0 * u * u) - np.diag(np.ones(n - 1), -1) \
        - np.diag(np.cos(u[1:]), 1)
    np.testing.assert_allclose(dense.matrix, expected, rtol=1e-14, atol=1e-15)
    jac = adgen.jacobian(m.stencil, args, wrt="u", sparsity=tridiagonal(n))
    assert jac.mode == "forward" and jac.sweeps == 3 and jac.calls == 1
    np.testing.assert_array_equal(jac.colors, np.arange(n) % 3)
    np.testing.assert_allclose(jac.matrix, dense.matrix, rtol=1e-14, atol=0)
    assert str(jac) == ("jacobian of stencil: 200 x 200, forward mode, 3 sweeps "
                        "(compressed from 200 columns by a 3-coloring)")
    pairs = [(i, j) for i in range(n) for j in range(max(i - 1, 0), min(i + 2, n))]
    for mode in ("forward", "reverse"):
        by_pairs = adgen.jacobian(m.stencil, args, wrt="u", sparsity=pairs, mode=mode, chunk=2)
        assert by_pairs.mode == mode and by_pairs.sweeps == 3 and by_pairs.calls == 2
        np.testing.assert_allclose(by_pairs.matrix, dense.matrix, rtol=1e-14, atol=0)


def test_auto_mode_colors_rows_when_that_needs_fewer_sweeps(m: Any) -> None:
    # squares: a dense row (the sum) over a diagonal (y): every column meets row 0, so forward
    # needs a color per column; rows 1.. never share a column with each other: 2 row colors
    n = 50
    u = np.linspace(0.1, 1.0, n)
    args = (u, np.zeros(n))
    pattern = np.vstack([np.ones((1, n), dtype=bool), np.eye(n, dtype=bool)])
    jac = adgen.jacobian(m.squares, args, wrt="u", sparsity=pattern)
    assert jac.mode == "reverse" and jac.sweeps == 2
    np.testing.assert_array_equal(jac.colors, [0] + [1] * n)
    expected = np.vstack([np.exp(u)[None, :], np.diag(2.0 * u)])
    np.testing.assert_allclose(jac.matrix, expected, rtol=1e-14)
    forced = adgen.jacobian(m.squares, args, wrt="u", sparsity=pattern, mode="forward")
    assert forced.sweeps == n
    np.testing.assert_allclose(forced.matrix, expected, rtol=1e-14)


def test_in_place_updates_do_not_leak_between_calls() -> None:
    # heat updates u in place; with chunk=2 the 7 directions take 4 calls on fresh copies
    m = adgen.load(str(ROOT / "examples" / "heat.py"), modes=("vector-forward", "vector-reverse"))
    u = np.linspace(0.0, 1.0, 6)
    before = u.copy()
    one = adgen.jacobian(m.heat, (u, 0.1, 3))
    for mode in ("forward", "reverse"):
        split = adgen.jacobian(m.heat, (u, 0.1, 3), mode=mode, chunk=2)
        assert split.calls == 4 and split.sweeps == 7
        np.testing.assert_allclose(split.matrix, one.matrix, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(u, before)
    assert one.columns[-1] == ("alpha", ()) and one.rows[0] == ("return", ())


def test_bad_input_is_rejected(m: Any) -> None:
    args = (np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match=r"sparsity pattern has shape \(5, 4\), but the "
                                         r"Jacobian is 5 x 5 \(rows: y \(5\); columns: u \(5\)\)"):
        adgen.jacobian(m.stencil, args, wrt="u", sparsity=np.ones((5, 4), dtype=bool))
    # the entries of a returned tuple are named apart (both were 'return (1)')
    with pytest.raises(ValueError, match=r"the Jacobian is 6 x 9 \(rows: return\[0\] \(1\), "
                                         r"return\[1\] \(1\), y \(4\); columns: a \(1\), "
                                         r"x \(4\), y \(4\)\)"):
        adgen.jacobian(m.mix, mix_args(), sparsity=np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match=r"sparsity pair \(5, 0\) is outside the 5 x 5"):
        adgen.jacobian(m.stencil, args, wrt="u", sparsity=[(0, 0), (5, 0)])
    with pytest.raises(ValueError, match="mode must be"):
        adgen.jacobian(m.stencil, args, mode="vector-forward")
    with pytest.raises(TypeError, match=r"stencil\(\) takes 2 argument"):
        adgen.jacobian(m.stencil, args[:1])
    # a string is a sequence, not an argument tuple (it read as the arguments 'a' and 'b')
    with pytest.raises(TypeError, match="args must be the tuple of arguments, e.g. \\(x,\\), "
                                        "got str"):
        adgen.jacobian(m.stencil, "ab")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="argument 'u' must have 1 dimension"):
        adgen.jacobian(m.stencil, (np.zeros((2, 2)), np.zeros(2)))
    only_forward = adgen.load(str(ROOT / "examples" / "rosenbrock.py"), modes=("vector-forward",))
    with pytest.raises(RuntimeError, match="'vector-reverse'"):
        adgen.jacobian(only_forward.rosenbrock, (np.ones(3),), mode="reverse")
    auto = adgen.jacobian(only_forward.rosenbrock, (np.array([1.0, 2.0, 3.0]),))
    assert auto.mode == "forward"  # wide, but forward is the mode loaded
    np.testing.assert_allclose(auto.matrix, [[-400.0, 1002.0, -200.0]])


def test_coloring_and_the_callable_module() -> None:
    from adgen.jacobians import Jacobian, greedy_coloring

    r, c = np.nonzero(tridiagonal(7))
    assert greedy_coloring(r, c, 7).tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert greedy_coloring(np.array([0]), np.array([1]), 3).tolist() == [-1, 0, -1]
    assert callable(adgen.jacobian) and Jacobian.__name__ == "Jacobian"


def test_cli_mode_jacobian_writes_both_vector_modes(tmp_path: Path) -> None:
    r = run_cli(str(ROOT / "examples" / "rosenbrock.py"), "--mode", "jacobian", "-o",
                str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "adgen_runtime.h", "rosenbrock_bv.c", "rosenbrock_bv.h", "rosenbrock_dv.c",
        "rosenbrock_dv.h"]
    assert "--mode vector-forward --mode vector-reverse" in \
        (tmp_path / "rosenbrock_dv.c").read_text()


SKINNING = """
import math

from adgen import Array, f64


def skin(tf: Array[f64, 2], p: Array[f64, 2], w: Array[f64, 2], pos: Array[f64]) -> None:
    for v in range(p.shape[0]):
        acc = 0.0
        for b in range(w.shape[1]):
            t = 0.0
            for kk in range(4):
                t += tf[b, kk] * p[v, kk]
            acc += t * w[v, b]
        pos[v] = acc


def lse(x: Array[f64]) -> float:
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i])
    return math.log(s)
"""


def test_tangent_work_behind_a_zero_weight_is_skipped(tmp_path: Path) -> None:
    """``acc += t * w[v, b]`` with sparse weights: in vector mode the loop over ``kk`` of
    ``td`` (directions) runs only where ``w[v, b] != 0.0``, split from the primal loop of
    ``t`` (transforms/skip_zero.py, "Terms").  The Jacobian is the same: against the
    dense formula, stacked jvps (scalar mode, not guarded: four multiply-adds cost less
    than a branch), and the three-way check with zero weights."""
    path = tmp_path / "skinning.py"
    path.write_text(SKINNING)
    m = adgen.load(str(path), modes=("primal", "forward", "vector-forward"))
    vector = m.transpiled.outputs["vector-forward"].source.text
    scalar = m.transpiled.outputs["forward"].source.text
    assert vector.count("if (w_v_b != 0.0) {") == 1, vector
    assert "!= 0.0" not in scalar and "!= 0.0" not in m.transpiled.outputs["primal"].source.text
    # lse's tangent is 1 / s * sd: a computed factor, and the loop of sd shares exp with s
    assert vector.count("!= 0.0") == 1
    rng = np.random.default_rng(5)
    nv, nb = 9, 6
    tf, p = rng.normal(size=(nb, 4)), rng.normal(size=(nv, 4))
    w = rng.uniform(size=(nv, nb)) * (rng.uniform(size=(nv, nb)) < 0.4)
    w[:, 0] = 0.0
    w[3] = 0.0  # a vertex with no bone
    assert 0 < np.count_nonzero(w) < w.size
    args = (tf, p, w, np.zeros(nv))
    jac = adgen.jacobian(m.skin, args, wrt="tf", of="pos", mode="forward")
    assert jac.calls == 1
    # pos[v] = sum_b w[v, b] * tf[b] . p[v]: d pos[v] / d tf[b, kk] = w[v, b] * p[v, kk]
    dense = np.einsum("vb,vk->vbk", w, p).reshape(nv, nb * 4)
    np.testing.assert_allclose(jac.matrix, dense, rtol=1e-15, atol=0.0)
    for col in range(nb * 4):  # one scalar jvp per column
        tfd = np.zeros(nb * 4)
        tfd[col] = 1.0
        posd = np.zeros(nv)
        m.skin.jvp((tf, p, w, np.zeros(nv)), (tfd.reshape(nb, 4), None, None, posd))
        np.testing.assert_allclose(posd, dense[:, col], rtol=1e-15, atol=0.0)
    report = adgen.check(str(path), modes=("forward", "vector-forward"),
                         args={"skin": list(args)})
    assert report.ok, report.table()


def test_a_build_with_a_fixed_number_of_directions(tmp_path: Path) -> None:
    """-DADGEN_NBDIRS=3: the Jacobian and the Hessian take three directions per call, the
    last call padded with zero directions (they refused: 'this build takes 3 directions,
    got 11'), and agree with a build without it."""
    path = tmp_path / "fixed.py"
    path.write_text(textwrap.dedent("""
        import math

        from adgen import Array, f64


        def w1(u: Array[f64], a: float, y: Array[f64]) -> float:
            s = 0.0
            for i in range(len(u)):
                y[i] = math.sin(u[i]) * a + y[i] * u[(i + 1) % len(u)]
                s += y[i] * y[i] + a * u[i]
            return s
        """))
    modes = ("vector-forward", "vector-reverse", "vector-hvp")
    fixed = adgen.load(str(path), modes=modes, cflags=["-O2", "-DADGEN_NBDIRS=3"])
    free = adgen.load(str(path), modes=modes)
    rng = np.random.default_rng(1)
    args = (rng.random(5), 0.4, rng.random(5))
    for mode in ("forward", "reverse"):
        for chunk in (None, 2):
            jac = adgen.jacobian(fixed.w1, args, mode=mode, chunk=chunk)
            assert np.allclose(jac.matrix, adgen.jacobian(free.w1, args, mode=mode).matrix,
                               rtol=1e-13, atol=1e-13)
    assert jac.calls == 2  # 6 rows (return and y) in reverse: two calls of three
    assert np.allclose(fixed.w1.hessian(*args), free.w1.hessian(*args), rtol=1e-12, atol=1e-12)


def test_a_0_1_integer_matrix_of_the_jacobians_shape_warns(m: Any) -> None:
    # with two columns, np.eye(2, dtype=int) is also a list of two (row, column) pairs, (1, 0)
    # and (0, 1): read as the rule says (the anti-diagonal), with a warning
    args = (np.array([0.3, -0.4]), np.zeros(2))
    with pytest.warns(adgen.AdgenWarning, match=r"an integer array of the Jacobian's shape "
                                                r"\(2 x 2\) holding only 0 and 1 is read as"):
        jac = adgen.jacobian(m.stencil, args, wrt="u", sparsity=np.eye(2, dtype=int))
    dense = adgen.jacobian(m.stencil, args, wrt="u").matrix
    assert jac.matrix[0, 0] == 0.0 and jac.matrix[1, 1] == 0.0  # the anti-diagonal
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        full = adgen.jacobian(m.stencil, args, wrt="u", sparsity=np.ones((2, 2), dtype=bool))
        adgen.jacobian(m.stencil, args, wrt="u", sparsity=[(0, 0), (1, 1)])
        adgen.jacobian(m.stencil, args, wrt="u", sparsity=np.array([[0, 0], [1, 1], [0, 1]]))
    np.testing.assert_array_equal(full.matrix, dense)
