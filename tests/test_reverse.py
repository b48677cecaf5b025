"""Reverse mode beyond the examples: tape economy, reentrancy, the vjp/grad API."""

from __future__ import annotations

import importlib.util
import math
import re
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import adgen
from helpers import functions_of, module


POW_LOOP = """
def pow_loop(x: float, n: int) -> float:
    r = 1.0
    for i in range(n):
        r = r * x
    return r
"""


def test_straight_line_code_records_nothing(tmp_path: Path) -> None:
    path = module(tmp_path, """
    def f(x: float, y: float) -> float:
        t = math.sin(x) * y
        u = math.exp(t * x) / (1.0 + y * y)
        return t * u + math.log(1.0 + x * x)
    """)
    m = adgen.load(path, modes=("reverse",))
    value, (xb, yb) = m.f.vjp((0.7, 1.3), 1.0)
    assert m.tape_bytes() == 0
    assert value == pytest.approx(m.f(0.7, 1.3))
    assert "adgen_push" not in m.transpiled.outputs["reverse"].source.text  # type: ignore[attr-defined]


def test_loop_records_one_value_per_iteration(tmp_path: Path) -> None:
    """r = r * x needs the old r in every reverse iteration: 8 bytes per iteration, no more."""
    m = adgen.load(module(tmp_path, POW_LOOP), modes=("reverse",))
    for n in (1, 10, 100, 1000):
        _, (xb, _) = m.pow_loop.vjp((1.001, n), 1.0)
        assert xb == pytest.approx(n * 1.001 ** (n - 1), rel=1e-12)
        assert m.tape_bytes() == 8 * n


def test_tape_buffer_kept_between_calls_or_not(tmp_path: Path) -> None:
    """The tape's buffer is kept for the next call (ADGEN_TAPE_KEEP) or freed
    (-DADGEN_TAPE_KEEP=0): the same gradients and tape sizes, calls of growing and
    shrinking tapes alike."""
    path = module(tmp_path, POW_LOOP)
    kept = adgen.load(path, modes=("reverse",))
    freed = adgen.load(path, modes=("reverse",), cflags=["-DADGEN_TAPE_KEEP=0"])
    for n in (1000, 10, 100_000, 3, 0, 5000):
        for m in (kept, freed):
            _, (xb, _) = m.pow_loop.vjp((1.0001, n), 1.0)
            assert xb == pytest.approx(n * 1.0001 ** (n - 1) if n else 0.0, rel=1e-11)
            assert m.tape_bytes() == 8 * n


def test_a_counted_loop_takes_its_tape_as_one_block(tmp_path: Path) -> None:
    """r = r * x: the loop reserves its n * 8 bytes before it and puts r at i * 8, the
    reversed loop pops them at once and gets them back; the same bytes as pushes one by
    one, and a vectorisable loop (no call in it)."""
    m = adgen.load(module(tmp_path, POW_LOOP), modes=("reverse",))
    text = m.transpiled.outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert "unsigned char *block = adgen_push_block(&tape, count * 8);" in text
    assert "adgen_put_f64(block, i * 8, r);" in text
    assert "adgen_pop_block(&tape, count_1 * 8);" in text and "adgen_get_f64(block_1, i * 8)" in text
    assert "adgen_push_f64" not in text and "adgen_pop_f64" not in text
    for n in (0, 1, 7):
        _, (xb, _) = m.pow_loop.vjp((1.001, n), 1.0)
        assert xb == pytest.approx(n * 1.001 ** (n - 1) if n else 0.0, rel=1e-12)
        assert m.tape_bytes() == 8 * n


def test_tape_blocks_of_loops_with_steps_of_two_and_computed_bounds(tmp_path: Path) -> None:
    """Blocks of loops counting by 2 and -2 between bounds chosen at run time (their
    reversed loops run by -2 and 2, with other bounds): the adjoint is exact."""
    path = module(tmp_path, """
    def f(x: Array[f64], k: int) -> float:
        s = 1.0
        for i in range(len(x) - 1 if k > 2 else len(x) - 2, -1, -2):
            s = s * x[i] + 0.25
        for i in range(1 if k > 0 else 0, len(x) if k < 9 else 2, 2):
            s = s * x[i] + 0.5
        return s
    """)
    assert c_source(path).count("adgen_push_block(") == 2
    for k in (0, 3, 10):
        report = adgen.check(path, args={"f": (np.array([0.5, 0.9, 1.1, 0.7, 0.8]), k)},
                             modes=("forward", "reverse"))
        assert report.ok, report.table()


def c_source(path: str) -> str:
    from adgen.api import transpile
    return transpile(path, ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]


def test_cheap_values_are_recomputed_not_recorded(tmp_path: Path) -> None:
    """Reads of an array nothing writes and arithmetic on them are repeated in the reverse
    sweep; a transcendental function's result is recorded (8 bytes per iteration), unless the
    loop only adds up and nothing else would be recorded (then it is computed again)."""
    path = module(tmp_path, """
    def cheap(x: Array[f64]) -> float:
        s = 0.0
        for i in range(len(x) - 1):
            d = x[i + 1] - x[i] * x[i]
            s += 100.0 * d * d + (1.0 - x[i]) ** 2
        return s


    def costly(x: Array[f64], y: float) -> float:
        s = 0.0
        for i in range(len(x)):
            s = 0.5 * s + math.exp(x[i] * y)
        return s


    def costly_sum(x: Array[f64], y: float) -> float:
        s = 0.0
        for i in range(len(x)):
            s += math.exp(x[i] * y)
        return s
    """)
    m = adgen.load(path, modes=("reverse",))
    x = np.linspace(0.5, 1.5, 50)
    m.cheap.grad(x)
    assert m.tape_bytes() == 0
    m.costly.grad(x, 0.3)
    assert m.tape_bytes() == 8 * len(x)
    xb, yb = m.costly_sum.grad(x, 0.3)
    assert m.tape_bytes() == 0
    assert np.allclose(xb, 0.3 * np.exp(0.3 * x), rtol=1e-14)
    assert yb == pytest.approx(np.sum(x * np.exp(0.3 * x)), rel=1e-13)


