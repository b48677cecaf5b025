"""The contract of the Python API and of --head and --check on misuse (DESIGN.md sections 7
to 9, docs/python-api.md): each mistake raises an exception that names it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from helpers import ROOT, run_cli

TWO = ("def g(x: float, n: int) -> float:\n    return x * n\n\n\n"
       "def k(n: float) -> float:\n    return n * n\n")


def _module(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return str(path)


def _made_wrong(path: str, modes: tuple[str, ...], file: str, good: str, bad: str) -> str:
    """A derivative made wrong by hand, for ``adgen.check(..., sources=[...])``: the C of
    ``modes`` written by the command line (into ``out`` beside the module), then the one
    ``good`` of ``file`` replaced by ``bad``.  Returns the edited file."""
    out = Path(path).parent / "out"
    r = run_cli(path, *(a for m in modes for a in ("--mode", m)), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    edited = out / file
    text = edited.read_text()
    assert text.count(good) == 1, text
    edited.write_text(text.replace(good, bad))
    return str(edited)


def test_each_head_selects_the_inputs_of_its_own_function(tmp_path: Path) -> None:
    path = _module(tmp_path, TWO, "two")
    t = transpile(path, ("primal", "forward"), head="g(return)/(x) k(return)/(n)")
    header = t.outputs["forward"].header.text
    assert "g_d(double x, double xd, int64_t n" in header and "k_d(double n, double nd" in header
    r = run_cli(path, "--head", "g(return)/(x) k(return)/(n)", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
    m = adgen.load(path, head="g(return)/(x) k(return)/(n)")
    assert m.k.jvp((3.0,), (1.0,)) == (9.0, 6.0)


@pytest.mark.parametrize("head, message", [
    ("g(return)/(zz)", "--head: 'zz' is not a floating-point parameter of g"),
    ("g(retur)/(x)", "--head: 'retur' is not a floating-point output (return or a written array) "
                     "of g"),
    ("g(return)/(n)", "--head: 'n' of 'g' is not a floating-point parameter"),
    ("g(return)/(x) k(return)/(x)", "--head: 'x' is not a floating-point parameter of k"),
])
def test_a_bad_name_in_a_head_is_named(tmp_path: Path, head: str, message: str) -> None:
    path = _module(tmp_path, TWO, "two")
    r = run_cli(path, "--head", head, "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.strip() == f"adgen: error: {message}"
    with pytest.raises(adgen.UsageError) as err:
        transpile(path, ("primal", "forward"), head=head)
    assert str(err.value) == message


def test_an_unknown_wrt_name_is_named_before_a_function_without_inputs(tmp_path: Path) -> None:
    path = _module(tmp_path, TWO, "two")
    with pytest.raises(adgen.UsageError, match=r"^--wrt: 'zz' is not a floating-point parameter "
                                               r"of g$"):
        transpile(path, ("primal", "forward"), functions=["g"], wrt=["zz"])


def test_check_of_a_bad_module_raises_the_located_diagnostic(tmp_path: Path) -> None:
    path = _module(tmp_path, "def g(x: float) -> float:\n    return y\n", "bad")
    with pytest.raises(adgen.LoadError) as err:
        adgen.check(path)
    assert str(err.value).startswith(f"{path}:2:12: error: unknown name 'y'")
    assert str(err.value).endswith("^")


@pytest.mark.parametrize("args, exc, message", [
    ({"g": (1.0,)}, TypeError, r"check: args\['g'\]: g\(\) takes 2 argument\(s\) \(x, n\), got 1"),
    ({"g": (1.0, 2, 3)}, TypeError, r"check: args\['g'\]: g\(\) takes 2 argument\(s\) \(x, n\), "
                                    r"got 3"),
    ({"g": (1.0, 2.5)}, TypeError, r"check: args\['g'\]: argument 'n' must be an int, got float"),
    ({"g": 1.0}, TypeError, r"check: args\['g'\] must be a tuple with one entry per argument of g "
                            r"\(x, n\), got float"),
    ({"zz": (1.0, 2)}, ValueError, r"check: args names 'zz', which is not a function of two.py "
                                   r"\(it defines g, k\)"),
    ([(1.0, 2)], TypeError, r"check: args must be a dict from a function name to its argument "
                            r"tuple, got list"),
])
def test_check_names_bad_inputs(tmp_path: Path, args: object, exc: type, message: str) -> None:
    path = _module(tmp_path, TWO, "two")
    with pytest.raises(exc, match=f"^{message}$"):
        adgen.check(path, modes=("forward",), args=args)  # type: ignore[arg-type]
    assert adgen.check(path, modes=("forward",), args={"g": (1.0, 2)}).ok


def test_bad_paths_seeds_and_sources_are_refused(tmp_path: Path) -> None:
    # an integer path opened (and closed) the caller's file descriptor; a negative seed was
    # NumPy's ValueError; a string of sources was read as one file per character; two
    # --source files of one name were taken silently, one of them
    path = _module(tmp_path, TWO, "two")
    with open(path) as f:
        with pytest.raises(TypeError, match="^path must be the file name of a module"):
            adgen.load(f.fileno())
        assert f.read() == TWO  # still open
    assert adgen.check(Path(path), modes=("forward",)).ok
    for seed, exc in [(-1, adgen.UsageError), (1.5, TypeError), ("a", TypeError),
                      (True, TypeError)]:
        with pytest.raises(exc, match="^seed must be a non-negative integer"):
            adgen.check(path, modes=("forward",), seed=seed)  # type: ignore[arg-type]
    out = tmp_path / "out"
    assert run_cli(path, "-o", str(out), "-q").returncode == 0
    with pytest.raises(TypeError, match=r"^sources must be a sequence of file names, e\.g\. "):
        adgen.check(path, modes=("forward",), sources=str(out / "two_d.c"))
    other = tmp_path / "edited"
    other.mkdir()
    (other / "two_d.c").write_text((out / "two_d.c").read_text())
    with pytest.raises(adgen.UsageError, match="both replace two_d.c"):
        adgen.check(path, modes=("forward",), sources=[str(out / "two_d.c"),
                                                       str(other / "two_d.c")])
    assert adgen.check(path, modes=("forward",), sources=[str(other / "two_d.c")] * 2).ok


def test_check_does_not_run_compiled_code_where_cpython_raised(tmp_path: Path) -> None:
    """n = 3 (the default input) divides by zero: CPython raises ZeroDivisionError, the C
    code would fault (SIGFPE).  Every row of the function fails, naming the exception."""
    path = _module(tmp_path, "def f(x: float, n: int) -> float:\n    k = 7 // (n - 3)\n"
                             "    return x * k\n", "idiv")
    r = run_cli(path, "--mode", "primal", "--mode", "forward", "--mode", "reverse", "--check",
                "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 1, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("f ")]
    assert len(rows) == 3 and all("FAIL" in row for row in rows)
    assert "CPython raised ZeroDivisionError: integer division or modulo by zero" in rows[0]
    assert all("not run: CPython raised ZeroDivisionError at these inputs" in row
               for row in rows[1:])
    assert r.stderr == ""


@pytest.mark.parametrize("body", ["return x / (n - 3)",
                                  "return 1.0 / (a[0] - a[0]) + x * float(n)"])
def test_check_of_a_division_by_zero_warns_of_nothing_of_its_own(tmp_path: Path,
                                                                  body: str) -> None:
    path = _module(tmp_path, "from adgen import Array, f64\n\n\n"
                             f"def f(x: float, n: int, a: Array[f64]) -> float:\n    {body}\n",
                   "fdiv")
    r = run_cli(path, "--mode", "primal", "--mode", "forward", "--mode", "reverse", "--check",
                "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 1, r.stderr
    assert "validate.py" not in r.stderr and "RuntimeWarning: invalid value" not in r.stderr


BINDING = ("from adgen import Array, f64, i32\n\n\n"
           "def g(x: float, a: Array[f64], n: int) -> float:\n    return x * a[0] * float(n)\n\n\n"
           "def h(x: float, m: i32) -> float:\n    return x * float(m)\n\n\n"
           "def tup(x: float, y: float) -> tuple[float, float]:\n    return x * y, x + y\n\n\n"
           "def cp(x: float, a: Array[f64]) -> float:\n    a[0] = x * a[1]\n    return x * x\n")


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> adgen.AdgenModule:
    path = _module(tmp_path_factory.mktemp("binding"), BINDING, "bound")
    return adgen.load(path, modes=("forward", "vector-forward", "reverse", "vector-reverse",
                                   "hvp", "vector-hvp"))


def _a() -> np.ndarray:
    return np.ones(3)


@pytest.mark.parametrize("call, exc, message", [
    (lambda m: m.g(2.0, _a(), 2**70), OverflowError,
     "g: argument 'n' = 1180591620717411303424 does not fit a 64-bit int (i64)"),
    (lambda m: m.g(2.0, _a(), 2**63), OverflowError,
     "g: argument 'n' = 9223372036854775808 does not fit a 64-bit int (i64)"),
    (lambda m: m.g(2.0, _a(), -2**1000), OverflowError,
     "g: argument 'n' = an int of 1001 bits does not fit a 64-bit int (i64)"),
    (lambda m: m.g(2**1100, _a(), 1), OverflowError,
     "g: argument 'x' = an int of 1101 bits does not fit a float (f64)"),
    (lambda m: m.h(2.0, 2**40), OverflowError,
     "h: argument 'm' = 1099511627776 does not fit a 32-bit int (i32)"),
    (lambda m: m.g.hessian(2.0, _a(), 2**70), OverflowError, "g: argument 'n' = "),
    (lambda m: m.tup.vjp((1.0, 2.0), 1.0), TypeError,
     "tup.vjp: tup returns a tuple: give ybar as a tuple with one entry per returned value (2), "
     "None where not differentiated; got float"),
    (lambda m: m.tup.vjp_vec((1.0, 2.0), 1.0), TypeError, "tup.vjp_vec: tup returns a tuple"),
    (lambda m: m.tup.vjp_vec((1.0, 2.0), (1.0, None)), ValueError,
     "tup.vjp_vec: the adjoint of returned value 0 needs a trailing axis of directions "
     "(shape (nbdirs,) for a scalar), got float"),
    (lambda m: m.cp.vjp_vec((1.0, _a()), 1.0), ValueError,
     "cp.vjp_vec: the adjoint of the returned value needs a trailing axis of directions"),
    (lambda m: m.cp.vjp_vec((1.0, _a()), None, out_bars={"a": 1.0}), ValueError,
     "cp.vjp_vec: out_bars['a'] needs a trailing axis of directions"),
    (lambda m: m.cp.jvp_vec((1.0, _a()), (1.0, None)), ValueError,
     "cp.jvp_vec: the tangent of 'x' needs a trailing axis of directions"),
    (lambda m: m.cp.hvp_vec((1.0, _a()), (1.0, None)), ValueError,
     "cp.hvp_vec: the tangent of 'x' needs a trailing axis of directions"),
    (lambda m: m.cp.vjp((1.0, _a()), 1.0, out_bars=[1]), TypeError,
     "cp.vjp: out_bars must be a dict from the name of an array the function writes to its "
     "adjoint, got list"),
    (lambda m: m.cp.vjp_vec((1.0, _a()), None, out_bars=[1]), TypeError,
     "cp.vjp_vec: out_bars must be a dict"),
    (lambda m: m.cp.jvp(2.0, 1.0), TypeError,
     "cp.jvp: tangents must be a tuple with one entry per argument (x, a), None where not "
     "differentiated; got float"),
    (lambda m: m.cp.jvp_vec((2.0, _a()), 1.0), TypeError, "cp.jvp_vec: tangents must be a tuple"),
    (lambda m: m.cp.hvp((2.0, _a()), 1.0), TypeError, "cp.hvp: tangents must be a tuple"),
    (lambda m: m.g.jvp(2.0, (1.0, None, None)), TypeError,
     "g.jvp: args must be the tuple of the 3 argument(s) (x, a, n), got float"),
    (lambda m: m.g.vjp(2.0, 1.0), TypeError, "g.vjp: args must be the tuple of the 3 argument"),
])
def test_bad_calls_raise_naming_the_function_and_argument(bound: adgen.AdgenModule, call: Any,
                                                          exc: type, message: str) -> None:
    with pytest.raises(exc) as err:
        call(bound)
    assert str(err.value).startswith(message)


def test_int_arguments_at_the_limits_of_their_type(bound: adgen.AdgenModule) -> None:
    assert bound.g(1.0, _a(), -2**63) == float(-2**63)
    assert bound.h(1.0, 2**31 - 1) == float(2**31 - 1)
    assert bound.h(1.0, -2**31) == float(-2**31)


def test_load_options_given_as_one_string(tmp_path: Path) -> None:
    path = _module(tmp_path, BINDING, "strings")
    m = adgen.load(path, modes="reverse", functions="g,cp", wrt="x", of="return")
    assert list(m.transpiled.outputs) == ["primal", "reverse"]
    assert m.g.grad(2.0, _a(), 3) == (3.0, None, None)
    with pytest.raises(TypeError, match=r"^cflags must be a sequence of flags, e\.g\. "
                                        r"\['-O2', '-g'\], not a string$"):
        adgen.load(path, cflags="-O2 -g")
    with pytest.raises(TypeError, match="^modes must be a sequence of strings, got an item 1$"):
        adgen.load(path, modes=[1])
    report = adgen.check(path, modes="forward", functions="h")
    assert report.ok and [r.check for r in report.rows] == ["primal vs CPython",
                                                            "tangent vs finite differences"]


def test_options_that_are_true_or_false_are_checked(tmp_path: Path) -> None:
    """debug="yes" was taken as true (a debug build), openmp=1 too."""
    path = _module(tmp_path, BINDING, "bools")
    for call, name, value in [(lambda: adgen.load(path, debug="yes"), "debug", "'yes'"),
                              (lambda: adgen.load(path, werror=None), "werror", "None"),
                              (lambda: adgen.load(path, openmp=1), "openmp", "1"),
                              (lambda: adgen.check(path, openmp="no"), "openmp", "'no'"),
                              (lambda: adgen.check(path, debug=0), "debug", "0"),
                              (lambda: transpile(path, ["primal"], debug="x"), "debug",
                               "'x'")]:
        with pytest.raises(TypeError, match=f"^{name} must be True or False, not {value}$"):
            call()


@pytest.mark.parametrize("options, message", [
    ({"emulate": True}, "emulate applies to target='cuda' (target is 'c')"),
    ({"arch": "sm_80"}, "arch applies to target='cuda' (target is 'c')"),
])
def test_cuda_options_need_the_cuda_target(tmp_path: Path, options: dict[str, Any],
                                           message: str) -> None:
    path = _module(tmp_path, BINDING, "cudaopts")
    with pytest.raises(adgen.UsageError) as err:
        adgen.load(path, target="c", **options)
    assert str(err.value) == message
    with pytest.raises(adgen.UsageError) as err:
        adgen.check(path, modes=("forward",), **options)
    assert str(err.value) == message


def test_arrays_of_arguments_and_tangents_are_accepted(bound: adgen.AdgenModule) -> None:
    """A 1-d array for ``args`` or ``tangents`` is a sequence of scalars, as it was."""
    want = bound.tup.jvp((2.0, 3.0), (1.0, 0.0))
    assert bound.tup.jvp((2.0, 3.0), np.array([1.0, 0.0])) == want
    assert bound.tup.jvp(np.array([2.0, 3.0]), (1.0, 0.0)) == want


def test_single_precision_check_where_cpython_raises_at_a_shifted_input(tmp_path: Path) -> None:
    """With f32, CPython computes the finite differences: where it raises there (sqrt just
    below 0), the row fails naming it; the exception no longer escapes the check."""
    path = _module(tmp_path, "import math\n\n\ndef f(x: float) -> float:\n    return math.sqrt(x)\n")
    report = adgen.check(path, modes=("forward",), precision="f32", args={"f": (0.0,)})
    row = next(r for r in report.rows if r.check == "tangent vs finite differences")
    assert not report.ok and "CPython raised ValueError" in row.note


def test_a_value_beyond_single_precision_is_refused(tmp_path: Path) -> None:
    """C converts a double beyond a float's range to no value it defines: an f32 argument of
    1e300 or 2**200 raises (it became inf), inf itself passes."""
    path = _module(tmp_path, "def scale(x: float, a: float) -> float:\n    return a * x\n")
    m = adgen.load(path, precision="f32")
    for big in (1e300, 2**200):
        with pytest.raises(OverflowError, match="scale: argument 'x' = .* does not fit a float "
                                                r"\(f32\)"):
            m.scale(big, 1.0)
    assert m.scale(float("inf"), 1.0) == float("inf") and m.scale(3.0, 2.0) == 6.0
    # FLT_MAX as printed (3.4028235e38) is a little above it, and rounds to it: it passes
    assert m.scale(3.4028235e38, 1.0) == float(np.finfo(np.float32).max)


def test_an_array_value_beyond_single_precision_is_refused(tmp_path: Path) -> None:
    """The tangents, adjoints and out_bars given as arrays to an f32 build became inf where a
    value was beyond single precision (with NumPy's warning), where the same value as a
    scalar is an OverflowError."""
    path = _module(tmp_path, "from adgen import Array, f64\n\n\n"
                             "def tot(x: Array[f64]) -> float:\n    s = 0.0\n"
                             "    for i in range(len(x)):\n        s += x[i] * x[i]\n"
                             "    return s\n\n\n"
                             "def sq(x: Array[f64], y: Array[f64]) -> None:\n"
                             "    for i in range(len(x)):\n        y[i] = x[i] * x[i]\n")
    m = adgen.load(path, modes=("forward", "reverse", "vector-forward", "vector-reverse",
                                "hvp", "vector-hvp"), precision="f32")
    x = np.array([1.0, 2.0, 3.0], np.float32)
    cases = [
        (lambda: m.tot.jvp((x,), (np.array([1.0, 1e39, 0.0]),)), "tot: the tangent of 'x'"),
        # (hvp's tangents were converted on their own: inf and NaN in the results)
        (lambda: m.tot.hvp((x,), (np.array([1.0, 1e39, 0.0]),)), "tot: the tangent of 'x'"),
        (lambda: m.tot.hvp_vec((x,), (np.full((3, 2), 1e39),)), "tot: the tangent of 'x'"),
        (lambda: m.tot.jvp((x,), ([1, 10 ** 39, 0],)), "tot: the tangent of 'x'"),  # (ints)
        (lambda: m.tot.jvp_vec((x,), (np.full((3, 2), -1e39),)), "tot: the tangent of 'x'"),
        (lambda: m.tot.vjp_vec((x,), np.full(2, 1e39)), "tot.vjp_vec: the adjoint of 'return'"),
        (lambda: m.sq.vjp((x, np.zeros(3, np.float32)), None,
                          {"y": np.array([0.0, 1e39, 1.0])}), r"sq.vjp: out_bars\['y'\]"),
    ]
    for call, label in cases:
        with pytest.raises(OverflowError, match=label + r".* holds .*e\+39, which does not fit "
                                                        r"a float \(f32\)"):
            call()
    # inf itself, and values that round to FLT_MAX, pass
    value, tangent = m.tot.jvp((x,), (np.array([np.inf, 3.4028235e38, 0.0]),))
    assert value == 14.0 and tangent == np.inf
    assert list(m.tot.hvp((x,), (np.array([1.0, 0.0, 2.0]),))[0]) == [2.0, 0.0, 4.0]


def test_a_tangent_that_does_not_hold_numbers_is_named(tmp_path: Path) -> None:
    """A tangent of strings was NumPy's "could not convert string to float: 'abc'", which
    named no argument."""
    path = _module(tmp_path, "from adgen import Array, f64\n\n\n"
                             "def tot(x: Array[f64], s: float) -> float:\n    t = 0.0\n"
                             "    for i in range(len(x)):\n        t += x[i] * x[i] * s\n"
                             "    return t\n")
    m = adgen.load(path, modes=("forward", "vector-forward", "hvp"))
    x = np.ones(3)
    for call, label in [(lambda: m.tot.jvp((x, 1.0), ("abc", None)), "tot: the tangent of 'x'"),
                        (lambda: m.tot.hvp((x, 1.0), ([None, 1.0, 2.0], None)),
                         "tot: the tangent of 'x'"),
                        (lambda: m.tot.jvp_vec((x, 1.0), (None, ["q", 1.0])),
                         "tot: the tangent of 's'")]:
        with pytest.raises(TypeError, match=label + " must hold numbers, not "):
            call()


def test_openmp_on_the_cuda_target_is_refused(tmp_path: Path) -> None:
    path = _module(tmp_path, "def scale(x: float, a: float) -> float:\n    return a * x\n")
    with pytest.raises(adgen.UsageError, match="openmp applies to target='c'"):
        adgen.load(path, target="cuda", emulate=True, openmp=True)


@pytest.mark.parametrize("options", [{"openmp": True}, {"emulate": True}, {"arch": "sm_80"}])
def test_an_unknown_target_is_named_before_the_options_of_a_target(
        tmp_path: Path, options: dict[str, Any]) -> None:
    # target='C' with openmp said "openmp applies to target='c' (on the CUDA target each prange
    # is a kernel)": the table's rule "openmp for the C target only" took 'C' for the CUDA one
    path = _module(tmp_path, "def scale(x: float, a: float) -> float:\n    return a * x\n")
    for call in (adgen.load, adgen.check):
        with pytest.raises(adgen.UsageError) as err:
            call(path, target="C", **options)
        assert str(err.value) == "unknown target 'C' (choose c or cuda)"


def test_a_failed_build_leaves_no_file_open(tmp_path: Path) -> None:
    # the compiler's output is kept in a temporary file while it runs: closed afterwards
    import gc
    import warnings

    path = tmp_path / "scale.py"
    path.write_text("def scale(x: float, a: float) -> float:\n    return a * x\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(adgen.build.BuildError, match="-Wno-such-flag-z"):
            adgen.load(str(path), cflags=["-Wno-such-flag-z", "-Werror=no-such-flag-z"])
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_the_environments_compiler_flags_are_part_of_the_build_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # distutils adds CFLAGS to adgen's flags: a build made with CFLAGS=-DADGEN_NBDIRS=3 must
    # not be reused by a load without it (the binding would let other counts through)
    from adgen.build import Unit, _key

    unit = Unit({"m.c": "int f(void) { return 1; }\n"}, "int f(void);")
    for var in ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED"):
        monkeypatch.delenv(var, raising=False)
    plain = _key("m", unit, ("-O2",))
    monkeypatch.setenv("CFLAGS", "-DADGEN_NBDIRS=3")
    assert _key("m", unit, ("-O2",)) != plain
    monkeypatch.delenv("CFLAGS")
    assert _key("m", unit, ("-O2",)) == plain


def test_check_of_vector_tangents_with_a_result_outside_of(tmp_path: Path) -> None:
    # of=["out"] leaves the float return without a tangent: the check of vector tangents
    # indexed that result's 0.0 by direction (IndexError; exit code 3 on the command line)
    path = _module(tmp_path, "from adgen import Array, f64\n\n\n"
                             "def of1(x: float, out: Array[f64]) -> float:\n"
                             "    out[0] = out[0] * x\n    return x * 2.0\n", "of1")
    report = adgen.check(path, modes=("vector-forward",), of=["out"])
    # (the scalar tangent the vector one is compared with is compared with differences)
    assert report.ok and [r.check for r in report.rows] == [
        "primal vs CPython", "tangent vs finite differences",
        "vector tangent vs scalar tangents"], report.table()
    # vector-reverse alone: the dot-product test rests on the tangent, which was not compared
    # with differences (a tangent and an adjoint wrong the same way passed)
    report = adgen.check(path, modes=("vector-reverse",))
    assert report.ok and [r.check for r in report.rows] == [
        "primal vs CPython", "tangent vs finite differences",
        "adjoint vs tangent (dot product)", "vector adjoint vs scalar adjoints"], report.table()


def test_single_precision_check_of_a_numpy_float32_scalar(tmp_path: Path) -> None:
    # an np.float32 scalar in args kept float32 arithmetic in the CPython differences (the
    # reference is f64): the tangent failed at 4e-2 where the Python float 0.7 passed
    path = _module(tmp_path, "import math\n\n\ndef f1(a: float, b: float) -> float:\n"
                             "    return math.sin(a) * b + a * a * a\n", "f1")
    for precision in ("f32", "f64"):
        report = adgen.check(path, modes=("forward",), precision=precision,
                             args={"f1": (np.float32(0.7), 0.3)})
        assert report.ok, report.table()


F32_MODULE = """import math
from adgen import Array, f32


def energy(x: Array[f32], a: f32) -> f32:
    s: f32 = 0.0
    for i in range(x.shape[0]):
        s = s + math.exp(a * x[i]) * math.sin(x[i])
    return s


def poly(a: f32, b: f32) -> f32:
    return a * a * b + math.sin(a * b)


def mixed(x: Array[f32], w: float) -> float:
    return w * poly(x[0], w)


def plain(x: float, y: float) -> float:
    return math.exp(x) * math.sin(y) + x * y
"""


def test_f32_annotations_in_an_f64_build_are_checked_to_the_f32_tolerances(
        tmp_path: Path) -> None:
    # the f64 tolerances applied to functions computing in float: 9 of these 16 rows failed
    # (the primal at 8e-8 for 1e-13, the tangent at 4e-2 against differences of the compiled
    # f32 primal, energy_d's value 6e-8 off the primal's); a function calling an f32 one
    # computes in f32 too, an f64 one keeps f64's tolerances
    from adgen.validate import TOLERANCE, TOLERANCE_F32

    path = _module(tmp_path, F32_MODULE, "m32")
    report = adgen.check(path, modes=("forward", "vector-forward", "reverse"))
    assert report.ok, report.table()
    checks = {"primal vs CPython": "primal", "tangent vs finite differences": "forward",
              "vector tangent vs scalar tangents": "vector-forward",
              "adjoint vs tangent (dot product)": "reverse"}
    assert len(report.rows) == 16
    for row in report.rows:
        tol = TOLERANCE if row.function == "plain" else TOLERANCE_F32
        assert row.tolerance == tol[checks[row.check]], row


def test_a_wrong_derivative_of_an_f32_function_fails_its_check(tmp_path: Path) -> None:
    path = _module(tmp_path, F32_MODULE, "m32")
    tangent, adjoint = "tangent vs finite differences", "adjoint vs tangent (dot product)"
    # a wrong tangent fails the dot-product test too, which compares the adjoint with it
    for name, good, bad, checks in [
            ("m32_d.c", "2.0f * a * ad", "2.1f * a * ad", [tangent, adjoint]),
            ("m32_b.c", "2.0f * a * (b * retb)", "2.01f * a * (b * retb)", [adjoint])]:
        edited = _made_wrong(path, ("forward", "reverse"), name, good, bad)
        report = adgen.check(path, modes=("forward", "reverse"), sources=[edited])
        failed = [(row.function, row.check) for row in report.rows if not row.ok]
        # mixed calls poly: its derivatives are wrong with poly's
        assert failed == [(f, c) for f in ("poly", "mixed") for c in checks], report.table()


def test_heads_as_a_list_and_bad_types_of_the_derivative_helpers(tmp_path: Path) -> None:
    # head=[...] was a TypeError of the regular expression module; jacobian(wrt=1) iterated
    # an int; hessian(len, ...) was an AttributeError
    path = _module(tmp_path, TWO, "two")
    m = adgen.load(path, modes=("forward", "vector-forward"), head=["g(return)/(x)", "k(return)/(n)"])
    assert m.g.jvp((2.0, 3), (1.0, None)) == (6.0, 3.0)
    assert m.k.jvp((3.0,), (1.0,)) == (9.0, 6.0)
    with pytest.raises(TypeError, match="^head must be a sequence of strings, got int$"):
        adgen.load(path, head=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^wrt must be a sequence of strings, got int$"):
        adgen.jacobian(m.k, (3.0,), wrt=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^hessian: f must be a function of a module loaded "
                                        "with adgen.load, got builtin_function_or_method$"):
        adgen.hessian(len, 1.0)  # type: ignore[arg-type]


def test_the_dot_product_test_allows_for_the_rounding_of_terms_that_cancel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the direction (0.99, 0.785057) the two terms of <xd, xb> are -0.711 and +0.710
    (times the output's adjoint): the sum is 1e-3 of them, and the rounding of the two
    sides, summed in other orders, is 1e-12 of it (the row failed at 6e-12 when its
    error was relative to the sums).  Relative to the terms' magnitudes it is 4e-15, while
    an adjoint of y off by 2e-10 of itself still fails (at 1e-10)."""
    from adgen import validate

    path = _module(tmp_path, "import math\n\n\n"
                             "def f(x: float, y: float) -> float:\n    s = 0.0\n"
                             "    for k in range(40):\n"
                             "        s += math.sin(x * (1.0 + 0.25 * k) + y * (0.5 * k))\n"
                             "    return s\n", "cancel")
    args, direction = (1.442, 0.797), [0.99, 0.785057]
    real_reverse = validate.Checker.reverse

    def reverse(checker: validate.Checker) -> validate.CheckRow:
        # the dot-product test in this direction (the differences of the tangent row keep a
        # random one: in this direction the tangent itself is 1e-3 of its terms)
        checker.direction = lambda nbdirs=None: list(direction)  # type: ignore[method-assign]
        return real_reverse(checker)
    monkeypatch.setattr(validate.Checker, "reverse", reverse)
    m = adgen.load(path, modes=("reverse",))
    terms = np.array(direction) * np.array(m.f.grad(*args))
    assert np.all(np.abs(terms) > 0.5) and abs(terms.sum()) < 2e-3 * np.abs(terms).sum(), terms
    report = adgen.check(path, args={"f": args}, modes=("forward", "reverse"))
    assert report.ok, report.table()
    row = next(r for r in report.rows if r.check == "adjoint vs tangent (dot product)")
    assert row.error < 1e-13, report.table()
    edited = _made_wrong(path, ("reverse",), "cancel_b.c", "*yb += yb_1;",
                         "*yb += 1.0000000002 * yb_1;")
    report = adgen.check(path, args={"f": args}, modes=("forward", "reverse"),
                         sources=[edited])
    failed = [(row.check, row.error) for row in report.rows if not row.ok]
    assert [c for c, _ in failed] == ["adjoint vs tangent (dot product)"], report.table()
    assert failed[0][1] > 1e-11, report.table()


def test_the_tangent_check_allows_for_the_rounding_of_terms_that_cancel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At (1.1449, 0.7679) the partials of g are 4.4197 and 6.9501: in the direction
    (0.99, -0.62956) the tangent is 1e-5, 1e-6 of its terms, and central differences of
    values of size 8 resolve it to about 1e-9, 1e-4 of itself (the row failed so, measured
    against the tangent). Against the sum of the terms' magnitudes it is below 1e-8, while a
    tangent whose sinh term is off by 1e-5 of itself still fails."""
    from adgen import validate

    path = _module(tmp_path, "import math\n\nimport numpy as np\n\n\n"
                             "def g(p0: float, p1: float) -> float:\n"
                             "    return 8.0 * math.sin(0.9 * np.sinh(p1) * p0) + 0.5 * p0\n",
                   "terms")
    args = {"g": (1.1449168496086943, 0.7679052099506496)}
    monkeypatch.setattr(validate.Checker, "direction",
                        lambda self, nbdirs=None: [0.99, -0.62956])
    m = adgen.load(path, modes=("forward",))
    value, tangent = m.g.jvp(args["g"], (0.99, -0.62956))
    assert 1e-6 < abs(tangent) < 1e-4, tangent
    report = adgen.check(path, args=args, modes=("forward",))
    assert report.ok, report.table()
    assert report.rows[1].error < 1e-8, report.table()
    edited = _made_wrong(path, ("forward",), "terms_d.c", "(cosh(p1) * p1d)",
                         "(1.00001 * cosh(p1) * p1d)")
    report = adgen.check(path, args=args, modes=("forward",), sources=[edited])
    assert [r.check for r in report.rows if not r.ok] == ["tangent vs finite differences"], \
        report.table()


def test_check_with_of_leaving_out_a_written_array(tmp_path: Path) -> None:
    # of=["return"]: f_d sets the tangent of y, which is no dependent, to zero; the check
    # compared it with the differences of y all the same (rel. error 1, a false failure)
    path = _module(tmp_path, "from adgen import Array, f64\n\n\n"
                             "def f(x: Array[f64], y: Array[f64]) -> float:\n"
                             "    s = 0.0\n    for i in range(len(x)):\n"
                             "        y[i] = x[i] * x[i]\n        s += x[i]\n    return s\n", "wr")
    for of in (["return"], ["y"]):
        report = adgen.check(path, modes=("forward", "vector-forward", "reverse"), of=of)
        assert report.ok, report.table()


@pytest.mark.parametrize("options", [{"wrt": []}, {"wrt": ""}, {"of": " , "}, {"functions": []},
                                     {"head": ""}, {"head": [";"]}])
def test_an_empty_list_of_names_is_refused_not_read_as_the_default(
        tmp_path: Path, options: dict[str, Any]) -> None:
    # as on the command line (--wrt= is an error): wrt=[] used to differentiate every input
    path = _module(tmp_path, TWO)
    (key, value), = options.items()
    what = "no function" if key == "head" else "nothing"
    message = rf"^{key}={value!r} names {what} \(leave {key} out, or None, "
    for call in (lambda: adgen.load(path, **options), lambda: adgen.check(path, **options),
                 lambda: transpile(path, **options)):
        with pytest.raises(adgen.UsageError, match=message.replace("[", r"\[")):
            call()
    if key in ("wrt", "of"):  # adgen.jacobian: a ValueError, as for its other bad selections
        m = adgen.load(path, modes=("vector-forward",), functions=["g"])
        with pytest.raises(ValueError, match=rf"^jacobian of g: {key} selects nothing$"):
            adgen.jacobian(m.g, (1.0, 2), **options)


RC = """\
from adgen import Array, f64


def rc(x: Array[f64], y: float, out: Array[f64]) -> float:
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y
        out[i] = s * out[i]
    return s
"""


def test_grad_and_hessian_of_a_return_value_outside_of(tmp_path: Path) -> None:
    """With of=['y'] the return value has no adjoint: grad and hessian say so (TypeError, as
    for a function not returning one float); they said to pass None as an adjoint."""
    path = tmp_path / "g.py"
    path.write_text("from adgen import Array, f64\n\n\n"
                    "def f(x: Array[f64], y: Array[f64]) -> float:\n    s = 0.0\n"
                    "    for i in range(len(x)):\n        y[i] = x[i] * 2.0\n"
                    "        s += x[i] * x[i]\n    return s\n")
    m = adgen.load(str(path), modes=("reverse", "hvp"), of=["y"])
    for what, call in (("grad", m.f.grad), ("hessian", m.f.hessian)):
        with pytest.raises(TypeError, match=rf"^f\.{what}: the return value is not among the "
                                            r"dependents \(the module was loaded with an of="):
            call(np.ones(2), np.zeros(2))
    full = adgen.load(str(path), modes=("reverse",))
    assert list(full.f.grad(np.ones(2), np.zeros(2))[0]) == [2.0, 2.0]


def test_an_integer_array_the_function_writes_takes_no_output_adjoint(tmp_path: Path) -> None:
    """out_bars for a written integer array (no adjoint) was ignored whatever it was (ones, a
    string, another shape; vjp_vec took its directions from it): a non-zero one is refused
    as for a float array outside of=."""
    path = tmp_path / "wi.py"
    path.write_text("from adgen import Array, f64, i64\n\n\n"
                    "def k(x: float, y: Array[f64], idx: Array[i64]) -> float:\n"
                    "    y[0] = 1.0\n    idx[0] = 3\n    return x * x\n")
    m = adgen.load(str(path), modes=("reverse", "vector-reverse", "hvp"))

    def args():  # type: ignore[no-untyped-def]
        return 2.0, np.zeros(2), np.zeros(2, np.int64)

    message = "out_bars names 'idx', whose contents on exit are not differentiated"
    for bad in (np.ones(2), "garbage"):
        with pytest.raises(ValueError, match=rf"^k\.vjp: {message}"):
            m.k.vjp(args(), 1.0, out_bars={"idx": bad})
    with pytest.raises(ValueError, match=rf"^k\.vjp_vec: {message}"):
        m.k.vjp_vec(args(), None, out_bars={"idx": np.ones((2, 3))})
    with pytest.raises(ValueError, match=rf"^k\.hvp: {message}"):
        m.k.hvp(args(), (1.0, None, None), 1.0, {"idx": [[1]]})
    value, (xb, yb, idxb) = m.k.vjp(args(), 1.0, out_bars={"idx": np.zeros(2)})
    assert (value, xb, idxb) == (4.0, 4.0, None) and list(yb) == [0.0, 0.0]
    # its zeros take no part in the number of directions (they set it: 'must have shape (2, 7)')
    _, (xb, yb, _) = m.k.vjp_vec(args(), None, out_bars={"idx": np.zeros((2, 7)),
                                                         "y": np.ones((2, 2))})
    assert xb.shape == (2,) and yb.shape == (2, 2)


def test_an_array_outside_of_that_no_dependent_reads_has_no_adjoint_in_and_no_rows(
        tmp_path: Path) -> None:
    # with of=['return'], rc's out reaches no dependent: f_b does not read outb on entry and
    # f_d sets outd to zero. out_bars={'out': ...} was ignored silently and adgen.jacobian
    # listed rows of zeros for out
    path = _module(tmp_path, RC, "rc")
    x, out = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    m = adgen.load(path, modes=("reverse", "vector-forward", "vector-reverse", "hvp"),
                   of=["return"])
    message = "out_bars names 'out', whose contents on exit are not differentiated"
    with pytest.raises(ValueError, match=rf"^rc\.vjp: {message}"):
        m.rc.vjp((x, 2.0, out.copy()), 0.0, out_bars={"out": np.ones(2)})
    with pytest.raises(ValueError, match=rf"^rc\.vjp_vec: {message}"):
        m.rc.vjp_vec((x, 2.0, out.copy()), None, out_bars={"out": np.ones((2, 1))})
    with pytest.raises(ValueError, match=rf"^rc\.hvp: {message}"):
        m.rc.hvp((x, 2.0, out.copy()), (x, 1.0, out), 0.0, out_bars={"out": np.ones(2)})
    _, (xb, yb, outb) = m.rc.vjp((x, 2.0, out.copy()), 1.0, out_bars={"out": np.zeros(2)})
    assert list(xb) == [2.0, 2.0] and yb == 3.0 and list(outb) == [0.0, 0.0]
    jac = adgen.jacobian(m.rc, (x, 2.0, out.copy()))
    assert jac.matrix.shape == (1, 5)  # the return; columns x, y, out
    header = m.transpiled.outputs["reverse"].header.text
    hvp_header = m.transpiled.outputs["hvp"].header.text
    assert "outb: not read on entry (out is not among the dependents, --of), on return the " \
           "adjoint of out on entry, as in rc_b" in hvp_header
    assert "outbd: not read on entry; on return the tangent of outb" in hvp_header
    assert "dependents:   return\n" in header
    assert "outb (out_shape0): not read on entry (out is not among the dependents, --of), " \
           "on return the adjoint of out on entry" in header
    # the check: no adjoint drawn for out; in vector-forward with wrt=['x'] out has no
    # tangent at all, zero in each direction (it compared a zero without that axis: inf)
    for wrt in (None, ["x"]):
        report = adgen.check(path, modes=("forward", "vector-forward", "reverse",
                                          "vector-reverse", "hvp"), of=["return"], wrt=wrt)
        assert report.ok, report.table()
    full = adgen.load(path, modes=("reverse", "vector-forward"))
    assert adgen.jacobian(full.rc, (x, 2.0, out.copy())).matrix.shape == (3, 5)
    _, (_, _, outb) = full.rc.vjp((x, 2.0, out.copy()), 0.0, out_bars={"out": np.ones(2)})
    assert list(outb) == [2.0, 6.0]  # out[i] = s_i * out[i]: s = 2, 6
    # heat's u is outside of=['return'] too, but the returned energy reads it: its adjoint on
    # entry is read, its out_bars honoured
    heat = adgen.load(str(ROOT / "examples" / "heat.py"), modes=("reverse",), of=["return"])
    u = np.linspace(0.0, 1.0, 6) ** 2
    plain = heat.heat.vjp((u.copy(), 0.1, 3), 1.0)[1][0]
    barred = heat.heat.vjp((u.copy(), 0.1, 3), 1.0, out_bars={"u": np.ones(6)})[1][0]
    assert not np.allclose(plain, barred)


NBMIN = """\
import math

from adgen import Array, f64


def f(x: Array[f64]) -> float:
    s = 0.0
    for i in range(len(x)):
        s += math.sin(x[i]) * x[i]
    return s
"""


def test_the_fixed_number_of_directions_comes_from_the_build(tmp_path: Path) -> None:
    """-Wp,-DADGEN_NBDIRS=2 and a header given with -imacros fix the number of directions
    where the binding's reading of the flags does not see them: it passed another number
    than the code assumes (a Jacobian with a zero column, no error).  The build says."""
    path = _module(tmp_path, NBMIN, "nbwp")
    (tmp_path / "three.h").write_text("#define ADGEN_NBDIRS 3\n")
    x = np.array([0.3, 0.7, 1.1])
    exact = np.sin(x) + x * np.cos(x)
    for flags, n in ((["-O2", "-Wp,-DADGEN_NBDIRS=2"], 2),
                     (["-O2", "-imacros", str(tmp_path / "three.h")], 3)):
        m = adgen.load(path, modes=("vector-forward",), cflags=flags)
        with pytest.raises(ValueError, match=rf"this build takes {n} directions"):
            m.f.jvp_vec((x,), (np.ones((3, n + 1)),))
        np.testing.assert_allclose(adgen.jacobian(m.f, (x,)).matrix[0], exact, rtol=1e-14)


def test_the_fixed_number_of_directions_is_read_as_the_compiler_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # -DADGEN_NBDIRS=010 is 8 to the compiler and was 10 to the binding (wrong tangents);
    # '-D ADGEN_NBDIRS=4' and CFLAGS=-DADGEN_NBDIRS=3 were not seen (heap corruption), a
    # later -UADGEN_NBDIRS neither, and =0 built a module no call could use
    path = _module(tmp_path, NBMIN, "nbmin")
    for flag in ("-DADGEN_NBDIRS=010", "-DADGEN_NBDIRS", "-DADGEN_NBDIRS=4u",
                 "-DADGEN_NBDIRS=(4)", "-DADGEN_NBDIRS=0", "-DADGEN_NBDIRS=-3"):
        with pytest.raises(adgen.UsageError, match=rf"^cannot read '{re.escape(flag)}': the "
                                                   r"number of directions is written"):
            adgen.load(path, modes=("vector-forward",), cflags=["-O2", flag])
    x = np.array([0.3, 0.7, 1.1])

    def directions(n: int) -> tuple[np.ndarray]:
        return (np.ones((3, n)),)

    for spelled in (["-D", "ADGEN_NBDIRS=4"], ["--define-macro", "ADGEN_NBDIRS=4"],
                    ["--define-macro=ADGEN_NBDIRS=4"]):
        m = adgen.load(path, modes=("vector-forward",), cflags=["-O2", *spelled])
        with pytest.raises(ValueError, match=r"this build takes 4 directions"):
            m.f.jvp_vec((x,), directions(3))
    _, tangent = m.f.jvp_vec((x,), directions(4))
    assert np.allclose(tangent, np.sum(np.sin(x) + x * np.cos(x)))
    m = adgen.load(path, modes=("vector-forward",),
                   cflags=["-O2", "-DADGEN_NBDIRS=4", "-UADGEN_NBDIRS"])
    assert np.allclose(m.f.jvp_vec((x,), directions(7))[1], np.sum(np.sin(x) + x * np.cos(x)))
    monkeypatch.setenv("CFLAGS", "-DADGEN_NBDIRS=3")
    m = adgen.load(path, modes=("vector-forward",), cflags=["-O2"])
    with pytest.raises(ValueError, match=r"this build takes 3 directions"):
        m.f.jvp_vec((x,), directions(2))
    r = run_cli(path, "--mode", "vector-forward", "--check", "--cflags=-DADGEN_NBDIRS=010",
                "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "adgen: error: --cflags, CFLAGS or CPPFLAGS: cannot read " \
        "'-DADGEN_NBDIRS=010'" in r.stderr
    assert not (tmp_path / "out").exists()
    # the environment's flags matter to a build only
    monkeypatch.setenv("CFLAGS", "-DADGEN_NBDIRS")
    assert run_cli(path, "--mode", "vector-forward", "-o", str(tmp_path / "gen")).returncode == 0
    r = run_cli(path, "--mode", "vector-forward", "--build", "-o", str(tmp_path / "built"))
    assert r.returncode == 2 and "cannot read '-DADGEN_NBDIRS'" in r.stderr


def test_the_check_reports_each_row_it_runs_on_the_progress_line(tmp_path: Path) -> None:
    """The command line's progress line (a terminal's stderr) says which check of which
    function runs: a CPython reference that loops over compiled derivatives takes minutes."""
    import contextvars

    from adgen.build import PROGRESS

    path = _module(tmp_path, "import math\n\n\ndef f(x: float, y: float) -> float:\n"
                             "    return math.sin(x) * y\n", "prog")
    said: list[tuple[str, bool]] = []

    def checked() -> Any:
        PROGRESS.set(lambda text, done: said.append((text, done)))
        return adgen.check(path, modes=("forward", "reverse", "hvp"))

    report = contextvars.copy_context().run(checked)
    assert report.ok, report.table()
    checks = [text for text, done in said if text.startswith("checking") and not done]
    assert checks == ["checking f: primal vs CPython...",
                      "checking f: tangent vs finite differences...",
                      "checking f: adjoint vs tangent (dot product)...",
                      "checking f: hvp vs differences of the gradient, symmetry..."], said
    ends = [text for text, done in said if text.startswith("checking") and done]
    assert ends == [c.removesuffix("...") for c in checks], said
    assert len(report.rows) == 5
