"""Derivatives inside a module: ``grad(f)(...)`` and ``jvp(f, ...)`` (nested AD).

Each is checked three ways by ``adgen.check`` (the compiled primal against CPython, where
``grad``/``jvp`` call adgen's own compiled derivative of ``f``; tangents against finite
differences; adjoints against tangents; hvp against differences of the gradient), in
every combination of inner and outer mode.  The GradBench evals that need them
(particle, saddle) are in tests/test_gradbench.py; the rejected forms are in
tests/test_diagnostics.py.
"""

from __future__ import annotations

import math
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen
from helpers import EMULATED_AND_GPU, ROOT, compile_strict, run_cli

SCALARS = '''
import math

from adgen import f64, grad, jvp


def f(x1: f64, x2: f64, y1: f64, y2: f64) -> f64:
    return (x1 * x1 + y1 * y1) - (x2 * x2 + y2 * math.sin(y2)) + x1 * y2


def rev(x: f64, y: f64) -> f64:
    """reverse inside: a tuple of partials"""
    a, b = grad(f, argnums=(2, 3))(x, y, x * y, math.sin(x))
    return a * b + x


def one(x: f64, y: f64) -> f64:
    """reverse inside, one partial (argnums=0 by default)"""
    return grad(f)(x, y, y, x) * y


def fwd(x: f64, y: f64) -> f64:
    """forward inside"""
    v, t = jvp(f, (x, y, 1.0, 2.0), (1.0, 0.5, 0.0, y))
    return v * t


def twice(x: f64, y: f64) -> f64:
    """the gradient of a function that takes a gradient"""
    return grad(rev, argnums=1)(x, y) + grad(fwd)(y, x)


def descent(x: f64, y: f64, steps: int) -> f64:
    """a loop of gradient steps on f's last two arguments"""
    a = x
    b = y
    for k in range(steps):
        ga, gb = grad(f, argnums=(2, 3))(x, y, a, b)
        a = a - 0.1 * ga
        b = b - 0.05 * gb
    return a * b
'''

LOOPS = '''
import math

from adgen import Array, f64, grad, jvp


def energy(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    """its adjoint keeps each s on the tape"""
    s = x
    for i in range(n):
        s = s * math.sin(s * w) + c[i] * x
    return s


def slope(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    """reverse over reverse of taped code: the adjoint of energy_grad is energy's hvp"""
    return grad(energy)(x, w, c, n) * w


def both(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    a, b = grad(energy, argnums=(0, 1))(x, w, c, n)
    return a * b


def tangent(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    v, t = jvp(energy, (x, w, c, n), (1.0, 0.0, None, None))
    return v * t


def smooth(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    """a loop whose adjoint needs no tape when it recomputes: reverse over reverse directly"""
    s = 0.0
    for i in range(n):
        s += math.sin(x * c[i]) * w
    return s


def smooth_slope(x: f64, w: f64, c: Array[f64], n: int) -> f64:
    return grad(smooth)(x, w, c, n) * x
'''


def write(tmp_path: Path, text: str, name: str = "nested") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def assert_ok(report: adgen.validate.CheckReport) -> None:  # type: ignore[name-defined]
    assert report.ok, report.table()


def test_scalar_nesting_passes_the_check_in_every_mode(tmp_path: Path) -> None:
    report = adgen.check(write(tmp_path, SCALARS))
    assert_ok(report)
    functions = {r.function for r in report.rows}
    assert functions == {"f", "rev", "one", "fwd", "twice", "descent"}
    checks = {r.check for r in report.rows}
    assert "hvp vs differences of the gradient" in checks  # third derivatives of f
    assert "vector adjoint vs scalar adjoints" in checks


def test_single_precision_check_of_a_gradient_of_an_array_function(tmp_path: Path) -> None:
    """Under ``--precision f32`` the checker runs the module in CPython with float32 arrays:
    ``grad(e)`` there builds ``e`` in single precision too (it refused them: "argument 'x'
    must have dtype float64, got float32", and every row of ``f`` failed)."""
    path = tmp_path / "single.py"
    path.write_text(textwrap.dedent("""
        from adgen import Array, f64, grad, jvp


        def e(y: float, x: Array[f64]) -> float:
            return y * y * x[0] + y * x[1]


        def f(x: Array[f64], y: float) -> float:
            g = grad(e)(y, x)
            v, d = jvp(e, (y, x), (1.0, None))
            return g * y + d * v
        """))
    report = adgen.check(str(path), modes=("forward", "reverse"), precision="f32")
    assert report.ok, "\n" + report.table()


