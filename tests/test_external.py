"""External C functions: ``@external("f.c", name=..., tangent=..., adjoint=...)``.

The C functions are compiled into the module's library, called by the generated code with
adgen's own ``f_d``/``f_b`` conventions, and checked like generated code (a wrong C
derivative fails the check).  examples/external/ is the worked example; its generated C is
a golden file."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.api import transpile
from adgen.transpile.ir.printer import print_module
from adgen.validate import CheckReport
from helpers import ROOT, check_goldens, compile_strict, run_cli

EXAMPLE = ROOT / "examples" / "external"
GOLDEN = Path(__file__).parent / "golden" / "external"

SOFTPLUS_C = """
    #include <math.h>

    double softplus_c(double x)
    {
        return log1p(exp(x));
    }

    double softplus_c_d(double x, double xd, double *retd)
    {
        *retd = xd / (1.0 + exp(-x));
        return softplus_c(x);
    }

    double softplus_c_b(double x, double *xb, double retb)
    {
        *xb += retb / (1.0 + exp(-x));
        return softplus_c(x);
    }
    """

#: a tuple result, an array, an int parameter, and a caller that uses both results
STATS_C = """
    #include <math.h>
    #include <stdint.h>

    void stats_c(const double *x, int64_t x_shape0, double s, int64_t n, double *ret0,
                 double *ret1)
    {
        double m = 0.0, q = 0.0;
        (void)x_shape0;
        for (int64_t i = 0; i < n; ++i) {
            m += x[i] * s;
            q += sin(x[i]) * s * s;
        }
        *ret0 = m;
        *ret1 = q;
    }

    void stats_c_d(const double *x, const double *xd, int64_t x_shape0, double s, double sd,
                   int64_t n, double *ret0, double *ret1, double *ret0d, double *ret1d)
    {
        double md = 0.0, qd = 0.0;
        stats_c(x, x_shape0, s, n, ret0, ret1);
        for (int64_t i = 0; i < n; ++i) {
            md += xd[i] * s + x[i] * sd;
            qd += cos(x[i]) * xd[i] * s * s + sin(x[i]) * 2.0 * s * sd;
        }
        *ret0d = md;
        *ret1d = qd;
    }

    void stats_c_b(const double *x, double *xb, int64_t x_shape0, double s, double *sb,
                   int64_t n, double ret0b, double ret1b, double *ret0, double *ret1)
    {
        stats_c(x, x_shape0, s, n, ret0, ret1);
        for (int64_t i = 0; i < n; ++i) {
            xb[i] += s * ret0b + cos(x[i]) * s * s * ret1b;
            *sb += x[i] * ret0b + sin(x[i]) * 2.0 * s * ret1b;
        }
    }
    """

STATS_PY = """
    import math

    from adgen import Array, external, f64


    @external("stats.c", name="stats_c", tangent="stats_c_d", adjoint="stats_c_b")
    def stats(x: Array[f64], s: float, n: int) -> tuple[float, float]:
        m = 0.0
        q = 0.0
        for i in range(n):
            m += x[i] * s
            q += math.sin(x[i]) * s * s
        return m, q


    def f(x: Array[f64], s: float) -> float:
        a, b = stats(x, s, len(x))
        c, d = stats(x, 2.0, len(x) - 1)
        return a * b + math.sin(c) * d
    """


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def softplus_module(directory: Path, c_text: str = SOFTPLUS_C, decorator: str = "") -> Path:
    write(directory, "softplus.c", c_text)
    decorator = decorator or ('@external("softplus.c", name="softplus_c", tangent="softplus_c_d", '
                              'adjoint="softplus_c_b")')
    return write(directory, "m.py", f"""
        import math

        from adgen import Array, external, f64


        {decorator}
        def softplus(x: f64) -> f64:
            return math.log1p(math.exp(x))


        def loss(w: Array[f64], b: float) -> float:
            s = 0.0
            for i in range(len(w)):
                s += softplus(w[i] * b) * w[i]
            return s
        """)


def rows(report: CheckReport) -> dict[tuple[str, str], bool]:
    return {(r.function, r.check): r.ok for r in report.rows}


# -- it links and validates --------------------------------------------------------------------

def test_links_and_validates_through_the_api(tmp_path: Path) -> None:
    path = softplus_module(tmp_path)
    report = adgen.check(str(path), modes=("forward", "reverse"))
    assert report.ok, report.table()
    assert set(rows(report)) == {(f, c) for f in ("softplus", "loss") for c in (
        "primal vs CPython", "tangent vs finite differences", "adjoint vs tangent (dot product)")}
    m = adgen.load(str(path), modes=("forward", "reverse"))
    w, b = np.array([0.5, -1.0, 2.0]), 0.7
    sig = 1.0 / (1.0 + np.exp(-w * b))
    assert m.loss(w, b) == pytest.approx(np.sum(np.log1p(np.exp(w * b)) * w), rel=1e-15)
    gw, gb = m.loss.grad(w, b)
    np.testing.assert_allclose(gw, np.log1p(np.exp(w * b)) + sig * b * w, rtol=1e-14)
    assert gb == pytest.approx(np.sum(sig * w * w), rel=1e-14)
    assert m.softplus.jvp((0.0,), (2.0,)) == (pytest.approx(np.log(2.0)), pytest.approx(1.0))
    assert set(m.functions) == {"softplus", "loss"}  # the C functions are not bound


def test_generated_code_calls_the_c_functions_and_declares_them(tmp_path: Path) -> None:
    path = softplus_module(tmp_path)
    t = transpile(str(path), ("primal", "forward", "reverse"))
    primal, forward, reverse = (t.outputs[m] for m in ("primal", "forward", "reverse"))
    assert "double softplus_c(double x);" in primal.header.text
    assert "double softplus_c_d(double x, double xd, double *retd);" in forward.header.text
    assert "double softplus_c_b(double x, double *xb, double retb);" in reverse.header.text
    assert "Not generated: define it in softplus.c" in reverse.header.text
    # the wrapper is what Python and C callers call; generated code calls the C function
    assert re.search(r"double softplus\(double x\)\n\{\n.*\n    double tmp = softplus_c\(x\);",
                     primal.source.text)
    loss_d = forward.source.text[forward.source.text.index("double loss_d("):]
    assert "softplus_c_d(" in loss_d and "softplus_d(" not in loss_d
    bwd = reverse.source.text[reverse.source.text.index("static void softplus_c_bwd("):]
    assert "double xb_1 = 0.0;\n    softplus_c_b(x, &xb_1, retb);\n    *xb = xb_1;" in bwd
    # nothing of the external is in the cffi declarations
    assert all("softplus_c" not in o.cdef for o in t.outputs.values())
    assert "extern func @softplus_c(%x: f64) -> (return: f64)  // primal, softplus.c" in \
        print_module(t.module)


def test_arrays_tuples_and_integers(tmp_path: Path) -> None:
    write(tmp_path, "stats.c", STATS_C)
    path = write(tmp_path, "stats.py", STATS_PY)
    t = transpile(str(path), ("forward", "reverse"))
    assert ("void stats_c_d(const double *x, const double *xd, int64_t x_shape0, double s, "
            "double sd, int64_t n, double *ret0, double *ret1, double *ret0d, double *ret1d);"
            ) in t.outputs["forward"].header.text
    assert ("void stats_c_b(const double *x, double *xb, int64_t x_shape0, double s, double *sb, "
            "int64_t n, double ret0b, double ret1b, double *ret0, double *ret1);"
            ) in t.outputs["reverse"].header.text
    report = adgen.check(str(path), modes=("forward", "reverse"))
    assert report.ok, report.table()
    assert len(report.rows) == 6


def test_cli_builds_checks_and_lists_the_c_file_as_a_dependency(tmp_path: Path) -> None:
    path = softplus_module(tmp_path)
    out = tmp_path / "out"
    result = run_cli(str(path), "--mode", "forward", "--mode", "reverse", "-o", str(out),
                     "--build", "--check", "-MD")
    assert result.returncode == 0, result.stderr
    assert "6 passed, 0 failed" in result.stdout
    deps = (out / "m.d").read_text()
    rule, phony = deps.split("\n", 1)
    assert rule.endswith(f": {path} {tmp_path / 'softplus.c'}")
    assert phony == f"\n{tmp_path / 'softplus.c'}:\n"  # as gcc -MP writes


def test_the_example_links_into_a_c_program(tmp_path: Path) -> None:
    """The generated files and the user's C file build a program with gcc alone, and its
    gradient is the one the Python binding computes."""
    out = tmp_path / "out"
    result = run_cli(str(EXAMPLE / "model.py"), "--mode", "primal", "--mode", "forward",
                     "--mode", "reverse", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    for c_file in [*sorted(out.glob("*.c")), EXAMPLE / "special.c"]:
        headers = [a for h in sorted(out.glob("*.h")) for a in ("-include", str(h))]
        cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"), "-I", str(out), *headers)
        assert cc.returncode == 0, f"{c_file.name}:\n{cc.stderr}"
    write(tmp_path, "main.c", """
        #include <stdio.h>
        #include "model_b.h"

        int main(void)
        {
            const double w[3] = {0.5, -1.0, 2.0}, x[3] = {1.0, 2.0, -0.5};
            double wb[3] = {0.0, 0.0, 0.0}, xb[3] = {0.0, 0.0, 0.0}, bb = 0.0;
            double y = loss_b(w, wb, 3, x, xb, 3, 0.1, &bb, 1.0);
            printf("%.17g %.17g %.17g %.17g %.17g\\n", y, wb[0], wb[1], wb[2], bb);
            return 0;
        }
        """)
    objects = [tmp_path / "model_b.o", tmp_path / "special.o"]
    link = subprocess.run(["gcc", "-std=c99", "-I", str(out), str(tmp_path / "main.c"),
                           *map(str, objects), "-lm", "-o", str(tmp_path / "main")],
                          capture_output=True, text=True, check=False)
    assert link.returncode == 0, link.stderr
    got = [float(v) for v in subprocess.run([str(tmp_path / "main")], capture_output=True,
                                            text=True, check=True).stdout.split()]
    m = adgen.load(str(EXAMPLE / "model.py"), modes=("reverse",))
    w, x = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    y, (gw, _, gb) = m.loss.vjp((w, x, 0.1), 1.0)
    np.testing.assert_allclose(got, [y, *gw, gb], rtol=1e-15)


def test_example(update_goldens: bool) -> None:
    report = adgen.check(str(EXAMPLE / "model.py"), modes=("forward", "reverse"))
    assert report.ok, report.table()
    outputs = transpile(str(EXAMPLE / "model.py"), ("primal", "forward", "reverse")).outputs
    check_goldens(outputs.values(), GOLDEN, update_goldens)


# -- a wrong derivative is caught ----------------------------------------------------------------

def test_a_wrong_c_tangent_fails_the_check(tmp_path: Path) -> None:
    path = softplus_module(tmp_path, SOFTPLUS_C.replace("*retd = xd / (1.0 + exp(-x));",
                                                        "*retd = xd / (1.0 + exp(x));"))
    report = adgen.check(str(path), modes=("forward",))
    assert not rows(report)[("softplus", "tangent vs finite differences")]
    assert rows(report)[("softplus", "primal vs CPython")]
    result = run_cli(str(path), "--mode", "forward", "-o", str(tmp_path / "out"), "--check")
    assert result.returncode == 1, result.stderr
    assert "FAIL" in result.stdout


def test_a_wrong_c_adjoint_fails_the_check(tmp_path: Path) -> None:
    path = softplus_module(tmp_path, SOFTPLUS_C.replace("*xb += retb / (1.0 + exp(-x));",
                                                        "*xb += 0.5 * retb / (1.0 + exp(-x));"))
    report = adgen.check(str(path), modes=("reverse",))
    assert not rows(report)[("softplus", "adjoint vs tangent (dot product)")]
    assert not rows(report)[("loss", "adjoint vs tangent (dot product)")]
    assert rows(report)[("softplus", "tangent vs finite differences")]
    result = run_cli(str(path), "--mode", "forward", "--mode", "reverse", "-o",
                     str(tmp_path / "out"), "--build", "--check")
    assert result.returncode == 1, result.stderr
    assert "2 failed" in result.stdout


def test_a_c_function_that_differs_from_the_python_body_fails_the_check(tmp_path: Path) -> None:
    path = softplus_module(tmp_path, SOFTPLUS_C.replace("return log1p(exp(x));",
                                                        "return log(exp(x));"))
    report = adgen.check(str(path), modes=("forward",))
    assert not rows(report)[("softplus", "primal vs CPython")]


# -- build ---------------------------------------------------------------------------------------

def test_editing_the_c_file_rebuilds(tmp_path: Path) -> None:
    path = softplus_module(tmp_path)
    first = adgen.load(str(path), modes=("forward",))
    assert first.softplus(0.0) == pytest.approx(np.log(2.0), rel=1e-15)
    c_file = tmp_path / "softplus.c"
    c_file.write_text(c_file.read_text().replace("return log1p(exp(x));",
                                                 "return 2.0 * log1p(exp(x));"))
    second = adgen.load(str(path), modes=("forward",))
    assert second.softplus(0.0) == pytest.approx(2.0 * np.log(2.0), rel=1e-15)
    assert first.softplus(0.0) == pytest.approx(np.log(2.0), rel=1e-15)  # the old build stays


def test_editing_a_header_the_c_file_includes_rebuilds(tmp_path: Path) -> None:
    """The headers the C file includes (as gcc finds them, nested ones too) are part of the
    build's key: editing scale.h loaded (and --check passed on) the old build."""
    path = softplus_module(tmp_path, SOFTPLUS_C.replace(
        "#include <math.h>", '#include <math.h>\n    #include "scale.h"').replace(
        "return log1p(exp(x));", "return SCALE * log1p(exp(x));"))
    (tmp_path / "scale.h").write_text('#include "inner/factor.h"\n#define SCALE FACTOR\n')
    (tmp_path / "inner").mkdir()
    factor = tmp_path / "inner" / "factor.h"
    factor.write_text("#define FACTOR 1.0\n")
    first = adgen.load(str(path), modes=("forward",))
    assert first.softplus(0.0) == pytest.approx(np.log(2.0), rel=1e-15)
    factor.write_text("#define FACTOR 3.0\n")
    second = adgen.load(str(path), modes=("forward",))
    assert second.softplus(0.0) == pytest.approx(3.0 * np.log(2.0), rel=1e-15)


