"""The CUDA target: every output compiles with nvcc; the device code's numerics are checked
on the CPU (the emulation build); on a machine with a GPU, the same checks run on it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from adgen.transpile.frontend.diagnostics import AdgenError
from helpers import (EMULATED_AND_GPU, EXAMPLES, ROOT, check_goldens, functions_of, needs_gpu,
                     run_cli)

KERNELS = ROOT / "examples" / "kernels.py"
MODES = ("primal", "forward", "reverse", "hvp")
#: the examples whose arrays are all indexed inside pranges (the others index arrays on the
#: host, which the CUDA target rejects): kernels, and modules of scalar functions (host code)
CUDA_EXAMPLES = [ROOT / "examples" / f"{name}.py"
                 for name in ("kernels", "mixture", "piecewise", "pow_while", "recursive")]
NVCC_STRICT = ["-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror"]

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


def _write(example: Path, out: Path) -> list[Path]:
    result = run_cli(str(example), "--target", "cuda", *[a for m in MODES for a in ("--mode", m)],
                     "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    return sorted(out.glob("*.cu"))


@needs_nvcc
@pytest.mark.parametrize("example", CUDA_EXAMPLES, ids=lambda p: p.stem)
def test_every_output_compiles_with_nvcc_without_warnings(example: Path, tmp_path: Path) -> None:
    sources = _write(example, tmp_path)
    assert len(sources) == len(MODES)
    assert (tmp_path / "adgen_runtime_cuda.cuh").exists()
    for cu in sources:
        _compile_strictly(cu, tmp_path, ["-gencode", "arch=compute_80,code=sm_80",
                                         "-gencode", "arch=compute_90,code=sm_90"])


def _compile_strictly(cu: Path, tmp_path: Path, device_flags: list[str]) -> None:
    """nvcc compiles ``cu`` without a warning, for the device and for the emulation."""
    for flags in (device_flags, ["-DADGEN_CUDA_EMULATE", "-arch=sm_80"]):
        cc = subprocess.run(["nvcc", "-c", *NVCC_STRICT, *flags, str(cu), "-o",
                             str(tmp_path / (cu.stem + ".o"))],
                            capture_output=True, text=True, check=False)
        assert cc.returncode == 0, f"{cu.name} {flags}:\n{cc.stderr}"


def _compiled_strictly_and_checked(path: Path, tmp_path: Path, emulate: bool,
                                   function: str) -> None:
    """Every mode of ``path`` compiles for sm_80 without a warning (and for the emulation),
    and ``function`` passes the three-way check (emulated, or on the GPU)."""
    for cu in _write(path, tmp_path / "out"):
        _compile_strictly(cu, tmp_path, ["-arch=sm_80"])
    report = adgen.check(str(path), modes=MODES, target="cuda", emulate=emulate,
                         functions=[function])
    assert report.ok, "\n" + report.table()


@needs_nvcc
def test_binomial_checkpointing_on_the_host_compiles_as_cpp(tmp_path: Path) -> None:
    """The snapshots of a binomial loop are local arrays: C++ (nvcc) needs the cast of
    adgen_calloc's void * that C does without ('a value of type void * cannot be used to
    initialize an entity of type double *')."""
    path = tmp_path / "revolve.py"
    path.write_text("import math\n\n\ndef f(y: float, n: int) -> float:\n    a = y\n"
                    "    for t in range(n):  # adgen: binomial(2)\n"
                    "        a = a * math.cos(a) + 0.1\n    return a\n")
    report = adgen.check(str(path), modes=("forward", "reverse", "hvp"), target="cuda",
                         emulate=True, args={"f": (0.3, 7)})
    assert report.ok, "\n" + report.table()


@needs_nvcc
@EMULATED_AND_GPU
@pytest.mark.parametrize("example", CUDA_EXAMPLES, ids=lambda p: p.stem)
def test_device_code_passes_the_three_way_check(example: Path, emulate: bool) -> None:
    report = adgen.check(str(example), modes=MODES, target="cuda", emulate=emulate)
    assert report.ok, "\n" + report.table()
    assert {r.check for r in report.rows} == {
        "primal vs CPython", "tangent vs finite differences", "adjoint vs tangent (dot product)",
        "hvp vs differences of the gradient", "hvp symmetry <u, Hv> = <v, Hu>"}


@needs_nvcc
def test_device_code_in_single_precision() -> None:
    # f32 literals (0.5f) must not read as names of the host: a kernel's parameters
    report = adgen.check(str(KERNELS), modes=MODES, target="cuda", emulate=True,
                         precision="f32")
    assert report.ok, "\n" + report.table()


