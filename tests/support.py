"""Helpers for the tests: free ports, phone-agent as a real subprocess, watched browser pages.

Browser pages opened here are watched: a page error, a console error, or any request to a host other
than 127.0.0.1 fails the test (the page must work offline and never leak).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Chromium's allocation samplers, off: the heap profiler (in half the sessions of a build of no
# channel such as Debian's, then in 10 % of renderers) and GWP-ASan (in some processes) record the
# stack of a sampled allocation by walking frame pointers, and the walk runs off the end of the
# WebAssembly stack Pyodide's Python runs on (JSPI) and kills the renderer with SIGSEGV: issue 25,
# docs/chromium.md. Parameters rather than --disable-features, which would replace Playwright's own
# --disable-features list (Chromium keeps the last of each switch).
SAMPLERS_OFF = (
    "HeapProfilerReporting:stable-probability/0/nonstable-probability/0/renderer-prob-pct/0",
    "GwpAsanMalloc:ProcessSamplingProbability/0",
    "GwpAsanPartitionAlloc:ProcessSamplingProbability/0",
)
CHROMIUM_FEATURES = ("WebMCP", "WebMCPTesting", *SAMPLERS_OFF)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--enable-features=" + ",".join(CHROMIUM_FEATURES),
]
BOOT_TIMEOUT_MS = 60_000


def phone_agent_command() -> str:
    """The console script installed beside this Python (the project's .venv)."""
    found = shutil.which("phone-agent", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("phone-agent is not installed in this environment: run scripts/setup --test")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require(path: str, what: str) -> None:
    """Missing tools fail in CI (they must be installed there) and skip elsewhere."""
    if shutil.which(path) is None and not Path(path).exists():
        message = f"{what} is not installed ({path}): run scripts/setup --test"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def vendored(path: Path, what: str) -> bytes:
    """A file scripts/setup vendors (under static/vendor/), read; when it is missing the test fails
    saying so."""
    if not path.exists():
        pytest.fail(f"{what} is not vendored: run scripts/setup")
    return path.read_bytes()


def wait_http(url: str, timeout_s: float = 20.0, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer within {timeout_s}s")


class ServedPhoneAgent:
    """``phone-agent serve`` running as a subprocess on a free port; its stderr goes to a file (a pipe
    nobody reads would fill up and stall the server)."""

    def __init__(self, *extra: str, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [phone_agent_command(), "serve", "--port", str(self.port), *extra],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
        wait_http(f"{self.base}/api/config", process=self.process)

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> str:
        """Stop the server; its log."""
        stop_process(self.process)
        text = self.log()
        self._log.close()
        return text


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """SIGTERM ``process`` unless it has ended, and wait; SIGKILL it if it outlives ``timeout``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


class PageWatch:
    """Collects what must never happen on a page: errors, and requests that leave 127.0.0.1."""

    def __init__(self, page, allowed_console: tuple[str, ...] = ()) -> None:
        self.page = page
        self.allowed_console = list(allowed_console)
        self.problems: list[str] = []
        self.console: list[tuple[str, str]] = []
        self.crashed = False
        page.on("crash", self._on_crash)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("console", self._on_console)
        page.on("request", lambda request: self._check_url(request.url, "request"))
        page.on("websocket", lambda ws: self._check_url(ws.url, "websocket"))

    def _on_crash(self, _page) -> None:
        self.crashed = True  # not a problem of its own: the session's watch fails the test (conftest.py)

    @property
    def gone(self) -> bool:
        """The page can serve no further test: it crashed, was closed, or its browser went away."""
        return self.crashed or self.page.is_closed() or not self.page.context.browser.is_connected()

    def allow_console(self, pattern: str) -> None:
        self.allowed_console.append(pattern)

    def _on_console(self, message) -> None:
        self.console.append((message.type, message.text))
        if message.type == "error" and not any(re.search(p, message.text) for p in self.allowed_console):
            self.problems.append(f"console error: {message.text}")

    def _check_url(self, url: str, kind: str) -> None:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if parts.hostname != "127.0.0.1":
            self.problems.append(f"{kind} outside 127.0.0.1: {url}")

    def logged(self, level: str, text: str) -> bool:
        return any(kind == level and text in message for kind, message in self.console)

    def assert_clean(self) -> None:
        problems, self.problems = self.problems, []
        assert not problems, "the page misbehaved:\n" + "\n".join(problems)


def page_link(url: str, token: str | None = None) -> str:
    """``url`` as the user opens it: with the page link's token (``phone-agent url``), so that the
    page's browser gets the page cookie and pairs with the relay. The token is this session's
    (``PHONE_AGENT_HOME``) unless given; a URL that has one, or is not on 127.0.0.1, is left alone."""
    from urllib.parse import parse_qs, quote, urlunsplit

    from phone_agent.server.credentials import load_page_token

    parts = urlsplit(url)
    if parts.hostname != "127.0.0.1" or "token" in parse_qs(parts.query):
        return url
    query = "&".join(filter(None, [parts.query, f"token={quote(token or load_page_token(), safe='')}"]))
    return urlunsplit(parts._replace(path=parts.path or "/", query=query))


async def boot_page(
    browser,
    url: str,
    *,
    allowed_console: tuple[str, ...] = (),
    wait_ready: bool = True,
    init_script: str | None = None,
    link: bool = True,
):
    """A new browser context and a watched page at ``url``, booted: (context, page, watch). The caller
    closes the context; if booting fails it is closed here. With ``link`` (the default) the page is
    opened as the user does, with the page link's token (``page_link``)."""
    context = await browser.new_context()
    try:
        if init_script is not None:
            await context.add_init_script(init_script)
        page = await context.new_page()
        watch = PageWatch(page, allowed_console)
        await page.goto(page_link(url) if link else url)
        if wait_ready:
            await page.wait_for_selector("html[data-state=ready]", timeout=BOOT_TIMEOUT_MS, state="attached")
    except BaseException:
        with contextlib.suppress(Exception):  # a context of a browser that is gone
            await context.close()
        raise
    return context, page, watch


@asynccontextmanager
async def open_page(browser, url: str, **options: Any):
    """A new browser context and page at ``url``, watched, booted (``options`` as ``boot_page``'s:
    ``allowed_console``, ``wait_ready``, ``init_script`` — a test double of a browser API run before
    the page's own scripts —, ``link``); closed (and checked) at the end."""
    context, page, watch = await boot_page(browser, url, **options)
    try:
        yield page, watch
        watch.assert_clean()
    finally:
        await context.close()


class KeptPage:
    """One booted page that a module's tests share (Pyodide boots once per module, not per test).

    ``get`` gives the page and its watch, booting it again in a new context when the last one crashed,
    was closed, or lived in a browser that is gone: a crash costs the test it happened in, not every
    test left in the module. ``prepare(page)`` runs after each boot (wait for the phone, switch the live
    view off…)."""

    def __init__(
        self,
        browser,
        url: str,
        *,
        allowed_console: tuple[str, ...] = (),
        prepare: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.browser = browser
        self.url = url
        self.allowed_console = allowed_console
        self.prepare = prepare
        self.context = None
        self.page = None
        self.watch: PageWatch | None = None
        self.boots = 0

    async def get(self) -> tuple[Any, PageWatch]:
        if self.watch is None or self.watch.gone:
            await self.close()
            context, page, watch = await boot_page(
                self.browser, self.url, allowed_console=self.allowed_console
            )
            self.context = context
            try:
                if self.prepare is not None:
                    await self.prepare(page)
            except BaseException:
                await self.close()
                raise
            self.page, self.watch = page, watch
            self.boots += 1
        assert self.page is not None
        return self.page, self.watch

    async def close(self) -> None:
        context, self.context, self.page, self.watch = self.context, None, None, None
        if context is not None:
            with contextlib.suppress(Exception):  # a context of a browser that is gone
                await context.close()


async def eventually(check, timeout_s: float = 10.0, interval_s: float = 0.05):
    """Poll an async ``check`` until it returns a truthy value; its last value, or a timeout failure."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s}s (last value {value!r})")
        await asyncio.sleep(interval_s)


@asynccontextmanager
async def mcp_stdio_session(
    *args: str, logging_callback=None, stop_server: bool = True, elicitation_callback=None, extensions=None
):
    """The official mcp SDK's stdio client spawning ``phone-agent mcp ARGS`` and an initialized session.

    ``phone-agent mcp`` starts the shared server in the background; unless ``stop_server`` is False it
    is stopped when the session ends (``phone-agent stop`` on the ``--port`` of ARGS), so each test
    starts from no server."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=phone_agent_command(), args=["mcp", *args], cwd=str(ROOT), env=dict(os.environ)
    )
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(
                read,
                write,
                logging_callback=logging_callback,
                elicitation_callback=elicitation_callback,
                extensions=extensions,
            ) as session:
                await session.initialize()
                yield session
    finally:
        if stop_server and "--port" in args:
            port = args[list(args).index("--port") + 1]
            await asyncio.to_thread(
                subprocess.run,
                [phone_agent_command(), "stop", "--port", str(port)],
                capture_output=True,
                timeout=30,
            )


def stop_leftover_servers(home: Path) -> list[int]:
    """Stop every phone-agent server still recorded in ``home``'s state directory (a test that forgot to
    stop its background server must not leave it running); the pids that had to be stopped."""
    import json
    import signal

    stopped = []
    for record_path in sorted((home / "state").glob("server-*.json")):
        try:
            pid = int(json.loads(record_path.read_text())["pid"])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if b"phone_agent" not in cmdline and b"phone-agent" not in cmdline:
            continue  # the pid was reused by something else
        os.kill(pid, signal.SIGTERM)
        stopped.append(pid)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return stopped


SHELL_ATTACK_MARKS = "/sdcard/Download"


def shell_attacks(mark: str, *, short: bool = False) -> list[str]:
    """Values that each run ``touch MARK`` on a shell that pastes them into a command line (``short``:
    the seven kinds a flow's every key is tried with, one of each way in)."""
    each = [
        f"com.x;touch {mark};echo",
        f"$(touch {mark})",
        f"`touch {mark}`",
        f"com.x\ntouch {mark}",
        f"com.x' ; touch {mark} ; echo '",
        f"com.x;touch${{IFS}}{mark}",
        f"https://example.com/$(touch${{IFS}}{mark})",
    ]
    more = [
        f"com.x && touch {mark}",
        f"com.x | touch {mark}",
        f"/sdcard/$(touch${{IFS}}{mark})",
        f"CAMERA;touch${{IFS}}{mark}",
    ]
    return each if short else each + more


def result_text(result) -> str:
    """The first text item of an MCP SDK CallToolResult."""
    return result.content[0].text


ADB = shutil.which("adb") or "/usr/bin/adb"


class DebianAdbServer:
    """Debian's adb server of our own: own port, own HOME (so it makes and uses its own key), stopped
    by ``stop``. Tests drive it with ``await run(...)`` (an asyncio subprocess: a simulated phone in
    the same event loop keeps answering)."""

    def __init__(self, home: Path) -> None:
        require(ADB, "Debian's adb")
        self.port = free_port()
        self.home = home
        self._log = (home / "adb-server.log").open("wb")
        self.process = subprocess.Popen(
            [ADB, "-P", str(self.port), "nodaemon", "server"],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (home / "adb-server.log").read_text()
                    raise RuntimeError(f"adb server did not start: {log}") from None
                time.sleep(0.1)

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
        env["HOME"] = str(self.home)
        return env

    async def run(
        self, *args: str, timeout: float = 30.0, stdin: bytes | None = None
    ) -> tuple[int, bytes, bytes]:
        """``adb -P PORT ARGS``: (exit code, stdout, stderr)."""
        process = await asyncio.create_subprocess_exec(
            ADB, "-P", str(self.port), *args,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, out, err

    async def output(self, *args: str, timeout: float = 30.0) -> bytes:
        """stdout of ``adb -P PORT ARGS``; AssertionError with stderr when it fails."""
        code, out, err = await self.run(*args, timeout=timeout)
        assert code == 0, f"adb {' '.join(args)} exited {code}: {err.decode(errors='replace')}"
        return out

    async def state_of(self, serial: str) -> str | None:
        """The state ``adb devices`` shows for ``serial`` (device, unauthorized, offline…)."""
        _, out, _ = await self.run("devices")
        for line in out.decode().splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == serial:
                return parts[1]
        return None

    async def wait_for_state(self, serial: str, wanted: str, timeout: float = 15.0) -> str | None:
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            state = await self.state_of(serial)
            if state == wanted:
                return state
            await asyncio.sleep(0.2)
        return state

    @contextlib.asynccontextmanager
    async def holding(self, port: int) -> AsyncIterator[str]:
        """The phone at 127.0.0.1:``port`` connected to this server and waited for as ``device``: its
        serial here. It is disconnected at the end."""
        serial = f"127.0.0.1:{port}"
        await self.run("connect", serial)
        assert await self.wait_for_state(serial, "device") == "device"
        try:
            yield serial
        finally:
            await self.run("disconnect", serial)

    def stop(self) -> None:
        subprocess.run(
            [ADB, "-P", str(self.port), "kill-server"], env=self.env, timeout=10, capture_output=True
        )
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self._log.close()


PYODIDE = ROOT / "static" / "vendor" / "pyodide"
_NODE_PYODIDE_LOADER = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import { readFileSync } from "fs";
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
const only = %(only)s;  // null: all of py/; else [package, its files]: that package alone
if (only === null) {
  py.FS.mkdirTree("/mnt/py");
  py.FS.mount(py.FS.filesystems.NODEFS, { root: "%(py)s" }, "/mnt/py");
} else {
  const [name, files] = only;
  py.FS.mkdirTree(`/mnt/py/phone_agent/${name}`);
  py.FS.writeFile("/mnt/py/phone_agent/__init__.py", "");
  for (const file of files) {
    const path = `phone_agent/${name}/${file}`;
    py.FS.writeFile(`/mnt/py/${path}`, readFileSync(`%(py)s/${path}`));
  }
}
try {
  await py.runPythonAsync(readFileSync("%(check)s", "utf8"));
} catch (error) {
  console.log(String(error.message || error).slice(-3000));  // the Python traceback, not Node's dump
  process.exit(1);
}
process.exit(0);  // asyncio timers left behind (bounded waits) would keep Node alive until they fire
"""


def run_in_node_pyodide(
    check: str, tmp_path: Path, package: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the Python ``check`` (top-level await allowed) in the vendored Pyodide under Node, with the
    repository's py/ at /mnt/py, or with only ``phone_agent.<package>`` there (which proves that the
    package needs nothing else of phone_agent). Skips when Node or the vendored Pyodide is missing."""
    node = shutil.which("node")
    if node is None or not (PYODIDE / "pyodide.asm.wasm").exists():
        pytest.skip("needs node and the vendored Pyodide (scripts/setup)")
    (tmp_path / "check.py").write_text(check)
    loader = tmp_path / "run.mjs"
    only = None
    if package is not None:
        # The whole package, as the page loads it.
        only = [package, sorted(p.name for p in (ROOT / "py" / "phone_agent" / package).glob("*.py"))]
    loader.write_text(
        _NODE_PYODIDE_LOADER
        % {
            "pyodide": PYODIDE.as_posix(),
            "py": (ROOT / "py").as_posix(),
            "check": tmp_path / "check.py",
            "only": json.dumps(only),
        }
    )
    return subprocess.run([node, str(loader)], capture_output=True, text=True, timeout=120)


async def webmcp_call(page: Any, tool: str, args: dict[str, Any]) -> Any:
    """``tool`` through the page's WebMCP as an agent reaches it: when the compact registration leaves
    it out, its group enabled first with tool_groups (then the tool itself)."""
    from phone_agent.tools.groups import CORE, GROUP_OF, GROUPS_TOOL_NAME

    group = GROUP_OF.get(tool, CORE)
    if group != CORE:
        await page.webmcp.call_tool(GROUPS_TOOL_NAME, {"enable": [group]})
    return await page.webmcp.call_tool(tool, args)
