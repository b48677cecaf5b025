"""prange loops: parallel with OpenMP, the same derivatives as in sequence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from helpers import ROOT, compile_strict, run_cli

MIXTURE = ROOT / "examples" / "mixture.py"
MODES = ("primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp", "vector-hvp")

#: runs in a fresh process, so that OMP_NUM_THREADS=2 holds when libgomp starts
COMPARE = textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import adgen

    path = sys.argv[1]
    modes = ("forward", "reverse", "vector-reverse", "hvp")
    par = adgen.load(path, modes=modes, openmp=True)
    seq = adgen.load(path, modes=modes)
    threads = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
    rng = np.random.default_rng(1)
    n, d, k = 3000, 3, 4
    cases = {
        "smooth": (rng.standard_normal(40000), np.zeros(40000), 0.3),
        "loglik": (rng.standard_normal((n, d)), rng.standard_normal((k, d)),
                   rng.standard_normal(k), np.zeros(n)),
    }
    worst = 0.0

    def close(a, b):
        global worst
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        scale = max(1.0, float(np.max(np.abs(b))))
        worst = max(worst, float(np.max(np.abs(a - b))) / scale)

    for name, args in cases.items():
        f, g = getattr(par, name), getattr(seq, name)
        copy = lambda: tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        close(f(*copy()), g(*copy()))
        dirs = tuple(rng.standard_normal(np.shape(a)) if isinstance(a, np.ndarray) else 0.7
                     for a in args)
        close(f.jvp(copy(), dirs)[1], g.jvp(copy(), dirs)[1])
        for a, b in zip(f.grad(*copy()), g.grad(*copy())):
            if a is not None:
                close(a, b)
        for a, b in zip(f.hvp(copy(), dirs)[1], g.hvp(copy(), dirs)[1]):
            if a is not None:
                close(a, b)
    print(json.dumps({"threads": threads, "worst": worst}))
""")


def test_openmp_derivatives_equal_serial_ones_with_two_threads(tmp_path: Path) -> None:
    script = tmp_path / "compare.py"
    script.write_text(COMPARE)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, str(script), str(MIXTURE)], capture_output=True,
                         text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["threads"] == 2
    # only the order of the sums differs
    assert result["worst"] < 1e-11, result


def test_generated_code_compiles_cleanly_with_openmp(tmp_path: Path) -> None:
    result = run_cli(str(MIXTURE), *[a for m in MODES for a in ("--mode", m)], "-o", str(tmp_path),
                     "-q")
    assert result.returncode == 0, result.stderr
    for c_file in sorted(tmp_path.glob("*.c")):
        cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"), "-O3", "-fopenmp")
        assert cc.returncode == 0, f"{c_file.name}:\n{cc.stderr}"