def _inputs(rng: np.random.Generator, n: int = 500, cells: int = 64) -> dict[str, tuple]:
    grid = np.sort(rng.uniform(0.0, 10.0, cells))
    return {
        "kmeans_cost": (rng.standard_normal((n, 3)), rng.standard_normal((8, 3))),
        "hm_lstm": (rng.standard_normal((n, 4)), rng.standard_normal(n),
                    (rng.random(n) < 0.3).astype(float), (rng.random(n) < 0.2).astype(float),
                    np.zeros(n), np.zeros(n)),
        "xs_lookup": (rng.uniform(grid[0], grid[-1], n), grid, rng.random((cells, 5)),
                      rng.random(5), np.zeros(n)),
    }


def _compare(cuda: adgen.AdgenModule, c: adgen.AdgenModule, n: int = 500,
             cells: int = 64) -> None:
    rng = np.random.default_rng(3)
    for name, args in _inputs(rng, n, cells).items():
        f, g = getattr(cuda, name), getattr(c, name)
        fresh = lambda: tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        a1, a2 = fresh(), fresh()
        np.testing.assert_allclose(np.asarray(f(*a1) or 0.0), np.asarray(g(*a2) or 0.0),
                                   rtol=1e-12)
        for x, y in zip(a1, a2):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
        tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
        _, t1 = f.jvp(fresh(), tangents)
        _, t2 = g.jvp(fresh(), tangents)
        np.testing.assert_allclose(np.asarray(t1 or 0.0), np.asarray(t2 or 0.0), rtol=1e-11)
        out_bars = {n: rng.standard_normal(np.shape(a))
                    for n, a in zip(f.param_names, args) if n in ("c_new", "h_new", "sigma")}
        ybar = None if name == "hm_lstm" else 1.0
        _, b1 = f.vjp(fresh(), ybar, out_bars=out_bars)
        _, b2 = g.vjp(fresh(), ybar, out_bars=out_bars)
        for x, y in zip(b1, b2):
            if x is not None:
                np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@needs_nvcc
def test_emulated_device_code_computes_what_the_c_target_computes() -> None:
    cuda = adgen.load(str(KERNELS), modes=("forward", "reverse"), target="cuda", emulate=True)
    c = adgen.load(str(KERNELS), modes=("forward", "reverse"))
    _compare(cuda, c)


@needs_gpu
def test_on_the_gpu_numpy_arrays_are_copied_in_and_out() -> None:
    cuda = adgen.load(str(KERNELS), modes=("forward", "reverse"), target="cuda")
    c = adgen.load(str(KERNELS), modes=("forward", "reverse"))
    _compare(cuda, c)  # sums in another order: agreement to rounding


@needs_gpu
def test_on_the_gpu_many_blocks_add_to_the_same_adjoints() -> None:
    """200,000 iterations (782 blocks) add to the adjoints of the centres, the grid, the
    weights and the cross sections: through block copies in shared memory (centersb,
    weightb), warp-aggregated atomics, and atomics on the array itself where its copy would
    be too large (gridb and xsb: 2,048 cells); the sums agree with the C target's."""
    cuda = adgen.load(str(KERNELS), modes=("forward", "reverse"), target="cuda")
    c = adgen.load(str(KERNELS), modes=("forward", "reverse"))
    _compare(cuda, c, n=200_000, cells=2048)


@needs_gpu
def test_on_the_gpu_the_three_way_check_passes() -> None:
    report = adgen.check(str(KERNELS), modes=MODES, target="cuda")
    assert report.ok, "\n" + report.table()


@needs_gpu
def test_on_the_gpu_device_arrays_pass_as_pointers() -> None:
    cupy = pytest.importorskip("cupy")
    cuda = adgen.load(str(KERNELS), target="cuda")
    c = adgen.load(str(KERNELS))
    rng = np.random.default_rng(5)
    args = _inputs(rng)["xs_lookup"]
    on_device = [cupy.asarray(a) for a in args]
    on_host = [a.copy() for a in args]
    np.testing.assert_allclose(cuda.xs_lookup(*on_device), c.xs_lookup(*on_host), rtol=1e-10)
    np.testing.assert_allclose(cupy.asnumpy(on_device[-1]), on_host[-1], rtol=1e-12)  # sigma


