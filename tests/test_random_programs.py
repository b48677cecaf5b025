"""Random programs of the adgen subset, checked three ways (DESIGN.md section 9).

Each program from ``programs.programs()`` is written to a temporary file and
validated with ``adgen.check``: the compiled primal against CPython, the
tangent against central finite differences and the vector tangent against
scalar tangents, for every function of the module at the generated arguments.
On failure the program and the report table are printed.  Half the programs
with a ``prange`` loop (``Program.openmp``) are compiled with ``-fopenmp``, so
that their prange loops run in parallel (sums as OpenMP reductions, adjoints
of shared arrays accumulated atomically); the others run them in sequence.
Programs that take ``grad`` of a helper whose adjoint may keep a tape are not
checked in vector reverse mode (``Program.modes``), which refuses that.

The check runs in a child process (:class:`CheckWorker`), so a transpiler
that hangs or generated code that crashes fails one example instead of
taking the test session down.  The child is started by a fork server, not
forked from the test process: libgomp is not fork-safe, and a child forked
from a process that has run an OpenMP loop (tests/test_prange.py does, in
the test process) hangs in its first parallel loop.

Failures found this way are reduced by hand to small modules in
``tests/regressions/``; ``test_regression`` checks each of them with the
default inputs of ``adgen.check`` (in every mode, or in those that a ``# check
modes: ...`` line of the file names).

Environment: ``CI`` set makes the examples derandomized (the same programs
every run); ``ADGEN_RANDOM_EXAMPLES`` sets the number of programs (default
180, about two and a half minutes on two cores); ``ADGEN_RANDOM_SHRINK=1``
lets Hypothesis shrink a failing program (each step compiles one, so this
can take many minutes; tests/regressions/ holds programs reduced by hand).
"""

from __future__ import annotations

import glob
import multiprocessing
import os
import tempfile
import traceback
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from programs import Program, programs

EXAMPLES = int(os.environ.get("ADGEN_RANDOM_EXAMPLES", "180"))
SHRINK = os.environ.get("ADGEN_RANDOM_SHRINK", "") not in ("", "0")
TIMEOUT = 120.0  # seconds for one adgen.check (transpile, gcc, run)
REGRESSIONS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "regressions", "*.py")))


def _serve(conn: Any) -> None:
    import adgen

    while True:
        try:
            path, args, options = conn.recv()
        except EOFError:
            return
        try:
            report = adgen.check(path, args=args, **options)
            conn.send(("ok" if report.ok else "failed", report.table()))
        except Exception:  # noqa: BLE001 - any exception is a finding: report it, keep serving
            conn.send(("error", traceback.format_exc()))


class CheckWorker:
    """``adgen.check`` in a long-lived child process, restarted after a hang or a crash."""

    def __init__(self) -> None:
        self.proc: Any = None
        self.conn: Any = None

    def start(self) -> None:
        ctx = multiprocessing.get_context("forkserver")  # not fork: see the module docstring
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def check(self, path: str, args: dict[str, Any] | None = None,
              **options: Any) -> tuple[str, str]:
        """("ok" | "failed" | "error" | "timeout" | "crashed", report table or message);
        ``options`` go to ``adgen.check`` (``openmp=True``)."""
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.conn.send((path, args, options))
        if not self.conn.poll(TIMEOUT):
            self.stop()
            return "timeout", f"adgen.check did not finish within {TIMEOUT:.0f} s"
        try:
            return self.conn.recv()
        except EOFError:
            code = self.proc.exitcode if self.proc is not None else None
            self.stop()
            return "crashed", f"the checking process died (exit code {code})"


@pytest.fixture(scope="module")
def worker() -> Any:
    w = CheckWorker()
    yield w
    w.stop()


def check_program(w: CheckWorker, program: Program) -> None:
    with tempfile.TemporaryDirectory(prefix="adgen-random-") as d:
        path = program.write(d)
        options: dict[str, Any] = {"openmp": program.openmp}
        if program.modes is not None:
            options["modes"] = program.modes
        status, text = w.check(path, program.all_args, **options)
    if status != "ok":  # pytest shows this output with the failure
        print(program.source)
        print(f"arguments: {program.all_args!r}")
        print(f"compiled with -fopenmp: {program.openmp}")
        if program.modes is not None:
            print(f"modes checked: {', '.join(program.modes)}")
        print(text)
    assert status == "ok", f"{status} (the program is printed above)\n{text}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
          phases=[Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if SHRINK else []),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much, HealthCheck.large_base_example,
                                 HealthCheck.function_scoped_fixture])
@given(program=programs())
def test_random_program(worker: CheckWorker, program: Program) -> None:
    check_program(worker, program)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[os.path.basename(p) for p in REGRESSIONS])
def test_regression(worker: CheckWorker, path: str) -> None:
    """Each reduced program passes the checks (in the modes a ``# check modes: a, b`` line
    names, else all; with the independents a ``# check wrt: x, y`` line names, else every
    float), or, if it says ``# expect: rejected`` (a program outside the subset that adgen
    used to miscompile), gets a diagnostic."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    options: dict[str, Any] = {}
    for line in source.splitlines():
        for key in ("modes", "wrt"):
            if line.startswith(f"# check {key}:"):
                options[key] = tuple(m.strip() for m in line.split(":", 1)[1].split(","))
    status, text = worker.check(path, **options)
    if "# expect: rejected" in source:
        assert status == "error" and "AdgenError" in text, f"{status}\n{source}\n{text}"
    else:
        assert status == "ok", f"{status}\n{source}\n{text}"
