"""The developer's loop over ADB, as ``AdbDevice`` offers it: files over the sync protocol (push, pull,
list, with Android's refusals as ``file_not_found`` and ``permission_denied``), APK install (pushed
over sync to /data/local/tmp, then ``pm install``; a large one streamed into an install session on the
shell's stdin, ``cmd package install -S SIZE``), the clipboard through Clipper where installed,
and screen recording with the phone's own ``screenrecord`` (started in a shell that stays open,
stopped with SIGINT so the MP4 is finished, pulled back over sync).

``DevLoopCalls`` is a mixin of ``AdbDevice`` (``adb/device.py``): it uses its ``opener`` and its
``_run``/``_check``. Every call is bounded in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from typing import Any

from phone_agent import errors
from phone_agent.adb.client import (
    AdbConnectionLost,
    AdbError,
    AdbOutputTooLarge,
    ServiceOpener,
    ServiceStream,
)
from phone_agent.adb.services import SyncClient
from phone_agent.adb.sync_protocol import SyncError, SyncStat
from phone_agent.device.install import install_failure
from phone_agent.device.interface import ChunkStream, ChunkWriter, FileEntry, file_type
from phone_agent.device.shell_args import command, for_device, text_value
from phone_agent.device.shell_result import ShellResult
from phone_agent.errors import DeviceError, PhoneDisconnectedError, ToolError

TRANSFER_TIMEOUT = 600.0  # a 256 MiB push over USB 2 takes well under this
INSTALL_TIMEOUT = 180.0
STREAMED_INSTALL_MIN = 8 * 1024 * 1024  # from this size an APK is streamed into an install session
SCRATCH_DIR = "/data/local/tmp"
RECORDING_PATH = f"{SCRATCH_DIR}/phone-agent-recording.mp4"
RECORDING_STOP_TIMEOUT = 15.0
# The phone's errno values (Linux's): not the errno module's, which in Pyodide is Emscripten's.
LINUX_EPERM, LINUX_EACCES = 1, 13


def _sync_failure(path: str, exc: SyncError) -> ToolError:
    """A sync FAIL as the tools answer it: missing → file_not_found, refused → permission_denied."""
    text = str(exc)
    if "No such file" in text or "Not a directory" in text:
        return errors.file_not_found(path)
    if "Permission denied" in text or "Read-only file system" in text or "Operation not permitted" in text:
        return errors.permission_denied(path, text.split(": ", 1)[-1])
    return DeviceError(f"the phone could not transfer {path}: {text}", retryable=False)


def _stat_failure(path: str, info: SyncStat) -> ToolError | None:
    if info.error in (LINUX_EACCES, LINUX_EPERM):
        return errors.permission_denied(path)
    if info.error or info.mode == 0:
        return errors.file_not_found(path)
    return None


class DevLoopCalls:
    """Files, APK install, clipboard and recording for ``AdbDevice``."""

    opener: ServiceOpener
    _recording: tuple[ServiceStream, asyncio.Task[bytes]] | None = None

    async def _run(self, command: str, timeout: float = 15.0, stdin: bytes | None = None) -> ShellResult:
        raise NotImplementedError

    async def _check(self, command: str, timeout: float = 15.0) -> str:
        raise NotImplementedError

    async def _sync_call(self, path: str, work: Any, timeout: float = TRANSFER_TIMEOUT) -> Any:
        """Run ``work(sync)`` in a fresh sync session, mapping its failures to the tools' codes."""
        try:
            async with asyncio.timeout(timeout):
                async with await SyncClient.open(self.opener, timeout=timeout) as sync:
                    return await work(sync)
        except AdbConnectionLost as exc:
            raise PhoneDisconnectedError(str(exc)) from None
        except TimeoutError:
            raise DeviceError(f"the transfer of {path} did not finish within {timeout:g} s") from None
        except SyncError as exc:
            raise _sync_failure(path, exc) from None
        except AdbOutputTooLarge as exc:
            raise DeviceError(
                f"the transfer of {path} stopped: {exc}",
                remedy="If the file is really that large (list_files shows its size), ask for more with "
                "pull_file's maxBytes; otherwise the phone is sending more than the file holds.",
                retryable=False,
            ) from None
        except AdbError as exc:
            raise DeviceError(f"the transfer of {path} failed: {exc}") from None

    async def push_file(
        self,
        data: bytes | ChunkStream,
        path: str,
        mode: int = 0o644,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if isinstance(data, bytes | bytearray | memoryview):
            await self._sync_call(path, lambda sync: sync.push(bytes(data), path, mode, progress=progress))
        else:
            stream = data
            await self._sync_call(
                path, lambda sync: sync.push_stream(stream.read, stream.size, path, mode, progress=progress)
            )

    async def pull_file(self, path: str, limit: int, into: ChunkWriter | None = None) -> bytes:
        async def work(sync: SyncClient) -> bytes:
            info = await sync.stat(path)
            failure = _stat_failure(path, info)
            if failure is not None:
                raise failure
            if info.is_dir:
                raise errors.invalid_argument(
                    "pull_file", "devicePath", f"is a directory ({path})", "Call list_files for its entries."
                )
            if info.size > limit:
                raise errors.invalid_argument(
                    "pull_file",
                    "devicePath",
                    f"is a file of {info.size} bytes, over this pull's cap of {limit} bytes (maxBytes)",
                    "Call pull_file with a larger maxBytes: up to 64 MiB inline, or with `path` through "
                    "phone-agent mcp (stdio), which writes it to a file, as much as it holds.",
                )
            if into is not None:
                await sync.pull_into(path, into, limit)
                return b""
            return await sync.pull(path, limit=limit)

        return await self._sync_call(path, work)

    async def list_files(self, path: str) -> list[FileEntry]:
        async def work(sync: SyncClient) -> list[FileEntry]:
            info = await sync.stat(path)
            failure = _stat_failure(path, info)
            if failure is not None:
                raise failure
            if not info.is_dir:
                name = path.rstrip("/").rsplit("/", 1)[-1]
                return [FileEntry(name, file_type(info.mode), info.size, info.mode & 0o7777, info.mtime)]
            entries = await sync.list(path)
            return [
                FileEntry(e.name, file_type(e.stat.mode), e.stat.size, e.stat.mode & 0o7777, e.stat.mtime)
                for e in entries
                if e.name not in (".", "..")
            ]

        return await self._sync_call(path, work, timeout=60.0)

    async def install_apk(
        self,
        data: bytes,
        replace: bool = True,
        grant_permissions: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        flags = " -r" if replace else ""
        flags += " -g" if grant_permissions else ""
        if len(data) >= STREAMED_INSTALL_MIN and "shell_v2" in self.opener.features:
            # A large APK goes straight into an install session, fed on stdin (`cmd package install -S`,
            # as `adb install` does): no copy in /data/local/tmp, no second pass over the bytes.
            if progress is not None:
                progress(0, len(data))
            result = await self._run(
                f"cmd package install{flags} -S {len(data)}", timeout=INSTALL_TIMEOUT, stdin=data
            )
            if progress is not None:
                progress(len(data), len(data))
            failure = install_failure((result.stdout + result.stderr).decode("utf-8", "replace"))
            if failure is not None:
                raise failure
            return
        remote = f"{SCRATCH_DIR}/phone-agent-{secrets.token_hex(6)}.apk"
        await self.push_file(data, remote, progress=progress)
        try:
            result = await self._run(f"pm install{flags} {remote}", timeout=INSTALL_TIMEOUT)
        finally:
            with contextlib.suppress(ToolError):
                await self._run(f"rm -f {remote}")
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        failure = install_failure(output)
        if failure is not None:
            raise failure

    async def get_clipboard(self) -> str:
        raise errors.unsupported(
            "reading the phone's clipboard needs scrcpy (Android lets only the focused app read it)",
            "Turn on 'Live view through scrcpy' in the phone-agent page's Settings and call again once "
            "the live view shows the phone.",
        )

    async def set_clipboard(self, text: str, paste: bool = False) -> str:
        packages = await self._check("pm list packages ca.zgrs.clipper")
        if "package:ca.zgrs.clipper" not in packages.split():
            raise errors.unsupported(
                "setting the phone's clipboard needs scrcpy or the Clipper app",
                "Turn on 'Live view through scrcpy' in the phone-agent page's Settings, or install "
                "Clipper (github.com/majido/clipper) on the phone.",
            )
        typed = for_device(text_value, text, "the text")
        out = await self._check(command("am", "broadcast", "-a", "clipper.set", "-e", "text", typed))
        if "Broadcast completed" not in out:
            raise DeviceError(f"Clipper did not take the text: {out.strip()[:200]}")
        if paste:
            await self._check("input keyevent 279")
        return "Clipper"

    async def pinch(self, x: int, y: int, scale: float, duration_ms: int = 400) -> None:
        raise errors.unsupported(
            "pinch needs two fingers at once, which Android's `input` command cannot inject",
            "Turn on 'Live view through scrcpy' in the phone-agent page's Settings (scrcpy injects "
            "multi-touch) and call pinch again once the live view shows the phone.",
        )

    async def start_recording(self, max_seconds: int) -> str:
        if self._recording is not None and not self._recording[1].done():
            raise errors.invalid_argument(
                "start_recording",
                "maxSeconds",
                "cannot start a second recording while one runs",
                "Call stop_recording first.",
            )
        command = f"screenrecord --time-limit {int(max_seconds)} {RECORDING_PATH}"
        try:
            stream = await self.opener.open_stream(f"shell:{command}", timeout=10.0)
        except AdbConnectionLost as exc:
            raise PhoneDisconnectedError(str(exc)) from None
        except AdbError as exc:
            raise DeviceError(f"could not start screenrecord: {exc}") from None

        async def drain() -> bytes:
            out = bytearray()  # what screenrecord says: its first 64 KiB (a phone may print forever)
            with contextlib.suppress(AdbError):
                while chunk := await stream.read(max_seconds + 30.0):
                    out += chunk[: max(0, 65536 - len(out))]
            return bytes(out)

        self._recording = (stream, asyncio.ensure_future(drain()))
        await asyncio.sleep(0.3)  # an immediate failure (no screenrecord, no space) shows at once
        if self._recording[1].done():
            said = self._recording[1].result().decode("utf-8", "replace").strip()
            self._recording = None
            if said:
                raise DeviceError(f"screenrecord failed: {said[:300]}", retryable=False)
        return "screenrecord"

    async def stop_recording(self) -> bytes:
        if self._recording is None:
            raise errors.invalid_argument(
                "stop_recording",
                "recording",
                "has nothing to stop: no recording runs",
                "Call start_recording first, then stop_recording.",
            )
        stream, drained = self._recording
        self._recording = None
        try:
            if not drained.done():
                await self._run("pkill -INT screenrecord")
                try:
                    async with asyncio.timeout(RECORDING_STOP_TIMEOUT):
                        await asyncio.shield(drained)
                except TimeoutError:
                    raise DeviceError("screenrecord did not finish its MP4 within 15 s") from None
            said = drained.result().decode("utf-8", "replace")
            data = await self.pull_file(RECORDING_PATH, 1 << 30)
        finally:
            drained.cancel()
            with contextlib.suppress(Exception):
                await stream.close()
            with contextlib.suppress(ToolError):
                await self._run(f"rm -f {RECORDING_PATH}")
        if not data:
            raise DeviceError(f"screenrecord wrote no video: {said.strip()[:300]}", retryable=False)
        return data