def test_what_runs_in_parallel() -> None:
    t = transpile(str(MIXTURE), ["forward", "reverse"])
    tangent = t.outputs["forward"].source.text  # type: ignore[attr-defined]
    adjoint = t.outputs["reverse"].source.text  # type: ignore[attr-defined]
    # the tangent of a sum is a sum
    assert "ADGEN_OMP(omp parallel for reduction(+: total, totald))" in tangent
    # smooth's adjoint: each iteration adds to its neighbours' adjoints, atomically; the
    # adjoint of c is a sum; the adjoint of s (the same in every iteration) is shared
    smooth = adjoint[adjoint.index("double smooth_b("):]
    # (the forward loop fuses with the adjoint one: v[i] is the iteration's own)
    assert "ADGEN_OMP(omp parallel for reduction(+: s, cb_1))" in smooth
    assert smooth.count("ADGEN_OMP(omp atomic)") == 3
    # loglik's adjoint computes each iteration again, taping its inner loops on a tape of
    # the thread's own, in the forward loop (the sum); every iteration adds to all of meansb
    # and logwb: each thread adds to a copy of its own, added to the array at the end (no
    # atomics)
    loglik = adjoint[adjoint.index("double loglik_b("):adjoint.index("double smooth_b(")]
    assert "ADGEN_OMP(omp parallel)\n    {\n        adgen_tape thread_tape = ADGEN_TAPE_INIT;\n" \
        "        double *logwb_t = ADGEN_PRIVATE(double, logwb, logw_shape0);\n" \
        "        double *meansb_t = ADGEN_PRIVATE(double, meansb, means_shape0 * means_shape1);\n" \
        "        ADGEN_OMP(omp for reduction(+: total))\n" in loglik
    assert "meansb_t[k_1 * means_shape1 + j] -= " in loglik and "omp atomic" not in loglik
    assert "ADGEN_PRIVATE_ADD(f64, meansb, meansb_t, means_shape0 * means_shape1);" in loglik
    # each iteration's inner loop takes its exps as one block of the thread's tape
    assert "adgen_push_block(&thread_tape, " in loglik and "adgen_pop_block(&thread_tape, " in loglik
    assert "&tape" not in loglik and "prange run in sequence" not in loglik
    # the forward loop and the adjoint's own forward pass over the iteration are one: the
    # loop that pushes the exps takes the place of the one that only sums them (cse.py), and
    # the nearest mean is found once
    code = [line for line in loglik.splitlines() if "/*" not in line]
    assert sum("= exp(" in line for line in code) == 1
    assert sum("top = logw[k] - 0.5 * d2" in line for line in code) == 1


