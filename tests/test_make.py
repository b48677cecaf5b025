"""examples/make: a Makefile that generates C with adgen and links it into a C program.

The program's output is compared with the module run by CPython and a NumPy gradient; the
build is checked to be incremental (a second make does nothing, a change rebuilds what depends
on it) and safe under make -j.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from helpers import ROOT

EXAMPLE = ROOT / "examples" / "make"
C0 = np.array([0.0, 4.0, -4.0])  # the coefficients and direction main.c starts from
D = np.array([1.0, 2.0, 3.0])


def _gnu_make() -> str | None:
    make = shutil.which("make")
    if make is None or shutil.which("gcc") is None:
        return None
    version = subprocess.run([make, "--version"], capture_output=True, text=True, check=False)
    return make if "GNU Make" in version.stdout else None


MAKE = _gnu_make()
pytestmark = pytest.mark.skipif(MAKE is None, reason="needs GNU make and gcc")


def make(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run make in workdir with this interpreter's adgen; fail the test on a non-zero exit."""
    assert MAKE is not None
    adgen = f"{shlex.quote(sys.executable)} -m adgen.cli"
    result = subprocess.run([MAKE, f"ADGEN={adgen}", *args], cwd=workdir, capture_output=True,
                            text=True, env={**os.environ, "LC_ALL": "C"}, check=False)
    assert result.returncode == 0, f"make {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def commands(output: str) -> dict[str, list[str]]:
    """The adgen modes run, the files compiled and whether the program was linked."""
    lines = output.splitlines()
    return {"adgen": [m.group(1) for line in lines if (m := re.search(r" --mode (\S+)", line))],
            "compiled": sorted(m.group(1) for line in lines
                               if (m := re.search(r"-c (\S+) -o", line))),
            "linked": [line for line in lines if line.endswith("-o build/fit")]}


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"make_model_{os.getpid()}_{id(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected(model_py: Path) -> dict[str, np.ndarray]:
    """What build/fit prints, from CPython (the loss) and NumPy (its gradient)."""
    model = load_module(model_py)
    n = model.N_POINTS
    t = np.arange(n) / (n - 1)
    vander = np.vander(t, len(C0), increasing=True)

    def grad(c: np.ndarray) -> np.ndarray:
        return 2.0 / n * vander.T @ (vander @ c - np.sin(np.pi * t))

    c = C0.copy()
    for _ in range(200):
        c = c - 0.5 * grad(c)
    return {"loss": np.array([model.loss(C0)]), "loss_b value": np.array([model.loss(C0)]),
            "gradient": grad(C0), "tangent along d": np.array([grad(C0) @ D]),
            "gradient . d": np.array([grad(C0) @ D]), "after descent": c,
            "final loss": np.array([model.loss(c)])}


def check_output(output: str, model_py: Path) -> None:
    printed: dict[str, np.ndarray] = {}
    for line in output.splitlines():
        m = re.match(r"([a-z_. ]+?) +(-?\d.*)$", line)
        assert m is not None, f"unexpected line {line!r}"
        label = "final loss" if m.group(1) == "loss" and "loss" in printed else m.group(1)
        printed[label] = np.array([float(v) for v in m.group(2).split()])
    want = expected(model_py)
    assert printed.keys() == want.keys()
    for label, values in want.items():
        np.testing.assert_allclose(printed[label], values, rtol=1e-9, atol=1e-12, err_msg=label)


def backdate(workdir: Path) -> None:
    """Move every file 100 s into the past, so that a touch is newer whatever the clock grain."""
    for path in [*workdir.iterdir(), *(workdir / "build").iterdir()]:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns - 10**11, st.st_mtime_ns - 10**11))


def test_makefile_builds_runs_and_rebuilds_only_what_changed(tmp_path: Path) -> None:
    work = tmp_path / "make"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("build"))

    # from scratch: each mode generated once, every object compiled, the program linked
    first = commands(make(work).stdout)
    assert sorted(first["adgen"]) == ["forward", "primal", "reverse"]
    assert first["compiled"] == ["build/model.c", "build/model_b.c", "build/model_d.c", "main.c"]
    assert len(first["linked"]) == 1
    fit = subprocess.run([str(work / "build" / "fit")], capture_output=True, text=True, check=True)
    check_output(fit.stdout, work / "model.py")

    # a second make does nothing
    assert make(work).stdout.strip() == "make: Nothing to be done for 'all'."
    assert subprocess.run([MAKE or "make", "-q"], cwd=work, check=False).returncode == 0

    # main.c changed: no adgen, main.o recompiled and the program linked
    backdate(work)
    (work / "main.c").touch()
    again = commands(make(work).stdout)
    assert again["adgen"] == [] and again["compiled"] == ["main.c"] and len(again["linked"]) == 1

    # the module changed: each mode regenerated once, everything including its headers rebuilt,
    # and the program prints the new values
    backdate(work)
    model_py = work / "model.py"
    model_py.write_text(model_py.read_text().replace("N_POINTS = 21", "N_POINTS = 11"))
    edited = commands(make(work).stdout)
    assert sorted(edited["adgen"]) == ["forward", "primal", "reverse"]
    assert edited["compiled"] == first["compiled"]
    run = make(work, "-s", "run")
    check_output(run.stdout, model_py)
    assert subprocess.run([MAKE or "make", "-q"], cwd=work, check=False).returncode == 0

    # clean, then a parallel build: still each mode generated once, and the same program
    make(work, "clean")
    assert not (work / "build").exists()
    parallel = commands(make(work, "-j4").stdout)
    assert sorted(parallel["adgen"]) == ["forward", "primal", "reverse"]
    assert parallel["compiled"] == first["compiled"]
    check_output(make(work, "-s", "run").stdout, model_py)
    assert subprocess.run([MAKE or "make", "-q"], cwd=work, check=False).returncode == 0


def test_runtime_header_is_made_again_and_the_build_directory_may_be_absolute(
        tmp_path: Path) -> None:
    work = tmp_path / "make"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("build"))
    make(work)

    # build/adgen_runtime.h removed: it had no rule and the objects did not depend on it, so
    # make did nothing and the next compile of a generated file failed (No such file); now
    # it is written again and the generated files that include it are compiled again
    backdate(work)
    (work / "build" / "adgen_runtime.h").unlink()
    again = commands(make(work).stdout)
    assert (work / "build" / "adgen_runtime.h").exists()
    assert again["compiled"] == ["build/model.c", "build/model_b.c", "build/model_d.c"]
    assert len(again["linked"]) == 1
    assert subprocess.run([MAKE or "make", "-q"], cwd=work, check=False).returncode == 0

    # B an absolute directory: make run ran ./$(B)/fit, which named no file
    absolute = tmp_path / "absbuild"
    run = make(work, "-s", "run", f"B={absolute}")
    check_output(run.stdout, work / "model.py")
    assert (absolute / "fit").exists()
