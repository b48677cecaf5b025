"""Random programs of the adgen subset, checked three ways (DESIGN.md section 9).

Each program from ``programs.programs()`` is written to a temporary file and
validated with ``adgen.check``: the compiled primal against CPython, the
tangent against central finite differences and the vector tangent against
scalar tangents, for every function of the module at the generated arguments.

Failures found this way are shrunk by hand into small modules under
``tests/regressions/``; ``test_regression`` checks each of them (with the
default random inputs of ``adgen.check``).

Environment: ``CI`` set makes the examples derandomized (the same programs
every run); ``ADGEN_RANDOM_EXAMPLES`` overrides the number of programs.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, note, settings

import adgen

sys.path.insert(0, os.path.dirname(__file__))
from programs import Program, programs  # noqa: E402

EXAMPLES = int(os.environ.get("ADGEN_RANDOM_EXAMPLES", "80"))
REGRESSIONS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "regressions", "*.py")))


def check_program(program: Program) -> None:
    with tempfile.TemporaryDirectory(prefix="adgen-random-") as d:
        path = program.write(d)
        note(program.source)
        try:
            report = adgen.check(path, args=program.all_args)
        except Exception:
            print(program.source)
            raise
        if not report.ok:
            print(program.source)
            print(report.table())
        assert report.ok, f"\n{program.source}\n{report.table()}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much, HealthCheck.large_base_example],
          print_blob=True)
@given(programs())
def test_random_program(program: Program) -> None:
    check_program(program)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[os.path.basename(p) for p in REGRESSIONS])
def test_regression(path: str) -> None:
    report = adgen.check(path)
    assert report.ok, f"\n{open(path).read()}\n{report.table()}"