def test_a_prange_whose_inputs_change_later_is_reversed_in_sequence(tmp_path: Path) -> None:
    # `a` is overwritten after the prange: its adjoint cannot compute the iterations again and
    # pops what the forward sweep taped, in reverse order
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, f64, prange

        def f(a: Array[f64], b: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                t = 0.0
                for j in range(len(b)):
                    t += math.sin(a[i] * b[j])
                s += t * t
            for i in range(len(a)):
                a[i] = 0.0
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert "/* prange run in sequence: it uses the tape, in order */" in adjoint
    assert "thread_tape" not in adjoint
    report = adgen.check(str(path), modes=("forward", "reverse", "hvp"), openmp=True)
    assert report.ok, report.table()


def test_loads_in_a_prange_are_read_again_not_taped() -> None:
    # v[i] is written, then read, by iteration i only: the adjoint reads it again
    m = adgen.load(str(MIXTURE), modes=("reverse",), functions=["smooth"])
    u = np.linspace(0.0, 1.0, 50)
    m.smooth.grad(u, np.zeros(50), 0.25)
    assert m.tape_bytes() == 0


def test_check_with_openmp_from_the_command_line(tmp_path: Path) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="2")
    result = run_cli(str(MIXTURE), "--mode", "forward", "--mode", "reverse", "-o", str(tmp_path),
                     "--check", "--openmp", "-q", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("source, parallel", [
    # a nested prange runs in sequence inside its parent's thread
    ("""
     def f(a: Array[f64, 2]) -> float:
         s = 0.0
         for i in prange(a.shape[0]):
             for j in prange(a.shape[1]):
                 s += a[i, j] * a[i, j]
         return s
     """, {"primal": 1, "reverse": 1}),
    # a dynamic step is not an OpenMP loop
    ("""
     def f(a: Array[f64], step: int) -> float:
         s = 0.0
         for i in prange(0, len(a), step):
             s += a[i]
         return s
     """, {"primal": 0, "reverse": 0}),
])
def test_which_pranges_become_openmp_loops(tmp_path: Path, source: str,
                                           parallel: dict[str, int]) -> None:
    path = tmp_path / "m.py"
    path.write_text("from adgen import Array, f64, prange\n\n" + textwrap.dedent(source))
    t = transpile(str(path), ["primal", "reverse"])
    for mode, emitted in t.outputs.items():
        text = emitted.source.text  # type: ignore[attr-defined]
        assert text.count("ADGEN_OMP(omp parallel for") == parallel[mode], text
    report = adgen.check(str(path), modes=("forward", "reverse"), openmp=True)
    assert report.ok, report.table()


def test_a_call_in_a_prange_is_taped_within_the_iteration(tmp_path: Path) -> None:
    # the adjoint loop calls act_fwd then act_bwd in each iteration (on the thread's tape);
    # the forward sweep, which no longer feeds the reverse, calls the primal act
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, f64, prange

        def act(z: float) -> float:
            return math.tanh(z) if z > 0.0 else 0.1 * z

        def energy(x: Array[f64], w: Array[f64], out: Array[f64], a: f64) -> f64:
            s = 0.0
            for i in prange(len(x) - 1):
                out[i] = act(x[i + 1] - a * x[i]) * w[i]
                s += out[i] * out[i]
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    body = adjoint[adjoint.index("double energy_b("):]
    assert "act(x[i + 1] - a * x[i])" in body and "&tape" not in body
    assert "act_fwd(&thread_tape, " in body and "act_bwd(&thread_tape, " in body
    report = adgen.check(str(path), modes=("forward", "reverse", "hvp"), openmp=True)
    assert report.ok, report.table()
    m = adgen.load(str(path), modes=("reverse",))
    m.energy.grad(np.linspace(-1.0, 1.0, 30), np.ones(30), np.zeros(30), 0.5)
    assert m.tape_bytes() == 0


def test_a_call_whose_adjoint_adds_to_shared_arrays_adds_atomically(
        tmp_path: Path) -> None:
    # helper_bwd adds to xb at every j, as other iterations do: its increments of the arrays
    # it is passed are atomic, and the loop runs in parallel (it ran in sequence)
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, f64, i64, prange

        def helper(x: Array[f64], i: i64, c: f64) -> f64:
            acc = 0.0
            for j in range(len(x)):
                if x[j] > x[i]:
                    acc += math.exp(-(x[j] - x[i]) * c)
            return acc

        def callsin(x: Array[f64], y: Array[f64], c: f64) -> f64:
            s = 0.0
            for i in prange(len(x)):
                y[i] = helper(x, i, c)
                s += y[i] * y[i]
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    helper = adjoint[adjoint.rindex("static void helper_bwd("):].split("\n}\n")[0]
    assert "ADGEN_OMP(omp atomic)\n            xb[i] += tmp_2;\n" \
           "            ADGEN_OMP(omp atomic)\n            xb[j] -= tmp_2;" in helper
    assert "prange run in sequence" not in adjoint
    assert "ADGEN_OMP(omp parallel for reduction(+: cb_1))" in adjoint  # no tape: helper_fwd
    assert "helper_bwd(NULL, " in adjoint  # and helper_bwd record nothing
    report = adgen.check(str(path), modes=("forward", "reverse", "vector-reverse", "hvp"),
                         openmp=True)
    assert report.ok, report.table()
    # two threads give the sequential gradient (a fresh process: OMP_NUM_THREADS at start)
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import adgen
        par = adgen.load(sys.argv[1], modes=("reverse", "vector-reverse", "hvp"), openmp=True)
        seq = adgen.load(sys.argv[1], modes=("reverse", "vector-reverse", "hvp"))
        x = np.linspace(-1.0, 1.0, 2000)
        worst = 0.0
        for f, g in ((par.callsin, seq.callsin),):
            a = f.grad(x.copy(), np.zeros(2000), 0.7)
            b = g.grad(x.copy(), np.zeros(2000), 0.7)
            worst = max(worst, float(np.max(np.abs(a[0] - b[0]))) / float(np.max(np.abs(b[0]))))
            v = f.vjp_vec((x.copy(), np.zeros(2000), 0.7), np.array([1.0, -0.5]))[1][0]
            w = g.vjp_vec((x.copy(), np.zeros(2000), 0.7), np.array([1.0, -0.5]))[1][0]
            worst = max(worst, float(np.max(np.abs(v - w))) / float(np.max(np.abs(w))))
        print(json.dumps(worst))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=env, check=True)
    assert json.loads(out.stdout) < 1e-11, out.stdout