def test_which_examples_build_for_cuda() -> None:
    for example in EXAMPLES:
        if example in CUDA_EXAMPLES:
            transpile(str(example), ["primal", "forward", "reverse"], target="cuda")
            continue
        with pytest.raises(AdgenError) as info:
            transpile(str(example), ["primal", "forward", "reverse"], target="cuda")
        assert "CUDA" in info.value.message or "device" in info.value.message, \
            f"{example.name}: {info.value.message}"


def test_generated_kernels_and_launches() -> None:
    t = transpile(str(KERNELS), ["reverse"], target="cuda")
    text = t.outputs["reverse"].source.text  # type: ignore[attr-defined]
    assert t.outputs["reverse"].source.name == "kernels_b.cu"  # type: ignore[attr-defined]
    assert '#include "adgen_runtime_cuda.cuh"' in text
    # one kernel per prange, launched by its host function; the sum comes back through a
    # warp reduction into a device buffer
    assert "ADGEN_KERNEL xs_lookup_b_kernel0(" in text
    assert "adgen_warp_add_f64(&sums[0], total);" in text
    # xs[lo, r] is read at a data-dependent row and weight[r] by every iteration: their
    # adjoints are only added to, atomically, in a block copy in shared memory where it fits
    # (the launch gives the bytes of all the copies); energy[p] belongs to the iteration: a
    # plain increment
    assert "size_t copy_bytes = (size_t)(weight_shape0 + grid_shape0 + xs_shape0 * " \
        "xs_shape1) * sizeof(double);" in text
    assert "ADGEN_LAUNCH_SHARED(xs_lookup_b_kernel0, energy_shape0, copy_bytes, (" in text
    assert "    size_t shared_bytes = 0;\n    double *weightb_t = ADGEN_BLOCK_PRIVATE(double, " \
        "weightb, weight_shape0, shared_bytes);\n" in text
    assert "    double *xsb_t = ADGEN_BLOCK_PRIVATE(double, xsb, xs_shape0 * xs_shape1, " \
        "shared_bytes);\n" in text
    assert "ADGEN_ATOMIC_ADD(xsb_t[lo * xs_shape1 + r], " in text
    assert "ADGEN_ATOMIC_ADD(weightb_t[r], " in text
    assert "    ADGEN_BLOCK_PRIVATE_ADD(weightb, weightb_t, weight_shape0);\n" in text
    assert "energyb[p] += eb;" in text
    # the stores of an iteration come after its loads and increments (transforms/sink.py):
    # the output, and the zeroed adjoint of the output, last
    lstm = functions_of(text)["hm_lstm_b_kernel0"]
    assert lstm.endswith("        zb[i * z_shape1 + 0] += tmp * (f / tmp_1 * fb);\n"
                         "        /* kernels.py:25: h_new[i] = o * math.tanh(c_new[i]) */\n"
                         "        h_new[i] = o * tmp_7;\n"
                         "        h_newb[i] = 0.0;\n    }\n"), lstm[-400:]
    # k-means: each thread finds its point's nearest centre (the running minimum becomes the
    # index of the one it keeps) and differentiates that distance only: one kernel, no tape
    kmeans = text[text.index("ADGEN_KERNEL kmeans_cost_b_kernel0("):]
    kmeans = kmeans[:kmeans.index("\n}\n")]
    assert "k = d2 < best ? k_1 : k;" in kmeans
    assert "ADGEN_ATOMIC_ADD(centersb_t[k * centers_shape1 + j], -(tb));" in kmeans
    assert "DTAPE" not in text and "kmeans_cost_b_kernel1" not in text
    # the GMM log-likelihood: one kernel computes the iteration once, pushes the exps on the
    # thread's tape for its reverse, and adds up the value
    mixture = transpile(str(ROOT / "examples" / "mixture.py"), ["reverse"], target="cuda")
    loglik = functions_of(mixture.outputs["reverse"].source.text)  # type: ignore[attr-defined]
    assert "loglik_b_kernel1" not in loglik and loglik["loglik_b_kernel0"].count("= exp(") == 1


