"""benchmarks/run.py end to end, on its smallest settings.

Runs the benchmark script as a user would, on two cheap problems (the scalar
sincos, with the C driver row, and logreg), adgen only (JAX and PyTorch are
optional and not needed here), and checks the JSON records it writes: their
keys and types, and that every derivative check passed.  No timing is
asserted: the times only have to be positive numbers.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "benchmarks" / "run.py"

KEYS = {"problem", "workload", "tool", "primal_seconds", "derivative_seconds", "ratio"}


def test_run_quick_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--reps", "3", "--only", "sincos,logreg",
         "--tools", "c,adgen", "--build-dir", str(tmp_path / "build"), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json.loads(out.read_text())
    assert isinstance(records, list)
    got = {(r["problem"], r["tool"]) for r in records}
    assert got == {("sincos", "adgen-c"), ("sincos", "adgen"), ("logreg", "adgen")}, got
    for r in records:
        assert KEYS <= r.keys(), r
        assert isinstance(r["problem"], str) and isinstance(r["workload"], str)
        for key in ("primal_seconds", "derivative_seconds", "ratio"):
            assert isinstance(r[key], float) and math.isfinite(r[key]) and r[key] > 0, (key, r)
        assert r["check_ok"] is True, r
        assert r["check_error"] < 1e-4, r
    # the table is printed too, one row per record
    table = proc.stdout
    assert "derivative" in table and "adgen/peer" in table
    assert sum(1 for line in table.splitlines() if line.startswith("Zygote ")) == len(records)


def test_run_rejects_unknown_problem() -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--only", "nope"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown problem" in proc.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_gpu_script_in_the_emulation(tmp_path: Path) -> None:
    # on a machine without a GPU: the device checks (f64 and f32) and the table, small sizes
    out = tmp_path / "gpu.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu" / "run.py"),
                           "--emulate", "--reps", "1", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json.loads(out.read_text())
    checks = [r for r in records if "check" in r]
    assert checks and all(r["ok"] for r in checks)
    assert {r["precision"] for r in checks} == {"f64", "f32"}
    timed = [r for r in records if "adjoint_ratio" in r]
    assert {r["problem"] for r in timed} == {"hm_lstm", "xs_lookup", "gmm", "kmeans_cost"}
    assert all(r["adjoint_ratio"] > 0 and r["torch"] is None for r in timed)


def test_mixed_mode_quick() -> None:
    # forward-in-reverse against the ordinary adjoint: both tables, the same gradients
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "mixed_mode.py"), "--quick",
                           "--inputs", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("hm_lstm, n = 20000") and "\npower (16 inner steps, 2 input(s))" in out
    ratios = [float(x) for x in re.findall(r"mixed/plain gradient time: ([0-9.]+)", out)]
    diffs = [float(x) for x in re.findall(r"max relative difference of the gradients: (\S+)", out)]
    assert len(ratios) == 2 and all(r > 0 for r in ratios)
    assert len(diffs) == 2 and all(d < 1e-13 for d in diffs), out


def test_gradbench_ratios_quick(tmp_path: Path) -> None:
    # the GradBench ratios script over the protocol: one record per workload, every eval
    out = tmp_path / "ratios.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gradbench" / "ratios.py"),
                           "--quick", "--min-runs", "1", "--min-seconds", "0", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json.loads(out.read_text())
    assert {r["eval"] for r in records} == {"llsq", "det", "ba", "ht", "kmeans"}
    for r in records:
        assert r["objective_seconds"] > 0 and r["derivative_seconds"] > 0, r
        assert r["ratio"] == r["derivative_seconds"] / r["objective_seconds"]
        assert f"{r['eval']:<7} {r['workload']:<36}" in proc.stdout
