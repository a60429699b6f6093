"""The session's one Chromium, watched: its own log kept, every crash told, a broken browser replaced.

Chromium runs through a two-line wrapper that appends its stderr to ``chromium.log`` (under pytest's
base temp dir); with ``--enable-logging=stderr`` that holds the browser's and every renderer's log
lines and the crash handler's reports ("Received signal 11", "Fatal process out of memory", …).

Three watchers record a crash, stamped with the time it was seen:

* each page's ``crash`` event (Playwright), with the page's URL;
* ``Target.targetCrashed`` on a browser-wide CDP session: the renderer's termination status
  (``crashed``, ``oom``, ``killed``…) and its exit code or signal;
* the browser's ``disconnected`` event when nobody closed it.

Chromium's crash handler writes a minidump of every process that dies; with ``XDG_CONFIG_HOME``
pointed at the log's folder they land beside the log, and :meth:`SharedChromium.minidumps` reads
them (``tests/minidump.py``: the signal, the faulting instruction, the allocation samplers on).

``tests/conftest.py`` reports the crashes seen while a test ran as that test's failure, with the
renderer's last words from the log and the crash handler's minidumps. Tests get the browser through
:class:`BrowserHandle`: asking it for a new context after a crash (or a disconnect) launches a new
Chromium first, so the next test starts in a healthy browser instead of the one that broke.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.minidump import Minidump, minidumps

# Lines written on every start here (no D-Bus, no GPU, no cpufreq in the VM; Debian's launcher script
# trips over /dev/shm listed twice by findmnt, harmless as Playwright passes --disable-dev-shm-usage).
_NOISE = re.compile(
    r"dbus/|idle_linux\.cc|vaapi_wrapper\.cc|InitializeSandbox\(\) called with multiple threads"
    r"|cpufreq/scaling_|/usr/bin/chromium: \d+: \[: .*unexpected operator"
)


@dataclass
class Crash:
    """One crash as a watcher saw it: ``what`` happened, ``at`` (time.time()) and the log's size then;
    for a page, the renderer's termination status once CDP told it."""

    what: str
    at: float
    log_at: int
    page: bool = False
    status: str | None = None

    def __str__(self) -> str:
        return self.what if self.status is None else f"{self.what} ({self.status})"


