"""Fixtures for the flow tests: the page's one dispatch on the test's simulated phone (``sim``, from
tests/conftest.py; over the project's ADB client), and Debian's adb connected to the same phone, to
check what the flows did from outside."""

from __future__ import annotations

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.tools.dispatch import ToolDispatcher


@pytest.fixture
def dispatcher(client) -> ToolDispatcher:
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp")
    return service


class PhoneByAdb:
    """Debian's adb on the simulated phone: what a person would check by hand."""

    def __init__(self, adb, serial: str) -> None:
        self.adb, self.serial = adb, serial

    async def shell(self, command: str) -> str:
        return (await self.adb.output("-s", self.serial, "shell", command)).decode()

    async def wifi_on(self) -> bool:
        return "Wi-Fi is enabled" in await self.shell("dumpsys wifi")

    async def focused_package(self) -> str:
        for line in (await self.shell("dumpsys window")).splitlines():
            if "mCurrentFocus" in line and "/" in line:
                return line.split()[-1].split("/")[0].rstrip("}")
        return ""

    async def screen_texts(self) -> str:
        await self.shell("uiautomator dump /sdcard/flows.xml")
        return await self.shell("cat /sdcard/flows.xml")


@pytest.fixture
def by_adb(debian_adb, adb_serial) -> PhoneByAdb:
    return PhoneByAdb(debian_adb, adb_serial)