def test_a_c_function_with_another_prototype_is_a_compile_error(tmp_path: Path) -> None:
    path = softplus_module(tmp_path, SOFTPLUS_C.replace(
        "double softplus_c_b(double x, double *xb, double retb)",
        "double softplus_c_b(double x, double retb, double *xb)"))
    result = run_cli(str(path), "--mode", "reverse", "-o", str(tmp_path / "out"), "--build")
    assert result.returncode == 2
    assert re.search(r"softplus\.c:\d+:\d+: error: conflicting types for .softplus_c_b",
                     result.stderr), result.stderr
    assert "internal error" not in result.stderr


def test_output_over_the_c_file_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "m.c", SOFTPLUS_C)
    path = write(tmp_path, "m.py", """
        from adgen import external, f64


        @external("m.c", name="softplus_c")
        def softplus(x: f64) -> f64:
            return x
        """)
    before = (tmp_path / "m.c").read_text()
    result = run_cli(str(path), "--mode", "primal", "-o", str(tmp_path))
    assert result.returncode == 2
    assert "would overwrite the C file of an @external function" in result.stderr
    assert (tmp_path / "m.c").read_text() == before


def test_an_inactive_call_needs_no_derivative(tmp_path: Path) -> None:
    """Derivatives of the external are needed only where its result carries one."""
    path = softplus_module(tmp_path, decorator='@external("softplus.c", name="softplus_c")')
    path.write_text(path.read_text().replace("softplus(w[i] * b) * w[i]",
                                             "softplus(float(i)) * w[i] * b"))
    report = adgen.check(str(path), modes=("forward", "reverse"), functions=["loss"])
    assert report.ok, report.table()


