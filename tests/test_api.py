"""The Python API (DESIGN.md section 7) and the checks on arguments (section 5)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adgen
from helpers import ROOT

EX = ROOT / "examples"


@pytest.fixture(scope="module")
def layer():  # type: ignore[no-untyped-def]
    return adgen.load(str(EX / "layer.py"), modes=("forward", "vector-forward"))


def layer_args(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal(4),
            np.zeros(3))


def test_primal_matches_cpython_and_writes_in_place(layer) -> None:  # type: ignore[no-untyped-def]
    import importlib.util
    spec = importlib.util.spec_from_file_location("layer_py", EX / "layer.py")
    assert spec and spec.loader
    py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(py)
    rng = np.random.default_rng(0)
    W, b, x, y = layer_args(rng)
    y2 = y.copy()
    got = layer.layer(W, b, x, y)
    want = py.layer(W, b, x, y2)
    assert got == pytest.approx(want, rel=1e-14)
    np.testing.assert_allclose(y, y2, rtol=1e-14)


def test_jvp_matches_finite_differences_and_updates_tangents_in_place(layer) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    W, b, x, y = layer_args(rng)
    Wd, bd, xd = (rng.standard_normal(a.shape) for a in (W, b, x))
    yd = np.zeros(3)
    value, tangent = layer.layer.jvp((W, b, x, y), (Wd, bd, xd, yd))
    h = 1e-6
    fp = layer.layer(W + h * Wd, b + h * bd, x + h * xd, yp := np.zeros(3))
    fm = layer.layer(W - h * Wd, b - h * bd, x - h * xd, ym := np.zeros(3))
    assert tangent == pytest.approx((fp - fm) / (2 * h), rel=1e-7)
    np.testing.assert_allclose(yd, (yp - ym) / (2 * h), rtol=1e-6)
    assert value == pytest.approx(layer.layer(W, b, x, np.zeros(3)))


def test_jvp_vec_is_a_jacobian_product(layer) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(2)
    W, b, x, y = layer_args(rng)
    eye = np.eye(4)  # directions: the unit vectors of x -> gradient wrt x in one sweep
    _, grad_x = layer.layer.jvp_vec((W, b, x, y), (None, None, eye, None))
    for k in range(4):
        _, t = layer.layer.jvp((W, b, x, np.zeros(3)), (None, None, eye[:, k].copy(), None))
        assert grad_x[k] == pytest.approx(t, rel=1e-14)


def test_raw_c_functions_are_reachable(layer) -> None:  # type: ignore[no-untyped-def]
    assert callable(layer.layer_d) and callable(layer.layer_dv)


@pytest.mark.parametrize("bad, exc, fragment", [
    (lambda W, b, x, y: (W.tolist(), b, x, y), TypeError, "'W' must be a NumPy array"),
    (lambda W, b, x, y: (W.astype(np.float32), b, x, y), TypeError, "'W' must have dtype float64"),
    (lambda W, b, x, y: (W.ravel(), b, x, y), ValueError, "'W' must have 2 dimension"),
    (lambda W, b, x, y: (np.asfortranarray(W), b, x, y), ValueError, "'W' must be C-contiguous"),
    (lambda W, b, x, y: (W, b, x, _readonly(y)), ValueError, "'y' is written"),
    (lambda W, b, x, y: (W, b, x, x[:3]), ValueError, "overlap"),
    (lambda W, b, x, y: (W, b, x), TypeError, "takes 4 argument"),
    # its mask was ignored: the C read the masked elements too
    (lambda W, b, x, y: (np.ma.masked_less(W, 0.0), b, x, y), TypeError, "'W' is a masked array"),
])
def test_bad_arguments_raise_naming_the_argument(layer, bad, exc, fragment) -> None:  # type: ignore[no-untyped-def]
    args = layer_args(np.random.default_rng(3))
    with pytest.raises(exc, match=fragment):
        layer.layer(*bad(*args))


def _readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def test_scalar_argument_types_are_checked() -> None:
    m = adgen.load(str(EX / "pow_while.py"))
    assert m.power(2.0, 10) == 1024.0
    with pytest.raises(TypeError, match="'n' must be an int"):
        m.power(2.0, 1.5)
    with pytest.raises(ValueError, match="'n' is not differentiated"):
        m.power.jvp((2.0, 3), (1.0, 1))
    value, tangent = m.power.jvp((2.0, 3), (1.0, None))
    assert (value, tangent) == (8.0, 12.0)


ZEROS_MODULE = """from adgen import Array, f64