def test_inactive_recurrences_are_carried_not_recorded(tmp_path: Path) -> None:
    """A loop whose adjoint iterations only add up runs them in the forward order, so an
    inactive recurrence (the powers p of t) is computed again along the way instead of
    being recorded: the polynomial records nothing but r, one value per outer iteration.
    A recurrence through a transcendental function is still recorded."""
    path = module(tmp_path, """
    def poly(x: Array[f64], n: int) -> float:
        total = 0.0
        q = 0.5
        for i in range(n):
            t = -1.0 + 2.0 * i / (n - 1)
            r = 1.0 if t > 0.0 else -1.0
            p = q
            for j in range(len(x)):
                r -= x[j] * p
                p = p * t + 0.125
            q = p / (1.0 + p * p)
            total += r * r
        return total / 2.0 + q


    def decay(x: Array[f64], y: float) -> float:
        s = 0.0
        w = 1.0
        for i in range(len(x)):
            s += x[i] * w * y
            w = math.exp(-w)
        return s
    """)
    text = c_source(path)
    assert "p_1 = p_1 * t_1 + 0.125;" in text, text
    m = adgen.load(path, modes=("reverse",))
    x = np.linspace(0.5, 1.5, 6)
    m.poly.grad(x, 9)
    assert m.tape_bytes() == 2 * 8 * 9  # r and q of each outer iteration
    m.decay.grad(x, 0.3)
    assert m.tape_bytes() == 8 * len(x)
    report = adgen.check(path, args={"poly": (x, 9), "decay": (x, 0.3)},
                         modes=("forward", "reverse", "vector-reverse"))
    assert report.ok, report.table()


def test_integer_counters_are_unwound_not_recorded(tmp_path: Path) -> None:
    """An inactive integer updated by ``+= d`` in a loop whose adjoint counts down is carried
    back by the adjoint loop from its final value (``idx - 1``): the tape holds that final
    value once per run of the inner loop (8 bytes per outer iteration), not the counter at
    every inner iteration.  A sign only compared (``sign > 0``) keeps its 1-byte test."""
    path = module(tmp_path, """
    def tri(l: Array[f64], x: Array[f64]) -> float:
        d = len(x)
        qx = zeros(d)
        idx = 0
        for i in range(d):
            for j in range(i + 1, d):
                qx[j] += l[idx] * x[i]
                idx += 1
        s = 0.0
        for j in range(d):
            s += qx[j] * qx[j] * x[j]
        return s


    def signs(x: Array[f64]) -> float:
        s = 0.0
        sign = 1
        for i in range(len(x)):
            if sign > 0:
                s = s + x[i] * s + x[i]
            else:
                s = s - x[i] * s
            sign = -sign
        return s
    """)
    text = c_source(path)
    assert "idx = idx - 1;" in text, text
    m = adgen.load(path, modes=("reverse",))
    x, l = np.linspace(0.5, 1.5, 6), np.linspace(0.1, 1.0, 15)
    m.tri.grad(l, x)
    assert m.tape_bytes() == 8 * len(x)
    m.signs.grad(x)
    assert m.tape_bytes() == 9 * len(x)  # s and the test of sign: sign itself is not saved
    report = adgen.check(path, args={"tri": (l, x), "signs": (x,)},
                         modes=("forward", "reverse", "vector-reverse", "hvp"))
    assert report.ok, report.table()


def test_increments_of_array_elements_pass_their_adjoint_through(tmp_path: Path) -> None:
    """``a[i] += e`` reverses to ``eb += ab[i]``: the element's adjoint is read, not zeroed
    and added back; ``-=`` subtracts it.  A store to the array between the load and the
    store (``a[j] = ...``) keeps the generic reverse, and every variant is exact."""
    path = module(tmp_path, """
    def acc(x: Array[f64], y: Array[f64], w: float) -> float:
        a = zeros(len(x))
        for k in range(3):
            for i in range(len(x)):
                a[i] += w * x[i] * y[i]
                a[i] -= 0.25 * x[i]
        s = 0.0
        for i in range(len(x)):
            s += a[i] * a[i]
        return s


    def clobber(x: Array[f64], w: float) -> float:
        a = zeros(len(x))
        for i in range(len(x)):
            t = a[i]
            a[len(x) - 1 - i] = w * x[i]
            a[i] = t + x[i] * x[i]
        s = 0.0
        for i in range(len(x)):
            s += a[i] * a[i]
        return s
    """)
    text = c_source(path)
    acc_b = text[text.index("double acc_b("):text.index("double clobber_b(")]
    assert "ab[i] = 0.0;" not in acc_b, acc_b
    assert "ab[i] = 0.0;" in text[text.index("double clobber_b("):]
    x = np.linspace(0.5, 1.5, 7)
    report = adgen.check(path, args={"acc": (x, x[::-1].copy(), 0.3), "clobber": (x, 0.7)},
                         modes=("forward", "reverse", "vector-reverse", "hvp"))
    assert report.ok, report.table()


