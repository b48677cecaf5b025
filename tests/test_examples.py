"""Every example: three-way check, strict compilation, and golden generated C."""

from __future__ import annotations

from pathlib import Path

import pytest

import adgen
from adgen.api import transpile
from adgen.build import DEFAULT_CFLAGS
from helpers import EXAMPLES, ROOT, check_goldens, compile_strict, run_cli

MODES = ("primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp", "vector-hvp")
GOLDEN = Path(__file__).parent / "golden"
#: the module examples/make builds into a C program (its Makefile runs three modes)
MAKE_MODEL = ROOT / "examples" / "make" / "model.py"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_three_way_check(example: Path) -> None:
    report = adgen.check(str(example), modes=MODES)
    assert report.rows, "no function was checked"
    assert report.ok, "\n" + report.table()
    checks = {r.check for r in report.rows}
    assert checks == {"primal vs CPython", "tangent vs finite differences",
                      "vector tangent vs scalar tangents", "adjoint vs tangent (dot product)",
                      "vector adjoint vs scalar adjoints", "hvp vs differences of the gradient",
                      "hvp symmetry <u, Hv> = <v, Hu>", "vector hvp vs scalar hvps"}


@pytest.mark.parametrize("example", EXAMPLES + [MAKE_MODEL],
                         ids=lambda p: str(p.relative_to(ROOT / "examples").with_suffix("")))
def test_generated_c_compiles_cleanly(example: Path, tmp_path: Path) -> None:
    """Every mode of every example, examples/make's model among them, compiles with -Wall
    -Wextra -Werror.  The vector-hvp of that model popped the tangent of a taped value that
    its reverse sweep never reads into an array of directions (-Wunused-but-set-variable:
    sd in poly_bwd_dv)."""
    result = run_cli(str(example), *[a for m in MODES for a in ("--mode", m)], "-o", str(tmp_path),
                     "-q")
    assert result.returncode == 0, result.stderr
    sources = sorted(tmp_path.glob("*.c"))
    assert len(sources) == len(MODES)
    for c_file in sources:
        # adgen's release flags: -O3 enables gcc's flow-based warnings (maybe-uninitialized...),
        # the others the `omp simd` loops and vector libm declarations; -DADGEN_DEBUG the
        # checks; -DADGEN_NBDIRS arrays of directions of a constant size
        for extra in ([], list(DEFAULT_CFLAGS), ["-DADGEN_DEBUG"],
                      list(DEFAULT_CFLAGS) + ["-DADGEN_NBDIRS=2"]):
            cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"), *extra)
            assert cc.returncode == 0, f"{c_file.name} {extra}:\n{cc.stderr}"


def test_debug_code_compiles_cleanly_with_the_checks_off(tmp_path: Path) -> None:
    """--debug code is also a release build without -DADGEN_DEBUG: an extent read only by
    ADGEN_INDEX was an unused parameter there (-Wextra -Werror failed on kernels.c)."""
    example = EXAMPLES[0].parent / "kernels.py"
    result = run_cli(str(example), "--mode", "primal", "--mode", "reverse", "--mode", "forward",
                     "--debug", "-o", str(tmp_path), "-q")
    assert result.returncode == 0, result.stderr
    for c_file in sorted(tmp_path.glob("*.c")):
        for extra in ([], ["-DADGEN_DEBUG"]):
            cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"), *extra)
            assert cc.returncode == 0, f"{c_file.name} {extra}:\n{cc.stderr}"


def test_single_precision_code_compiles_cleanly(tmp_path: Path) -> None:
    """A constant beyond float's range is INFINITY in f32 code, one below its smallest
    subnormal 0.0f: kernels.py's best = 1e300 was written 1e+300f, which gcc warns about
    even without -Wall ("floating constant exceeds range of 'float'"), as 1e-50f
    ("truncated to zero")."""
    from adgen.transpile.emit.c import c_float
    from adgen.transpile.ir.types import F32, F64

    assert [c_float(v, F32) for v in (1e300, -1e39, 1e-50, -1e-50, 3.4e38, 1e-45, 0.5)] == \
        ["INFINITY", "-INFINITY", "0.0f", "-0.0f", "3.4e+38f", "1e-45f", "0.5f"]
    assert c_float(1e300, F64) == "1e+300"
    result = run_cli(str(EXAMPLES[0].parent / "kernels.py"), "--mode", "primal", "--mode",
                     "reverse", "--precision", "f32", "-o", str(tmp_path), "-q")
    assert result.returncode == 0, result.stderr
    for c_file in sorted(tmp_path.glob("*.c")):
        cc = compile_strict(c_file, tmp_path / (c_file.stem + ".o"))
        assert cc.returncode == 0, f"{c_file.name}:\n{cc.stderr}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_golden(example: Path, update_goldens: bool) -> None:
    check_goldens(transpile(str(example), MODES).outputs.values(), GOLDEN, update_goldens)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_three_way_check_in_single_precision(example: Path) -> None:
    report = adgen.check(str(example), modes=MODES, precision="f32")
    assert report.ok, "\n" + report.table()


def test_debug_build_checks_pass_on_valid_inputs() -> None:
    report = adgen.check(str(EXAMPLES[0].parent / "heat.py"), debug=True)
    assert report.ok, "\n" + report.table()
