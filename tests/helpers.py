"""Small helpers shared by tests."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from adgen.cuda import device_count

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
STRICT_CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"]

needs_gpu = pytest.mark.skipif(device_count() == 0, reason="no GPU")
#: a test of the CUDA target taking ``emulate``: emulated on the CPU everywhere, and run on
#: the GPU where there is one
EMULATED_AND_GPU = pytest.mark.parametrize(
    "emulate", [pytest.param(True, id="emulated"), pytest.param(False, id="gpu", marks=needs_gpu)])


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adgen.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, check=False)


def compile_strict(c_file: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["gcc", *STRICT_CFLAGS, *extra, "-c", str(c_file), "-o", str(out)],
                          capture_output=True, text=True, check=False)


def check_goldens(outputs: Iterable[Any], directory: Path, update: bool) -> None:
    """Compare each emitted source and header with its golden file in ``directory`` (or,
    with ``update``, write it there)."""
    for emitted in outputs:
        for f in (emitted.source, emitted.header):
            golden = directory / f.name
            if update:
                directory.mkdir(exist_ok=True)
                golden.write_text(f.text)
                continue
            where = golden.relative_to(ROOT)
            assert golden.exists(), f"missing golden {where}: run pytest --update-goldens"
            assert f.text == golden.read_text(), (
                f"{f.name} differs from {where}; if the change is intended, run "
                "pytest --update-goldens and review the diff")


def module(tmp_path: Path, source: str, name: str = "m") -> str:
    """Write ``source`` (dedented, after the usual imports) as ``tmp_path/name.py``."""
    path = tmp_path / f"{name}.py"
    path.write_text("import math\n\nfrom adgen import Array, f64, zeros\n\n\n" +
                    textwrap.dedent(source))
    return str(path)


def functions_of(text: str) -> dict[str, str]:
    """Generated C text -> {function name: its body} (static functions included)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^\w[\w\s*]*?\b(\w+)\(([^)]*)\)\n\{\n(.*?)^\}", text, re.S | re.M):
        out[m.group(1)] = m.group(3)
    return out
