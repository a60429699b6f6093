"""``AdbDevice``: the ``phone_agent.device.interface.Device`` interface over ADB services.

Works over any ``ServiceOpener``: an ``AdbClient`` (WebUSB, the server's bridge to a network adbd,
TCP in CPython) or an ``AdbServerDevice`` (a phone held by an adb server). Commands are Android's own
(see ADB.md): getprop, ``wm size``, ``exec:screencap -p``, ``input``, ``monkey``, ``am``, ``pm``,
``dumpsys``, ``settings``, ``uiautomator dump``; files, installs and recording are ``dev_loop.py``'s.
Every call is bounded in time and fails with a
``DeviceError`` whose message says what went wrong and what to do.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

from phone_agent.adb.client import AdbConnectionLost, AdbError, AdbOutputTooLarge, ServiceOpener
from phone_agent.adb.dev_loop import DevLoopCalls
from phone_agent.adb.hierarchy import HierarchyServer, HierarchyUnavailable, JarSource
from phone_agent.adb.screen_info import SCREEN_INFO_COMMAND, parse_screen_info
from phone_agent.adb.services import SHELL_OUTPUT_MAX, SyncClient, exec_out, shell
from phone_agent.adb.sync_protocol import SyncError
from phone_agent.adb.ui_dump import UiDump, read_ui_dump
from phone_agent.device.interface import TREE_DUMP, TREE_SERVER, DeviceInfo, UiNode, UiTree, key_code
from phone_agent.device.png import (
    PNG_SIGNATURE,
    encode_png,
    read_raw_screencap,
)
from phone_agent.device.shell_args import command, for_device, package_name, quote, text_value
from phone_agent.device.shell_result import ShellResult
from phone_agent.errors import DeviceError, PhoneDisconnectedError, command_exited

ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
# Clipper (github.com/majido/clipper) sets the clipboard from a broadcast; KEYCODE_PASTE then pastes.
CLIPPER_PACKAGE = "ca.zgrs.clipper"
KEYCODE_PASTE = 279
UI_DUMP_PATH = "/sdcard/window_dump.xml"
LAUNCHER_CATEGORY = "android.intent.category.LAUNCHER"

# What the phone may send for one screenshot: a 4K screen's PNG is ~20-35 MiB at worst; more is refused.
SCREENCAP_MAX = 48 * 1024 * 1024
SCREEN_SIDE_MAX = 16384  # pixels a side a screenshot may say it has (8K is 7680)
COMMAND_TIMEOUT = 15.0
SCREENSHOT_TIMEOUT = 20.0
UI_DUMP_TIMEOUT = 30.0
DUMP_IDLE_BACKOFF_S = (0.25, 0.5, 1.0)  # "could not get idle state": retried after each of these

_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_PROP = re.compile(r"^\[([^\]]+)\]: \[(.*)\]$")
_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ ([^\s}]+)\}")
_INFO_PROPS = (
    "ro.product.model",
    "ro.product.brand",
    "ro.product.manufacturer",
    "ro.build.version.release",
    "ro.build.version.sdk",
    "ro.serialno",
)


def escape_input_text(text: str) -> str:
    """``text`` as one sh word for ``input text``: spaces as ``%s``, everything single-quoted."""
    return quote(text.replace(" ", "%s"))


def is_input_text_safe(text: str) -> bool:
    """Printable ASCII only: what ``input text`` can type."""
    return all(" " <= ch <= "~" for ch in text)


RECONNECT_REMEDY = "Check that the phone is connected and unlocked, then reconnect it."
CAP_REMEDY = (
    "The phone sent far more than a real answer holds (a broken or hostile phone, or a command that "
    "prints without end): ask for less (a narrower filter, sinceSeconds, a pull's maxBytes) or check the "
    "phone."
)


@contextlib.contextmanager
def phone_call(
    failed: str, *, timed_out: str = "", timeout_remedy: str = "", remedy: str = ""
) -> Iterator[None]:
    """The one mapping of a call's ADB and sync failures to ToolErrors, for every call to the phone.

    The connection gone: ``PhoneDisconnectedError`` ("No phone device connected."). A timeout:
    ``DeviceError(timed_out)`` when the call words its own, else as any failure. Any other ADB or sync
    failure: ``DeviceError(f"{failed}: {why}")`` (with ``remedy`` for ADB's, the default for sync's).
    """
    try:
        yield
    except AdbConnectionLost as exc:
        raise PhoneDisconnectedError(str(exc)) from None
    except AdbOutputTooLarge as exc:  # the cap named; the page stays as it was
        raise DeviceError(f"{failed}: {exc}", remedy=CAP_REMEDY, retryable=False) from None
    except TimeoutError as exc:  # AdbTimeoutError too
        if timed_out:
            raise DeviceError(timed_out, remedy=timeout_remedy) from None
        raise DeviceError(f"{failed}: {str(exc) or 'timed out'}", remedy=remedy) from None
    except AdbError as exc:
        raise DeviceError(f"{failed}: {exc}", remedy=remedy) from None
    except SyncError as exc:
        raise DeviceError(f"{failed}: {exc}") from None


def _check_screen_side(width: int, height: int) -> None:
    """A screenshot that says it is larger than any screen is refused before anything decodes it."""
    if not 0 < width <= SCREEN_SIDE_MAX or not 0 < height <= SCREEN_SIDE_MAX:
        raise DeviceError(
            f"the phone's screenshot says it is {width}x{height} pixels, over the cap of "
            f"{SCREEN_SIDE_MAX} pixels a side (no screen is that large; it was not decoded)",
            remedy=CAP_REMEDY,
            retryable=False,
        )


class AdbDevice(DevLoopCalls):
    """A phone as the tools and the agent use it. ``transport`` is ``usb``, ``tcp`` or ``adb-server``."""

    def __init__(
        self,
        opener: ServiceOpener,
        *,
        transport: str,
        serial: str = "",
        hierarchy_jar: JarSource | None = None,
        raw_screencap: bool = True,
    ) -> None:
        self.opener = opener
        self.transport = transport
        self.serial = serial
        self._info: DeviceInfo | None = None
        # Seconds a screenshot took each way (True: raw `screencap`, False: `-p`): the faster is used.
        # Without ``raw_screencap`` only `-p` (its raw time as infinite: never tried).
        self._screencap_s: dict[bool, float] = {} if raw_screencap else {True: math.inf}
        # u2.jar's hierarchy server reads the UI tree when the page has the jar; else `uiautomator dump`.
        self.hierarchy = HierarchyServer(opener, hierarchy_jar) if hierarchy_jar is not None else None

    # ----- plumbing

    async def _run(
        self,
        command: str,
        timeout: float = COMMAND_TIMEOUT,
        stdin: bytes | None = None,
        max_bytes: int = SHELL_OUTPUT_MAX,
    ) -> ShellResult:
        with phone_call(
            f"`{command}` failed",
            timed_out=f"the phone did not finish `{command}` within {timeout:g} s",
            timeout_remedy="Check that the phone is awake and responsive, then try again.",
            remedy=RECONNECT_REMEDY,
        ):
            async with asyncio.timeout(timeout + 1):
                return await shell(self.opener, command, stdin=stdin, timeout=timeout, max_bytes=max_bytes)

    async def _check(self, command: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """Run ``command``; its stdout, or DeviceError with its stderr when it fails."""
        result = await self._run(command, timeout)
        if result.exit_code not in (0, -1):
            raise command_exited(command, result.exit_code, result.stderr or result.stdout)
        return result.stdout.decode("utf-8", "replace")

    # ----- Device

    async def info(self) -> dict[str, Any]:
        """Model, brand, manufacturer, release, sdk, serial, screen size, transport."""
        return (await self.device_info()).to_json()

    async def device_info(self) -> DeviceInfo:
        props_text, size_text = await asyncio.gather(self._check("getprop"), self._check("wm size"))
        props: dict[str, str] = {}
        for line in props_text.splitlines():
            match = _PROP.match(line.strip())
            if match:
                props[match.group(1)] = match.group(2)
        missing = [p for p in _INFO_PROPS[:5] if p not in props]
        if missing:  # getprop without arguments not listing them: ask one by one
            values = await asyncio.gather(*(self._check(f"getprop {p}") for p in missing))
            props.update({p: v.strip() for p, v in zip(missing, values, strict=True)})
        sizes = {kind: (int(w), int(h)) for kind, w, h in _SIZE.findall(size_text)}
        width, height = sizes.get("Override") or sizes.get("Physical") or (0, 0)
        self._info = DeviceInfo(
            model=props.get("ro.product.model", ""),
            brand=props.get("ro.product.brand", ""),
            manufacturer=props.get("ro.product.manufacturer", ""),
            release=props.get("ro.build.version.release", ""),
            sdk=props.get("ro.build.version.sdk", ""),
            serial=props.get("ro.serialno") or self.serial,
            screen_width=width,
            screen_height=height,
            transport=self.transport,
        )
        return self._info

    async def screenshot_png(self) -> bytes:
        """The screen as PNG bytes, the faster of two ways as timed on this phone (``_raw_first``):
        ``exec:screencap``'s raw pixels written as PNG here (a phone PNG-encodes its screen slowly, but
        the raw pixels are ~10 MB to carry: ``device.png``), or ``exec:screencap -p``. Binary-safe."""
        raw_first = self._raw_first()
        loop = asyncio.get_running_loop()
        started = loop.time()
        png = await self._raw_screenshot_png() if raw_first else None
        if png is not None or raw_first:
            self._screencap_s[True] = self._timed(True, loop.time() - started if png else math.inf)
        if png is not None:
            return png
        started = loop.time()
        png = await self._png_screenshot()
        self._screencap_s[False] = self._timed(False, loop.time() - started)
        return png

    def _raw_first(self) -> bool:
        """Raw first until each way was timed once, then the faster (each timed anew when it is used)."""
        times = self._screencap_s
        if True not in times or False not in times:
            return True not in times
        return times[True] <= times[False]

    def _timed(self, raw: bool, seconds: float) -> float:
        """The way's time: smoothed over its calls (one slow call does not decide), an unreadable raw
        answer as infinite (never tried again)."""
        before = self._screencap_s.get(raw)
        if before is None or math.isinf(seconds) or math.isinf(before):
            return seconds
        return 0.7 * before + 0.3 * seconds

    async def _png_screenshot(self) -> bytes:
        """``exec:screencap -p``: the phone's own PNG, checked to be one of a believable size."""
        data = await self._screencap("screencap -p")
        if not data.startswith(PNG_SIGNATURE):
            shown = data[:200].decode("utf-8", "replace").strip()
            raise DeviceError(
                f"the phone did not return a PNG screenshot: {shown or 'empty answer'}",
                remedy="The screen may be protected (a secure window) or off; unlock the phone and retry.",
            )
        if data[12:16] == b"IHDR" and len(data) >= 24:
            # A few bytes may say "100 000 pixels square": decoding that would take the page down.
            _check_screen_side(int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))
        return data

    async def _raw_screenshot_png(self) -> bytes | None:
        """``screencap``'s raw pixels as a PNG; None when the answer is not one ``read_raw_screencap``
        reads (another pixel format, an error text)."""
        data = await self._screencap("screencap")
        raw = read_raw_screencap(data)
        if raw is None:
            return None
        _check_screen_side(raw.width, raw.height)
        return encode_png(raw.width, raw.height, data, raw.header) if raw.whole else None

    async def _screencap(self, command: str) -> bytes:
        with phone_call(
            "screenshot failed",
            timed_out=f"the phone took more than {SCREENSHOT_TIMEOUT:g} s for a screenshot",
            timeout_remedy="Check that the phone is awake and try again.",
            remedy=RECONNECT_REMEDY,
        ):
            return await exec_out(self.opener, command, timeout=SCREENSHOT_TIMEOUT, max_bytes=SCREENCAP_MAX)

    async def tap(self, x: int, y: int) -> None:
        await self._check(f"input tap {int(x)} {int(y)}")

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._check(f"input swipe {int(x)} {int(y)} {int(x)} {int(y)} {int(duration_ms)}")

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._check(
            f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}",
            timeout=COMMAND_TIMEOUT + duration_ms / 1000,
        )

    async def type_text(self, text: str) -> str:
        """ASCII through ``input text``; anything else through ADBKeyBoard, else clipboard and paste
        (Clipper), else DeviceError. Answers which way it went: ``input text``, ``ADBKeyBoard`` or
        ``clipboard``."""
        if not text or is_input_text_safe(text):
            if text:
                await self._check(f"input text {escape_input_text(text)}")
            return "input text"
        previous = await self._switch_to_adb_keyboard()
        if previous is not None:
            try:
                encoded = base64.b64encode(text.encode("utf-8")).decode()
                out = await self._check(f"am broadcast -a ADB_INPUT_B64 --es msg {encoded}")
                if "Broadcast completed" not in out:
                    raise DeviceError(f"ADBKeyBoard did not take the text: {out.strip()[:200]}")
            finally:
                # The person's own keyboard back: ADBKeyBoard shows none, so left selected it would
                # leave the phone without a keyboard. (The broadcast has committed the text by now.)
                if previous and previous != ADB_KEYBOARD_IME:
                    await self._check(command("ime", "set", previous))
            return "ADBKeyBoard"
        if await self._installed(CLIPPER_PACKAGE):
            await self._paste(text)
            return "clipboard"
        raise DeviceError(
            "this text has characters `input text` cannot type (non-ASCII), and neither ADBKeyBoard "
            "nor Clipper is installed",
            remedy="Install ADBKeyBoard (github.com/senzhk/ADBKeyBoard) on the phone (or Clipper, "
            "github.com/majido/clipper, for clipboard and paste), or type ASCII text only.",
            retryable=False,
        )

    async def _paste(self, text: str) -> None:
        """Type ``text`` by putting it on the clipboard (Clipper) and pasting it."""
        typed = for_device(text_value, text, "the text")
        out = await self._check(command("am", "broadcast", "-a", "clipper.set", "-e", "text", typed))
        if "Broadcast completed" not in out:
            raise DeviceError(f"Clipper did not take the text: {out.strip()[:200]}")
        await self._check(f"input keyevent {KEYCODE_PASTE}")

    async def _installed(self, package: str) -> bool:
        packages = await self._check(command("pm", "list", "packages", package))
        return f"package:{package}" in packages.split()

    async def _switch_to_adb_keyboard(self) -> str | None:
        """Make ADBKeyBoard the input method; the one it replaced ("" when none was set), or None
        when ADBKeyBoard is not installed."""
        enabled = (await self._check("ime list -s")).split()
        if ADB_KEYBOARD_IME not in enabled:
            if not await self._installed(ADB_KEYBOARD_PACKAGE):
                return None
            await self._check(f"ime enable {ADB_KEYBOARD_IME}")
        current = (await self._check("settings get secure default_input_method")).strip()
        if current == "null":
            current = ""
        if current != ADB_KEYBOARD_IME:
            await self._check(f"ime set {ADB_KEYBOARD_IME}")
        return current

    async def press_key(self, key: str) -> None:
        try:
            code = key_code(key)
        except ValueError as exc:
            raise DeviceError(
                str(exc), remedy="Use a key name such as back, home or enter.", retryable=False
            ) from None
        await self._check(f"input keyevent {code}")

    async def delete_chars(self, count: int) -> None:
        await self.shell("input keyevent KEYCODE_MOVE_END " + " ".join(["KEYCODE_DEL"] * count))

    async def open_app(self, package: str) -> None:
        package = for_device(package_name, package, "the app")
        result = await self._run(command("monkey", "-p", package, "-c", LAUNCHER_CATEGORY, 1))
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        if result.exit_code not in (0, -1) or "No activities found" in output or "monkey aborted" in output:
            raise DeviceError(
                f"could not open {package}: it is not installed or has no launcher activity",
                remedy="List the installed apps and use one of their package names.",
                retryable=False,
            )

    async def stop_app(self, package: str) -> None:
        package = for_device(package_name, package, "the app")
        result = await self.shell(command("am", "force-stop", package))
        if result.exit_code not in (0, -1):
            detail = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[:200]
            raise DeviceError(f"`am force-stop {package}` failed: {detail}")

    async def open_url(self, url: str) -> None:
        result = await self.shell(command("am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url))
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        if result.exit_code not in (0, -1) or "Error" in output:
            raise DeviceError(
                f"no app on the phone opened {url}: {output.strip()[:200]}",
                remedy="Check the URL; for an app link, install the app that handles it.",
                retryable=False,
            )

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        out = await self._check("pm list packages -3" if third_party_only else "pm list packages")
        return sorted(line[8:].strip() for line in out.splitlines() if line.startswith("package:"))

    async def current_app(self) -> str | None:
        # grep on the phone: a real phone's window dump is 100–300 kB, of which one line is wanted.
        result = await self._run("dumpsys window | grep mCurrentFocus")
        if result.exit_code not in (0, 1, -1):  # grep answers 1 when no window has the focus
            raise command_exited("dumpsys window", result.exit_code, result.stderr or result.stdout)
        matches = _FOCUS.findall(result.stdout.decode("utf-8", "replace"))
        return matches[-1] if matches else None

    async def ui_nodes(self) -> list[UiNode]:
        return (await self.ui_tree()).nodes

    async def ui_tree(self) -> UiTree:
        """The screen's nodes from the hierarchy server (u2.jar, one HTTP round trip), else from
        ``uiautomator dump``; which one read them, why the server was restarted or not used, and what
        of a tree past the reader's bounds was left out."""
        server = self.hierarchy
        if server is None:
            return _tree(await self._dump_nodes(), TREE_DUMP)
        if not server.usable():
            note = f"the hierarchy server is not used for now: {server.failure}"
            return _tree(await self._dump_nodes(), TREE_DUMP, note)
        try:
            with phone_call("the hierarchy server failed", remedy=RECONNECT_REMEDY):
                xml = await server.dump()
        except HierarchyUnavailable as exc:
            note = f"the hierarchy server failed, so uiautomator dump read the screen: {exc}"
            return _tree(await self._dump_nodes(), TREE_DUMP, note)
        note = f"the hierarchy server was restarted: {server.restart_reason}" if server.restart_reason else ""
        return _tree(read_ui_dump(xml), TREE_SERVER, note)

    async def wait_settled(self, timeout_ms: int) -> bool | None:
        """The hierarchy server's wait for idle (the screen's accessibility events quiet), when it
        runs; None when nothing on the phone can tell (it is not running)."""
        server = self.hierarchy
        if server is None or not server.up:  # a wait never starts it (the next read does)
            return None
        try:
            with phone_call("the hierarchy server failed", remedy=RECONNECT_REMEDY):
                return await server.wait_idle(timeout_ms)
        except HierarchyUnavailable:
            return None

    async def _dump_nodes(self) -> UiDump:
        """``uiautomator dump`` to a file and ``cat`` it in the same shell (one round trip to the phone
        instead of a dump and a sync pull); "could not get idle state" (the screen animates) is
        retried with a growing backoff."""
        backoff = DUMP_IDLE_BACKOFF_S
        for attempt in range(1, len(backoff) + 2):
            result = await self._run(
                f"uiautomator dump {UI_DUMP_PATH} && cat {UI_DUMP_PATH}", timeout=UI_DUMP_TIMEOUT
            )
            start = result.stdout.find(b"<?xml")
            if start < 0:
                start = result.stdout.find(b"<hierarchy")
            head = result.stdout if start < 0 else result.stdout[:start]
            message = (head + result.stderr).decode("utf-8", "replace")
            if "idle state" in message and attempt <= len(backoff):
                await asyncio.sleep(backoff[attempt - 1])  # a retry's backoff, not a settle wait
                continue
            if result.exit_code not in (0, -1) or "dumped to" not in message:
                raise DeviceError(
                    f"uiautomator could not dump the screen: {message.strip()[:300] or 'no output'}",
                    remedy="Wait for animations to settle (or turn them off in Developer options) and retry.",
                )
            break
        if start >= 0:
            return read_ui_dump(result.stdout[start:].decode("utf-8", "replace"))
        # The dump said it wrote the file but the shell did not show it: read it the other way.
        return read_ui_dump(await self._pull_text(UI_DUMP_PATH))

    async def screen_info(self) -> dict[str, Any]:
        result = await self.shell(SCREEN_INFO_COMMAND)
        info = parse_screen_info(result.stdout.decode("utf-8", "replace"))
        if not info["width"]:
            shown = result.stdout.decode("utf-8", "replace").strip()[:200]
            raise DeviceError(f"the phone did not say its screen size: {shown or 'no answer'}")
        return info

    async def set_orientation(self, orientation: str) -> None:
        rotation = 0 if orientation == "portrait" else 1
        result = await self.shell(
            f"settings put system accelerometer_rotation 0 && settings put system user_rotation {rotation}"
        )
        if result.exit_code not in (0, -1):
            detail = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[:200]
            raise DeviceError(f"the phone refused to rotate: {detail}")

    async def _pull_text(self, path: str) -> str:
        with phone_call(f"could not read {path} from the phone", remedy=RECONNECT_REMEDY):
            sync = await SyncClient.open(self.opener, timeout=UI_DUMP_TIMEOUT)
            async with sync:
                data = await sync.pull(path, limit=SHELL_OUTPUT_MAX)
        return data.decode("utf-8", "replace")

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult:
        return await self._run(command, timeout=timeout_ms / 1000)

    async def push(self, data: bytes, path: str, mode: int = 0o644, timeout: float = 120.0) -> None:
        """Write a file on the phone (sync SEND)."""
        with phone_call(f"could not write {path} on the phone"):
            async with await SyncClient.open(self.opener, timeout=timeout) as sync:
                async with asyncio.timeout(timeout):
                    await sync.push(data, path, mode)

    async def pull(self, path: str, timeout: float = 120.0, limit: int = SHELL_OUTPUT_MAX) -> bytes:
        """Read a file from the phone (sync RECV); more than ``limit`` bytes is a DeviceError."""
        with phone_call(f"could not read {path} from the phone"):
            async with await SyncClient.open(self.opener, timeout=timeout) as sync:
                async with asyncio.timeout(timeout):
                    return await sync.pull(path, limit=limit)


def _tree(dump: UiDump, source: str, note: str = "") -> UiTree:
    """A dump read as a ``UiTree``: the reader's note (what it left out) after the source's."""
    return UiTree(dump.nodes, source, "; ".join(part for part in (note, dump.note) if part), dump.rotation)


__all__ = ["AdbDevice", "escape_input_text", "is_input_text_safe"]
