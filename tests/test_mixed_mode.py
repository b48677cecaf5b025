"""'# adgen: forward-in-reverse' on a prange (seed 003's mixed mode): each adjoint iteration
computes the iteration's Jacobian in forward mode and applies its transpose.

The gradients must be those of the ordinary adjoint to rounding, on the HM-LSTM cell of
examples/kernels.py (the same source with the directive added) and on loops with branches,
sums, free scalars, neighbours' elements, inner loops and a split adjoint; in sequence, with
OpenMP and in the CUDA emulation.  Where the directive cannot apply, a located error.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from helpers import EMULATED_AND_GPU, ROOT, compile_strict, run_cli
from test_diagnostics import CASES as DIAGNOSTICS

KERNELS = ROOT / "examples" / "kernels.py"
DIRECTIVE = "# adgen: forward-in-reverse"


def _benchmark():  # type: ignore[no-untyped-def]
    path = ROOT / "benchmarks" / "mixed_mode.py"
    spec = importlib.util.spec_from_file_location("mixed_mode", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _benchmark()

#: loops the directive applies to, besides the HM-LSTM cell
CASES = textwrap.dedent('''
    import math

    from adgen import Array, f64, prange


    def softplus_sum(x: Array[f64], w: float, y: Array[f64]) -> float:
        """A branch, a sum, a free scalar, x[i] read twice around a store to y."""
        s = 0.0
        for i in prange(len(x)):  # adgen: forward-in-reverse
            t = w * x[i]
            if t > 0.0:
                v = t + math.log1p(math.exp(-t))
            else:
                v = math.log1p(math.exp(t))
            y[i] = v * v
            s += v * w - x[i]
        return s


    def stencil(u: Array[f64], a: float, out: Array[f64]) -> float:
        """Neighbours' elements: their adjoints are shared between iterations."""
        total = 0.0
        # adgen: forward-in-reverse
        for i in prange(1, len(u) - 1):
            lap = u[i - 1] - 2.0 * u[i] + u[i + 1]
            out[i] = u[i] + a * lap * abs(lap)
            total += out[i] * out[i]
        return total


    def inner_power(x: Array[f64], y: Array[f64], k: int) -> None:
        """An inner loop carrying an active value (one direction)."""
        for i in prange(len(x)):  # adgen: forward-in-reverse
            p = 1.0
            xi = x[i]
            for j in range(k):
                p = p * xi + math.sin(p)
            y[i] = p


    def clipped(x: Array[f64], y: Array[f64], b: float) -> float:
        """An element stored, then read again by its iteration; min/max in branches."""
        acc = 0.0
        for i in prange(len(x)):  # adgen: forward-in-reverse
            y[i] = x[i] * b
            if y[i] > 1.0:
                acc -= max(y[i], b)
            elif x[i] < -0.5:
                acc += min(x[i] * x[i], 2.0 * b)
        return acc


    def either(x: Array[f64], y: Array[f64], flag: Array[f64], out: Array[f64]) -> None:
        """x[i] and y[i], read in different branches, share a direction that flows out."""
        for i in prange(len(x)):  # adgen: forward-in-reverse
            if flag[i] > 0.0:
                t = math.sin(x[i])
            else:
                t = y[i] * y[i]
            out[i] = t * math.exp(t)


    def steps(x: Array[f64], w: float, n: int) -> float:
        """A prange in a sequential loop, whose adjoint tapes the free value w."""
        r = 0.0
        for t in range(n):
            w = math.sin(w) + 1.0
            for i in prange(len(x)):  # adgen: forward-in-reverse
                r += math.tanh(w * x[i])
        return r


    def reset(x: Array[f64], y: Array[f64]) -> float:
        """An iteration without inputs: it only resets the adjoints of what it stores."""
        s = 0.0
        for i in range(len(x)):
            s += x[i] * y[i]
        for i in prange(len(y)):  # adgen: forward-in-reverse
            y[i] = 1.0
        return s


    def caller(x: Array[f64], w: float, y: Array[f64]) -> float:
        """softplus_sum's adjoint in split halves (_fwd, _bwd)."""
        s = 0.0
        for k in range(2):
            s += softplus_sum(x, w + k, y)
        return s


    def reread(x: Array[f64], y: Array[f64]) -> float:
        """x[i] read before an if and again in both branches (one direction): the branches'
        loads take its adjoint, the first load none (it was added twice)."""
        s = 0.0
        for i in prange(len(x)):  # adgen: forward-in-reverse
            a = x[i]
            if a > 0.0:
                y[i] = x[i] * 2.0
            else:
                y[i] = x[i] * 3.0
            t = x[i] if a > 0.5 else 2.0 * x[i]
            s += t + a * a
        return s