def test_short_circuit_conditions_are_written_with_and_and_or(tmp_path: Path) -> None:
    """``and``/``or`` whose second operand must not run first are written ``&&``/``||`` where
    their value is read right away (a ``while`` condition, the loop with ``break`` in
    reverse mode), with the three-way check holding; gcc -Wparentheses stays quiet
    (tests/test_examples.py compiles with -Werror, here through adgen.load)."""
    path = module(tmp_path, """
    def first(x: Array[f64], v: float) -> float:
        i = 0
        while i < len(x) and x[i] < v:
            i += 1
        j = len(x) - 1
        while j < 0 or x[j] > v and j > i:
            j -= 1
        return x[i % len(x)] * v + x[j] * x[j]


    def partial(x: Array[f64], limit: float) -> float:
        s = 0.0
        for i in range(len(x)):
            if s > limit:
                break
            s += x[i] * x[i]
        return s
    """)
    m = adgen.load(path, modes=("primal", "reverse"), cflags=["-O2", "-Wall", "-Werror"])
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert "while (i < x_shape0 && x[i] < v) {" in text, text
    assert "while (j < 0 || ((x[j] > v) && (j > i))) {" in text, text
    assert "while (exit_code == 0 && i < x_shape0) {" in c_source(path)
    x = np.array([0.5, 2.0, -1.0, 3.0])
    assert m.first(x, 2.0) == x[1] * 2.0 + x[2] * x[2]  # i = 1, j = 2
    report = adgen.check(path, args={"first": (x, 1.9), "partial": (x, 4.0)},
                         modes=("forward", "reverse"))
    assert report.ok, report.table()


def test_while_true_left_only_by_return(tmp_path: Path) -> None:
    """A ``while True`` (or ``while 1``) that only a ``return`` leaves cannot fall off the
    end of its function, as in CPython: no ``return`` after it is needed.  The ``break`` of
    a loop nested in its body leaves that loop, not the ``while True``.  In reverse mode
    such a loop records its trip count as other ``while`` loops do, and the three-way
    check holds."""
    path = module(tmp_path, """
    def halve(x: float) -> float:
        i = 0
        while True:
            x = x * 0.5
            i += 1
            if i >= 3:
                return x


    def heron(a: float, tol: float) -> float:
        v = a
        k = 0
        while True:
            k += 1
            w = v
            v = 0.5 * (v + a / v)
            j = 0
            while j < 5:
                if j * j > k:
                    break
                v = v * (1.0 + 0.0 * w)
                j += 1
            for m in range(3):
                if m > k:
                    break
                w = w * 1.0
            if abs(v - w) < tol or k >= 40:
                if v > 1.0:
                    return v * math.sin(a)
                return -v


    def scale(x: Array[f64], c: float) -> None:
        k = 0
        while 1:
            x[k] = x[k] * c + math.tan(x[k])
            k += 1
            if k == len(x):
                return


    def inner(x: Array[f64], c: float) -> float:
        s = 0.0
        for i in range(len(x)):
            s += x[i]
            if s > c:
                while True:
                    s = s * 0.75
                    if s < c:
                        return s * x[i]
        return s


    def branch(x: float, c: float) -> float:
        if c > 1.0:
            y = x * 2.0
        else:
            while True:
                x = x * 0.5
                if x < 0.1:
                    return x * c
        return y * x
    """)
    m = adgen.load(path, modes=("primal", "reverse"), cflags=["-O2", "-Wall", "-Werror"])
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert text.count("while (true) {") == 5, text
    assert m.halve(1.6) == 0.2
    adjoint = functions_of(c_source(path))["heron_b"]
    assert "trips = trips + 1;" in adjoint and "it < trips;" in adjoint, adjoint
    x = np.array([0.5, 0.9, 1.3, 0.7])
    for cut in (0.5, 1.5):  # the branch with the loop, the other
        report = adgen.check(path, args={"halve": (1.7,), "heron": (2.3, 1e-12),
                                         "scale": (x, 0.8), "inner": (x, 1.6),
                                         "branch": (0.9, cut)},
                             modes=("forward", "reverse", "vector-reverse"))
        assert report.ok, report.table()
        checked = {(r.function, r.check.split()[0]) for r in report.rows}
        assert checked >= {(f, c) for f in ("halve", "heron", "scale", "inner", "branch")
                           for c in ("tangent", "adjoint", "vector")}, report.table()


def test_a_chained_comparison_runs_a_later_operand_only_when_the_earlier_hold(
        tmp_path: Path) -> None:
    """``x < 0.0 < bump(a)`` is ``x < 0.0 and 0.0 < bump(a)``: CPython calls ``bump`` only
    where ``x < 0.0``.  The C called it first (``a`` incremented, another result); an index
    out of range read past the array.  Operands that cannot fault stay one expression."""
    path = module(tmp_path, """
    def bump(a: Array[f64]) -> float:
        a[0] = a[0] + 1.0
        return a[0]


    def f(a: Array[f64], x: float, y: float) -> float:
        if x < 0.0 < y < bump(a) < 10.0:
            return x
        return a[0] * x


    def at(a: Array[f64], i: int, x: float) -> float:
        return x * 2.0 if x < 0.0 < a[i] else x
    """)
    m = adgen.load(path, modes=("primal", "reverse"), debug=True)
    spec = importlib.util.spec_from_file_location("chain_py", path)
    py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(py)  # type: ignore[union-attr]
    for x, y in ((2.0, 1.0), (-1.0, -1.0), (-1.0, 1.0), (2.0, -1.0), (-1.0, 20.0)):
        a_c, a_py = np.array([1.0]), np.array([1.0])
        assert (m.f(a_c, x, y), a_c.tolist()) == (py.f(a_py, x, y), a_py.tolist()), (x, y)
    assert m.at(np.array([1.0]), 5, 3.0) == 3.0  # i out of range, never read (a debug build)
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert "if ((x < 0.0) && (0.0 < y)) {" in text, text
    report = adgen.check(path, args={"f": (np.array([1.0]), -1.0, 1.0)}, functions=("f",),
                         modes=("forward", "reverse"))
    assert report.ok, report.table()


