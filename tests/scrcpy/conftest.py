"""Fixtures for the scrcpy tests: the vendored server jar, and scrcpy's app_process on every ``sim``
(the test's phone and our client online with it, ``client``, are in tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import ROOT, vendored

JAR_PATH = ROOT / "static" / "vendor" / "scrcpy" / "scrcpy-server"


@pytest.fixture(scope="session")
def jar() -> bytes:
    return vendored(JAR_PATH, "the scrcpy server")


@pytest.fixture
def sim_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Every phone of this folder runs scrcpy's app_process (a module's ``SIM_OPTIONS`` add to it)."""
    return {"scrcpy": True, **getattr(request.module, "SIM_OPTIONS", {})}