def f(x: Array[f64], n: int, c: float) -> tuple[float, int]:
    s = 0.0
    for i in range(n):
        s += x[i] * x[i] * c
    return s, n + 1
"""


def test_zeros_for_what_is_not_differentiated_in_every_method(tmp_path: Path) -> None:
    """An int argument takes 0 (or zeros) as its tangent, an int result 0 (or zeros) as its
    adjoint, in the scalar and the vector methods alike (jvp refused 0 where hvp took it,
    and vjp_vec refused np.zeros(nbdirs) where vjp took 0); non-zeros stay refused."""
    src = tmp_path / "zeros.py"
    src.write_text(ZEROS_MODULE)
    m = adgen.load(str(src), modes=("forward", "vector-forward", "reverse", "vector-reverse",
                                    "hvp", "vector-hvp"))
    x = np.array([1.0, 2.0, 3.0])
    args = (x, 3, 2.0)
    assert m.f.jvp(args, (np.ones(3), 0, 1.0)) == ((28.0, 4), (38.0, None))
    for zero in (0, np.zeros(2), np.zeros(7)):  # (the tangent of n takes no part in nbdirs)
        _, (td, _) = m.f.jvp_vec(args, (np.ones((3, 2)), zero, np.ones(2)))
        np.testing.assert_array_equal(td, [38.0, 38.0])
    _, g = m.f.vjp(args, (1.0, np.zeros(())))
    for zero in (0, np.zeros(2), False):
        _, gv = m.f.vjp_vec(args, (np.ones(2), zero))
        np.testing.assert_array_equal(gv[0], np.repeat(g[0][:, None], 2, axis=1))
        np.testing.assert_array_equal(gv[2], [g[2], g[2]])
    hv = m.f.hvp(args, (np.ones(3), np.zeros(1), 0.0), (1.0, 0))
    hvv = m.f.hvp_vec(args, (np.ones((3, 2)), 0, np.zeros(2)), (1.0, 0))
    np.testing.assert_array_equal(hvv[0], np.repeat(hv[0][:, None], 2, axis=1))
    for bad in (1, "0", np.array([0.0, 1.0])):
        with pytest.raises(ValueError, match="'n' is not differentiated"):
            m.f.jvp(args, (np.ones(3), bad, 1.0))
        with pytest.raises(ValueError, match="'n' is not differentiated"):
            m.f.hvp(args, (np.ones(3), bad, 1.0), (1.0, 0))
    with pytest.raises(ValueError, match="'ret1' is not differentiated"):
        m.f.vjp_vec(args, (np.ones(2), np.ones(2)))
    with pytest.raises(ValueError, match="'ret1' is not differentiated"):
        m.f.vjp(args, (1.0, 1))


ZEROS_OUT = """import math

from adgen import Array, f64, i64


def g(x: f64, w: Array[f64], aux: Array[f64], n: int) -> float:
    s = 0.0
    for i in range(n):
        aux[i] = w[i] * x
        s += math.sin(w[i] * x) * w[i]
    return s * x