def test_a_prange_adjoint_does_not_fuse_with_a_loop_on_the_host(tmp_path: Path) -> None:
    """The adjoint loop of the prange (which tapes within each iteration) next to the
    adjoint of a sequential loop over the same range: fused, both would run on the host, on
    device arrays.  Each stays what it is: the prange a kernel."""
    path = tmp_path / "mixed.py"
    path.write_text(
        "import math\n\nfrom adgen import Array, f64, prange\n\n\n"
        "def g(k: int) -> int:\n    return k + 1\n\n\n"
        "def f(x: Array[f64], w: Array[f64, 2], c: f64) -> f64:\n"
        "    total = 0.0\n"
        "    for i in prange(len(x)):\n"
        "        acc = 0.0\n"
        "        for k in range(w.shape[0]):\n"
        "            d2 = 0.0\n"
        "            for j in range(w.shape[1]):\n"
        "                u = x[i] - w[k, j]\n"
        "                d2 += u * u\n"
        "            acc += math.exp(-d2)\n"
        "        total += math.log(acc)\n"
        "    m = g(len(x))\n"
        "    t = 0.0\n"
        "    for i in range(len(x)):\n"
        "        t += c * c * float(m)\n"
        "    return total + t\n")
    text = transpile(str(path), ["reverse"], target="cuda").outputs[
        "reverse"].source.text  # type: ignore[attr-defined]
    host = functions_of(text)["f_b"]
    assert "ADGEN_LAUNCH_SHARED(f_b_kernel1, x_shape0, " in host
    assert "x[" not in host and "wb[" not in host


@needs_nvcc
@EMULATED_AND_GPU
def test_integer_increments_and_host_loop_indices_in_kernels(tmp_path: Path, emulate: bool) -> None:
    """A histogram of i32 and i64 counts (atomic increments of integers), and a kernel inside
    a host loop that reads the host loop's index (a parameter of the kernel): every mode
    compiles for the device without warnings and passes the three-way check (in the
    emulation, and on the GPU where there is one)."""
    path = tmp_path / "counts.py"
    path.write_text(
        "from adgen import Array, f64, i32, i64, prange\n\n\n"
        "def counts(idx: Array[i32], w: Array[f64], h: Array[i32], g: Array[i64], m: int) "
        "-> float:\n"
        "    s = 0.0\n"
        "    for t in range(m):\n"
        "        for i in prange(len(idx)):\n"
        "            h[idx[i]] += 1\n"
        "            g[idx[i]] += t\n"
        "            s += w[i] * w[i] * t\n"
        "    return s\n")
    for cu in _write(path, tmp_path / "out"):
        text = cu.read_text()
        assert "ADGEN_ATOMIC_ADD(h[" in text and ", int64_t t" in text, cu.name
        cc = subprocess.run(["nvcc", "-c", *NVCC_STRICT, "-gencode", "arch=compute_80,code=sm_80",
                             "-gencode", "arch=compute_90,code=sm_90", str(cu), "-o",
                             str(tmp_path / (cu.stem + ".o"))], capture_output=True, text=True,
                            check=False)
        assert cc.returncode == 0, f"{cu.name}:\n{cc.stderr}"
    idx = np.array([0, 2, 2, 1, 0, 2], dtype=np.int32)
    report = adgen.check(str(path), modes=MODES, target="cuda", emulate=emulate,
                         args={"counts": [idx, np.linspace(0.5, 1.5, 6), np.zeros(3, np.int32),
                                          np.zeros(3, np.int64), 3]})
    assert report.ok, "\n" + report.table()


@needs_nvcc
@EMULATED_AND_GPU
def test_custom_derivatives_called_in_a_kernel_run_on_the_device(tmp_path: Path,
                                                                 emulate: bool) -> None:
    """A @custom_vjp adjoint and a @custom_jvp tangent of functions called inside a prange are
    device functions too: they were host-only, nvcc warned (#20011-D) and compiled the kernel
    of cv_b to store NaN into xb and yb; the emulation passed."""
    path = tmp_path / "custom.py"
    path.write_text(
        "import math\n\n"
        "from adgen import Array, custom_jvp, custom_vjp, f64, prange\n\n\n"
        "def safe_adj(x: float, y: float, g: float) -> tuple[float, float]:\n"
        "    return g / y, -g * x / (y * y)\n\n\n"
        "@custom_vjp(safe_adj)\n"
        "def safe(x: float, y: float) -> float:\n"
        "    return x / y\n\n\n"
        "def sp_tan(x: float, xd: float) -> tuple[float, float]:\n"
        "    return math.log(1.0 + math.exp(x)), xd / (1.0 + math.exp(-x))\n\n\n"
        "@custom_jvp(sp_tan)\n"
        "def sp(x: float) -> float:\n"
        "    return math.log(1.0 + math.exp(x))\n\n\n"
        "def cv(x: Array[f64], y: Array[f64]) -> float:\n"
        "    s = 0.0\n"
        "    for i in prange(len(x)):\n"
        "        s += safe(x[i], y[i] + 1.0) + sp(x[i] * y[i])\n"
        "    return s\n")
    _compiled_strictly_and_checked(path, tmp_path, emulate, "cv")
    # in the primal nothing calls the rules on the device: host code may call them, and they
    # stay functions of the module
    path.write_text(path.read_text() + "\n\ndef host(a: float) -> float:\n"
                    "    v, d = sp_tan(a, 1.0)\n    return v * d\n")
    t = transpile(str(path), ["primal"], target="cuda")
    assert "ADGEN_HD" not in t.outputs["primal"].source.text.split("sp_tan(")[0].splitlines()[-1]
    assert "double sp_tan_" not in t.outputs["primal"].header.text
    assert "void sp_tan(" in t.outputs["primal"].header.text