def test_single_precision_prototypes(tmp_path: Path) -> None:
    path = softplus_module(tmp_path)
    t = transpile(str(path), ("forward", "reverse"), precision="f32")
    assert "float softplus_c_d(float x, float xd, float *retd);" in t.outputs["forward"].header.text
    assert "float softplus_c_b(float x, float *xb, float retb);" in t.outputs["reverse"].header.text


# -- what is rejected: the cases are in tests/test_diagnostics.py (CASES, "external: ...")


def test_the_python_body_is_not_compiled(tmp_path: Path) -> None:
    """Anything CPython runs may be the reference: strings, lists, other libraries' calls."""
    write(tmp_path, "f.c", "double f_c(double x) { return 2.0 * x; }\n")
    path = write(tmp_path, "m.py", """
        from adgen import external, f64


        @external("f.c", name="f_c")
        def f(x: f64) -> f64:
            parts = [x, x]
            return float(sum(parts)) if "ok" else 0.0
        """)
    m = adgen.load(str(path), modes=("primal",))
    assert m.f(1.5) == 3.0
    report = adgen.check(str(path), modes=("primal",))
    assert report.ok, report.table()


def test_a_c_file_that_is_not_utf8(tmp_path: Path) -> None:
    """C files are bytes: a Latin-1 comment passes through to the compiler unchanged."""
    path = softplus_module(tmp_path)
    c = tmp_path / "softplus.c"
    c.write_bytes(b"/* \xe9t\xe9: Latin-1 */\n" + c.read_bytes())
    m = adgen.load(str(path), modes=("forward", "reverse"))
    assert m.softplus(0.0) == pytest.approx(np.log(2.0), rel=1e-15)


