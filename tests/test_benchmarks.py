"""benchmarks/run.py end to end, on its smallest settings.

Runs the benchmark script as a user would, on two cheap problems (the scalar
sincos, with the C driver row, and logreg), adgen only (JAX and PyTorch are
optional and not needed here), and checks the JSON records it writes: their
keys and types, and that every derivative check passed.  No timing is
asserted: the times only have to be positive numbers.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

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


def load_script(path: Path) -> Any:
    """A benchmark script as a module (its main() takes argv), without running it."""
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run_py() -> Any:
    return load_script(RUN)


def usage_error(main: Callable[[list[str]], Any], argv: list[str],
                capsys: pytest.CaptureFixture[str]) -> str:
    """main(argv) must stop at the arguments: exit code 2; returns the message."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2, argv
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--reps", "0"], "--reps: 0 is not between 1 and 1000"),  # it ran the default 15
    (["--reps", "-1"], "--reps: -1 is not between 1 and 1000"),  # a StatisticsError
    (["--reps", "1001", "--tools", "c"], "--reps: 1001 is not between 1 and 1000"),  # after the build
    (["--threads", "0"], "--threads: 0 is not a number of threads"),  # torch "failed to import"
    (["--tools", "c", "--only", "gmm"], "nothing to run: no problem of --only (gmm)"),
    (["--only", "rosenbrock", "--tools", "adgen"], "nothing to run: no problem of --only"),
    (["--only", ","], "nothing to run: --only names no problem"),  # an empty table, exit 0
    (["--tools", ","], "nothing to run: --tools names no tool"),
])
def test_run_rejects_bad_options(run_py: Any, argv: list[str], message: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert message in usage_error(run_py.main, ["--quick", *argv], capsys)


def test_run_rejects_unwritable_paths(run_py: Any, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    # said before the run (they were a traceback after it, or after the C build's start)
    argv = ["--quick", "--only", "sincos", "--tools", "c,adgen"]
    err = usage_error(run_py.main, argv + ["--build-dir", str(tmp_path / "build"),
                                           "--json", str(tmp_path / "no" / "r.json")], capsys)
    assert "--json: cannot write" in err
    (tmp_path / "file").write_text("")
    err = usage_error(run_py.main, argv + ["--build-dir", str(tmp_path / "file" / "build")], capsys)
    assert "--build-dir: cannot create" in err and "Traceback" not in err


def test_run_xla_threads(run_py: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # one thread: Eigen's pool off; more: XLA's own threads, and the header says so (XLA has no
    # flag for a number: it claimed "4 threads"); an XLA_FLAGS of the user is kept, and the
    # header says so (it claimed 1 thread)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert run_py.set_xla_flags(1) == "1 thread"
    assert os.environ["XLA_FLAGS"] == ("--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    monkeypatch.delenv("XLA_FLAGS")
    assert run_py.set_xla_flags(4).startswith("XLA's own threads (all cores")
    assert "XLA_FLAGS" not in os.environ
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    assert "XLA_FLAGS of the environment kept" in run_py.set_xla_flags(1)
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x"


def test_run_failed_checks_and_json(run_py: Any) -> None:
    # a C driver row failing its reference check says the reference tolerance (it said FD_TOL)
    c_row = {"check_against": "reference and central differences", "check_error": 1.66e-7,
             "ref_error": 1.66e-7, "fd_error": 1e-9, "value_error": 0.0}
    assert run_py.failed_checks(c_row) == "reference error 1.66e-07 (tolerance 1e-07)"
    c_row.update(ref_error=0.0, value_error=1e-10)
    assert run_py.failed_checks(c_row) == "value error 1.00e-10 (tolerance 1e-12)"
    peer_row = {"check_against": "adgen", "check_error": 1e-3, "value_error": 1e-10}
    assert run_py.failed_checks(peer_row) == "error 1.00e-03 (tolerance 1e-06)"
    # an infinite or NaN error is null in the JSON (it wrote Infinity, which is not JSON)
    text = run_py.json_text([{"check_error": math.inf, "fd_error": math.nan, "ratio": 1.5}])
    assert json.loads(text) == [{"check_error": None, "fd_error": None, "ratio": 1.5}]


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
        assert f"{r['eval']:<7} {r['workload']} " in proc.stdout
    # the columns line up: the workload column is as wide as its widest entry (it was 36 wide,
    # and ht's 37-character workloads shifted their rows)
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 + len(records) and len({len(line) for line in lines}) == 1, proc.stdout


@pytest.fixture(scope="module")
def ratios_py() -> Any:
    return load_script(ROOT / "benchmarks" / "gradbench" / "ratios.py")


@pytest.mark.parametrize("argv, message", [
    (["--only", "nope"], "--only: unknown eval(s) nope"),  # it printed the header, exit 0
    (["--only", "det, nope"], "--only: unknown eval(s) nope ("),  # names stripped: det is known
    (["--only", ","], "--only names no eval"),
    (["--min-runs", "0"], "--min-runs: 0 is not 1 or more"),
    (["--min-seconds", "nan"], "--min-seconds: nan is not a number of seconds"),  # a traceback
    (["--min-seconds", "-1"], "--min-seconds: -1.0 is not a number of seconds"),
    (["--json", "/nonexistent-dir/ratios.json"], "--json: cannot write"),  # after the run
])
def test_gradbench_ratios_rejects_bad_options(ratios_py: Any, argv: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert message in usage_error(ratios_py.main, ["--quick", *argv], capsys)


def test_gradbench_ratios_columns(ratios_py: Any) -> None:
    # every workload of the full run, the widest (37 characters) included, in its column
    labels = [w[1] for w in ratios_py.workloads(False)]
    width = max(len("workload"), *map(len, labels))
    header = ratios_py.table_line("eval", "workload", "objective", "derivative", "ratio", width)
    for label in labels:
        line = ratios_py.table_line("ht", label, "    1.000ms", "    2.000ms", "  2.00", width)
        assert len(line) == len(header) and line.endswith("  2.00"), line


@pytest.mark.parametrize("argv, message", [
    (["--reps", "0"], "--reps: 0 is not 1 or more"),  # an UnboundLocalError
    (["--steps", "0"], "--steps: 0 is not 1 or more"),  # ran silently
    (["--snapshots", "abc"], "--snapshots: 'abc' is not a list of integers"),  # a ValueError
    (["--snapshots="], "--snapshots: '' is not a list of integers"),
    (["--snapshots", "20,0"], "binomial(k) takes k >= 1 snapshots"),  # adgen's LoadError
])
def test_checkpointing_rejects_bad_options(argv: list[str], message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    script = load_script(ROOT / "benchmarks" / "checkpointing.py")
    assert message in usage_error(script.main, argv, capsys)


@pytest.mark.parametrize("argv, message", [
    (["--reps", "0"], "--reps: 0 is not 1 or more"),  # a StatisticsError
    (["--n", "3"], "--n: 3 is less than 5"),  # a zero-size array (n // 5 == 0)
    (["--inputs", "0"], "--inputs: 0 is not 1 or more"),  # generated invalid source
    (["--inputs", "-2"], "--inputs: -2 is not 1 or more"),  # a NumPy traceback
])
def test_mixed_mode_rejects_bad_options(argv: list[str], message: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    script = load_script(ROOT / "benchmarks" / "mixed_mode.py")
    assert message in usage_error(script.main, argv, capsys)


def test_mixed_mode_quick_keeps_explicit_options() -> None:
    # --quick fills in what is not given (it replaced an explicit --n and --reps)
    script = load_script(ROOT / "benchmarks" / "mixed_mode.py")
    args = script.parse_args(["--quick", "--reps", "7", "--n", "5000"])
    assert (args.n, args.reps) == (5000, 7)
    args = script.parse_args(["--quick", "--n", "5000"])
    assert (args.n, args.reps) == (5000, 3)
    args = script.parse_args([])
    assert (args.n, args.reps) == (1_000_000, 9)