def test_a_custom_adjoint_is_device_code_only_where_adjoints_are_asked_for(
        tmp_path: Path) -> None:
    """Forward mode calls no @custom_vjp adjoint: one with a prange (host code) is accepted
    there, and refused where an adjoint calls it on the device."""
    path = tmp_path / "rule.py"
    path.write_text(
        "from adgen import Array, custom_vjp, f64, prange\n\n\n"
        "def g_adj(x: float, retb: float) -> float:\n"
        "    a = 0.0\n    for k in prange(2):\n        a += retb\n    return a\n\n\n"
        "@custom_vjp(g_adj)\n"
        "def g(x: float) -> float:\n    return 2.0 * x\n\n\n"
        "def f(a: Array[f64]) -> float:\n    s = 0.0\n"
        "    for i in prange(len(a)):\n        s += g(a[i])\n    return s\n")
    t = transpile(str(path), ["primal", "forward"], target="cuda")  # (it was refused)
    assert "g_adj" not in t.outputs["forward"].source.text
    with pytest.raises(AdgenError, match="a prange in 'g_adj', which runs on the device"):
        transpile(str(path), ["forward", "reverse"], target="cuda")


@needs_nvcc
def test_a_parameter_named_like_the_kernels_tape(tmp_path: Path) -> None:
    """A kernel whose iterations tape declared its tape thread_tape, over a parameter of that
    name the kernel reads (nvcc: "thread_tape" has already been declared)."""
    path = tmp_path / "dev.py"
    path.write_text(
        "from adgen import Array, f64, prange\n\n\n"
        "def g(x: Array[f64], i: int, thread_tape: float) -> float:\n"
        "    r = 1.0\n    for k in range(4):\n"
        "        r = r * x[i] + 0.5 * r * r * thread_tape\n    return r\n\n\n"
        "def f(x: Array[f64], y: Array[f64], thread_tape: float) -> float:\n"
        "    total = 0.0\n    for i in prange(len(x)):\n"
        "        r = g(x, i, thread_tape)\n        y[i] = r\n        total += r\n"
        "    return total\n")
    t = transpile(str(path), ["reverse"], target="cuda")
    assert "ADGEN_DTAPE(thread_tape_1);" in t.outputs["reverse"].source.text
    report = adgen.check(str(path), modes=("reverse",), target="cuda", emulate=True)
    assert report.ok, "\n" + report.table()


@needs_nvcc
@EMULATED_AND_GPU
def test_a_kernel_calling_a_function_that_writes_an_array(tmp_path: Path, emulate: bool) -> None:
    """put's split adjoint (put_fwd, put_bwd) takes the tape but records nothing: the prange
    is a kernel in every mode (its adjoint was refused: 'needs a tape across iterations'),
    and in C an OpenMP loop (it ran in sequence); calls of put_fwd/put_bwd pass NULL."""
    path = tmp_path / "put.py"
    path.write_text(
        "from adgen import Array, f64, prange\n\n\n"
        "def put(y: Array[f64], i: int, v: float) -> None:\n"
        "    y[i] = 3.0 * v * v + 2.0 * v\n\n\n"
        "def call_write(x: Array[f64], y: Array[f64], c: float) -> None:\n"
        "    for i in prange(len(x)):\n"
        "        put(y, i, x[i] * c)\n")
    c = transpile(str(path), ["reverse"]).outputs["reverse"].source.text
    assert "put_bwd(NULL, " in c and "ADGEN_OMP(omp parallel for" in c and "adgen_tape tape" \
        not in c
    _compiled_strictly_and_checked(path, tmp_path, emulate, "call_write")