def test_the_arm_a_conditional_expression_does_not_take_adds_no_nan(tmp_path: Path) -> None:
    """``1.0 / y if x > 0.0 else 0.0`` was computed as a select, both arms: the adjoint of
    the arm not taken multiplied its partials (-inf at y = 0, NaN for ``x ** 1.5`` at
    x < 0) by a zero adjoint, NaN, where CPython never evaluates that arm (the derivative
    is 0).  Such arms are branches now; arms whose partials are finite stay a select."""
    path = module(tmp_path, """
    def f(x: float, y: float) -> float:
        return 1.0 / y if x > 0.0 else x


    def g(x: float) -> float:
        return x ** 1.5 if x > 0.0 else 0.0


    def h(x: Array[f64]) -> float:
        s = 0.0
        for i in range(len(x)):
            t = x[i]
            s += 1.0 / t if t > 0.0 else t
        return s


    def k(x: float, y: float) -> float:
        return x * x / 2.0 if x > y ** 2 else x - y * -3.0
    """)
    m = adgen.load(path, modes=("primal", "forward", "reverse", "hvp"))
    assert m.f.vjp((-1.0, 0.0), 1.0)[1] == (1.0, 0.0)
    assert m.g.vjp((-1.0,), 1.0)[1] == (0.0,)
    assert m.g.hvp((-1.0,), (1.0,)) == (0.0,)
    assert m.h.vjp((np.array([1.0, 0.0, -2.0]),), 1.0)[1][0].tolist() == [-1.0, 1.0, 1.0]
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert "return x > y * y ? x * x / 2.0 : x - y * -3.0;" in text, text
    report = adgen.check(path, args={"f": (-1.0, 0.0), "g": (-1.0,), "k": (0.5, 2.0),
                                     "h": (np.array([1.0, -0.5, -2.0]),)})
    assert report.ok, report.table()


def test_a_branch_that_a_constant_test_skips_is_not_lowered(tmp_path: Path) -> None:
    """``if SCALE != 0.0: return x / SCALE`` with ``SCALE = 0.0`` was refused as a division
    by the constant zero, and ``if v > 0.25: return v ** 0.5`` with ``v = -1.25`` as a
    complex number, where CPython runs both (it never evaluates the branch the test skips).
    Such a branch is not lowered, as code after a return is not; one that runs is still
    refused."""
    path = module(tmp_path, """
    SCALE = 0.0
    DEBUG = False
    STEPS = 2


    def f(x: float) -> float:
        if SCALE != 0.0:
            return x / SCALE
        return 2.0 * x


    def g(x: float, n: int) -> float:
        if SCALE > 0.0:
            y = x / SCALE
        else:
            y = x * x
        if DEBUG:
            y += n % 0
        elif STEPS > 1 and SCALE == 0.0:
            y = y * 3.0
        else:
            y = y - 1.0
        return y


    def h(x: float) -> float:
        v = -1.25
        if v > 0.25:
            return v ** 0.5
        return math.sin(x)


    def k(y: float) -> float:
        x = 1 if DEBUG else 2.5
        x += 0.5
        return x * y
    """)
    m = adgen.load(path, modes=("primal", "forward", "reverse"))
    assert m.f(1.5) == 3.0 and m.g(2.0, 3) == 12.0 and m.h(0.5) == math.sin(0.5)
    # a conditional expression keeps the type of both arms, as before (a float here; its
    # test known when compiling does not make it the int of the arm taken)
    assert m.k(2.0) == 6.0
    assert m.f.vjp((1.5,), 1.0)[1] == (2.0,)
    assert m.g.vjp((2.0, 3), 1.0)[1] == (12.0, None)
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert functions_of(text)["f"] == "    /* m.py:15: return 2.0 * x */\n    return 2.0 * x;\n"
    assert "% 0" not in text and "pow" not in text, text
    report = adgen.check(path, args={"f": (1.5,), "g": (2.0, 3), "h": (0.5,), "k": (2.0,)})
    assert report.ok, report.table()
    reached = module(tmp_path, """
    SCALE = 0.0


    def f(x: float, y: float) -> float:
        if y > SCALE:
            return x / SCALE
        return x
    """, "reached")
    with pytest.raises(adgen.LoadError, match="division by the constant zero"):
        adgen.load(reached, modes=("primal",))


def test_a_while_test_known_when_compiling(tmp_path: Path) -> None:
    """``while running:`` of a local the loop does not change is ``while True:`` (it needed a
    return after it: "can reach its end without returning"); ``while DEBUG:`` of a false
    module constant never runs and is not lowered (its ``x / SCALE`` was a division by the
    constant zero)."""
    path = module(tmp_path, """
    DEBUG = False
    SCALE = 0.0


    def f(x: float, n: int) -> float:
        running = 1
        k = 0
        while running:
            x = x * 0.5 + math.sin(x)
            k += 1
            if k >= n:
                return x


    def g(x: float) -> float:
        while DEBUG:
            x = x / SCALE
        return x * x


    def h(x: float) -> float:
        while SCALE >= 0.0:
            x = x * 0.5
            if x < 0.1:
                return x
    """)
    m = adgen.load(path, modes=("primal", "reverse"))
    assert m.g(3.0) == 9.0 and m.h(1.0) == 0.0625
    text = m.transpiled.outputs["primal"].source.text  # type: ignore[attr-defined]
    assert "while (true) {" in functions_of(text)["f"], text
    assert functions_of(text)["g"] == "    /* m.py:24: return x * x */\n    return x * x;\n", text
    report = adgen.check(path, args={"f": (0.7, 4), "g": (1.5,), "h": (1.3,)},
                         modes=("forward", "reverse"))
    assert report.ok, report.table()