''')


def _inputs(rng: np.random.Generator, n: int) -> dict[str, tuple]:
    return {
        "softplus_sum": (rng.standard_normal(n), 0.7, np.zeros(n)),
        "stencil": (rng.standard_normal(n), 0.3, np.zeros(n)),
        "inner_power": (0.5 * rng.standard_normal(n), np.zeros(n), 4),
        "clipped": (2.0 * rng.standard_normal(n), np.zeros(n), 0.9),
        "either": (rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n),
                   np.zeros(n)),
        "steps": (rng.standard_normal(n), 0.4, 3),
        "reset": (rng.standard_normal(n), rng.standard_normal(n)),
        "caller": (rng.standard_normal(n), 0.7, np.zeros(n)),
        "reread": (rng.standard_normal(n), np.zeros(n)),
    }


def _without_directive(source: str) -> str:
    plain = re.sub(r" *# adgen: forward-in-reverse", "", source)
    assert DIRECTIVE not in plain
    return plain


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The HM-LSTM cell with the directive, and CASES with and without it."""
    d = tmp_path_factory.mktemp("mixed")
    out = {"hm_mixed": d / "kernels_mixed.py", "cases": d / "cases.py",
           "cases_plain": d / "cases_plain.py"}
    out["hm_mixed"].write_text(BENCH.mixed_source())
    out["cases"].write_text(CASES)
    # the ordinary adjoint: a directive keeps it (without one, inner_power would run
    # forward-in-reverse by default)
    out["cases_plain"].write_text(CASES.replace(DIRECTIVE, "# adgen: recompute"))
    return out


def _close(a: object, b: object) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b))))


def test_the_benchmark_variant_is_the_example_with_the_directive() -> None:
    source = BENCH.mixed_source()
    assert source.count(DIRECTIVE) == 1
    assert _without_directive(source) == KERNELS.read_text()


def test_hm_lstm_gradient_equals_plain_reverse(modules: dict[str, Path]) -> None:
    modes = ("reverse", "vector-reverse")
    mixed = adgen.load(str(modules["hm_mixed"]), modes=modes, functions=["hm_lstm"]).hm_lstm
    plain = adgen.load(str(KERNELS), modes=modes, functions=["hm_lstm"]).hm_lstm
    args, bars = BENCH.inputs(2000, seed=5)
    flags = args[2] + 2.0 * args[3]
    assert {0.0, 1.0, 2.0, 3.0} <= set(flags.tolist())  # every branch is taken
    for call, bar in (("vjp", bars), ("vjp_vec", {k: np.stack([v, 2.0 * v, -v], axis=1)
                                                  for k, v in bars.items()})):
        got = getattr(mixed, call)(tuple(a.copy() for a in args), None,
                                   out_bars={k: v.copy() for k, v in bar.items()})
        want = getattr(plain, call)(tuple(a.copy() for a in args), None,
                                    out_bars={k: v.copy() for k, v in bar.items()})
        differentiated = [(a, b) for a, b in zip(got[1], want[1], strict=True) if b is not None]
        assert len(differentiated) == 6
        for a, b in differentiated:
            assert _close(a, b) < 1e-13, call
        assert any(np.any(b != 0) for _, b in differentiated)


def test_hm_lstm_passes_the_three_way_check(modules: dict[str, Path]) -> None:
    report = adgen.check(str(modules["hm_mixed"]), modes=("forward", "reverse", "vector-reverse",
                                                          "hvp"), functions=["hm_lstm"])
    assert report.ok, "\n" + report.table()
    assert "adjoint vs tangent (dot product)" in {r.check for r in report.rows}


def test_the_adjoint_loop_reads_as_forward_in_reverse(modules: dict[str, Path],
                                                      tmp_path: Path) -> None:
    emitted = transpile(str(modules["hm_mixed"]), ("reverse",),
                        functions=["hm_lstm"]).outputs["reverse"]
    text = emitted.source.text  # type: ignore[attr-defined]
    code = text[text.index("void hm_lstm_b("):]
    adjoint = code[code.index("/* forward-in-reverse:"):]
    # the comment says what the loop computes, and names the directions
    assert "tangents in 6 directions, one\n       per input (0: z[i, 0], 1: z[i, 1], 2: z[i, 2], " \
        "3: z[i, 3], 4: c[i], 5: c_new[i]); then input\n       adjoints += J^T * output adjoints */" \
        in adjoint
    # tangents named after the source variables and their direction; the inputs' adjoints
    # leave the branches under the element's name; nothing is taped
    for line in ("double fd0 = f / tmp_1 * tmp;", "double gd3 = 1.0 - g * g;",
                 "zb_i_0 = c[i] * fd0 * c_newb_i_2;", "zb[i * z_shape1 + 0] += zb_i_0;",
                 "adgen_tape_bytes_last = 0;"):
        assert line in adjoint, line
    assert "adgen_push" not in code and "adgen_pop" not in code
    src = tmp_path / "kernels_mixed_b.c"
    src.write_text(text)
    (tmp_path / "kernels_mixed_b.h").write_text(emitted.header.text)  # type: ignore[attr-defined]
    shutil.copy(ROOT / "adgen" / "runtime_c" / "adgen_runtime.h", tmp_path)
    cc = compile_strict(src, tmp_path / "b.o", "-fopenmp")
    assert cc.returncode == 0, cc.stderr


def test_other_loops_give_the_gradient_of_plain_reverse(modules: dict[str, Path]) -> None:
    modes = ("reverse", "vector-reverse")
    mixed = adgen.load(str(modules["cases"]), modes=modes)
    plain = adgen.load(str(modules["cases_plain"]), modes=modes)
    rng = np.random.default_rng(7)
    for name, args in _inputs(rng, 300).items():
        f, g = getattr(mixed, name), getattr(plain, name)
        fn = f._primal.fn
        written = {"softplus_sum": "y", "stencil": "out", "inner_power": "y", "clipped": "y",
                   "either": "out", "reset": "y", "caller": "y", "reread": "y"}
        bars = {written[name]: rng.standard_normal(300)} if name in written else {}
        ybar = 1.3 if fn.results else None

        def call(h, ybar=ybar, bars=bars, args=args):  # type: ignore[no-untyped-def]
            return h.vjp(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args),
                         ybar, out_bars={k: v.copy() for k, v in bars.items()})

        got, want = call(f), call(g)
        pairs = [(a, b) for a, b in zip(got[1], want[1], strict=True) if b is not None]
        assert pairs and any(np.any(np.asarray(b) != 0) for _, b in pairs), name
        for a, b in pairs:
            assert _close(a, b) < 1e-13, name
    # nothing taped for a prange run forward-in-reverse
    mixed.softplus_sum.vjp((rng.standard_normal(9), 0.5, np.zeros(9)), 1.0)
    assert mixed.tape_bytes() == 0


def test_other_loops_pass_the_three_way_check(modules: dict[str, Path]) -> None:
    report = adgen.check(str(modules["cases"]), modes=("forward", "reverse", "vector-reverse",
                                                       "hvp"))
    assert report.ok, "\n" + report.table()
    assert len({r.function for r in report.rows}) == 9


#: runs in a fresh process, so that OMP_NUM_THREADS=2 holds when libgomp starts (libgomp is
#: not fork-safe: no OpenMP build is loaded in the pytest process)
COMPARE = textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import adgen

    hm, cases, cases_plain, kernels, bench = sys.argv[1:6]
    sys.path.insert(0, bench)
    from mixed_mode import inputs
    threads = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
    worst = 0.0

    def close(a, b):
        global worst
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        worst = max(worst, float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b)))))

    par = adgen.load(hm, modes=("reverse",), functions=["hm_lstm"], openmp=True).hm_lstm
    seq = adgen.load(kernels, modes=("reverse",), functions=["hm_lstm"]).hm_lstm
    args, bars = inputs(50000, seed=2)
    cp = lambda: tuple(a.copy() for a in args)
    got = par.vjp(cp(), None, out_bars={k: v.copy() for k, v in bars.items()})[1]
    want = seq.vjp(cp(), None, out_bars={k: v.copy() for k, v in bars.items()})[1]
    for a, b in zip(got, want):
        close(a, b)
    par = adgen.load(cases, modes=("reverse",), openmp=True)
    seq = adgen.load(cases_plain, modes=("reverse",))
    rng = np.random.default_rng(3)
    n = 40000
    for name, args in {"softplus_sum": (rng.standard_normal(n), 0.7, np.zeros(n)),
                       "stencil": (rng.standard_normal(n), 0.3, np.zeros(n))}.items():
        cp = lambda: tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        ob = {"y" if name == "softplus_sum" else "out": rng.standard_normal(n)}
        got = getattr(par, name).vjp(cp(), 1.0, out_bars={k: v.copy() for k, v in ob.items()})
        want = getattr(seq, name).vjp(cp(), 1.0, out_bars={k: v.copy() for k, v in ob.items()})
        close(got[0], want[0])
        for a, b in zip(got[1], want[1]):
            if b is not None:
                close(a, b)
    print(json.dumps({"threads": threads, "worst": worst}))
""")


def test_openmp_gives_the_serial_gradient_with_two_threads(modules: dict[str, Path],
                                                           tmp_path: Path) -> None:
    script = tmp_path / "compare.py"
    script.write_text(COMPARE)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, str(script), str(modules["hm_mixed"]),
                          str(modules["cases"]), str(modules["cases_plain"]), str(KERNELS),
                          str(ROOT / "benchmarks")],
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["threads"] == 2
    assert result["worst"] < 1e-11, result  # only the order of the sums differs


def test_openmp_shares_what_other_iterations_touch(modules: dict[str, Path]) -> None:
    text = transpile(str(modules["cases"]), ("reverse",), functions=["stencil", "softplus_sum"]
                     ).outputs["reverse"].source.text  # type: ignore[attr-defined]
    stencil = text[text.index("double stencil_b("):]
    stencil = stencil[stencil.index("/* forward-in-reverse:"):]
    # u[i - 1] and u[i + 1] are other iterations' u[i]: atomic increments; a is a reduction
    # (one parallel pass: the forward loop fuses with it, out[i] is its iteration's own)
    assert "ADGEN_OMP(omp parallel for reduction(+: total, ab_1))" in stencil
    assert stencil.count("ADGEN_OMP(omp atomic)") == 3
    softplus = text[text.index("double softplus_sum_b("):text.index("double stencil_b(")]
    # nothing taped: the adjoint loop fuses with the forward one into one parallel pass
    assert softplus.count("ADGEN_OMP(omp parallel for reduction(+: s, wb_1))") == 1
    assert softplus.count("for (int64_t i = 0;") == 1


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@EMULATED_AND_GPU
def test_cuda_passes_the_three_way_check(modules: dict[str, Path], emulate: bool) -> None:
    report = adgen.check(str(modules["hm_mixed"]), modes=("primal", "forward", "reverse", "hvp"),
                         functions=["hm_lstm"], target="cuda", emulate=emulate)
    assert report.ok, "\n" + report.table()
    text = transpile(str(modules["hm_mixed"]), ("reverse",), functions=["hm_lstm"],
                     target="cuda").outputs["reverse"].source.text  # type: ignore[attr-defined]
    # one kernel: the forward loop fuses with the forward-in-reverse one (c_new[i] and
    # h_new[i] belong to the iteration)
    assert "hm_lstm_b_kernel1" not in text
    kernel = text[text.index("ADGEN_KERNEL hm_lstm_b_kernel0"):]
    assert "/* forward-in-reverse:" in text[:text.index("ADGEN_KERNEL hm_lstm_b_kernel0")]
    assert "DTAPE" not in kernel.split("\n}\n")[0]  # no per-thread tape


#: the rejections of the directive, from the table of tests/test_diagnostics.py (which checks
#: their messages, lines and columns)
REJECTED = [case for case in DIAGNOSTICS if case[0].startswith("forward-in-reverse")]


def test_rejections_are_those_of_reverse_mode_only(tmp_path: Path) -> None:
    """A loop the directive cannot apply to is rejected by reverse mode with a located error;
    the primal and the tangent do not read the directive, unless it is misplaced (the fence)."""
    assert len(REJECTED) >= 9
    for rule, source, line, col, message, _ in REJECTED:
        path = tmp_path / "m.py"
        path.write_text(source)
        out = tmp_path / "out"
        proc = run_cli(str(path), "--mode", "reverse", "-o", str(out), "-q")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (rule, proc.stderr)
        assert proc.stderr.startswith(f"{path}:{line}:{col}: error: "), (rule, proc.stderr)
        assert message in proc.stderr, (rule, proc.stderr)
        misplaced = "applies to a prange" in message
        proc = run_cli(str(path), "--mode", "primal", "--mode", "forward", "-o", str(out), "-q")
        assert proc.returncode == (2 if misplaced else 0), (rule, proc.stderr)


def test_chosen_by_default_where_the_ordinary_adjoint_tapes(tmp_path: Path) -> None:
    """Without a directive, a prange with an inner loop carrying an active value (the ordinary
    adjoint tapes it in each iteration) runs forward-in-reverse (measured faster, see
    mixed.DEFAULT_MAX_DIRECTIONS), with the same gradient; the HM-LSTM cell (nothing taped)
    keeps the ordinary adjoint, and so does a loop with a directive."""
    default = tmp_path / "power.py"
    default.write_text(BENCH.POWER.format(directive=""))
    ordinary = tmp_path / "power_plain.py"
    ordinary.write_text(BENCH.POWER.format(directive="  # adgen: recompute"))
    outputs = {p: transpile(str(p), ("reverse",)).outputs["reverse"].source.text  # type: ignore[attr-defined]
               for p in (default, ordinary)}
    assert "/* forward-in-reverse:" in outputs[default]
    assert "adgen_push" not in outputs[default]
    assert "/* forward-in-reverse:" not in outputs[ordinary]
    assert "adgen_push" in outputs[ordinary]
    kernels = transpile(str(KERNELS), ("reverse",)).outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert "forward-in-reverse" not in kernels
    rng = np.random.default_rng(3)
    x, bar = 0.5 * rng.standard_normal(500), rng.standard_normal(500)
    got, want = (adgen.load(str(p), modes=("reverse",)).power.vjp(
        (x, np.zeros(500), 16), None, out_bars={"y": bar})[1][0] for p in (default, ordinary))
    assert _close(got, want) < 1e-13 and np.any(want != 0)


def test_the_default_stays_ordinary_where_it_does_not_pay_or_apply(tmp_path: Path) -> None:
    """Up to 8 inputs the inner-loop case runs forward-in-reverse by default, with 9 it keeps
    the ordinary adjoint; so does a loop the directive would reject (an element read in the
    inner loop), silently: no error without the directive."""
    def reverse_text(source: str, name: str) -> str:
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        return transpile(str(path), ("reverse",)).outputs["reverse"].source.text  # type: ignore[attr-defined]

    assert "/* forward-in-reverse:" in reverse_text(BENCH.power_inputs(8, ""), "eight")
    assert "/* forward-in-reverse:" not in reverse_text(BENCH.power_inputs(9, ""), "nine")
    inner_read = BENCH.POWER.format(directive="").replace(
        "        xi = x[i]\n", "").replace("p * xi", "p * x[i]")
    assert "x[i]" in inner_read and "xi" not in inner_read
    text = reverse_text(inner_read, "inner_read")
    assert "/* forward-in-reverse:" not in text and "adgen_push" in text