"""


def test_zeros_as_out_bars_of_an_array_outside_of(tmp_path: Path) -> None:
    """A written float array outside of= (no dependent reads it) took no zeros as its out_bars
    (a shape error for 0), where an integer array took zeros of any shape; and a scalar
    given as the tangent of an array was reported as shape (1,)."""
    src = tmp_path / "zo.py"
    src.write_text(ZEROS_OUT)
    m = adgen.load(str(src), modes=("reverse", "vector-reverse", "hvp"), of="return")
    w = np.array([0.2, 0.4, 0.6])
    args = (0.9, w, np.zeros(3), 3)
    _, g = m.g.vjp(args, 1.0)
    for zero in (0, 0.0, np.zeros(3), np.zeros(5)):
        _, gz = m.g.vjp(args, 1.0, {"aux": zero})
        np.testing.assert_array_equal(gz[1], g[1])
        m.g.vjp_vec(args, np.ones(2), {"aux": zero})
        m.g.hvp(args, (1.0, None, None, None), 1.0, {"aux": zero})
    with pytest.raises(ValueError, match="out_bars names 'aux', whose contents on exit are "
                                         "not differentiated"):
        m.g.vjp(args, 1.0, {"aux": np.ones(3)})
    f = adgen.load(str(src), modes=("forward",))
    with pytest.raises(ValueError, match=r"tangent of 'w' must have shape \(3,\), got \(\)$"):
        f.g.jvp(args, (1.0, 0.5, None, None))


#: a thread of 1 MiB calling vjp_vec with 200,000 directions; with "later", started before
#: the size of new threads is set to 64 MiB
STACK_SCRIPT = """
import sys, threading
import numpy as np
import adgen
m = adgen.load(sys.argv[1], modes=("vector-forward", "vector-reverse"))
go = threading.Event()
out = {}
def big():
    go.wait()
    try:
        m.f.vjp_vec((0.3, 0.7), np.ones(200_000))
        out["big"] = "ran"
    except ValueError as e:
        out["big"] = str(e)
threading.stack_size(1 << 20)
t = threading.Thread(target=big)
t.start()
if sys.argv[2:] == ["later"]:
    threading.stack_size(64 << 20)  # (the size of threads started from now on)
go.set()
t.join()
print(out["big"])
print(m.f.jvp_vec((0.3, 0.7), (np.ones(1000), np.zeros(1000)))[1][0])
"""
STACK_MODULE = ("import math\n\n\ndef f(a: float, b: float) -> float:\n"
                "    u = math.sin(a) * b\n    v = math.exp(u) + a\n    w = v * v - u\n"
                "    return w * b\n")


def _stack_script(tmp_path: Path, *args: str) -> tuple[str, str]:
    src = tmp_path / "st.py"
    src.write_text(STACK_MODULE)
    r = subprocess.run([sys.executable, "-c", STACK_SCRIPT, str(src), *args],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, (r.returncode, r.stderr)
    refusal, small = r.stdout.splitlines()
    return refusal, small


def test_a_vector_call_whose_directions_overflow_the_stack_is_refused(tmp_path: Path) -> None:
    """The scalar tangents and adjoints of a vector function are arrays of nbdirs on the stack:
    200,000 directions of three such arrays in a thread of 1 MiB ended the process (SIGSEGV);
    such a call is refused, saying how to make smaller ones."""
    refusal, small = _stack_script(tmp_path)
    assert refusal.startswith("f_bv: 200000 directions need up to ") and \
        "of stack for the tangents and adjoints the C function keeps there, over half of the " \
        in refusal and " MiB this thread has left: make calls of fewer directions " \
        "(adgen.jacobian(..., chunk=k))" in refusal, refusal
    u = math.sin(0.3) * 0.7
    v = math.exp(u) + 0.3
    dv = math.exp(u) * math.cos(0.3) * 0.7 + 1.0
    assert float(small) == pytest.approx((2 * v * dv - math.cos(0.3) * 0.7) * 0.7, rel=1e-12)


def test_the_stack_of_a_vector_call_is_its_threads_own(tmp_path: Path) -> None:
    """The stack a vector call may take is read off the calling thread (glibc), not off
    threading.stack_size, which is the size of threads started later: a thread of 1 MiB,
    called after the size was set to 64 MiB, took 200,000 directions and ended the process
    (SIGSEGV)."""
    refusal, _ = _stack_script(tmp_path, "later")
    assert refusal.startswith("f_bv: 200000 directions need up to "), refusal
    left = float(re.search(r"over half of the ([0-9.]+) MiB this thread has left", refusal)[1])
    assert 0.5 < left <= 1.0


TWO_FUNCTIONS = """import math

from adgen import Array, f64


