"""Shared test setup: the --update-goldens flag and an isolated build cache."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/golden/* from the current generator (review the diff)")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def pytest_configure(config: pytest.Config) -> None:
    # one build cache per test session, so tests never depend on a user's cache
    if "ADGEN_CACHE_DIR" not in os.environ:
        os.environ["ADGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="adgen-test-cache-")