def test_overwritten_elements_need_no_record(tmp_path: Path) -> None:
    """Writing an input array in place: the reverse sweep uses the loaded values, so the
    old contents are never saved, and the adjoint is still exact."""
    path = module(tmp_path, """
    def smooth(x: Array[f64], w: float) -> None:
        for it in range(3):
            for i in range(1, len(x) - 1):
                x[i] = x[i] + w * (x[i - 1] - 2.0 * x[i] + x[i + 1])
    """)
    report = adgen.check(path, modes=("forward", "reverse", "vector-reverse"))
    assert report.ok, report.table()


def test_adjoint_is_reentrant_across_threads(tmp_path: Path) -> None:
    """Eight threads calling the same adjoint on different inputs get the serial results."""
    path = module(tmp_path, POW_LOOP + textwrap.dedent("""

    def total(x: Array[f64], p: float) -> float:
        s = 0.0
        for i in range(len(x)):
            s += pow_loop(x[i], 200) * p
            if s > 1.0e6:
                s = s * 0.5
        return s
    """))
    m = adgen.load(path, modes=("reverse",))
    rng = np.random.default_rng(1)
    inputs = [(rng.uniform(0.99, 1.01, 2000), float(rng.uniform(0.5, 1.5))) for _ in range(8)]
    serial = [m.total.vjp((x.copy(), p), 1.0) for x, p in inputs]
    results: list[object] = [None] * 8

    def work(k: int) -> None:
        for _ in range(5):
            results[k] = m.total.vjp((inputs[k][0].copy(), inputs[k][1]), 1.0)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (v1, (g1, p1)), got in zip(serial, results, strict=True):
        v2, (g2, p2) = got  # type: ignore[misc]
        assert v1 == v2 and p1 == p2
        assert np.array_equal(g1, g2)


def test_vjp_and_grad_api(tmp_path: Path) -> None:
    path = module(tmp_path, """
    def scale(x: Array[f64], a: float, n: int) -> tuple[float, float]:
        s = 0.0
        for i in range(len(x)):
            x[i] = a * x[i]
            s += x[i] * x[i]
        return s, a * n
    """)
    m = adgen.load(path, modes=("forward", "reverse", "vector-reverse"))
    x = np.array([1.0, 2.0, 3.0])
    # ybar per returned value; x is written in place, so it has an output adjoint too
    xbar_out = np.array([1.0, 0.0, -1.0])
    value, (xb, ab, nb) = m.scale.vjp((x, 2.0, 3), (1.0, 0.5), out_bars={"x": xbar_out})
    assert np.array_equal(x, [2.0, 4.0, 6.0])  # written in place, as the primal does
    assert value == (56.0, 6.0)
    assert nb is None
    # s = a^2 sum x0^2, out x = a x0: xb = 2 a^2 x0 + a * xbar_out
    assert np.allclose(xb, 2 * 4.0 * np.array([1.0, 2.0, 3.0]) + 2.0 * xbar_out)
    assert ab == pytest.approx(2 * 2.0 * 14.0 + 0.5 * 3 + float(np.dot(xbar_out, [1, 2, 3])))
    with pytest.raises(TypeError, match="grad needs a function returning one float"):
        m.scale.grad(x, 2.0, 3)
    with pytest.raises(ValueError, match="one entry per returned value"):
        m.scale.vjp((x, 2.0, 3), (1.0,))
    with pytest.raises(ValueError, match="out_bars names 'y'"):
        m.scale.vjp((x, 2.0, 3), (1.0, 0.0), out_bars={"y": xbar_out})
    # vector mode: one column per adjoint direction
    value, (xbv, abv, _) = m.scale.vjp_vec((np.array([1.0, 2.0, 3.0]), 2.0, 3),
                                           (np.array([1.0, 0.0]), np.array([0.5, 1.0])))
    assert xbv.shape == (3, 2) and abv.shape == (2,)
    assert np.allclose(xbv[:, 0], 8.0 * np.array([1.0, 2.0, 3.0]))
    assert np.allclose(xbv[:, 1], 0.0)


def test_grad_of_scalar_function(tmp_path: Path) -> None:
    m = adgen.load("examples/rosenbrock.py" if Path("examples/rosenbrock.py").exists() else
                   str(Path(__file__).parent.parent / "examples" / "rosenbrock.py"),
                   modes=("reverse",))
    x = np.array([1.0, 1.0, 1.0, 1.0])
    (g,) = m.rosenbrock.grad(x)
    assert np.array_equal(g, np.zeros(4))  # the minimum
    x = np.array([0.5, 1.5])
    (g,) = m.rosenbrock.grad(x)
    # d/dx0 = -400 x0 (x1 - x0^2) - 2 (1 - x0); d/dx1 = 200 (x1 - x0^2)
    assert np.allclose(g, [-400 * 0.5 * 1.25 - 1.0, 200 * 1.25])


def test_directives_choose_store_or_recompute(tmp_path: Path) -> None:
    """``# adgen: store`` saves what the default recomputes; ``# adgen: recompute`` recomputes
    what the default saves; the adjoint is the same."""
    body = """
    def f(x: Array[f64], y: float) -> float:
        s = 0.0
        for i in range(len(x)):{directive}
            s = 0.5 * s + math.exp(x[i] * y) * x[i]
        return s
    """
    x = np.linspace(0.5, 1.5, 40)
    grads = {}
    for name, directive, tape in (("default", "", 8 * 40), ("store", "  # adgen: store", 16 * 40),
                                  ("recompute", "  # adgen: recompute", 0)):
        m = adgen.load(module(tmp_path, body.format(directive=directive), name), modes=("reverse",))
        grads[name] = m.f.grad(x, 0.7)
        assert m.tape_bytes() == tape, name
    assert np.allclose(grads["default"][0], grads["store"][0], rtol=1e-14)
    assert np.allclose(grads["default"][0], grads["recompute"][0], rtol=1e-14)
    assert grads["default"][1] == pytest.approx(grads["recompute"][1], rel=1e-14)


