"""The command line contract (DESIGN.md section 6)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from helpers import ROOT, run_cli

ROSEN = ROOT / "examples" / "rosenbrock.py"


def test_forward_build_check_passes(tmp_path: Path) -> None:
    r = run_cli(str(ROSEN), "--mode", "forward", "-o", str(tmp_path / "out"), "--build", "--check")
    assert r.returncode == 0, r.stderr
    assert "rosenbrock" in r.stdout and "tangent vs finite differences" in r.stdout
    assert "0 failed" in r.stdout
    for name in ("rosenbrock_d.c", "rosenbrock_d.h", "adgen_runtime.h"):
        assert (tmp_path / "out" / name).exists()
        assert str(tmp_path / "out" / name) in r.stdout


def test_modes_repeat_and_name_files(tmp_path: Path) -> None:
    r = run_cli(str(ROSEN), "--mode", "primal", "--mode", "forward", "--mode", "vector-forward",
                "-o", str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["adgen_runtime.h", "rosenbrock.c", "rosenbrock.h", "rosenbrock_d.c",
                     "rosenbrock_d.h", "rosenbrock_dv.c", "rosenbrock_dv.h"]
    assert "rosenbrock_dv(" in (tmp_path / "rosenbrock_dv.h").read_text()


def test_output_is_byte_identical_across_runs(tmp_path: Path) -> None:
    outs = []
    for seed in ("1", "2"):
        cwd = tmp_path / seed
        cwd.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = run_cli(str(ROOT / "examples" / "polar.py"), "--mode", "forward", "--mode",
                    "vector-forward", "-o", "out", "-q", env=env, cwd=cwd)
        assert r.returncode == 0, r.stderr
        outs.append({p.name: p.read_bytes() for p in (cwd / "out").iterdir()})
    assert outs[0] == outs[1]


def test_unchanged_outputs_keep_their_timestamp(tmp_path: Path) -> None:
    assert run_cli(str(ROSEN), "-o", str(tmp_path), "-q").returncode == 0
    target = tmp_path / "rosenbrock_d.c"
    old = target.stat().st_mtime_ns
    time.sleep(0.05)
    assert run_cli(str(ROSEN), "-o", str(tmp_path), "-q").returncode == 0
    assert target.stat().st_mtime_ns == old


def test_make_dependency_file(tmp_path: Path) -> None:
    dep = tmp_path / "deps" / "r.d"
    dep.parent.mkdir()
    r = run_cli(str(ROSEN), "-o", str(tmp_path), "-MD", "-MF", str(dep), "-q")
    assert r.returncode == 0, r.stderr
    text = dep.read_text()
    targets, deps = text.split(":", 1)
    assert str(tmp_path / "rosenbrock_d.c") in targets.split()
    assert deps.split() == [str(ROSEN)]
    r = run_cli(str(ROSEN), "-o", str(tmp_path / "o2"), "-MD", "-q")
    assert (tmp_path / "o2" / "rosenbrock.d").exists()


def test_dependency_file_names_only_the_files_this_run_writes(tmp_path: Path) -> None:
    """A generated file that --source replaces is the user's, which this run leaves alone:
    it is not a target of the rule (make would take it for adgen's output of the module)."""
    module = tmp_path / "rosenbrock.py"
    module.write_text(ROSEN.read_text())
    args = ["rosenbrock.py", "--mode", "primal", "--mode", "reverse", "-o", "g", "-q"]
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    edited = tmp_path / "g" / "rosenbrock_b.c"
    edited.write_text(edited.read_text() + "/* edited */\n")
    r = run_cli(*args, "--build", "--source", "g/rosenbrock_b.c", "-MD", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert edited.read_text().endswith("/* edited */\n")
    assert (tmp_path / "g" / "rosenbrock.d").read_text() == \
        "g/rosenbrock.c g/rosenbrock.h g/rosenbrock_b.h: rosenbrock.py\n"


EXTERNAL = """import math

from adgen import external, f64


@external("k.c", name="sp_c", tangent="sp_c_d", adjoint="sp_c_b")
def sp(x: f64) -> f64:
    return math.log1p(math.exp(x))


def loss(x: float) -> float:
    return sp(x) * 2.0
"""


def test_dependency_file_has_an_empty_rule_for_each_external_c_file(tmp_path: Path) -> None:
    """As gcc -MP: an @external C file renamed or removed (and the module changed to name
    another) made make stop with 'No rule to make target k.c' before adgen could run again."""
    import shutil

    (tmp_path / "m.py").write_text(EXTERNAL)
    (tmp_path / "k.c").write_text("")
    r = run_cli("m.py", "--mode", "reverse", "-o", "g", "-MD", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dep = tmp_path / "g" / "m.d"
    assert dep.read_text() == "g/m_b.c g/m_b.h: m.py k.c\n\nk.c:\n"
    if shutil.which("make") is None:
        return
    (tmp_path / "k.c").unlink()
    (tmp_path / "rule.mk").write_text("g/%_b.c:\n\t@echo remake $@\n")
    made = subprocess.run(["make", "-f", str(dep), "-f", "rule.mk", "g/m_b.c"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    assert made.stdout == "remake g/m_b.c\n"


def test_dependency_file_lists_the_headers_an_external_c_file_includes(tmp_path: Path) -> None:
    """The files an @external C file includes (nested too, as gcc finds them; not <math.h>)
    are prerequisites: editing one did not make make run adgen again."""
    (tmp_path / "m.py").write_text(EXTERNAL)
    (tmp_path / "k.c").write_text('#include <math.h>\n#include "k.h"\n')
    (tmp_path / "inc").mkdir()
    (tmp_path / "k.h").write_text('#include "inc/deep.h"\n')
    (tmp_path / "inc" / "deep.h").write_text("")
    r = run_cli("m.py", "--mode", "reverse", "-o", "g", "-MD", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g" / "m.d").read_text() == \
        "g/m_b.c g/m_b.h: m.py k.c k.h inc/deep.h\n\nk.c:\n\nk.h:\n\ninc/deep.h:\n"
    # found through -I in CFLAGS (distutils reads it) too; a generated header it includes is
    # a target of the rule, not a prerequisite (make: 'Circular m_b.h <- m_b.h')
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys" / "kh.h").write_text("")
    (tmp_path / "k.c").write_text('#include <kh.h>\n#include "m_b.h"\n')
    env = {**os.environ, "CFLAGS": f"-I{tmp_path / 'sys'}"}
    for _ in range(2):  # the second run finds m_b.h beside the module
        r = run_cli("m.py", "--mode", "reverse", "-o", ".", "-MD", "-q", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.d").read_text() == \
        f"./m_b.c ./m_b.h: m.py k.c {tmp_path / 'sys' / 'kh.h'}\n\nk.c:\n\n" \
        f"{tmp_path / 'sys' / 'kh.h'}:\n"


def test_an_external_c_file_is_never_overwritten_through_a_link(tmp_path: Path) -> None:
    """-o a link to the directory of the @external C file k.c, with a module named k: the
    generated k.c replaced the user's (the paths were compared as spelled)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(EXTERNAL)
    (tmp_path / "src" / "k.c").write_text("/* mine */\n")
    (tmp_path / "link").symlink_to(tmp_path / "src")
    r = run_cli("src/k.py", "--mode", "primal", "-o", "link", cwd=tmp_path)
    assert r.returncode == 2 and "would overwrite the C file of an @external function" in \
        r.stderr, r.stderr
    assert (tmp_path / "src" / "k.c").read_text() == "/* mine */\n"


def test_head_selects_function_inputs_and_outputs(tmp_path: Path) -> None:
    r = run_cli(str(ROOT / "examples" / "piecewise.py"), "--head", "piecewise(return)/(a)",
                "-o", str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "piecewise_d.h").read_text()
    assert "double piecewise_d(double x, double a, double ad, double *retd);" in header


def test_wrt_and_of_restrict_the_tangent(tmp_path: Path) -> None:
    r = run_cli(str(ROOT / "examples" / "layer.py"), "--wrt", "x", "--of", "return", "-o",
                str(tmp_path), "-q", "--check")
    assert r.returncode == 0, r.stderr + r.stdout
    header = (tmp_path / "layer_d.h").read_text()
    assert "Wd" not in header and "const double *xd" in header


def test_header_says_which_written_arrays_have_no_tangent_out(tmp_path: Path) -> None:
    """--of return on a function that writes y: f_d and f_dv set yd to zero where y gets a
    value no dependent needs, and their comments listed y (yd, updated in place) under the
    tangents out all the same; so did f_b_d's with 'on return the tangent of y'."""
    module = tmp_path / "wr.py"
    module.write_text("from adgen import Array, f64\n\n\n"
                      "def f(x: Array[f64], y: Array[f64]) -> f64:\n"
                      "    s = 0.0\n    for i in range(len(x)):\n"
                      "        y[i] = x[i] * x[i]\n        s += x[i]\n    return s\n")
    modes = ["--mode", "forward", "--mode", "vector-forward", "--mode", "hvp"]
    for of, out in [([], "all"), (["--of", "return"], "ret")]:
        r = run_cli(str(module), *modes, *of, "-o", str(tmp_path / out), "-q")
        assert r.returncode == 0, r.stderr
    zero = ("tangents out: return (retd); yd is zero where y gets a value no dependent needs "
            "(y is not among the dependents, --of)\n")
    for name in ("wr_d", "wr_dv"):
        every, ret = ((tmp_path / d / f"{name}.h").read_text() for d in ("all", "ret"))
        assert "tangents out: y (yd, updated in place), return (retd)\n" in every
        assert "no dependent" not in every
        assert zero in ret and "updated in place" not in ret
    assert "yd[i] = 0.0;" in (tmp_path / "ret" / "wr_d.c").read_text()
    # in f_b_d no adjoint needs y: yd is set to zero whatever --of says
    for d in ("all", "ret"):
        assert "  yd: in, the direction v for y on entry; on return zero where y gets a value no " \
            "adjoint needs, elsewhere the tangent of y\n" in (tmp_path / d / "wr_b_d.h").read_text()
        assert "yd[i] = 0.0;" in (tmp_path / d / "wr_b_d.c").read_text()
    # u is read back into the returned energy: its tangent is computed without being asked for
    r = run_cli(str(ROOT / "examples" / "heat.py"), "--of", "return", "-o", str(tmp_path / "h"),
                "-q")
    assert r.returncode == 0, r.stderr
    assert "tangents out: u (ud, updated in place), return (retd)\n" in \
        (tmp_path / "h" / "heat_d.h").read_text()


def test_list_options_given_twice_name_both_lists(tmp_path: Path) -> None:
    """--wrt W --wrt b is --wrt W,b (the second list used to replace the first, silently:
    the adjoint of W was missing from the generated function)."""
    for argv, out in [(["--wrt", "W", "--wrt", "b"], "twice"), (["--wrt", "W,b"], "once")]:
        r = run_cli(str(ROOT / "examples" / "layer.py"), "--mode", "reverse", *argv,
                    "-o", str(tmp_path / out), "-q")
        assert r.returncode == 0, r.stderr
    twice, once = ((tmp_path / d / "layer_b.c").read_text() for d in ("twice", "once"))
    assert twice == once and "--wrt W,b" in once
    assert "double *Wb" in once and "double *bb" in once and "xb" not in once


def test_heads_given_apart_are_one_list_and_empty_lists_are_refused(tmp_path: Path) -> None:
    # a second --head replaced the first (g was not differentiated); --functions= meant the
    # default, every function
    path = tmp_path / "gk.py"
    path.write_text("from adgen import Array, f64\n\n\ndef g(x: float, a: float) -> float:\n"
                    "    return x * a\n\n\ndef k(x: float, y: Array[f64]) -> None:\n"
                    "    y[0] = x * x\n")
    r = run_cli(str(path), "--head", "g(return)/(x)", "--head", "k(y)/(x)", "-o",
                str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "out" / "gk_d.h").read_text()
    assert "double g_d(double x, double xd, double a, double *retd);" in header
    assert "void k_d(double x, double xd, double *y, double *yd, int64_t y_shape0);" in header
    for arg, message in [("--functions=", "argument --functions: no names in ''"),
                         ("--wrt=,", "argument --wrt: no names in ','"),
                         ("--head=", "argument --head: no function in ''"),
                         ("--seed=-1", "argument --seed: must be a non-negative integer, not "
                                       "'-1'")]:
        r = run_cli(str(path), arg, "--check", "-o", str(tmp_path / "bad"))
        assert r.returncode == 2 and message in r.stderr, (arg, r.stderr)
    assert not (tmp_path / "bad").exists()


def test_bad_option_values_exit_2(tmp_path: Path) -> None:
    for args, fragment in [
        (["--wrt", "nope"], "--wrt: 'nope'"),
        (["--functions", "missing"], "no function named 'missing'"),
        (["--target", "cuda", "--mode", "vector-reverse"], "not supported on the CUDA target yet"),
        (["--target", "cuda"], "indexes the array 'x' outside a prange"),
        (["--emulate", "--check"], "--emulate applies to --target cuda"),
        (["--target", "cuda", "--debug"], "--debug is not supported on the CUDA target yet"),
        (["--mode", "sideways"], "invalid choice"),
    ]:
        r = run_cli(str(ROSEN), *args, "-o", str(tmp_path / "x"))
        assert r.returncode == 2, (args, r.stderr)
        assert fragment in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert not (tmp_path / "x").exists()


def test_missing_file_exits_2(tmp_path: Path) -> None:
    r = run_cli(str(tmp_path / "nope.py"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_check_failure_exits_1(tmp_path: Path) -> None:
    # CPython and C disagree on purpose: a module constant that CPython reads as 1 + 1e-9
    # is not possible to miscompile, so break agreement with a division by zero instead.
    src = tmp_path / "bad.py"
    src.write_text("def f(x: float) -> float:\n    return x / (x - x)\n")
    r = run_cli(str(src), "-o", str(tmp_path / "o"), "--check")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL" in r.stdout


def test_dump_ir(tmp_path: Path) -> None:
    r = run_cli(str(ROSEN), "--dump-ir", "-o", str(tmp_path), "-q")
    assert r.returncode == 0
    assert "func @rosenbrock_d(" in r.stdout and "for %i" in r.stdout
    r = run_cli(str(ROSEN), "--dump-ir=all", "-o", str(tmp_path), "-q")
    assert "after lower" in r.stdout and "after dce" in r.stdout


def test_help_and_version() -> None:
    r = run_cli("--help")
    assert r.returncode == 0 and "--mode" in r.stdout and "--wrt" in r.stdout
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("adgen ")


def test_check_validates_a_hand_edited_file(tmp_path: Path) -> None:
    """--source: the edited file is compiled instead of regenerated (and never overwritten)."""
    out = tmp_path / "out"
    r = run_cli(str(ROSEN), "--mode", "reverse", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    edited = out / "rosenbrock_b.c"
    text = edited.read_text()
    assert "2.0 * tmp_1 * (100.0 * sb)" in text
    good = text.replace("2.0 * tmp_1 * (100.0 * sb)", "200.0 * tmp_1 * sb /* by hand */")
    edited.write_text(good)

    def check() -> subprocess.CompletedProcess[str]:
        return run_cli(str(ROSEN), "--mode", "reverse", "-o", str(out), "--check",
                       "--source", str(edited))
    r = check()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "adjoint vs tangent (dot product)" in r.stdout
    assert edited.read_text() == good  # kept, not regenerated
    edited.write_text(good.replace("200.0 * tmp_1", "201.0 * tmp_1"))
    r = check()
    assert r.returncode == 1 and "FAIL" in r.stdout
    edited.write_text(good.replace("tmp_3 = ", "tmp_3 == "))
    r = check()
    assert r.returncode == 2
    assert f"{edited}:" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(str(ROSEN), "--mode", "reverse", "-o", str(out), "--check",
                "--source", str(tmp_path / "other.c"))
    assert r.returncode == 2 and "not a file this module generates" in r.stderr


def test_check_compares_the_value_a_derivative_returns_with_the_primal(tmp_path: Path) -> None:
    """vjp and jvp return the value of the function too: an edited rosenbrock_b.c or
    rosenbrock_d.c returning another value passed every row (the derivatives were right)."""
    out = tmp_path / "out"
    r = run_cli(str(ROSEN), "--mode", "reverse", "--mode", "forward", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    for name, row in [("rosenbrock_b.c", "adjoint vs tangent (dot product)"),
                      ("rosenbrock_d.c", "tangent vs finite differences")]:
        edited = out / name
        text = edited.read_text()
        assert text.count("\n    return s;\n") == 1
        edited.write_text(text.replace("\n    return s;\n", "\n    return s + 1.0;\n"))
        r = run_cli(str(ROSEN), "--mode", "reverse", "--mode", "forward", "-o", str(out),
                    "--check", "--source", str(edited))
        assert r.returncode == 1, r.stdout + r.stderr
        failed = [line for line in r.stdout.splitlines() if "FAIL" in line]
        assert len(failed) == 1 and row in failed[0] and \
            f"({name[:-2]} returns values that differ from the primal's (rel. error" \
            in failed[0], r.stdout
        edited.write_text(text)


def test_module_not_utf8_or_too_deep_exits_2(tmp_path: Path) -> None:
    # not UTF-8 (CPython rejects it too); 3,000 unary minuses, too deep for CPython's compiler
    # at its default recursion limit
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\ndef f(x: float) -> float:\n    return x\n")
    deep = tmp_path / "deep.py"
    deep.write_text("def f(x: float) -> float:\n    return " + "-" * 3000 + "x\n")
    for path, fragment in [(latin, "latin.py:1: the file is not UTF-8 text (byte 0xe9)"),
                           (deep, "deep.py:2:5: error: this module is nested too deeply")]:
        r = run_cli(str(path), "--mode", "forward", "--mode", "reverse", "-o",
                    str(tmp_path / "out"))
        assert r.returncode == 2 and fragment in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()
