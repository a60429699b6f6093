"""Fixtures of the farm tests: one real nats-server per module, on free loopback ports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.farm.support import FarmBroker


@pytest.fixture(scope="module")
def broker() -> Iterator[FarmBroker]:
    farm = FarmBroker()
    farm.start()
    try:
        yield farm
    finally:
        farm.stop()