def test_a_gradient_of_an_external_function_inside_the_module(tmp_path: Path) -> None:
    """grad(f) of an external f calls its C adjoint (primal code); a derivative of that would
    need a second derivative of the C function: a located error at the grad."""
    softplus_module(tmp_path)
    path = write(tmp_path, "n.py", """
        import math

        from adgen import external, f64, grad


        @external("softplus.c", name="softplus_c", tangent="softplus_c_d",
                  adjoint="softplus_c_b")
        def softplus(x: f64) -> f64:
            return math.log1p(math.exp(x))


        def slope(x: f64) -> f64:
            return grad(softplus)(x) * x
        """)
    report = adgen.check(str(path), modes=())
    assert report.ok, report.table()
    m = adgen.load(str(path), modes=("primal",))
    assert m.slope(0.3) == pytest.approx(0.3 / (1.0 + np.exp(-0.3)), rel=1e-14)
    result = run_cli(str(path), "--mode", "reverse", "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}:13:12: error: a derivative of grad(softplus) "
                                    "would need a second derivative"), result.stderr


def test_forward_mode_of_a_module_taking_the_gradient_of_an_external(tmp_path: Path) -> None:
    """A module whose inactive function takes grad() of an external keeps the declaration of
    the C adjoint; forward mode took it for derivative code and wanted an hvp of the C
    function (a located error), where the tangent of the others needs the C tangent only."""
    softplus_module(tmp_path)
    path = write(tmp_path, "k.py", """
        import math

        from adgen import external, f64, grad


        @external("softplus.c", name="softplus_c", tangent="softplus_c_d",
                  adjoint="softplus_c_b")
        def softplus(x: f64) -> f64:
            return math.log1p(math.exp(x))


        def h(x: float) -> float:
            return softplus(x) * 2.0


        def slope_at_zero() -> float:
            return grad(softplus)(0.0)
        """)
    result = run_cli(str(path), "--mode", "forward", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    report = adgen.check(str(path), modes=("forward", "reverse"))
    assert report.ok, report.table()
    m = adgen.load(str(path), modes=("forward",))
    assert m.h.jvp((0.3,), (1.0,))[1] == pytest.approx(2.0 / (1.0 + np.exp(-0.3)), rel=1e-14)
    assert m.slope_at_zero() == 0.5