def test_loads_after_the_last_write_are_reloaded(tmp_path: Path) -> None:
    """The first loop overwrites x[i] after reading it: the old value is saved (8 bytes per
    element).  The second reads x after every write: it is read again, nothing is saved."""
    path = module(tmp_path, """
    def f(x: Array[f64], a: float) -> float:
        for i in range(len(x)):
            x[i] = a * x[i]
        s = 0.0
        for i in range(len(x)):
            s += x[i] * x[i]
        return s
    """)
    m = adgen.load(path, modes=("reverse",))
    x = np.linspace(0.5, 1.5, 30)
    _, (xb, ab) = m.f.vjp((x.copy(), 0.7), 1.0)
    assert m.tape_bytes() == 8 * len(x)
    assert np.allclose(xb, 2 * 0.7 * 0.7 * x)
    assert ab == pytest.approx(2 * 0.7 * float(np.dot(x, x)))


def test_adjoint_of_a_function_returning_nothing_returns_void(tmp_path: Path) -> None:
    from adgen.api import transpile
    path = module(tmp_path, """
    def smooth(x: Array[f64], w: float) -> None:
        for i in range(1, len(x) - 1):
            x[i] = x[i] + w * (x[i - 1] - 2.0 * x[i] + x[i + 1])
    """)
    header = transpile(path, ["reverse"]).outputs["reverse"].header.text  # type: ignore[attr-defined]
    assert "void smooth_b(double *x, double *xb, int64_t x_shape0, double w, double *wb);" in header
    assert "returns the value" not in header


def test_adjoint_does_not_depend_on_where_objects_live() -> None:
    # The adjoint builder keys tables by id(); an object it dropped must not lend its id to a
    # new one.  The failure showed only in a process that had allocated a lot before, so
    # transpile the module that exposed it many times with allocations of varying sizes in
    # between: the output must always verify and be the same text.
    import random

    from adgen.transpile.pipeline import transpile_source

    path = Path(__file__).parent / "regressions" / "id_reused_after_sweep_simplification.py"
    source = path.read_text()
    rng = random.Random(0)
    junk: list[list[object]] = []
    texts = set()
    for _ in range(40):
        junk.append([object() for _ in range(rng.randint(1, 5000))])
        if len(junk) > 20:
            junk.pop(rng.randrange(len(junk)))
        t = transpile_source(str(path), source, ["reverse"])
        texts.add(t.outputs["reverse"].source.text)  # type: ignore[attr-defined]
    assert len(texts) == 1


def test_checkpointed_call_holds_one_call_on_the_tape(tmp_path: Path) -> None:
    # g tapes m values a call; f calls it n times.  Taped, f_b holds n * m records at once;
    # with '# adgen: checkpoint' the forward sweep calls the primal g and the reverse sweep
    # runs g_fwd right before g_bwd, so the tape holds one call's m records (plus the saved
    # argument w[i]: reloaded from w here, so nothing).  (s decays: with 's += g(...)' the
    # adjoint of each call would be known in the forward sweep, which would call g_b whole,
    # one call's records at a time too: test_joint.py)
    path = tmp_path / "ck.py"
    path.write_text(textwrap.dedent('''
        import math

        from adgen import Array, f64


        def g(x: float, m: int) -> float:
            r = x
            for k in range(m):
                r = math.sin(r) + 0.5 * x
            return r


        def f(w: Array[f64], m: int) -> float:
            s = 0.0
            for i in range(len(w)):
                s = 0.9 * s + g(w[i], m)  # adgen: checkpoint
            return s


        def f_taped(w: Array[f64], m: int) -> float:
            s = 0.0
            for i in range(len(w)):
                s = 0.9 * s + g(w[i], m)
            return s
        ''').lstrip())
    m = adgen.load(str(path), modes=("reverse",))
    w, steps = np.linspace(0.1, 1.0, 100), 50
    checkpointed, _ = m.f.grad(w, steps)
    bytes_checkpointed = m.tape_bytes()
    taped, _ = m.f_taped.grad(w, steps)
    bytes_taped = m.tape_bytes()
    assert np.array_equal(checkpointed, taped)
    assert bytes_taped == 100 * 50 * 8 and bytes_checkpointed == 50 * 8
    text = m.transpiled.outputs["reverse"].source.text
    body = text[text.index("double f_b("):]
    body = body[:body.index("\n}\n")]
    assert "double tmp = g(w[i], m);" in body  # the primal in the forward sweep
    assert body.index("g_fwd(&tape") < body.index("g_bwd(&tape")  # both in the reverse sweep
    report = adgen.check(str(path), modes=("reverse", "hvp"))
    assert report.ok, report.table()