SUMS = (
    "from adgen import Array, f64, prange\n\n\n"
    "def moments(x: Array[f64], y: Array[f64]) -> float:\n"
    "    s = 0.0\n"
    "    for i in prange(len(x)):\n"
    "        s += x[i]\n"
    "    a = 0.0\n"
    "    b = 0.0\n"
    "    c = 0.0\n"
    "    for i in prange(len(y)):\n"
    "        a += y[i]\n"
    "        b += y[i] * y[i] * s\n"
    "        c += x[i] * y[i]\n"
    "    return a * b + c\n")


def _check_kept_sums(tmp_path: Path, emulate: bool) -> None:
    """Kernels with one sum, then three (the kept buffer grows), in the primal and the adjoint,
    called again and again with other inputs (the buffer is zeroed before each launch), and
    from four host threads at once (each has its own buffer): every value is CPython's."""
    import importlib.util
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "moments.py"
    path.write_text(SUMS)
    spec = importlib.util.spec_from_file_location("moments_py", path)
    plain = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(plain)  # type: ignore[union-attr]
    m = adgen.load(str(path), modes=("primal", "reverse"), target="cuda", emulate=emulate)

    def one(seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 3000))
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        expect = plain.moments(list(x), list(y))
        assert m.moments(x, y) == pytest.approx(expect, rel=1e-9, abs=1e-9)
        value, (xb, yb) = m.moments.vjp((x, y), 1.0)
        assert value == pytest.approx(expect, rel=1e-9, abs=1e-9)
        a, b, s = y.sum(), (y * y).sum() * x.sum(), x.sum()
        np.testing.assert_allclose(xb, a * (y * y).sum() + y, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(yb, b + a * 2 * y * s + x, rtol=1e-9, atol=1e-9)

    for seed in range(6):
        one(seed)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(6, 30)))


@needs_nvcc
def test_the_sums_buffer_is_kept_and_zeroed_before_each_launch(tmp_path: Path) -> None:
    _check_kept_sums(tmp_path, emulate=True)


@needs_gpu
def test_on_the_gpu_the_sums_buffer_is_kept_per_thread(tmp_path: Path) -> None:
    _check_kept_sums(tmp_path, emulate=False)


@needs_nvcc
def test_a_thread_tapes_what_its_iteration_needs_in_local_memory(tmp_path: Path) -> None:
    """An inner loop whose reverse needs the value it carries: each thread pushes it on a
    tape of its own (ADGEN_DTAPE) while it computes its iteration again, and pops it."""
    path = tmp_path / "damped.py"
    path.write_text(
        "from adgen import Array, f64, prange\n\n\n"
        "def damped(x: Array[f64], y: Array[f64]) -> float:\n"
        "    total = 0.0\n"
        "    for i in prange(len(x)):\n"
        "        r = 1.0\n"
        "        for k in range(4):\n"
        "            r = r * x[i] + 0.5 * r * r\n"
        "        y[i] = r\n"
        "        total += r\n"
        "    return total\n")
    text = transpile(str(path), ["reverse"], target="cuda").outputs[
        "reverse"].source.text  # type: ignore[attr-defined]
    assert "    ADGEN_DTAPE(thread_tape);\n" in text and "ADGEN_DTAPE_FREE(thread_tape);" in text
    assert "adgen_dpush_f64(&thread_tape, r" in text and "adgen_dpop_f64(&thread_tape)" in text
    result = run_cli(str(path), "--target", "cuda", "--mode", "reverse", "-o",
                     str(tmp_path / "out"), "--check", "--emulate", "-q")
    assert result.returncode == 0, result.stdout + result.stderr


def test_vector_modes_are_not_on_the_cuda_target_yet(tmp_path: Path) -> None:
    result = run_cli(str(KERNELS), "--target", "cuda", "--mode", "vector-forward", "-o",
                     str(tmp_path))
    assert result.returncode == 2
    assert "not supported on the CUDA target yet" in result.stderr
    # named as asked (it said 'vector-forward', which --mode jacobian stands for)
    result = run_cli(str(KERNELS), "--target", "cuda", "--mode", "jacobian", "-o",
                     str(tmp_path / "j"))
    assert result.returncode == 2 and "mode 'jacobian' (the vector modes) is not supported " \
        "on the CUDA target yet" in result.stderr, result.stderr
    assert not (tmp_path / "j").exists()
    # adgen.check leaves them out of its default modes, and refuses them asked for (it
    # left them out, checked the primal alone and said ok)
    with pytest.raises(adgen.UsageError, match="mode 'vector-forward' is not supported on "
                                               "the CUDA target yet"):
        adgen.check(str(KERNELS), modes=("vector-forward", "vector-reverse"), target="cuda",
                    emulate=True)