def test_the_generated_code_calls_the_derivatives(tmp_path: Path) -> None:
    m = adgen.load(write(tmp_path, SCALARS), modes=("primal", "reverse"))
    primal = m.transpiled.outputs["primal"].source.text
    assert "static void f_grad_y1_y2(double x1, double x2, double y1, double y2, " \
           "double *y1b, double *y2b)" in primal
    assert "static double f_grad_x1(double x1, double x2, double y1, double y2)" in primal
    assert "static double f_jvp(double x1, double x1d, double x2, double x2d, double y1, " \
           "double y1d, double y2, double y2d, double *retd)" in primal
    assert "f_grad_y1_y2(x, y, x * y, sin(x), &a, &b);" in primal
    # the nested functions are helpers: not part of the module's API
    assert not hasattr(m, "f_grad_y1_y2") and not hasattr(m, "f_jvp")
    reverse = m.transpiled.outputs["reverse"].source.text
    assert "static void f_grad_y1_y2_bwd(" in reverse  # reverse over reverse


def test_cpython_runs_the_module_with_compiled_derivatives(tmp_path: Path) -> None:
    import importlib.util

    path = write(tmp_path, SCALARS, "nested_cpython")
    spec = importlib.util.spec_from_file_location("nested_cpython", path)
    assert spec is not None and spec.loader is not None
    py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(py)
    m = adgen.load(path, modes=("primal",))
    x, y = 0.7, -1.3
    # grad of f by hand: d/dy1 = 2 y1, d/dy2 = -(sin(y2) + y2 cos(y2)) + x1
    a, b = 2 * x * y, -(math.sin(math.sin(x)) + math.sin(x) * math.cos(math.sin(x))) + x
    assert py.rev(x, y) == pytest.approx(a * b + x, rel=1e-14)
    for name in ("rev", "one", "fwd", "twice"):
        assert getattr(py, name)(x, y) == pytest.approx(getattr(m, name)(x, y), rel=1e-13), name
    assert py.descent(x, y, 5) == pytest.approx(m.descent(x, y, 5), rel=1e-13)


MIXED_PRECISION = """
from adgen import Array, f32, f64, grad, zeros


def inner(x: f64, a: Array[f64], b: Array[f64]) -> f64:
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i] * x * x
    return s


def outer(x: f64, b: Array[f64]) -> f64:
    a = zeros(len(b))
    for i in range(len(b)):
        a[i] = b[i] + 1.0
    return grad(inner)(x, a, b)


def inner32(x: f64, a: Array[f32], b: Array[f64]) -> f64:
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i] * x
    return s


def outer32(x: f64, a: Array[f32], b: Array[f64]) -> f64:
    return grad(inner32)(x, a, b)
"""


def test_cpython_takes_the_derivative_in_the_precision_of_its_arrays(tmp_path: Path) -> None:
    """grad in CPython built the module in single precision whenever an argument was a
    float32 array: an Array[f32] parameter beside an Array[f64] one made the float64 array a
    TypeError; and under --precision f32 (float32 arrays), a local zeros array (float64 in
    CPython) was one, so adgen.check failed a correct module."""
    import importlib.util

    path = write(tmp_path, MIXED_PRECISION, "mixed_precision")
    spec = importlib.util.spec_from_file_location("mixed_precision", path)
    assert spec is not None and spec.loader is not None
    py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(py)
    a32, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0, 2.0])
    assert py.outer32(1.5, a32, b) == pytest.approx(float(a32 @ b), rel=1e-7)
    assert py.outer(1.5, b) == pytest.approx(2 * 1.5 * float((b + 1) @ b), rel=1e-14)
    b32 = b.astype(np.float32)
    assert py.outer(1.5, b32) == pytest.approx(2 * 1.5 * float((b + 1) @ b), rel=1e-6)
    assert_ok(adgen.check(path, modes=("forward", "reverse"), functions=["outer"],
                          precision="f32"))


def test_cpython_uses_the_module_as_edited(tmp_path: Path) -> None:
    """grad(f) run by CPython builds f's adjoint once per text of the module: edited and
    reloaded in the same process, it gave the derivative of the old text."""
    import importlib.util
    import os

    path = tmp_path / "edited.py"
    text = ("from adgen import grad\n\n\n"
            "def f(x: float) -> float:\n    return {} * x * x\n\n\n"
            "def g(x: float) -> float:\n    return grad(f)(x)\n")

    def run() -> float:
        spec = importlib.util.spec_from_file_location("edited", path)
        assert spec is not None and spec.loader is not None
        py = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(py)
        return float(py.g(1.5))

    path.write_text(text.format("3.0"))
    assert run() == 9.0
    path.write_text(text.format("5.0"))
    stat = path.stat()  # (a new modification time, also within the clock's resolution)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert run() == 15.0