def lin(u: Array[f64], y: Array[f64]) -> None:
    for i in range(len(u)):
        y[i] = u[i] * u[i] + math.sin(u[i])


def energy(u: Array[f64]) -> float:
    s = 0.0
    for i in range(len(u)):
        s += u[i] * u[i] * u[i] + math.cos(u[i]) * u[i]
    return s


def big(a: float, b: float) -> float:
""" + "".join(f"    t{k} = math.sin(a * {k}.0 + b)\n" for k in range(40)) + \
    "    return " + " + ".join(f"t{k} * t{(k + 1) % 40}" for k in range(40)) + "\n"


def test_the_stack_of_a_direction_read_from_the_c() -> None:
    """Own arrays (double 8, float 4; [ADGEN_DIRS(nbdirs_)] beside a parameter nbdirs, or
    [nbdirs_] in a file generated before ADGEN_DIRS), the private copies of an OpenMP
    reduction, the most of the callees, one level of a recursion."""
    from adgen.api import direction_stack
    source = (
        "static void leaf(int64_t nbdirs_)\n{\n    double a[ADGEN_DIRS(nbdirs_)];\n    float b[nbdirs_];\n}\n"
        "static void red(int64_t nbdirs)\n{\n"
        "    ADGEN_OMP(omp parallel for reduction(+: s[:nbdirs], t[:nbdirs]))\n    leaf(nbdirs);\n}\n"
        "double rec(double x, int64_t nbdirs)\n{\n    double c[ADGEN_DIRS(nbdirs)];\n"
        "    return rec(x, nbdirs) + red(nbdirs);\n}\n")
    assert direction_stack(source) == {"leaf": 12, "red": 16 + 12, "rec": 8 + 28}


def test_the_stack_a_direction_takes_is_the_functions_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack of a vector call was estimated from every function of the file: a small
    function beside a big one was refused at 10,000 directions; and jacobian and hessian,
    which put every direction into one call, now make calls the stack holds."""
    from adgen import binding
    src = tmp_path / "two.py"
    src.write_text(TWO_FUNCTIONS)
    m = adgen.load(str(src), modes=("vector-forward", "vector-reverse", "vector-hvp"))
    assert m.lin._vector.stack_per_direction <= 16 < m.big._vector_reverse.stack_per_direction
    u = np.linspace(-1.0, 1.0, 3)
    monkeypatch.setattr(binding, "stack_left", lambda lib: 4 << 20)
    _, (ud, _) = m.lin.vjp_vec((u, np.zeros(3)), None, {"y": np.ones((3, 10_000))})
    np.testing.assert_allclose(ud, np.repeat((2 * u + np.cos(u))[:, None], 10_000, axis=1))
    with pytest.raises(ValueError, match="big_bv: 10000 directions need up to"):
        m.big.vjp_vec((0.3, 0.7), np.ones(10_000))
    # 256 bytes of stack: a few directions per call
    x = np.linspace(-1.0, 1.0, 40)
    exact = np.diag(6 * x - 2 * np.sin(x) - x * np.cos(x))
    full = m.energy.hessian(x)
    jac_full = adgen.jacobian(m.lin, (x, np.zeros(40)), wrt="u", of="y")
    monkeypatch.setattr(binding, "stack_left", lambda lib: 256)
    most = m.energy._vector_hvp.max_directions()
    assert most is not None and most < 40
    np.testing.assert_allclose(m.energy.hessian(x), full, rtol=0, atol=0)
    np.testing.assert_allclose(full, exact, rtol=1e-12, atol=1e-12)
    jac = adgen.jacobian(m.lin, (x, np.zeros(40)), wrt="u", of="y")
    assert jac.calls > 1 and jac_full.calls == 1
    np.testing.assert_array_equal(jac.matrix, jac_full.matrix)