def test_split_halves_read_again_the_arrays_every_caller_keeps(tmp_path: Path) -> None:
    # g is called from another adjoint, so it has g_fwd / g_bwd.  In `kept`, x is a parameter
    # nothing writes after the calls: g_bwd reads x[i] again instead of saving it.  In
    # `overwritten`, the caller writes x after the first call: g_bwd must get it from the tape.
    path = tmp_path / "split.py"
    path.write_text(textwrap.dedent('''
        import math

        from adgen import Array, f64


        def g(x: Array[f64], a: float) -> float:
            s = 0.0
            for i in range(len(x)):
                s += math.sin(x[i] * a)
            return s


        def kept(x: Array[f64], a: float) -> float:
            return g(x, a) * g(x, 2.0 * a)


        def h(y: Array[f64], a: float) -> float:
            s = 0.0
            for i in range(len(y)):
                s += math.cos(y[i] * a)
            return s


        def overwritten(y: Array[f64], a: float) -> float:
            t = h(y, a)
            y[0] = 2.0 * y[0]
            return t * h(y, a)
        ''').lstrip())
    m = adgen.load(str(path), modes=("reverse",))
    x = np.linspace(0.1, 1.0, 100)
    m.kept.grad(x, 0.7)
    assert m.tape_bytes() == 0  # x[i] read again in g_bwd, sin's cosine recomputed
    m.overwritten.vjp((x.copy(), 0.7), 1.0)
    # y[i] of the first call of h saved; the second call's adjoint, t * retb, is known in the
    # forward sweep, which calls h_b whole (after the write of y[0]: ad/joint.py)
    assert m.tape_bytes() == 100 * 8
    assert re.search(r"= h_b\(y, yb, y_shape0, a, &\w+, t \* retb\);",
                     m.transpiled.outputs["reverse"].source.text)
    text = m.transpiled.outputs["reverse"].source.text
    bwd = text[text.index("static void g_bwd("):]
    assert "x[i]" in bwd[:bwd.index("\n}\n")]
    report = adgen.check(str(path), modes=("reverse",))
    assert report.ok, report.table()


#: a time-stepping loop (x, v carried; an inner loop and an exp a step), {directive} its
#: directive comment
TIME_LOOP = textwrap.dedent('''
    import math

    from adgen import Array, f64


    def integrate(x0: float, h: float, w: Array[f64], steps: int) -> float:
        x = x0
        v = 0.0
        for t in range(steps):{directive}
            force = 0.0
            for j in range(len(w)):
                force += w[j] * math.sin(x * (j + 1))
            v = v + h * force * math.exp(-0.1 * v * v)
            x = x + h * v
        return x * x + v
    ''').lstrip()


def test_checkpointed_loop_tapes_its_carried_values_only(tmp_path: Path) -> None:
    # a time-stepping loop: x and v carried, an inner loop and exp per step.  Taped, each step
    # saves the exp and values it carries and computes (the inner loop only adds up sines,
    # which its reverse computes again); with '# adgen: checkpoint' the forward sweep saves x
    # and v (16 bytes a step) and the reverse sweep computes each step again from them
    source = TIME_LOOP
    grads, tapes = [], []
    for name, directive in (("taped", ""), ("checkpointed", "  # adgen: checkpoint")):
        path = tmp_path / f"{name}.py"
        path.write_text(source.format(directive=directive))
        m = adgen.load(str(path), modes=("reverse",))
        grads.append(m.integrate.grad(0.3, 0.01, np.linspace(0.5, 1.0, 8), 1000))
        tapes.append(m.tape_bytes())
        if directive:
            report = adgen.check(str(path), modes=("forward", "reverse", "hvp"))
            assert report.ok, report.table()
    for a, b in zip(*grads):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-13)
    # 4 values a step (32 bytes) against the 2 carried ones (16 bytes)
    assert tapes[0] == 1000 * 32
    assert tapes[1] == 1000 * 16


def test_a_checkpointed_loop_may_read_a_local_array(tmp_path: Path) -> None:
    # f_b's local arrays live until its return, after the reverse sweep: buf, written before
    # the loop, is read there again ("'buf' is a local array" refused it, against the docs)
    source = ("import math\n\nfrom adgen import zeros\n\n\n"
              "def ck_local(x: float, n: int) -> float:\n"
              "    buf = zeros(n + 1)\n"
              "    for i in range(n + 1):\n"
              "        buf[i] = math.cos(x * i)\n"
              "    a = x\n"
              "    for t in range(n):  # adgen: {directive}\n"
              "        a = a * buf[t] + math.sin(a * buf[t + 1])\n"
              "    return a\n")
    for directive, per_step in (("checkpoint", 8), ("binomial(3)", 0)):
        path = tmp_path / f"cklocal_{per_step}.py"
        path.write_text(source.format(directive=directive))
        m = adgen.load(str(path), modes=("reverse",))
        m.ck_local.grad(0.7, 1000)
        assert m.tape_bytes() == 1000 * per_step, directive
        report = adgen.check(str(path), modes=("forward", "reverse", "hvp"),
                             args={"ck_local": [0.7, 50]})
        assert report.ok, report.table()


def test_binomial_checkpointing_of_a_long_time_loop(tmp_path: Path) -> None:
    # 100,000 steps with at most 20 snapshots: the tape stays empty (the state snapshots are
    # the 20 slots of local arrays; a step's sines are computed again), and the gradient is
    # the taped one
    source = TIME_LOOP
    grads, tapes = [], []
    for name, directive in (("taped", ""), ("binomial", "  # adgen: binomial(20)")):
        path = tmp_path / f"{name}.py"
        path.write_text(source.format(directive=directive))
        m = adgen.load(str(path), modes=("reverse",))
        grads.append(m.integrate.grad(0.3, 0.001, np.linspace(0.5, 1.0, 8), 100_000))
        tapes.append(m.tape_bytes())
        if directive:
            text = m.transpiled.outputs["reverse"].source.text
            assert "adgen_revolve_split(" in text and "double *x_snap = adgen_calloc" in text
            report = adgen.check(str(path), modes=("forward", "reverse", "hvp"),
                                 args={"integrate": (0.3, 0.01, np.linspace(0.5, 1.0, 3), 37)})
            assert report.ok, report.table()
    for a, b in zip(*grads):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-13)
    assert tapes[0] == 100_000 * 32 and tapes[1] == 0


@pytest.mark.parametrize("steps, snapshots", [(1, 1), (2, 1), (7, 1), (10, 2), (100, 3),
                                              (1000, 5), (100_000, 20), (12_345, 7)])