@needs_nvcc
def test_vector_methods_of_a_cuda_module_say_the_target_has_none() -> None:
    """jacobian and jvp_vec of a module loaded for the CUDA target asked to load it with
    vector modes, which that target refuses."""
    m = adgen.load(str(KERNELS), modes=("forward",), target="cuda", emulate=True)
    f = next(iter(m.functions.values()))
    message = "the vector modes are not supported on the CUDA target yet"
    with pytest.raises(RuntimeError, match=message):
        adgen.jacobian(f, (None,) * len(f.param_names))
    with pytest.raises(RuntimeError, match=message):
        f.jvp_vec([None] * len(f.param_names), [None] * len(f.param_names))


@needs_nvcc
def test_check_from_the_command_line_with_the_emulation(tmp_path: Path) -> None:
    result = run_cli(str(KERNELS), "--target", "cuda", "--mode", "reverse", "-o", str(tmp_path),
                     "--check", "--emulate", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "adgen_runtime.h", "adgen_runtime_cuda.cuh", "kernels_b.cu", "kernels_b.h"]


@pytest.mark.parametrize("example", CUDA_EXAMPLES[:1], ids=lambda p: p.stem)
def test_golden(example: Path, update_goldens: bool) -> None:
    check_goldens(transpile(str(example), MODES, target="cuda").outputs.values(),
                  Path(__file__).parent / "golden" / "cuda", update_goldens)


class FakeRuntime:
    """The CUDA runtime calls adgen/cuda.py makes, on host memory: lets the device path of
    the binding (transfers, device arrays) run where there is no GPU."""

    def __init__(self) -> None:
        import ctypes
        self.ctypes = ctypes
        self.buffers: dict[int, object] = {}
        self.mallocs = 0

    def cudaMalloc(self, out, size) -> int:  # noqa: N802 (the runtime's names)
        buf = self.ctypes.create_string_buffer(size.value)
        self.buffers[self.ctypes.addressof(buf)] = buf
        out._obj.value = self.ctypes.addressof(buf)
        self.mallocs += 1
        return 0

    def cudaMemcpy(self, dst, src, size, kind) -> int:  # noqa: N802
        self.ctypes.memmove(dst.value, src.value, size.value)
        return 0

    def cudaFree(self, ptr) -> int:  # noqa: N802
        del self.buffers[ptr.value]
        return 0


