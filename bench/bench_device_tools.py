"""Direct device tools against adb and mobile-mcp: `tap` (x, y) and `list_elements` through
`phone-agent mcp` (the page in headless Chromium, on the simulated phone over the server's bridge),
against Debian's `adb` as a subprocess and against mobile-mcp, on the same simulated phone, in one run.

    .venv/bin/python bench/bench_device_tools.py [--rounds 5] [--calls 20] [--no-mobile-mcp] [--profile]

Each round runs every path in turn (the order rotates from round to round), ``--calls`` calls each:

- ours:       the official MCP SDK's stdio client → ``phone-agent mcp`` → relay WebSocket → the page
              (Pyodide in Chromium) → ADB over the server's bridge → the simulated phone;
- adb:        ``adb -s SERIAL shell input tap X Y`` and ``adb -s SERIAL exec-out uiautomator dump
              /dev/tty`` as subprocesses, through an isolated adb server (own port via
              ANDROID_ADB_SERVER_PORT, own HOME and key; killed at the end);
- mobile-mcp: ``@mobilenext/mobile-mcp`` (npm, installed into a bench-only folder outside the project,
              ``--mobile-mcp-dir``) through the same SDK stdio client:
              ``mobile_click_on_screen_at_coordinates`` and ``mobile_list_elements_on_screen``. It drives
              the phone through its bundled ``mobilecli``, whose daemon runs with the bench's own HOME
              and is stopped at the end.

And, to say what limits our figures, in the same rounds:

- the SDK's stdio round trip alone: ``ping`` (and ``tools/list``) on each MCP server;
- the page alone, timed inside it: the tools through WebMCP (``document.modelContext.executeTool``),
  through the page's one dispatch (``window.phoneAgent.measureDispatch``: what a relayed call runs,
  without the relay), the same with the activity log hidden, and the page's ``Device`` call alone
  (``measureDevice``: ``tap`` / ``ui_nodes``) and one ADB exec (``measurePull`` of a 6-byte file);
- the project's ADB client in CPython, straight to the phone and through the server's ADB bridge
  (the bridge without Chromium and Pyodide);
- the phone's own time: the simulated phone runs in a child process of this script that logs how long
  each shell command line took in its worker thread (which also shows what each path runs on it);
- the SDK client's own check of a ``list_elements`` answer against its ``outputSchema``.

``--profile`` adds cProfile's view of the page's dispatch (Pyodide). ``--app PACKAGE`` opens an app
first (the default screen is the launcher; the tap lands on an empty spot, so no path changes it).

Figures are per call: p50 and p90 over all calls, and the min–max of the rounds' medians.
The machine's other work moves them: run it more than once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from tests.support import (  # noqa: E402
    ADB,
    CHROMIUM,
    CHROMIUM_ARGS,
    DebianAdbServer,
    free_port,
    page_link,
    phone_agent_command,
)

TAP_X, TAP_Y = 540, 1300  # an empty spot of the launcher: the screen stays the same for every path
MOBILE_MCP = "@mobilenext/mobile-mcp"
DEFAULT_MOBILE_MCP_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / (
    "phone-agent-bench/mobile-mcp"
)

TINY = "/sdcard/bench-tiny.txt"  # a 6-byte file: one ADB exec round trip, almost no payload
OURS, WEBMCP, PAGE, QUIET, DEVICE, ADB_PATH, DIRECT, BRIDGED, MOBILE = (
    "ours: MCP stdio → relay → page",
    "the page via WebMCP (in-page)",
    "the page's dispatch (in-page)",
    "… with the activity log hidden",
    "the page's ADB Device (in-page)",
    "adb subprocess",
    "our ADB in CPython, direct TCP",
    "our ADB in CPython, via the bridge",
    "mobile-mcp (MCP stdio)",
)
Batch = Callable[[int], Awaitable[list[float]]]  # n calls → their times in ms

PAGE_EXEC_LOOP = """async ([path, n]) => {
  const times = [];
  for (let i = 0; i < n; i++) times.push((await window.phoneAgent.measurePull(path)).ms);
  return times;
}"""
PAGE_DISPATCH = "([tool, args, n]) => window.phoneAgent.measureDispatch(tool, JSON.stringify(args), n)"
# The same with the page's activity log out of the rendering (display: none), to see what drawing
# one row per call costs.
PAGE_DISPATCH_QUIET = """async ([tool, args, n]) => {
  const log = document.getElementById("activity");
  log.style.display = "none";
  try {
    return await window.phoneAgent.measureDispatch(tool, JSON.stringify(args), n);
  } finally {
    log.style.display = "";
  }
}"""
PAGE_DEVICE = "([method, args, n]) => window.phoneAgent.measureDevice(method, JSON.stringify(args), n)"

WEBMCP_LOOP = """async ([name, args, n]) => {
  const mc = document.modelContext;
  const tool = (await mc.getTools()).find((t) => t.name === name);
  const times = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await mc.executeTool(tool, args);
    times.push(performance.now() - started);
  }
  return times;
}"""


# ----- the simulated phone in a child process, timing its own commands -------------------------------


def sim_child(port: int, log_path: str) -> None:
    """Run the simulated phone on ``port``; append ``command<TAB>ms`` for every shell command line
    (its time in the sim's worker thread) to ``log_path``. Stops on SIGTERM."""
    from phone_agent.sim.server import SimulatedPhoneServer

    log = open(log_path, "a", buffering=1)  # open as long as the process lives

    class TimedSim(SimulatedPhoneServer):
        async def run_blocking(self, function: Callable[..., Any], *args: Any) -> Any:
            def timed() -> Any:
                started = time.perf_counter()
                try:
                    return function(*args)
                finally:
                    ms = (time.perf_counter() - started) * 1000
                    what = args[0] if args and isinstance(args[0], str) else function.__name__
                    log.write(f"{what.replace(chr(9), ' ').replace(chr(10), ' ')}\t{ms:.3f}\n")

            return await super().run_blocking(timed)

    async def run() -> None:
        sim = TimedSim("127.0.0.1", port)
        sim.phone.clock = lambda: "12:00"
        await sim.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await stop.wait()
        await sim.close()

    asyncio.run(run())


class SimLog:
    """Reads what the sim child logged since the last mark."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def mark(self) -> None:
        self._offset = self.path.stat().st_size

    def since_mark(self) -> list[tuple[str, float]]:
        with self.path.open() as file:
            file.seek(self._offset)
            lines = file.read().splitlines()
        out = []
        for line in lines:
            command, _, ms = line.rpartition("\t")
            out.append((command, float(ms)))
        return out


def command_kind(command: str) -> str:
    """A shell command line, without its varying arguments."""
    for kind in ("input tap", "uiautomator dump", "dumpsys window", "getprop", "wm size"):
        if kind in command:
            return kind
    return command.split(" ")[0][:40]


class WebSocketTransport:
    """``AdbTransport`` over the server's ADB bridge (``/adb?target=``), for our CPython client: the
    bridge's own cost without Chromium and Pyodide."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str, origin: str) -> WebSocketTransport:
        from websockets.asyncio.client import connect

        return cls(await connect(url, origin=origin, compression=None, max_size=None))

    @property
    def closed(self) -> bool:
        return self.ws.close_code is not None

    async def send(self, chunk: bytes) -> None:
        await self.ws.send(bytes(chunk))

    async def receive(self) -> bytes:
        from websockets.exceptions import ConnectionClosed

        try:
            data = await self.ws.recv()
        except ConnectionClosed:
            return b""
        return data if isinstance(data, bytes) else data.encode()

    async def close(self) -> None:
        await self.ws.close()


# ----- statistics ----------------------------------------------------------------------------------


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Series:
    """Per-call times (ms) of one path and action, grouped by round."""

    def __init__(self) -> None:
        self.rounds: list[list[float]] = []
        self.phone: dict[str, list[float]] = {}  # command kind -> ms per command
        self.phone_per_call: list[float] = []  # the phone's busy time per call, summed

    def add_round(self, times: list[float]) -> None:
        self.rounds.append(times)

    @property
    def all(self) -> list[float]:
        return [t for r in self.rounds for t in r]

    def p50(self) -> float:
        return statistics.median(self.all)

    def describe(self) -> str:
        medians = [statistics.median(r) for r in self.rounds]
        return (
            f"p50 {self.p50():7.2f}  p90 {p(self.all, 0.9):7.2f}  "
            f"rounds {min(medians):6.2f}–{max(medians):6.2f} ms"
        )


# ----- the paths -----------------------------------------------------------------------------------


async def timed_calls(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def run_adb(env: dict[str, str], *args: str) -> bytes:
    process = await asyncio.create_subprocess_exec(
        ADB, *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(
            f"adb {' '.join(args)} exited {process.returncode}: {err.decode(errors='replace')}"
        )
    return out


def ensure_mobile_mcp(folder: Path, version: str) -> Path:
    """mobile-mcp's entry point, installed with npm into ``folder`` (never the project's package.json)."""
    entry = folder / "node_modules" / "@mobilenext" / "mobile-mcp" / "lib" / "index.js"
    installed = folder / "node_modules" / "@mobilenext" / "mobile-mcp" / "package.json"
    if installed.exists() and json.loads(installed.read_text()).get("version") == version:
        return entry
    folder.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed")
    print(f"installing {MOBILE_MCP}@{version} into {folder} …", flush=True)
    subprocess.run(
        [npm, "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund", "--loglevel=error",
         f"{MOBILE_MCP}@{version}"],
        check=True, timeout=600,
    )  # fmt: skip
    return entry


def stop_mobilecli_daemon(home: Path) -> str:
    """Stop the mobilecli daemon that mobile-mcp started under ``home`` (its pid file is there)."""
    pid_file = home / ".mobilecli" / "daemon.pid"
    if not pid_file.exists():
        return "no mobilecli daemon was started"
    try:
        pid = int(json.loads(pid_file.read_text())["pid"])
    except (ValueError, KeyError, TypeError):
        return f"unreadable {pid_file.name}"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return f"mobilecli daemon {pid} had already exited"
    if "mobilecli" not in cmdline or "daemon" not in cmdline:
        return f"pid {pid} is no longer the mobilecli daemon: left alone"
    os.kill(pid, signal.SIGTERM)
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            break
        if state == "Z":  # exited; its parent (init) reaps it
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    return f"stopped the mobilecli daemon (pid {pid})"


@contextlib.asynccontextmanager
async def stdio_session(
    command: str, args: list[str], env: dict[str, str] | None = None, cwd: str | None = None
):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def check(result: Any, what: str) -> Any:
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        text = result.content[0].text if result.content else ""
        raise RuntimeError(f"{what} failed: {text[:300]}")
    return result


# ----- the run -------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, tmp: Path) -> None:
    from playwright.async_api import async_playwright

    from phone_agent.adb.client import AdbClient
    from phone_agent.adb.device import AdbDevice
    from phone_agent.adb.keys import generate_private_key
    from phone_agent.adb.services import exec_out
    from phone_agent.server.adb_tcp import connect_adbd

    sim_port = free_port()
    sim_log_path = tmp / "sim-commands.log"
    sim_log_path.touch()
    sim_log = SimLog(sim_log_path)
    sim = subprocess.Popen(
        [sys.executable, __file__, "--sim-child", str(sim_port), str(sim_log_path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=(tmp / "sim.err").open("wb"),
    )  # fmt: skip
    adb_home = tmp / "adb-home"
    adb_home.mkdir()
    adb = None
    direct = None
    mobile_note = ""
    series: dict[tuple[str, str], Series] = {}
    notes: list[str] = []
    extra: dict[str, float] = {}
    profiles: list[str] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", sim_port)
                writer.close()
                break
            except OSError:
                if sim.poll() is not None or time.monotonic() > deadline:
                    error = (tmp / "sim.err").read_text()
                    raise RuntimeError(f"the simulated phone did not start: {error}") from None
                await asyncio.sleep(0.1)
        serial = f"127.0.0.1:{sim_port}"

        # Debian's adb: its own server, port and HOME.
        adb = await asyncio.to_thread(DebianAdbServer, adb_home)
        adb_env = {**adb.env, "ANDROID_ADB_SERVER_PORT": str(adb.port)}
        await run_adb(adb_env, "connect", serial)
        if await adb.wait_for_state(serial, "device") != "device":
            raise RuntimeError("adb never saw the simulated phone as a device")
        if args.app:
            await run_adb(adb_env, "-s", serial, "shell", "monkey", "-p", args.app, "1")
        before = await run_adb(adb_env, "-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty")

        # The project's ADB client in CPython, straight to the phone.
        key = generate_private_key()
        direct = await connect_adbd("127.0.0.1", sim_port, key)
        device = AdbDevice(direct, transport="tcp")

        # mobile-mcp, from a bench-only folder, with the bench's HOME (its mobilecli daemon lives there).
        mobile_entry = None
        if not args.no_mobile_mcp:
            try:
                mobile_entry = await asyncio.to_thread(
                    ensure_mobile_mcp, args.mobile_mcp_dir, args.mobile_mcp_version
                )
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                mobile_note = f"mobile-mcp not run: {exc}"
        node = shutil.which("node")
        mobile_env = {
            **adb_env,
            "MOBILEMCP_DISABLE_TELEMETRY": "1",
            "PATH": os.environ.get("PATH", ""),
        }

        mcp_port = free_port()
        async with contextlib.AsyncExitStack() as stack:
            ours = await stack.enter_async_context(
                stdio_session(
                    phone_agent_command(),
                    ["mcp", "--port", str(mcp_port), "--self-check-delay", "0"],
                    cwd=str(ROOT),
                )
            )
            playwright = await stack.enter_async_context(async_playwright())
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            stack.push_async_callback(browser.close)
            page = await browser.new_page()
            await page.goto(page_link(f"http://127.0.0.1:{mcp_port}/?device=tcp:127.0.0.1:{sim_port}"))
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
            await page.uncheck("#live-toggle")  # the bench alone uses the phone
            await page.wait_for_selector(".mcp-badge--ready", timeout=30_000)
            bridge_url = f"ws://127.0.0.1:{mcp_port}/adb?target=127.0.0.1:{sim_port}"
            bridged = AdbClient(
                await WebSocketTransport.open(bridge_url, f"http://127.0.0.1:{mcp_port}"), key
            )
            await bridged.connect(timeout=10)
            stack.push_async_callback(bridged.close)
            bridged_device = AdbDevice(bridged, transport="tcp")
            version = await page.evaluate("navigator.userAgent.match(/Chrom(e|ium)\\/[0-9.]+/)[0]")

            mobile = None
            if mobile_entry is not None and node is not None:
                try:
                    mobile = await stack.enter_async_context(
                        stdio_session(node, [str(mobile_entry), "--stdio"], env=mobile_env, cwd=str(tmp))
                    )
                    names = [tool.name for tool in (await mobile.list_tools()).tools]
                    mobile_note = f"mobile-mcp {args.mobile_mcp_version}: {len(names)} tools"
                except Exception as exc:  # it may not run here: say so and go on without it
                    mobile, mobile_note = None, f"mobile-mcp did not start: {exc!r}"

            tap_args = {"x": TAP_X, "y": TAP_Y}
            await run_adb(adb_env, "-s", serial, "shell", f"echo hello > {TINY}")

            def each(call: Callable[[], Awaitable[Any]]) -> Batch:
                return lambda n: timed_calls(n, call)

            def in_page(script: str, *script_args: Any) -> Batch:
                return lambda n: page.evaluate(script, [*script_args, n])

            paths: dict[str, dict[str, Batch]] = {
                OURS: {
                    "tap": each(lambda: ours.call_tool("tap", tap_args)),
                    "list": each(lambda: ours.call_tool("list_elements", {})),
                    "ping": each(lambda: ours.send_ping()),
                    "tools/list": each(lambda: ours.list_tools()),
                },
                WEBMCP: {
                    "tap": in_page(WEBMCP_LOOP, "tap", tap_args),
                    "list": in_page(WEBMCP_LOOP, "list_elements", {}),
                },
                PAGE: {
                    "tap": in_page(PAGE_DISPATCH, "tap", tap_args),
                    "list": in_page(PAGE_DISPATCH, "list_elements", {}),
                },
                QUIET: {
                    "tap": in_page(PAGE_DISPATCH_QUIET, "tap", tap_args),
                    "list": in_page(PAGE_DISPATCH_QUIET, "list_elements", {}),
                },
                DEVICE: {
                    "tap": in_page(PAGE_DEVICE, "tap", [TAP_X, TAP_Y]),
                    "list": in_page(PAGE_DEVICE, "ui_nodes", []),
                    "exec": in_page(PAGE_EXEC_LOOP, TINY),
                },
                ADB_PATH: {
                    "tap": each(
                        lambda: run_adb(
                            adb_env, "-s", serial, "shell", "input", "tap", str(TAP_X), str(TAP_Y)
                        )
                    ),
                    "list": each(
                        lambda: run_adb(adb_env, "-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty")
                    ),
                    "exec": each(lambda: run_adb(adb_env, "-s", serial, "exec-out", "cat", TINY)),
                },
                DIRECT: {
                    "tap": each(lambda: device.tap(TAP_X, TAP_Y)),
                    "list": each(lambda: device.ui_nodes()),
                    "exec": each(lambda: exec_out(direct, f"cat {TINY}")),
                },
                BRIDGED: {
                    "tap": each(lambda: bridged_device.tap(TAP_X, TAP_Y)),
                    "list": each(lambda: bridged_device.ui_nodes()),
                    "exec": each(lambda: exec_out(bridged, f"cat {TINY}")),
                },
            }
            if mobile is not None:
                paths[MOBILE] = {
                    "tap": each(
                        lambda: mobile.call_tool(
                            "mobile_click_on_screen_at_coordinates", {"device": serial, **tap_args}
                        )
                    ),
                    "list": each(
                        lambda: mobile.call_tool("mobile_list_elements_on_screen", {"device": serial})
                    ),
                    "ping": each(lambda: mobile.send_ping()),
                    "tools/list": each(lambda: mobile.list_tools()),
                }

            # Warm up every path (first calls load code, open connections, start mobilecli's daemon)
            # and check the tools' answers once.
            for actions in paths.values():
                for batch in actions.values():
                    await batch(3)
            for what, result in (
                ("tap", await ours.call_tool("tap", tap_args)),
                ("list_elements", listed := await ours.call_tool("list_elements", {})),
            ):
                check(result, what)
            elements = len(listed.structured_content["elements"])
            if mobile is not None:
                check(
                    await mobile.call_tool(
                        "mobile_click_on_screen_at_coordinates", {"device": serial, **tap_args}
                    ),
                    "mobile-mcp tap",
                )
                check(
                    await mobile.call_tool("mobile_list_elements_on_screen", {"device": serial}),
                    "mobile-mcp list",
                )

            for round_number in range(args.rounds):
                names = list(paths)
                shift = round_number % len(names)
                for name in names[shift:] + names[:shift]:
                    for action, batch in paths[name].items():
                        sim_log.mark()
                        times = await batch(args.calls)
                        await asyncio.sleep(0.05)  # the sim's last log line
                        entry = series.setdefault((name, action), Series())
                        entry.add_round(times)
                        for command, ms in sim_log.since_mark():
                            entry.phone.setdefault(command_kind(command), []).append(ms)

            if args.profile:
                for tool, targs in (("tap", tap_args), ("list_elements", {})):
                    text = await page.evaluate(
                        "([t, a, n]) => window.phoneAgent.measureDispatch(t, JSON.stringify(a), n, true)",
                        [tool, targs, args.calls],
                    )
                    profiles.append(f"-- the page's dispatch of {tool}, {args.calls} calls, cProfile\n{text}")

            # The SDK client checks every structuredContent against the tool's outputSchema: its share,
            # for this answer and for one of list_elements' default maximum, 200 elements.
            content = listed.structured_content
            big = listed.model_copy(
                update={"structured_content": {**content, "elements": (content["elements"] * 200)[:200]}}
            )
            for label, answer in (
                (f"{elements} elements", listed),
                ("200 elements", big),
            ):
                validate = []
                for _ in range(max(3, args.calls // 4)):
                    started = time.perf_counter()
                    await ours.validate_tool_result("list_elements", answer)
                    validate.append((time.perf_counter() - started) * 1000)
                extra[f"the SDK client's outputSchema check of a list_elements answer, {label} (ms)"] = (
                    statistics.median(validate)
                )
            extra["list_elements answer, JSON bytes"] = len(listed.model_dump_json(by_alias=True))

            after = await run_adb(adb_env, "-s", serial, "exec-out", "uiautomator", "dump", "/dev/tty")
            if after != before:
                notes.append("the screen changed during the run: the tap point is not inert on it")
            await direct.close()
            direct = None
    finally:
        if direct is not None:
            await direct.close()
        stopped = stop_mobilecli_daemon(adb_home)
        if adb is not None:
            await asyncio.to_thread(adb.stop)
        sim.send_signal(signal.SIGTERM)
        try:
            sim.wait(timeout=20)
        except subprocess.TimeoutExpired:
            sim.kill()
            sim.wait(timeout=5)

    # ----- report
    print(
        f"{args.rounds} rounds × {args.calls} calls per path and action, interleaved; {version} headless; "
        f"the launcher screen ({len(before)} bytes of uiautomator XML, {elements} elements listed)"
    )
    if mobile_note:
        print(mobile_note)
    print(stopped)
    labels = {
        "tap": "tap (x, y)",
        "list": "list elements",
        "exec": "one ADB exec round trip (`cat` of a 6-byte file)",
        "ping": "MCP SDK stdio round trip, answered in the server (ping)",
        "tools/list": "tools/list",
    }
    for action, label in labels.items():
        print(f"-- {label}")
        for (name, kind), entry in series.items():
            if kind != action:
                continue
            phone = ""
            if entry.phone:
                calls = len(entry.all)
                kinds = ", ".join(
                    f"{k} {statistics.median(v):.2f} ms ×{len(v) / calls:.0f}" for k, v in entry.phone.items()
                )
                phone = f"  | phone: {kinds}"
            print(f"  {name:34s} {entry.describe()}{phone}")
    for label, value in extra.items():
        print(f"  {label}: {value:.2f}")

    def p50(name: str, action: str) -> float:
        return series[(name, action)].p50()

    print("-- ratios of medians")
    for action, label in (("tap", "tap"), ("list", "list_elements")):
        ratio = p50(OURS, action) / p50(ADB_PATH, action)
        print(f"  {label}: ours / adb subprocess {ratio:.2f}×  (target ≤ 1.0×)")
        if (MOBILE, action) in series:
            ratio = p50(OURS, action) / p50(MOBILE, action)
            print(f"  {label}: ours / mobile-mcp {ratio:.2f}×  (target ≤ 0.5×)")
    print("-- ours, broken down (medians of parts measured apart: they need not add up exactly)")
    ping = p50(OURS, "ping")
    for action, label in (("tap", "tap"), ("list", "list_elements")):
        total, dispatch, device_ms = p50(OURS, action), p50(PAGE, action), p50(DEVICE, action)
        phone = sum(statistics.median(v) for v in series[(OURS, action)].phone.values())
        relay = total - ping - dispatch
        print(
            f"  {label} {total:.2f} ms = SDK stdio round trip {ping:.2f} + relay {relay:.2f} "
            f"+ the page's dispatch {dispatch:.2f}; of that, the ADB Device call {device_ms:.2f} "
            f"(CPython: {p50(BRIDGED, action):.2f} via the bridge, {p50(DIRECT, action):.2f} direct), "
            f"of which the phone's own time {phone:.2f}"
        )
    print(
        f"  one ADB exec: the page {p50(DEVICE, 'exec'):.2f} ms, CPython via the bridge "
        f"{p50(BRIDGED, 'exec'):.2f}, CPython direct {p50(DIRECT, 'exec'):.2f}, "
        f"adb subprocess {p50(ADB_PATH, 'exec'):.2f}"
    )
    for note in notes:
        print(f"NOTE: {note}")
    for text in profiles:
        print(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20, help="calls per path, action and round")
    parser.add_argument("--app", default=None, help="open this package first (default: the launcher)")
    parser.add_argument("--profile", action="store_true", help="also profile the page's dispatch")
    parser.add_argument("--no-mobile-mcp", action="store_true", help="skip mobile-mcp")
    parser.add_argument("--mobile-mcp-version", default="1.0.4")
    parser.add_argument(
        "--mobile-mcp-dir",
        type=Path,
        default=DEFAULT_MOBILE_MCP_DIR,
        help="where mobile-mcp is (or gets) installed with npm (default: a folder in the user's cache)",
    )
    parser.add_argument("--sim-child", nargs=2, metavar=("PORT", "LOG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sim_child:
        sim_child(int(args.sim_child[0]), args.sim_child[1])
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench-device-tools-"))
    try:
        asyncio.run(bench(args, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