def test_a_prange_in_an_adjoint_called_in_a_prange_adds_atomically(tmp_path: Path) -> None:
    # row_bwd is called inside a prange and has a prange of its own (an OpenMP loop there,
    # one thread per caller's thread): wb[j] belongs to one iteration of row's own loop, but
    # every iteration of the caller's loop adds to it, so its increment is atomic too
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        from adgen import Array, f64, i64, prange

        def row(x: Array[f64], w: Array[f64], i: i64) -> f64:
            acc = 0.0
            for j in prange(len(x)):
                acc += w[j] * x[j] * x[i]
            return acc

        def rows(x: Array[f64], w: Array[f64], y: Array[f64]) -> f64:
            s = 0.0
            for i in prange(len(x)):
                y[i] = row(x, w, i)
                s += y[i] * y[i]
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    row = adjoint[adjoint.rindex("static void row_bwd("):].split("\n}\n")[0]
    assert "ADGEN_OMP(omp atomic)\n            wb[j] += " in row
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import adgen
        par = adgen.load(sys.argv[1], modes=("reverse", "vector-reverse"), openmp=True)
        seq = adgen.load(sys.argv[1], modes=("reverse", "vector-reverse"))
        rng = np.random.default_rng(0)
        x, w = rng.standard_normal(3000), rng.standard_normal(3000)
        a = par.rows.grad(x, w, np.zeros(3000))[1]
        b = seq.rows.grad(x, w, np.zeros(3000))[1]
        worst = float(np.max(np.abs(a - b))) / float(np.max(np.abs(b)))
        v = par.rows.vjp_vec((x, w, np.zeros(3000)), np.array([1.0, -0.5]))[1][1]
        u = seq.rows.vjp_vec((x, w, np.zeros(3000)), np.array([1.0, -0.5]))[1][1]
        worst = max(worst, float(np.max(np.abs(v - u))) / float(np.max(np.abs(u))))
        print(json.dumps(worst))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=env, check=True)
    assert json.loads(out.stdout) < 1e-11, out.stdout


