"""Small helpers shared by tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
STRICT_CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"]


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adgen.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, check=False)


def compile_strict(c_file: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["gcc", *STRICT_CFLAGS, *extra, "-c", str(c_file), "-o", str(out)],
                          capture_output=True, text=True, check=False)