def test_the_binomial_schedule(steps: int, snapshots: int) -> None:
    # the reverse sweep's driver (rev_binomial), run in Python: every step is reversed once,
    # in order, never more than k snapshots are held, and no step is computed more than
    # r + 1 times, r the least number of sweeps with C(k + r, k) >= steps (revolve's bound)
    from math import comb

    from adgen.transpile.ir.prims import revolve_split
    computed = [0] * steps
    reversed_steps = []
    stack = [0]
    end = steps
    while end > 0:
        t0 = stack[-1]
        if end - t0 > 1 and len(stack) < snapshots:
            m = t0 + revolve_split(end - t0, snapshots - len(stack) + 1)
            assert t0 < m < end
            for t in range(t0, m):
                computed[t] += 1
            stack.append(m)
        else:
            end -= 1
            for t in range(t0, end + 1):  # advance to end - 1, then the step itself
                computed[t] += 1
            reversed_steps.append(end)
            if t0 == end:
                stack.pop()
        assert len(stack) <= snapshots
    assert reversed_steps == list(range(steps - 1, -1, -1))
    r = 0
    while comb(snapshots + r, snapshots) < steps:
        r += 1
    assert max(computed) <= r + 1, (max(computed), r)


def test_checkpointed_call_of_a_local_array_kept_until_the_reverse_sweep(tmp_path: Path) -> None:
    # a local array written before the call and not after: f_b still holds it when the
    # reverse sweep runs g_fwd again, so the checkpoint is allowed (and correct)
    path = tmp_path / "cklocal.py"
    path.write_text(textwrap.dedent('''
        import math

        from adgen import Array, f64, zeros


        def g(a: Array[f64], x: float) -> float:
            s = 0.0
            for i in range(len(a)):
                s += math.sin(a[i] * x)
            return s


        def f(x: float, n: int) -> float:
            a = zeros(n)
            for i in range(n):
                a[i] = x * i
            return g(a, x)  # adgen: checkpoint
        ''').lstrip())
    report = adgen.check(str(path), modes=("reverse", "hvp"))
    assert report.ok, report.table()
    text = adgen.load(str(path), modes=("reverse",)).transpiled.outputs["reverse"].source.text
    body = text[text.index("double f_b("):]
    assert "g_fwd(&tape, a, " in body and "g(a, " in body


def test_a_relu_layer_adjoint_skips_the_units_it_cut_off(tmp_path: Path) -> None:
    """The adjoint of ``z += W[k, i] * x[i]`` adds ``x * zb`` to a row of ``Wb``; behind a
    relu ``zb`` is zero for the units cut off, and that loop is skipped
    (transforms/skip_zero.py): the gradient is the same, checked three ways and against
    the outer product of the relu's mask and x."""
    path = module(tmp_path, """
    def relu_layer(W: Array[f64, 2], x: Array[f64], y: Array[f64]) -> f64:
        s = 0.0
        for k in range(W.shape[0]):
            z = 0.0
            for i in range(W.shape[1]):
                z += W[k, i] * x[i]
            y[k] = max(z, 0.0)
            s += 0.5 * y[k] * y[k]
        return s
    """)
    assert "if (zb != 0.0) {" in c_source(path)
    rng = np.random.default_rng(3)
    W = rng.normal(size=(12, 7))
    x = rng.normal(size=7)
    z = W @ x
    mask = z > 0.0
    assert 0 < mask.sum() < len(z)  # units on both sides of the relu
    m = adgen.load(path, modes=("primal", "reverse"))
    Wb, xb, _ = m.relu_layer.grad(W, x, np.zeros(12))
    assert np.allclose(Wb, np.outer(mask * z, x), rtol=1e-13, atol=0.0)
    assert np.allclose(xb, W.T @ (mask * z), rtol=1e-13, atol=1e-15)
    report = adgen.check(path, args={"relu_layer": [W, x, np.zeros(12)]})
    assert report.ok, report


def test_a_forward_sweep_loop_is_never_skipped(tmp_path: Path) -> None:
    """A primal loop in an adjoint (its forward sweep, a helper's copy) keeps running when
    its factor is zero: ``a[i] += x[i] * c`` with ``c = 0`` turns ``-0.0`` into ``0.0``
    (which ``atan2`` tells apart) and ``inf * 0`` into NaN, and the adjoint must see the
    values the primal computes (transforms/skip_zero.py guards derivative loops only)."""
    path = module(tmp_path, """
    def g(a: Array[f64], x: Array[f64], c: f64) -> None:
        for i in range(len(a)):
            a[i] += x[i] * c


    def f(a: Array[f64], x: Array[f64], c: f64, z: f64) -> f64:
        for i in range(len(a)):
            a[i] += x[i] * c
        return math.atan2(a[0], -1.0) * z


    def h(x: Array[f64], c: f64, z: f64) -> f64:
        a = zeros(len(x))
        a[0] = -c
        g(a, x, c)
        return math.atan2(a[0], -1.0) * z + a[1] * z
    """)
    m = adgen.load(path, modes=("primal", "reverse"))
    val, (_, _, _, zb) = m.f.vjp((np.array([-0.0, 2.0]), np.array([1.0, 1.0]), 0.0, 1.0), 1.0)
    assert val == zb == math.pi
    val, (_, _, zb) = m.h.vjp((np.array([1.0, 1.0]), 0.0, 1.0), 1.0)
    assert val == zb == math.pi
    val, _ = m.h.vjp((np.array([1.0, np.inf]), 0.0, 1.0), 1.0)
    assert math.isnan(val) and math.isnan(m.h(np.array([1.0, np.inf]), 0.0, 1.0))