def test_a_custom_adjoint_called_in_a_prange_adds_atomically(tmp_path: Path) -> None:
    # near_bwd calls the custom adjoint near_adjoint (a primal function; near_adjoint_d in
    # hvp mode), which adds to xb at every j, as other iterations do: its increments are
    # atomic too (they were plain, and two threads lost some of them)
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, custom_vjp, f64, i64, prange

        def near_adjoint(x: Array[f64], xb: Array[f64], i: i64, retb: float) -> None:
            for j in range(len(x)):
                e = retb * math.exp(-abs(x[i] - x[j]))
                xb[i] -= e
                xb[j] += e

        @custom_vjp(near_adjoint)
        def near(x: Array[f64], i: i64) -> f64:
            acc = 0.0
            for j in range(len(x)):
                acc += math.exp(-abs(x[i] - x[j]))
            return acc

        def nearall(x: Array[f64], w: Array[f64], y: Array[f64]) -> f64:
            s = 0.0
            for i in prange(len(w)):
                y[i] = near(x, i % len(x)) * w[i]
                s += y[i]
            return s
        """))
    result = transpile(str(path), ["reverse", "hvp"])
    for mode, name in (("reverse", "near_adjoint"), ("hvp", "near_adjoint_d")):
        text = result.outputs[mode].source.text  # type: ignore[attr-defined]
        adjoint = text[text.rindex(f"static void {name}("):].split("\n}\n")[0]
        lines = "\n".join(line.strip() for line in adjoint.splitlines())
        assert "ADGEN_OMP(omp atomic)\nxb[j] += e;" in lines, adjoint
        assert "prange run in sequence" not in text
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import adgen
        par = adgen.load(sys.argv[1], modes=("reverse", "hvp"), openmp=True)
        seq = adgen.load(sys.argv[1], modes=("reverse", "hvp"))
        rng = np.random.default_rng(0)
        x, w = rng.standard_normal(8), rng.standard_normal(40000)
        a = par.nearall.grad(x, w, np.zeros(40000))[0]
        b = seq.nearall.grad(x, w, np.zeros(40000))[0]
        worst = float(np.max(np.abs(a - b))) / float(np.max(np.abs(b)))
        v = (rng.standard_normal(8), np.zeros(40000), np.zeros(40000))
        h = par.nearall.hvp((x, w, np.zeros(40000)), v)[0]
        k = seq.nearall.hvp((x, w, np.zeros(40000)), v)[0]
        worst = max(worst, float(np.max(np.abs(h - k))) / float(np.max(np.abs(k))))
        print(json.dumps(worst))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=env, check=True)
    assert json.loads(out.stdout) < 1e-11, out.stdout


def test_a_prange_calling_an_external_adjoint_of_an_array_runs_in_sequence(
        tmp_path: Path) -> None:
    # logsumexp_c_b (C, written by hand) adds to xb at every element, as other iterations
    # do: adgen cannot make its increments atomic, so the loop keeps to one thread
    (tmp_path / "special.c").write_text((ROOT / "examples" / "external" / "special.c")
                                        .read_text())
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, external, f64, prange

        @external("special.c", name="logsumexp_c", tangent="logsumexp_c_d",
                  adjoint="logsumexp_c_b")
        def logsumexp(x: Array[f64]) -> f64:
            m = x[0]
            for i in range(len(x)):
                m = max(m, x[i])
            s = 0.0
            for i in range(len(x)):
                s += math.exp(x[i] - m)
            return m + math.log(s)

        def scaled(x: Array[f64], w: Array[f64], y: Array[f64]) -> f64:
            s = 0.0
            for i in prange(len(w)):
                y[i] = logsumexp(x) * w[i]
                s += y[i]
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert "/* prange run in sequence: 'logsumexp_c_b' (an external C function) adds to " \
           "adjoint arrays other iterations share */" in adjoint
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import adgen
        par = adgen.load(sys.argv[1], modes=("reverse",), openmp=True)
        seq = adgen.load(sys.argv[1], modes=("reverse",))
        rng = np.random.default_rng(0)
        x, w = rng.standard_normal(4), rng.standard_normal(100000)
        a = par.scaled.grad(x, w, np.zeros(100000))[0]
        b = seq.scaled.grad(x, w, np.zeros(100000))[0]
        print(json.dumps(float(np.max(np.abs(a - b))) / float(np.max(np.abs(b)))))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=env, check=True)
    assert json.loads(out.stdout) < 1e-11, out.stdout


def test_an_adjoint_in_a_prange_does_not_store_back_what_it_read(tmp_path: Path) -> None:
    # the tangent of pick_bwd's xb[k] += retb, whose retb has no tangent, was xbd[k] = xbd[k]:
    # a plain store in a function other threads add to atomically (bump_bwd_d), which
    # undid their increments made between its load and it (with -O0, where it is kept)
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        from adgen import Array, f64, i64, prange

        def bump(x: Array[f64], k: i64) -> f64:
            t = x[k]
            m = 0
            while t < 10.0 and m < 5:
                t = t * 1.5 + x[(k + m) % len(x)] * x[(k + m) % len(x)]
                m += 1
            return t

        def pick(x: Array[f64], k: i64) -> f64:
            return x[k] + 2.0 * x[(k + 1) % len(x)]

        def both(x: Array[f64], y: Array[f64]) -> f64:
            s = 0.0
            for i in prange(len(y)):
                k = i % len(x)
                s += bump(x, k) + pick(x, k)
            return s
        """))
    text = transpile(str(path), ["hvp"]).outputs["hvp"].source.text  # type: ignore[attr-defined]
    pick = text[text.rindex("static void pick_bwd_d("):].split("\n}\n")[0]
    assert "xbd[k] = xbd[k];" not in pick and "ADGEN_OMP(omp atomic)" in pick
    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        import adgen
        par = adgen.load(sys.argv[1], modes=("hvp",), openmp=True, cflags=["-O0"])
        seq = adgen.load(sys.argv[1], modes=("hvp",))
        x, y = np.linspace(-0.1, 0.1, 5), np.zeros(400000)
        v = (np.linspace(1.0, 2.0, 5), y)
        a = par.both.hvp((x, y), v)[0]
        b = seq.both.hvp((x, y), v)[0]
        print(json.dumps(float(np.max(np.abs(a - b))) / float(np.max(np.abs(b)))))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=env, check=True)
    assert json.loads(out.stdout) < 1e-11, out.stdout