def test_cpython_tells_equal_functions_of_two_files_apart(tmp_path: Path) -> None:
    """The same text in two files: their functions' code objects are equal (the file name is
    not compared), and grad(f) of the second looked for the first's file, gone by then
    (FileNotFoundError in a process that checks one temporary module after another)."""
    import importlib.util
    import shutil

    text = ("from adgen import grad\n\n\n"
            "def f(x: float) -> float:\n    return 3.0 * x * x\n\n\n"
            "def g(x: float) -> float:\n    return grad(f)(x)\n")
    results = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        path = tmp_path / name / "same.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location("same", path)
        assert spec is not None and spec.loader is not None
        py = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(py)
        results.append(float(py.g(1.5)))
        shutil.rmtree(tmp_path / name)
    assert results == [9.0, 9.0]


def test_taped_inner_gradients(tmp_path: Path) -> None:
    """A loop inside: forward over reverse is the tangent of the taped adjoint; reverse over
    reverse uses the custom adjoint ``energy_grad_x_vjp`` (one hvp of energy)."""
    path = write(tmp_path, LOOPS)
    c = np.array([0.3, -0.2, 0.5, 0.1])
    args = {name: (0.4, 0.9, c, 4) for name in ("energy", "slope", "both", "tangent",
                                                  "smooth", "smooth_slope")}
    report = adgen.check(path, modes=("forward", "vector-forward", "reverse", "hvp"), args=args)
    assert_ok(report)
    m = adgen.load(path, modes=("primal", "reverse"))
    primal = m.transpiled.outputs["primal"].source.text
    reverse = m.transpiled.outputs["reverse"].source.text
    assert "adgen_put_f64(block, " in primal  # energy_grad_x keeps a tape (a block of s values)
    assert "static void energy_grad_x_vjp(" in reverse
    assert "energy_grad_x_vjp_energy_b_d(" in reverse  # the hvp it calls
    # smooth's gradient recomputes sin(x c[i]) instead of taping it, so its own adjoint is
    # plain reverse over reverse, with no custom adjoint
    assert "smooth_grad_x_vjp" not in reverse and "static double smooth_grad_x_fwd(" in reverse
    # the custom adjoint against differences of the compiled gradient of slope
    y, grads = m.slope.vjp((0.4, 0.9, c, 4), 1.0)
    h = 1e-6
    fd = (m.slope(0.4 + h, 0.9, c, 4) - m.slope(0.4 - h, 0.9, c, 4)) / (2 * h)
    assert grads[0] == pytest.approx(fd, rel=1e-7)
    fdc = [(m.slope(0.4, 0.9, c + h * e, 4) - m.slope(0.4, 0.9, c - h * e, 4)) / (2 * h)
           for e in np.eye(4)]
    assert np.allclose(grads[2], fdc, rtol=1e-6)


def test_vector_reverse_through_a_taped_gradient_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, LOOPS)
    with pytest.raises(adgen.LoadError) as info:
        adgen.load(path, modes=("vector-reverse",), functions=["slope"])
    text = str(info.value)
    assert ":16:12: error: vector reverse mode through grad(energy) is not supported" in text


@pytest.mark.parametrize("module, functions", [
    ("particle", ["naive_euler", "outer_gradient"]),
    ("saddle", ["max_cost", "outer_gradient"]),
])
def test_gradbench_nested_modules_check(module: str, functions: list[str]) -> None:
    """The functions of particle.py and saddle.py whose derivatives the solvers take, in
    both inner modes (the last int argument: 0 reverse, 1 forward)."""
    path = str(ROOT / "benchmarks" / "gradbench" / f"{module}.py")
    for inner in (0, 1):
        if module == "particle":
            args = {"naive_euler": (0.1, inner), "outer_gradient": (0.1, 1 - inner, inner)}
        else:
            args = {"max_cost": (0.3, -0.2, 1.0, 1.0, inner),
                    "outer_gradient": (0.3, -0.2, 1.0, 1.0, 1 - inner, inner)}
        assert_ok(adgen.check(path, modes=("forward", "reverse"), functions=functions,
                              args=args))





