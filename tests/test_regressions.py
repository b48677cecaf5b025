"""Programs that once went wrong (most found by the random program generator) stay right."""

from __future__ import annotations

from pathlib import Path

import pytest

import adgen

REGRESSIONS = sorted((Path(__file__).parent / "regressions").glob("*.py"))


@pytest.mark.parametrize("program", REGRESSIONS, ids=lambda p: p.stem)
def test_regression(program: Path) -> None:
    report = adgen.check(str(program), modes=("forward", "vector-forward"))
    assert report.rows and report.ok, "\n" + report.table()