def test_a_sum_added_to_in_an_inner_loop_stays_a_parallel_sum(tmp_path: Path) -> None:
    # the adjoint of s passes through the inner loops unchanged: shared, not carried, so the
    # adjoint loop is parallel too (with a tape per thread for the while's trip counts), and
    # one with the forward loop, which sums s
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        from adgen import Array, f64, prange

        def f(x: Array[f64], c: f64) -> f64:
            s = 0.0
            for i in prange(len(x)):
                j = 0
                while j < 3:
                    for k in range(2):
                        s += x[i] * j * c + k
                    j += 1
            return s
        """))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert "prange run in sequence" not in adjoint
    assert "ADGEN_OMP(omp for reduction(+: s, cb_1))" in adjoint
    report = adgen.check(str(path), modes=("forward", "reverse", "hvp"), openmp=True)
    assert report.ok, report.table()


ADD_INTO = """
    import math
    from adgen import Array, f64, prange

    def add(x: Array[f64], y: Array[f64]) -> None:
        for i in prange(len(x)):
            y[i] += math.sin(x[i]) * x[i]

    def scaled(x: Array[f64], a: Array[f64, 2], y: Array[f64]) -> None:
        for i in prange(a.shape[0]):
            for j in range(a.shape[1]):
                y[i] = 0.5 * y[i] + a[i, j] * math.sin(x[j])

    def mul(x: Array[f64], y: Array[f64]) -> None:
        for i in prange(len(x)):
            y[i] *= math.sin(x[i])

    def branch(x: Array[f64], y: Array[f64]) -> None:
        for i in prange(len(x)):
            if y[i] > 0.0:
                y[i] += x[i] * x[i]
            else:
                y[i] -= math.exp(x[i])

    def through(x: Array[f64], y: Array[f64], z: Array[f64]) -> None:
        for i in prange(len(x)):
            t = y[i] + z[i]
            y[i] = 2.0 * t + math.cos(x[i])
            z[i] += math.tanh(t) * x[i]
    """


def test_a_prange_adding_into_what_it_reads_computes_its_iterations_again(
        tmp_path: Path) -> None:
    # y[i] += e reads y[i], which the body then writes, but the adjoint of a sum (or of
    # 0.5 * y[i]) needs no value of y: each adjoint iteration computes its own again, in
    # parallel, with no tape, where the element read is not needed (add, scaled); where it
    # is (a product, a branch, tanh of it), the loop tapes and runs in sequence; in the
    # CUDA target the loops are kernels (tests/test_cuda.py)
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(ADD_INTO))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    bodies = {name: adjoint[adjoint.index(f"void {name}_b("):].split("\n}\n")[0]
              for name in ("add", "scaled", "mul", "branch", "through")}
    for name in ("add", "scaled"):  # scaled's inner loop tapes its sines on the thread's tape
        assert "prange run in sequence" not in bodies[name] and "&tape" not in bodies[name]
        assert "ADGEN_OMP(omp" in bodies[name]
    assert "thread_tape" not in bodies["add"]
    assert "y[i] += tmp * x_i;\n        double yb_i = yb[i];\n" \
           "        xb[i] += tmp * yb_i + cos(x_i) * (x_i * yb_i);" in bodies["add"]
    for name in ("mul", "branch", "through"):
        assert "/* prange run in sequence: it uses the tape, in order */" in bodies[name]
    report = adgen.check(str(path), modes=("forward", "reverse", "vector-reverse", "hvp"),
                         openmp=True)
    assert report.ok, report.table()
    m = adgen.load(str(path), modes=("reverse",), functions=["add", "scaled"])
    x, a = np.linspace(-1.0, 1.0, 20), np.ones((20, 20))
    _, (xb, _) = m.add.vjp((x, np.ones(20)), None, {"y": np.ones(20)})
    assert m.tape_bytes() == 0
    assert np.allclose(xb, np.sin(x) + x * np.cos(x), rtol=1e-14, atol=0.0)
    m.scaled.vjp((x, a, np.ones(20)), None, {"y": np.ones(20)})
    assert m.tape_bytes() == 0


READ_THEN_TAPED = """
    import math
    from adgen import Array, f64, prange

    def g(v: f64) -> f64:
        return v * v

    def product(x: Array[f64], y: Array[f64]) -> None:
        for i in prange(len(y)):
            s = 0.0
            for j in range(len(x)):
                s += math.exp(x[j])
            y[i] = y[i] * g(s)

    def nested(x: Array[f64], y: Array[f64, 2]) -> None:
        for i in prange(y.shape[0]):
            c = math.sin(x[i])
            for j in prange(y.shape[1]):
                y[i, j] += c * math.sin(x[j])

    def halved(x: Array[f64], y: Array[f64]) -> None:
        for i in prange(len(x)):
            y[i] = y[i] / 2.0 + math.tanh(x[i])
    """


def test_a_prange_adding_into_what_it_reads_after_a_trial(tmp_path: Path) -> None:
    # product: the trial's reverse reads y[i] (a product), so the loop tapes; the reverse
    # of its inner loop (run in the forward order, its exp computed again) must mark the
    # forward sweep's inner loop, not the trial's copy of it, or the exps it tapes come
    # back in the wrong order.  nested: the inner prange's trial, built within the outer
    # one's, leaves the outer trial's records in place.  halved: y[i] / 2.0 builds the
    # partial -(y[i] / 2.0) / 2.0, which nothing uses: the loop computes its iterations again
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(READ_THEN_TAPED))
    adjoint = transpile(str(path), ["reverse"]).outputs["reverse"].source.text  # type: ignore[attr-defined]
    bodies = {name: adjoint[adjoint.index(f"void {name}_b("):].split("\n}\n")[0]
              for name in ("product", "nested", "halved")}
    assert "/* prange run in sequence: it uses the tape, in order */" in bodies["product"]
    assert "exp(" in bodies["product"].split("g_bwd(")[1]  # computed again, not taped
    for name in ("nested", "halved"):
        assert "prange run in sequence" not in bodies[name] and "&tape" not in bodies[name]
    report = adgen.check(str(path), modes=("forward", "reverse", "vector-reverse", "hvp"),
                         openmp=True)
    assert report.ok, report.table()


def test_a_prange_calling_a_taping_gradient_runs_in_parallel(tmp_path: Path) -> None:
    # p_grad's whole adjoint keeps a tape of its own: the prange does not touch the caller's
    # tape, so it runs in parallel (it ran in sequence, and the CUDA target refused it:
    # 'needs a tape across iterations')
    path = tmp_path / "ng.py"
    path.write_text(textwrap.dedent("""
        import math
        from adgen import Array, f64, grad, prange

        def p(x: f64, w: f64, n: int) -> f64:
            for k in range(n):
                x = math.sin(x * w) + 0.5 * x
            return x

        def field(xs: Array[f64], w: f64, out: Array[f64]) -> f64:
            total = 0.0
            for i in prange(len(xs)):
                g = grad(p)(xs[i], w, 5)
                out[i] = g * g
                total += g
            return total
        """))
    t = transpile(str(path), ["primal", "reverse"])
    for mode in ("primal", "reverse"):
        text = t.outputs[mode].source.text  # type: ignore[attr-defined]
        assert "ADGEN_OMP(omp parallel for reduction(+: total))" in text, mode
        assert "prange run in sequence" not in text, mode
    transpile(str(path), ["primal", "forward", "reverse"], target="cuda")
    report = adgen.check(str(path), modes=("forward", "reverse"), openmp=True)
    assert report.ok, report.table()