@pytest.mark.parametrize("module", ["particle", "saddle"])
def test_nested_modules_compile_without_warnings(module: str, tmp_path: Path) -> None:
    """Every mode of the GradBench modules that take derivatives of derivatives compiles with
    -Wall -Wextra -Werror: the primal file held the static f_grad_vjp that only the adjoint
    files call (-Wunused-function), and the Hessian-vector products popped the tangents of
    taped values the reverse sweep never reads (-Wunused-variable: x0d, g1d, ...); in the
    vector modes into arrays of directions (-Wunused-but-set-variable: saddle's x0d, g0d in
    vector-forward, a0d, g0dd in vector-hvp), with or without -DADGEN_NBDIRS.  (Vector
    reverse mode through their taped gradients is refused.)"""
    out = tmp_path / "out"
    modes = ("primal", "forward", "reverse", "hvp", "vector-forward", "vector-hvp")
    r = run_cli(str(ROOT / "benchmarks" / "gradbench" / f"{module}.py"),
                *[a for m in modes for a in ("--mode", m)], "-o", str(out))
    assert r.returncode == 0, r.stderr
    sources = sorted(out.glob("*.c"))
    assert len(sources) == len(modes)
    for c in sources:
        for extra in ([], list(adgen.build.DEFAULT_CFLAGS),
                      list(adgen.build.DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=2"]):
            done = compile_strict(c, tmp_path / (c.stem + ".o"), f"-I{out}", *extra)
            assert done.returncode == 0, f"{c.name} {extra}:\n{done.stderr}"


PRANGE = """
import math

from adgen import Array, f64, grad, prange


def p(x: f64, w: f64) -> f64:
    return math.sin(x * w) / (1.0 + x * x)


def field(xs: Array[f64], w: f64, out: Array[f64]) -> f64:
    total = 0.0
    for i in prange(len(xs)):
        g = grad(p)(xs[i], w)
        out[i] = g * g
        total += g
    return total
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@EMULATED_AND_GPU
def test_a_gradient_in_a_kernel(tmp_path: Path, emulate: bool) -> None:
    """In a prange on the CUDA target (emulated: kernels run as loops on the CPU, the device
    code compiled by nvcc; or on the GPU), the nested functions are device functions."""
    path = write(tmp_path, PRANGE)
    report = adgen.check(path, modes=("forward", "reverse"), target="cuda", emulate=emulate)
    assert_ok(report)
    m = adgen.load(path, modes=("reverse",), target="cuda", emulate=True)
    text = m.transpiled.outputs["reverse"].source.text
    assert "static ADGEN_HD inline void p_grad_x_bwd(" in text


PRANGE_ARRAYS = """
import math

from adgen import Array, f64, grad, prange


def e(x: f64, w: Array[f64]) -> f64:
    s = 0.0
    for j in range(len(w)):
        s += math.sin(x * w[j]) * w[j]
    return s


def field(xs: Array[f64], w: Array[f64], out: Array[f64]) -> None:
    for i in prange(len(xs)):
        out[i] = grad(e)(xs[i], w) * xs[i]
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@EMULATED_AND_GPU
def test_the_gradient_of_a_function_of_arrays_in_a_kernel(tmp_path: Path, emulate: bool) -> None:
    """grad(e) in a prange, of an e that indexes an array: e was taken for a host function
    (it is called nowhere; e_grad computes from copies of it), which may not index arrays,
    and the module was refused on the CUDA target.  e runs on the device as a callee does;
    called on the host too, it is refused saying why it runs on the device."""
    path = write(tmp_path, PRANGE_ARRAYS)
    assert_ok(adgen.check(path, modes=("forward", "reverse", "hvp"), target="cuda",
                          emulate=emulate))
    m = adgen.load(path, modes=("reverse",), target="cuda", emulate=True)
    assert not hasattr(m, "e")  # (a device function: not callable from Python)
    xs, w = np.linspace(-1.0, 1.0, 5), np.array([0.5, -1.5, 2.0])
    out = np.zeros(5)
    m.field(xs, w, out)
    exact = [x * sum(math.cos(x * wj) * wj * wj for wj in w) for x in xs]
    np.testing.assert_allclose(out, exact, rtol=1e-13)
    host = write(tmp_path, PRANGE_ARRAYS + "\n\ndef host(x: f64, w: Array[f64]) -> f64:\n"
                 "    return e(x, w) * 2.0\n", name="host")
    with pytest.raises(adgen.LoadError, match=r"host.py:19:12: error: 'e' runs on the device "
                                             r"\(grad\(e\) is taken inside a prange\) and is "
                                             r"called here on the host too"):
        adgen.load(host, modes=("reverse",), target="cuda", emulate=True)
    # a function of scalars whose gradient a kernel takes stays a host function too
    scalars = write(tmp_path, PRANGE + "\n\ndef host(x: f64, w: f64) -> f64:\n"
                    "    return p(x, w) * 2.0\n", name="scalars")
    m = adgen.load(scalars, modes=("reverse",), target="cuda", emulate=True)
    assert m.host(0.5, 2.0) == pytest.approx(2 * m.p(0.5, 2.0)) and hasattr(m, "p")
