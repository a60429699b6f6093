"""A ``Device`` over the simulated phone (``VirtualPhone``) in this process, for the agent's tests.

It drives the phone through the same Android commands an ADB device sends (``input``, ``monkey``,
``uiautomator dump``, ``pm``), so taps hit-test, text goes into the focused field, and the phone's
``state()`` tells what really happened. ``disconnect()`` makes every later call fail like a phone
that was unplugged.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from phone_agent.adb.screen_info import parse_screen_info
from phone_agent.adb.ui_dump import parse_ui_dump
from phone_agent.device.interface import UiNode, key_code
from phone_agent.device.shell_result import ShellResult
from phone_agent.errors import DeviceError
from phone_agent.sim.android.phone import VirtualPhone


class DictFileStore:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def read_file(self, path: str) -> bytes:
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(path) from None

    def write_file(self, path: str, data: bytes) -> None:
        self.files[path] = data


class SimDevice:
    def __init__(self, phone: VirtualPhone | None = None) -> None:
        self.phone = phone or VirtualPhone()
        self.phone.clock = lambda: "12:00"
        self.fs = DictFileStore()
        self.connected = True
        self.calls: list[str] = []
        self.fail_after: int | None = None  # disconnect after this many more calls

    def disconnect(self) -> None:
        self.connected = False

    def _check(self, name: str) -> None:
        self.calls.append(name)
        if self.fail_after is not None:
            self.fail_after -= 1
            if self.fail_after < 0:
                self.connected = False
        if not self.connected:
            raise DeviceError("device offline: the phone was disconnected", retryable=False)

    async def _run(self, *argv: str) -> ShellResult:
        await asyncio.sleep(0)
        result = self.phone.run(list(argv), b"", self.fs)
        return ShellResult(result.stdout, result.stderr, result.exit_code)

    async def info(self) -> dict[str, Any]:
        self._check("info")
        return {"model": "sdk_gphone64", "brand": "google", "release": "14", "sdk": "34"}

    async def screenshot_png(self) -> bytes:
        self._check("screenshot_png")
        await asyncio.sleep(0)
        return self.phone.screenshot_png()

    async def tap(self, x: int, y: int) -> None:
        self._check("tap")
        await self._run("input", "tap", str(x), str(y))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._check("long_press")
        await self._run("input", "swipe", str(x), str(y), str(x), str(y), str(duration_ms))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._check("swipe")
        await self._run("input", "swipe", str(x1), str(y1), str(x2), str(y2), str(duration_ms))

    async def type_text(self, text: str) -> None:
        self._check("type_text")
        result = await self._run("input", "text", text.replace(" ", "%s"))
        if result.exit_code != 0:
            raise DeviceError(f"input text failed: {result.stderr.decode(errors='replace').strip()}")

    async def press_key(self, key: str) -> None:
        self._check("press_key")
        await self._run("input", "keyevent", key_code(key))

    async def delete_chars(self, count: int) -> None:
        self._check("delete_chars")
        await self._run("input", "keyevent", "KEYCODE_MOVE_END", *["KEYCODE_DEL"] * count)

    async def open_app(self, package: str) -> None:
        self._check("open_app")
        result = await self._run("monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1")
        if result.exit_code != 0:
            raise DeviceError(f"no launchable app {package!r} on the phone")

    async def stop_app(self, package: str) -> None:
        self._check("stop_app")
        result = await self._run("am", "force-stop", package)
        if result.exit_code != 0:
            detail = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[:200]
            raise DeviceError(f"`am force-stop {package}` failed: {detail}")

    async def open_url(self, url: str) -> None:
        self._check("open_url")
        result = await self._run("am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url)
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        if result.exit_code != 0 or "Error" in output:
            raise DeviceError(f"no app on the phone opened {url}: {output.strip()[:200]}")

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        self._check("list_apps")
        result = await self._run("pm", "list", "packages")
        return [line[8:].strip() for line in result.text.splitlines() if line.startswith("package:")]

    async def current_app(self) -> str | None:
        self._check("current_app")
        package, activity = self.phone.focused_activity()
        return f"{package}/{activity}"

    async def ui_nodes(self) -> list[UiNode]:
        self._check("ui_nodes")
        result = await self._run("uiautomator", "dump", "/dev/tty")
        text = result.text
        end = text.find("</hierarchy>")
        return parse_ui_dump(text[: end + len("</hierarchy>")] if end >= 0 else text)

    async def screen_info(self) -> dict[str, Any]:
        self._check("screen_info")
        asked = (["wm", "size"], ["wm", "density"], ["dumpsys", "display"])
        info = parse_screen_info("".join([(await self._run(*argv)).text for argv in asked]))
        if not info["width"]:
            raise DeviceError("the phone did not say its screen size: no answer")
        return info

    async def set_orientation(self, orientation: str) -> None:
        self._check("set_orientation")
        await self._run("settings", "put", "system", "accelerometer_rotation", "0")
        rotation = "0" if orientation == "portrait" else "1"
        await self._run("settings", "put", "system", "user_rotation", rotation)

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult:
        self._check("shell")
        return await self._run(*shlex.split(command))