def test_a_fixed_build_refused_for_its_stack_says_to_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with -DADGEN_NBDIRS=N takes N directions per call and refuses any other
    count, so the advice of the general build (calls of fewer directions, with
    adgen.jacobian(..., chunk=k)) cannot work there: the refusal says to rebuild with an N
    the stack holds, or to call from a thread with a larger stack."""
    from adgen import binding
    src = tmp_path / "two.py"
    src.write_text(TWO_FUNCTIONS)
    m = adgen.load(str(src), modes=("vector-reverse",),
                   cflags=list(adgen.build.DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=8"])
    call = m.big._vector_reverse
    assert call.fixed_nbdirs == 8 and call.stack_per_direction
    _, (ab, bb) = m.big.vjp_vec((0.3, 0.7), np.ones(8))
    # a stack that holds four directions in its half
    monkeypatch.setattr(binding, "stack_left", lambda lib: 8 * call.stack_per_direction)
    with pytest.raises(ValueError) as refused:
        m.big.vjp_vec((0.3, 0.7), np.ones(8))
    message = str(refused.value)
    assert message.startswith("big_bv: 8 directions need up to ") and \
        " MiB this thread has left: this build takes 8 directions per call " \
        "(-DADGEN_NBDIRS=8): rebuild with -DADGEN_NBDIRS=4 or less " in message and \
        "or make the call in a thread with a larger stack" in message, message
    assert "chunk" not in message, message
    # (the general build's advice: a jacobian in chunks still makes calls of 8 here)
    with pytest.raises(ValueError, match="big_bv: 8 directions need up to"):
        adgen.jacobian(m.big, (0.3, 0.7), mode="reverse", chunk=4)
    # the rebuild it advises takes calls on the same stack, with the same results
    smaller = adgen.load(str(src), modes=("vector-reverse",),
                         cflags=list(adgen.build.DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=4"])
    _, (ab4, bb4) = smaller.big.vjp_vec((0.3, 0.7), np.ones(4))
    np.testing.assert_array_equal(ab4, ab[:4])
    np.testing.assert_array_equal(bb4, bb[:4])
    jac = adgen.jacobian(smaller.big, (0.3, 0.7), mode="reverse")
    assert jac.calls == 1
    np.testing.assert_array_equal(jac.matrix, [[ab[0], bb[0]]])


def test_tuple_returns() -> None:
    m = adgen.load(str(EX / "polar.py"))
    r, theta = m.to_polar(3.0, 4.0)
    assert r == 5.0
    (r2, _), (rd, thetad) = m.to_polar.jvp((3.0, 4.0), (1.0, 0.0))
    assert r2 == 5.0 and rd == pytest.approx(0.6) and thetad == pytest.approx(-4.0 / 25.0)


def test_load_is_cached(tmp_path: Path) -> None:
    import time
    t0 = time.perf_counter()
    adgen.load(str(EX / "recursive.py"))
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    adgen.load(str(EX / "recursive.py"))
    second = time.perf_counter() - t0
    assert second < first  # the second load finds the extension in the cache
    del tmp_path


THREADED_LOADS = """
import json, os, sys, threading
import adgen
path = sys.argv[1]
results = {}
def work(k):
    try:
        results[k] = adgen.load(path, modes=("reverse",)).f.grad(1.5)[0]
    except Exception as e:
        results[k] = f"{type(e).__name__}: {e}"
threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"results": results, "LC_ALL": os.environ.get("LC_ALL")}))
"""


def test_threads_loading_a_module_not_built_yet(tmp_path: Path) -> None:
    """Four threads loading a module that is not in the cache: builds ran at once and broke
    each other (a link error, a missing directory), left the process's stdout pointing at a
    deleted file (this print was lost, exit 0) and LC_ALL set, and renamed a build without
    its library into the cache, where every later load failed; one builds at a time now,
    and a cached build without its library is built again."""
    src = tmp_path / "tl.py"
    src.write_text("def f(x: float) -> float:\n    return x * x * 3.0\n")
    env = {**os.environ, "ADGEN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("LC_ALL", None)
    r = subprocess.run([sys.executable, "-c", THREADED_LOADS, str(src)], capture_output=True,
                       text=True, env=env, check=False)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == {"results": {str(k): 9.0 for k in range(4)}, "LC_ALL": None}, out
    # a build left without its library (by an interrupted build, or the race above)
    (lib,) = (tmp_path / "cache").glob("*/_adgen_tl_*.so")
    lib.unlink()
    r = subprocess.run([sys.executable, "-c", THREADED_LOADS, str(src)], capture_output=True,
                       text=True, env=env, check=False)
    assert r.returncode == 0 and json.loads(r.stdout)["results"]["0"] == 9.0, r.stdout + r.stderr


def test_calling_the_generated_code_from_c(tmp_path: Path) -> None:
    """A C program uses the tangent with no Python at run time."""
    out = tmp_path / "gen"
    r = subprocess.run(["adgen", str(EX / "rosenbrock.py"), "--mode", "primal", "--mode", "forward",
                        "-o", str(out), "-q"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    main = tmp_path / "main.c"
    main.write_text(
        '#include <stdio.h>\n#include "rosenbrock.h"\n#include "rosenbrock_d.h"\n'
        "int main(void) {\n"
        "    double x[3] = {1.0, 2.0, 3.0};\n"
        "    double g[3];\n"
        "    for (int i = 0; i < 3; ++i) {\n"
        "        double xd[3] = {0.0, 0.0, 0.0};\n"
        "        double yd;\n"
        "        xd[i] = 1.0;\n"
        "        rosenbrock_d(x, xd, 3, &yd);\n"
        "        g[i] = yd;\n"
        "    }\n"
        '    printf("%.6f %.6f %.6f %.6f\\n", rosenbrock(x, 3), g[0], g[1], g[2]);\n'
        "    return 0;\n}\n")
    exe = tmp_path / "main"
    cc = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", f"-I{out}",
                         str(main), str(out / "rosenbrock.c"), str(out / "rosenbrock_d.c"), "-lm",
                         "-o", str(exe)], capture_output=True, text=True, check=False)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    value, *grad = (float(v) for v in run.stdout.split())
    assert value == pytest.approx(201.0)
    assert grad == pytest.approx([-400.0, 1002.0, -200.0])


def test_debug_build_reports_out_of_range_index(tmp_path: Path) -> None:
    src = tmp_path / "oob.py"
    src.write_text("from adgen import Array, f64\n\n"
                   "def get(x: Array[f64], i: int) -> float:\n    return x[i]\n")
    code = ("import numpy as np, adgen\n"
            f"m = adgen.load({str(src)!r}, debug=True)\n"
            "print(m.get(np.ones(3), 2))\n"
            "m.get(np.ones(3), 3)\n")
    import sys
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode != 0
    assert r.stdout.strip() == "1.0"
    assert "oob.py:4: index 3 out of range for extent 3" in r.stderr


def test_assert_is_checked_in_debug_builds_only(tmp_path: Path) -> None:
    src = tmp_path / "a.py"
    src.write_text("def f(x: float) -> float:\n    assert x > 0.0, 'x must be positive'\n"
                   "    return x\n")
    import sys
    code = ("import adgen\n"
            f"print(adgen.load({str(src)!r}).f(-1.0))\n"
            f"adgen.load({str(src)!r}, debug=True).f(-1.0)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.stdout.strip() == "-1.0"
    assert r.returncode != 0 and "a.py:2: assertion failed: x must be positive" in r.stderr


def test_a_build_with_a_fixed_number_of_directions() -> None:
    """-DADGEN_NBDIRS=N: the vector modes take exactly N directions (the C assumes it, the
    binding refuses another count), give what the general build gives, and --check runs
    its vector checks with N directions."""
    from adgen.api import fixed_nbdirs

    assert fixed_nbdirs(["-O3", "-DADGEN_NBDIRS=4", "-DADGEN_NBDIRS=5"]) == 5
    assert fixed_nbdirs(["-O3", "-DADGEN_NBDIRSX=4"]) is None
    # the argument of an option that takes the next word is no definition: gcc reads
    # -I -DADGEN_NBDIRS=4 as an include directory, nvcc hands -Xcompiler's to the host only
    assert fixed_nbdirs(["-I", "-DADGEN_NBDIRS=4"]) is None
    assert fixed_nbdirs(["-I", "inc", "-DADGEN_NBDIRS=4", "-o", "-UADGEN_NBDIRS"]) == 4
    assert fixed_nbdirs(["-Xcompiler", "-DADGEN_NBDIRS=8"], "cuda") is None
    assert fixed_nbdirs(["-Xpreprocessor", "-DADGEN_NBDIRS=6"]) == 6
    modes = ("vector-forward", "vector-reverse")
    general = adgen.load(EX / "rosenbrock.py", modes=modes)
    fixed = adgen.load(EX / "rosenbrock.py", modes=modes,
                       cflags=list(adgen.build.DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=5"])
    x = np.linspace(0.3, 1.7, 5)
    y0, t0 = general.rosenbrock.jvp_vec((x,), (np.eye(5),))
    y1, t1 = fixed.rosenbrock.jvp_vec((x,), (np.eye(5),))
    assert y0 == y1 and np.array_equal(t0, t1)
    _, (g0,) = general.rosenbrock.vjp_vec((x,), np.ones(5))
    _, (g1,) = fixed.rosenbrock.vjp_vec((x,), np.ones(5))
    assert np.array_equal(g0, g1)
    with pytest.raises(ValueError, match=r"rosenbrock_dv: this build takes 5 directions "
                                         r"\(-DADGEN_NBDIRS=5\), got 3"):
        fixed.rosenbrock.jvp_vec((x,), (np.eye(5)[:, :3],))
    report = adgen.check(EX / "rosenbrock.py", modes=("forward",) + modes,
                         cflags=list(adgen.build.DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=5"])
    assert report.ok, report.table()
    # its arrays of directions have a constant size (ADGEN_DIRS), which the compiler keeps
    # in registers; the general build's are variable-length arrays
    no_vla = list(adgen.build.DEFAULT_CFLAGS) + ["-Werror=vla"]
    adgen.load(EX / "rosenbrock.py", modes=modes, cflags=no_vla + ["-DADGEN_NBDIRS=5"])
    with pytest.raises(adgen.build.BuildError, match=r"\[-Werror=vla\]"):
        adgen.load(EX / "rosenbrock.py", modes=modes, cflags=no_vla)
    # a prange's body is a function of its own under OpenMP, which must know the count too:
    # with one direction gcc -Wall took the fixed arrays for ones left unset
    strict = list(adgen.build.DEFAULT_CFLAGS) + ["-Wall", "-Wextra", "-Werror", "-DADGEN_NBDIRS=1"]
    for name in ("mixture.py", "kernels.py"):
        adgen.load(EX / name, modes=("vector-forward", "vector-reverse"), openmp=True,
                   cflags=strict)


def test_arrays_pass_as_pointers_to_their_first_element() -> None:
    """The C gets a pointer into each NumPy buffer: a view that starts inside a larger array
    (its first element, not the base's), a read-only array, an array over bytes, an empty
    array; every mode reads the same elements."""
    m = adgen.load(str(EX / "rosenbrock.py"), modes=("forward", "vector-forward", "reverse"))

    def expected(x: np.ndarray) -> float:
        return float(sum(100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
                         for i in range(len(x) - 1)))

    base = np.arange(10.0) / 7.0
    view = base[3:8]  # (C-contiguous, starting 24 bytes into base)
    readonly = view.copy()
    readonly.flags.writeable = False
    from_bytes = np.frombuffer(view.tobytes(), dtype=np.float64)  # (read-only, not owning)
    for x in (view, readonly, from_bytes):
        assert m.rosenbrock(x) == pytest.approx(expected(view), rel=1e-15)
        (xb,) = m.rosenbrock.grad(x)
        _, xd = m.rosenbrock.jvp((x,), (np.eye(5)[1],))
        assert xd == pytest.approx(xb[1], rel=1e-13)
        _, xdv = m.rosenbrock.jvp_vec((x,), (np.eye(5),))
        np.testing.assert_allclose(xdv, xb, rtol=1e-13)
    assert m.rosenbrock(np.zeros(0)) == 0.0
    assert m.rosenbrock.grad(np.zeros(0))[0].shape == (0,)