class HostInterface:
    """An object with ``__cuda_array_interface__`` over a NumPy array's memory (what a CuPy
    array looks like to the binding)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape = array.shape
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "strides": None,
            "data": (array.ctypes.data, False), "version": 3}


@needs_nvcc
def test_the_device_path_of_the_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    # the emulation build, called as if on a GPU: NumPy arrays go through cudaMalloc/cudaMemcpy
    # (here on host memory) and come back when written; objects with __cuda_array_interface__
    # pass their pointer, with no copy
    import adgen.cuda
    fake = FakeRuntime()
    monkeypatch.setattr(adgen.cuda, "runtime", lambda: fake)
    cuda = adgen.load(str(KERNELS), modes=("forward", "reverse"), target="cuda", emulate=True)
    host = adgen.load(str(KERNELS), modes=("forward", "reverse"))
    for f in cuda.functions.values():
        for call in f._calls.values():
            call.device = True
    _compare(cuda, host)
    assert fake.mallocs > 0 and not fake.buffers  # every copy freed
    rng = np.random.default_rng(7)
    args = _inputs(rng)["xs_lookup"]
    sigma = np.zeros_like(args[-1])
    before = fake.mallocs
    total = cuda.xs_lookup(*[HostInterface(a) for a in args[:-1]], HostInterface(sigma))
    assert fake.mallocs == before  # device arrays: no copies
    expected = np.zeros_like(sigma)
    np.testing.assert_allclose(total, host.xs_lookup(*args[:-1], expected), rtol=1e-12)
    np.testing.assert_allclose(sigma, expected, rtol=1e-12)
    # the checks of NumPy arrays hold for device arrays too
    with pytest.raises(TypeError, match="dtype float64"):
        cuda.xs_lookup(*[HostInterface(a) for a in args[:-1]],
                       HostInterface(sigma.astype(np.float32)))
    with pytest.raises(ValueError, match="overlap"):
        cuda.xs_lookup(*[HostInterface(a) for a in args[:-1]], HostInterface(args[0]))


def test_a_host_build_rejects_device_arrays() -> None:
    host = adgen.load(str(KERNELS))
    rng = np.random.default_rng(7)
    args = _inputs(rng)["xs_lookup"]
    with pytest.raises(TypeError, match="device array"):
        host.xs_lookup(*[HostInterface(a) for a in args])


@needs_nvcc
@EMULATED_AND_GPU
def test_a_prange_adding_into_what_it_reads_is_a_kernel(tmp_path: Path, emulate: bool) -> None:
    """y[i] += e: the adjoint needs no value of y, so each thread computes its iteration
    again (no tape across iterations), and the loop is a kernel in both sweeps."""
    path = tmp_path / "accumulate.py"
    path.write_text(
        "import math\n"
        "from adgen import Array, f64, prange\n\n\n"
        "def accumulate(x: Array[f64], a: Array[f64, 2], y: Array[f64]) -> None:\n"
        "    for i in prange(a.shape[0]):\n"
        "        y[i] += math.sin(x[i]) * x[i]\n"
        "        for j in range(a.shape[1]):\n"
        "            y[i] = 0.5 * y[i] + a[i, j] * math.cos(x[j])\n")
    text = transpile(str(path), ["reverse"], target="cuda").outputs[
        "reverse"].source.text  # type: ignore[attr-defined]
    assert "ADGEN_KERNEL accumulate_b_kernel0(" in text
    report = adgen.check(str(path), modes=MODES, target="cuda", emulate=emulate)
    assert report.ok, report.table()


@needs_nvcc
@EMULATED_AND_GPU
def test_a_kernel_calls_an_adjoint_that_adds_to_shared_arrays(tmp_path: Path, emulate: bool) -> None:
    """nearest_bwd adds to xb at every j, as other threads do: it adds atomically in its
    device pass (ADGEN_ATOMIC_ADD in an ADGEN_HD function), plainly in its host pass."""
    path = tmp_path / "nearest.py"
    path.write_text(
        "import math\n"
        "from adgen import Array, f64, i64, prange\n\n\n"
        "def nearest(x: Array[f64], i: i64, c: f64) -> f64:\n"
        "    acc = 0.0\n"
        "    for j in range(len(x)):\n"
        "        if x[j] > x[i]:\n"
        "            acc += math.exp(-(x[j] - x[i]) * c)\n"
        "    return acc\n\n\n"
        "def field(x: Array[f64], y: Array[f64], c: f64) -> None:\n"
        "    for i in prange(len(x)):\n"
        "        y[i] = nearest(x, i, c) * x[i]\n")
    out = tmp_path / "out"
    result = run_cli(str(path), "--target", "cuda", "--mode", "reverse", "--mode", "hvp",
                     "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    text = (out / "nearest_b.cu").read_text()
    assert "ADGEN_KERNEL field_b_kernel0(" in text
    assert "    ADGEN_ATOMIC_ADD(xb[i], tmp_2);\n" in text
    for cu in sorted(out.glob("*.cu")):
        _compile_strictly(cu, tmp_path, ["-gencode", "arch=compute_80,code=sm_80"])
    report = adgen.check(str(path), modes=MODES, target="cuda", emulate=emulate)
    assert report.ok, report.table()


@needs_nvcc
@EMULATED_AND_GPU
def test_a_device_function_with_a_tape(tmp_path: Path, emulate: bool) -> None:
    """h_bwd pops its while loop's trip count from the thread's tape: in the emulation the
    tape is the host's, and ADGEN_HD functions are host functions there (it did not compile
    for the emulation); on a GPU the tape is the thread's own."""
    path = tmp_path / "trips.py"
    path.write_text(
        "from adgen import Array, f64, prange\n\n\n"
        "def h(a: f64, b: f64) -> f64:\n"
        "    t = a\n"
        "    while t < 4.0:\n"
        "        t = t * 1.5 + b * b\n"
        "    return t\n\n\n"
        "def f(x: Array[f64], y: Array[f64], c: f64) -> None:\n"
        "    for i in prange(len(x)):\n"
        "        y[i] = h(x[i], c)\n")
    out = tmp_path / "out"
    result = run_cli(str(path), "--target", "cuda", "--mode", "reverse", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    assert "adgen_dpop_" in (out / "trips_b.cu").read_text()
    _compile_strictly(out / "trips_b.cu", tmp_path, ["-gencode", "arch=compute_80,code=sm_80"])
    report = adgen.check(str(path), modes=MODES, target="cuda", emulate=emulate)
    assert report.ok, report.table()
