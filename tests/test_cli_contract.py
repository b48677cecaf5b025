"""The command line on bad options, failed builds and failed writes (DESIGN.md sections 6
and 8): a message and exit code 2, never a traceback or exit code 3, and all outputs written
or none."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, run_cli

ROSEN = ROOT / "examples" / "rosenbrock.py"


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (relative name -> contents); empty when it does not exist."""
    if not path.exists():
        return {}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def rejected(r, fragment: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--source", "x.c"], "--source needs --build or --check"),
    (["--build", "--source", "nosuch.c"], "nosuch.c: not a file this module generates"),
    (["--check", "--mode", "reverse", "--source", "nosuch_b.c"],
     "nosuch_b.c: not a file this module generates"),
    (["--build", "--source", "nodir/rosenbrock_d.c"], "cannot read nodir/rosenbrock_d.c"),
    (["--openmp"], "--openmp needs --build or --check"),
    (["--cflags=-O2"], "--cflags needs --build or --check"),
    (["--target", "cuda", "--emulate"], "--emulate needs --build or --check"),
    (["--target", "cuda", "--arch", "sm_90"], "--arch needs --build or --check"),
    (["--target", "cuda", "--openmp", "--build"], "--openmp applies to --target c"),
])
def test_rejected_options_write_nothing(tmp_path: Path, args: list[str], fragment: str) -> None:
    module = ROOT / "examples" / ("kernels.py" if "cuda" in args else "rosenbrock.py")
    r = run_cli(str(module), *args, "-o", str(tmp_path / "out"), "-MD", cwd=tmp_path)
    rejected(r, fragment)
    assert tree(tmp_path / "out") == {}


def test_unknown_compiler_flag_exits_2_with_the_compilers_message(tmp_path: Path) -> None:
    """A build that fails is exit code 2 with gcc's message; the generated files, of a valid
    module, are written all the same."""
    out = tmp_path / "out"
    r = run_cli(str(ROSEN), "--build", "--cflags=-fnosuchflag", "-o", str(out))
    rejected(r, "unrecognized command-line option")
    assert "-fnosuchflag" in r.stderr
    assert sorted(tree(out)) == ["adgen_runtime.h", "rosenbrock_d.c", "rosenbrock_d.h"]
    assert str(out / "rosenbrock_d.c") in r.stdout


@pytest.mark.parametrize("action", ["--build", "--check"])
def test_source_that_does_not_compile_exits_2(tmp_path: Path, action: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    edited = out / "rosenbrock_d.c"
    edited.write_text("garbage here\n")
    r = run_cli(str(ROSEN), action, "--source", str(edited), "-o", str(out))
    rejected(r, f"{edited}:1:1: error:")
    assert ".build-" not in r.stderr.split("CompileError")[0]
    assert edited.read_text() == "garbage here\n"