class SharedChromium:
    """Launches Chromium with its log kept, watches it, and replaces it after a crash."""

    def __init__(self, playwright: Any, executable: str, args: list[str], log_dir: Path) -> None:
        self._playwright = playwright
        self._executable = executable
        self._args = [*args, "--enable-logging=stderr"]
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / "chromium.log"
        self.config_home = log_dir  # Chromium's XDG_CONFIG_HOME: its crash handler's reports go there
        self.minidump_dir = log_dir / "chromium" / "Crash Reports" / "pending"
        self._wrapper = log_dir / "chromium-with-log"
        self._wrapper.write_text(
            f'#!/bin/sh\nexec {shlex.quote(executable)} "$@" 2>>{shlex.quote(str(self.log_path))}\n'
        )
        self._wrapper.chmod(0o755)
        self.browser: Any = None
        self.crashes: list[Crash] = []
        self.launches = 0
        self._crashes_at_launch = 0
        self._closing = False
        self.loop: asyncio.AbstractEventLoop | None = None

    # -- the log ------------------------------------------------------------------------------------

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def last_words(self, crash: Crash | None = None, lines: int = 50) -> str:
        """What Chromium logged up to ``crash`` (a moment after it, the renderer's own report comes first),
        or up to now, without the start-up noise: its last ``lines`` lines."""
        end = self.log_size() if crash is None else crash.log_at + 4096
        start = max(0, end - 64 * 1024)
        try:
            with self.log_path.open("rb") as log:
                log.seek(start)
                text = log.read(end - start).decode(errors="replace")
        except OSError as exc:
            return f"(no Chromium log: {exc})"
        read = text.splitlines()[1 if start else 0 :]  # the first line may be the end of a line
        kept = [line for line in read if line.strip() and not _NOISE.search(line)]
        if not kept:
            return "(Chromium logged nothing)"
        return "\n".join(kept[-lines:])

    def minidumps(self, since: float = 0.0) -> list[Minidump]:
        """The crash handler's reports of processes that died at or after ``since`` (time.time())."""
        return minidumps(self.minidump_dir, since)

    # -- the browser --------------------------------------------------------------------------------

    async def launch(self) -> Any:
        self.loop = asyncio.get_running_loop()
        self.launches += 1
        with self.log_path.open("ab") as log:
            log.write(f"---- launch {self.launches} at {time.strftime('%H:%M:%S')} ----\n".encode())
        try:
            browser = await self._playwright.chromium.launch(
                executable_path=str(self._wrapper),
                args=self._args,
                env={**os.environ, "XDG_CONFIG_HOME": str(self.config_home)},
            )
        except Exception as exc:  # Chromium's own words are in the log, not in Playwright's message
            raise RuntimeError(f"Chromium did not start: {exc}\nIts log ends:\n{self.last_words()}") from exc
        self.browser = browser
        self._crashes_at_launch = len(self.crashes)
        browser.on("disconnected", lambda _b: self._disconnected(browser))
        browser.on("context", self._watch_context)
        cdp = await browser.new_browser_cdp_session()
        cdp.on("Target.targetCrashed", self._target_crashed)
        await cdp.send("Target.setDiscoverTargets", {"discover": True})
        return browser

    def healthy(self) -> bool:
        return (
            self.browser is not None
            and self.browser.is_connected()
            and len(self.crashes) == self._crashes_at_launch
        )

    async def ensure_healthy(self) -> Any:
        """The current browser, or a new one if it crashed or went away since it was launched."""
        if not self.healthy():
            await self._close_current()
            await self.launch()
        return self.browser

    async def close(self) -> None:
        self._closing = True
        await self._close_current()

    async def _close_current(self) -> None:
        browser, self.browser = self.browser, None
        if browser is not None and browser.is_connected():
            closing, self._closing = self._closing, True
            try:
                with contextlib.suppress(Exception):
                    await browser.close()
            finally:
                self._closing = closing

    # -- the watchers -------------------------------------------------------------------------------

    def _record(self, what: str, page: bool = False) -> None:
        self.crashes.append(Crash(what, time.time(), self.log_size(), page=page))

    def _disconnected(self, browser: Any) -> None:
        if not self._closing and browser is self.browser:
            self._record("the browser disconnected (Chromium exited or its connection broke)")

    def _watch_context(self, context: Any) -> None:
        context.on("page", self._watch_page)
        for page in context.pages:
            self._watch_page(page)

    def _watch_page(self, page: Any) -> None:
        page.on("crash", lambda crashed: self._record(f"page crashed: {crashed.url}", page=True))

    def _target_crashed(self, params: dict) -> None:
        """CDP's word on a renderer that ended: the status of a page crash just seen, or a crash of its
        own (a target no page watcher saw)."""
        status = f"renderer status {params.get('status')!r}, exit code or signal {params.get('errorCode')}"
        for crash in reversed(self.crashes):
            if crash.page and crash.status is None and time.time() - crash.at < 10:
                crash.status = status
                return
        self._record(f"renderer of target {params.get('targetId', '?')[:8]} ended: {status}")

    async def settle(self, timeout: float = 1.0) -> None:
        """Wait (briefly) until CDP told the status of every page crash seen."""
        deadline = time.monotonic() + timeout
        while any(crash.page and crash.status is None for crash in self.crashes[-5:]):
            if time.monotonic() > deadline:
                return
            await asyncio.sleep(0.05)

    def settle_now(self) -> None:
        """:meth:`settle` from synchronous code between tests (the session's loop is idle then)."""
        loop = self.loop
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.run_until_complete(self.settle())

    def crashes_between(self, start: float, stop: float) -> list[Crash]:
        return [crash for crash in self.crashes if start <= crash.at <= stop]


class BrowserHandle:
    """What tests get as ``browser``: the shared Chromium's current browser, replaced when broken.

    ``new_context`` and ``new_page`` first make sure the browser is healthy; everything else is the
    current Playwright ``Browser``'s own."""

    def __init__(self, chromium: SharedChromium) -> None:
        self._chromium = chromium

    async def new_context(self, **options: Any) -> Any:
        browser = await self._chromium.ensure_healthy()
        return await browser.new_context(**options)

    async def new_page(self, **options: Any) -> Any:
        browser = await self._chromium.ensure_healthy()
        return await browser.new_page(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chromium.browser, name)


ACTIVE: SharedChromium | None = None  # the session's, once a test asked for a browser
