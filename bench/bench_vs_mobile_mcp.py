"""phone-agent against mobile-mcp 1.0.4 on the same simulated phone, the way an agent drives them.

    .venv/bin/python bench/bench_vs_mobile_mcp.py [--phone default|realistic|both] [--rounds 5]
        [--calls 5] [--mobile-mcp-dir DIR]

Both are driven by the official MCP SDK's stdio client on the same simulated phone (``phone-agent
sim``, or ``phone-agent sim --realistic``: a real phone's costs, sim/realistic.py):

- phone-agent: ``phone-agent mcp`` → its server → the page in headless Chromium (Playwright), which
  speaks ADB to the phone over the server's bridge, with its live view (scrcpy) on, as a user has it;
- mobile-mcp: ``@mobilenext/mobile-mcp`` 1.0.4 (npm, installed into a bench-only folder outside the
  project, the same one bench_device_tools.py uses), its stdio server, through a host adb server of
  the bench's own (own port and HOME).

What is timed, in interleaved rounds (the order of the two alternates from round to round):

- task: home → open Settings → tap "Connected devices" → tap the Bluetooth switch, each step as an
  agent takes it (list the elements, find the one it wants, tap it by its ref); checked afterwards (not
  timed) by ``settings get global bluetooth_on`` = 1, and the phone reset (Bluetooth off, Settings
  stopped, home) before each run;
- tap: a tap at an empty spot of the launcher (the screen stays as it is);
- list_elements: ``list_elements`` / ``mobile_list_elements_on_screen`` on the launcher;
- take_screenshot: ``take_screenshot`` / ``mobile_take_screenshot``.

phone-agent's side alone, timed in the same rounds:

- each step of the task (home, the three listings, the three taps by ref), with how long each listing
  said it waited for the screen to settle (``settledMs``) — where the task's time goes;
- list after an action: ``list_elements`` right after a tap by ref opened Settings, against the
  hierarchy server's own dump right after the same tap (JSON-RPC ``dumpWindowHierarchy`` over an
  ``adb forward`` of the bench's own to the server the page runs; the target is ≤ 1.3×).

Figures: the median of each side's calls, their p10–p90 spread, and the ratio of the medians
(phone-agent / mobile-mcp) against the issue's targets. The machine's other work moves them.

What an agent reads, side by side: the characters of ``tools/list`` (JSON, as the client receives
it) by default and with every tool (phone-agent: ``phone-agent mcp --tools all``, a second front; mobile-mcp
has one list), and per task the characters of the text content and of structuredContent its calls
answered (the task's last run), against the issue's targets (list ≤ 1.0×, task text ≤ 0.5×,
list_elements' structuredContent ≤ 3× its text).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
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
sys.path.insert(0, str(ROOT / "bench"))

from bench_device_tools import (  # noqa: E402
    DEFAULT_MOBILE_MCP_DIR,
    check,
    ensure_mobile_mcp,
    run_adb,
    stdio_session,
    stop_mobilecli_daemon,
)

from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DebianAdbServer,
    free_port,
    page_link,
    phone_agent_command,
)

OPS = ("task", "tap", "list_elements", "take_screenshot")
TARGETS = {  # the targets: ratio of the medians, phone-agent / mobile-mcp
    "realistic": {"task": 0.2, "list_elements": 0.25, "tap": 0.2, "take_screenshot": 0.6},
    "default": {"task": 0.5},
}
EMPTY_SPOT = (540, 1300)  # nothing of the launcher there: a tap changes nothing
OURS, MOBILE = "phone-agent", "mobile-mcp"
TASK_STEPS = ("home", "list 1", "tap Settings", "list 2", "tap Connected devices", "list 3", "tap switch")
LIST_AFTER_ACTION_TARGET = 1.3  # list_elements after an action / the server's own dump after it
LIST_ATTEMPTS = 10
SIZE_TARGETS = {"tools/list (default)": 1.0, "task text": 0.5}


def chars(value: Any) -> int:
    """The characters of a result or a list as JSON (what the client receives), 0 for None."""
    if value is None:
        return 0
    if hasattr(value, "model_dump"):
        value = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return len(json.dumps(value, ensure_ascii=False))


def text_chars(result: Any) -> int:
    return sum(len(getattr(part, "text", "") or "") for part in result.content)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Side:
    """One MCP server as an agent drives it: look (list), find, act by ref."""

    def __init__(self, name: str, session: Any, serial: str) -> None:
        self.name, self.session, self.serial = name, session, serial
        self.retries = 0  # listings asked again after a failure
        self.read = {"text": 0, "structured": 0}  # what the calls answered since reset_read
        self.listing = {"text": 0, "structured": 0}  # the last listing's
        self.steps: list[tuple[str, float, Any]] | None = None  # each call's (tool, ms, result) while kept

    def reset_read(self) -> None:
        self.read = {"text": 0, "structured": 0}

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        if self.name == MOBILE:
            args = {"device": self.serial, **args}
        started = time.perf_counter()
        result = check(await self.session.call_tool(tool, args), f"{self.name} {tool}")
        if self.steps is not None:
            self.steps.append((tool, (time.perf_counter() - started) * 1000, result))
        self.read["text"] += text_chars(result)
        self.read["structured"] += chars(result.structured_content)
        return result

    async def home(self) -> None:
        if self.name == OURS:
            await self.call("press_key", {"key": "home"})
        else:
            await self.call("mobile_press_button", {"button": "HOME"})

    async def list(self) -> Any:
        """The listing; a failed one is asked again at once, as an agent would (mobile-mcp's fails
        while the screen animates: its `uiautomator dump` says "could not get idle state"). Timed."""
        tool = "list_elements" if self.name == OURS else "mobile_list_elements_on_screen"
        for attempt in range(1, LIST_ATTEMPTS + 1):
            try:
                listed = await self.call(tool, {})
                self.listing = {"text": text_chars(listed), "structured": chars(listed.structured_content)}
                return listed
            except RuntimeError:
                if attempt == LIST_ATTEMPTS:
                    raise
                self.retries += 1

    def find(self, listed: Any, text: str | None = None, switch: bool = False) -> str:
        """The ref of the element with ``text`` (or of the first switch) in a listing."""
        if self.name == OURS:
            for element in listed.structured_content["elements"]:
                if (switch and element["role"] == "switch") or (text and element.get("text") == text):
                    return element["ref"]
        else:
            for line in listed.content[0].text.splitlines():
                kind = line.split(" ")[1] if " " in line else ""
                if (switch and kind == "Switch") or (text and f'text="{text}"' in line):
                    match = re.match(r"(@e\d+)", line)
                    if match:
                        return match.group(1)
        raise RuntimeError(f"{self.name}: nothing {'switch' if switch else repr(text)} in the listing")

    async def tap_ref(self, ref: str) -> None:
        if self.name == OURS:
            await self.call("tap", {"target": ref})
        else:
            await self.call("mobile_click_on_screen_at_coordinates", {"ref": ref})

    async def tap_xy(self, x: int, y: int) -> None:
        tool = "tap" if self.name == OURS else "mobile_click_on_screen_at_coordinates"
        await self.call(tool, {"x": x, "y": y})

    async def screenshot(self) -> None:
        await self.call("take_screenshot" if self.name == OURS else "mobile_take_screenshot", {})

    async def task(self) -> None:
        await self.home()
        await self.tap_ref(self.find(await self.list(), "Settings"))
        await self.tap_ref(self.find(await self.list(), "Connected devices"))
        await self.tap_ref(self.find(await self.list(), switch=True))


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


class ServerDump:
    """The hierarchy server the page runs on the phone, asked directly for a dump (JSON-RPC over an
    ``adb forward`` of the bench's own, one kept-alive connection): the phone's own time for a tree."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.ids = 0
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def dump(self) -> str:
        from phone_agent.adb.hierarchy_protocol import (
            MAX_DEPTH,
            HttpResponseParser,
            jsonrpc_request,
            jsonrpc_result,
        )

        await self.connect()
        assert self.reader is not None and self.writer is not None
        self.ids += 1
        self.writer.write(jsonrpc_request("dumpWindowHierarchy", [False, MAX_DEPTH], self.ids))
        parser, response = HttpResponseParser(), None
        while response is None:
            chunk = await self.reader.read(65536)
            response = parser.feed(chunk) if chunk else parser.close()
        if not response.keep_alive:
            self.writer.close()
            self.reader = self.writer = None
        return str(jsonrpc_result(response.body))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


ROW_OF = """tool => {
    const row = [...document.querySelectorAll('#activity li')]
        .find(item => item.querySelector('.activity__tool')?.textContent === tool);
    return row ? [row.dataset.callId, row.querySelector('.activity__ms')?.textContent] : [null, null];
}"""


async def page_ms(page: Any, tool: str, before: str | None) -> float:
    """The page's own time for its newest call of ``tool`` (its activity row, newest first: from the
    call's arrival in the page to its answer), once a row newer than ``before`` (a call id) is drawn."""
    for _ in range(100):
        call_id, said = await page.evaluate(ROW_OF, tool)
        if call_id and call_id != before and said:
            return float(said.split()[0])
        await asyncio.sleep(0.02)
    return float("nan")


def task_steps(steps: list[tuple[str, float, Any]], extra: dict[str, Any]) -> None:
    """Each step of phone-agent's task timed, and how long each listing waited for the screen."""
    for name, (_tool, ms, result) in zip(TASK_STEPS, steps, strict=True):
        extra["steps"].setdefault(name, []).append(ms)
        if name.startswith("list"):
            settled = (result.structured_content or {}).get("settledMs", 0)
            extra["settledMs"].setdefault(name, []).append(float(settled))


async def run_phone(
    phone: str, args: argparse.Namespace, tmp: Path, sizes: dict[tuple[str, str], int], extra: dict[str, Any]
) -> dict[tuple[str, str], list[float]]:
    from playwright.async_api import async_playwright

    sim_port, mcp_port = free_port(), free_port()
    sim_args = ["sim", "--port", str(sim_port)]
    if phone == "realistic":
        sim_args += ["--realistic", "--realistic-seed", "19"]
    sim = subprocess.Popen(
        [phone_agent_command(), *sim_args],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=(tmp / f"sim-{phone}.err").open("wb"),
    )  # fmt: skip
    home = tmp / f"home-{phone}"
    home.mkdir()
    adb = None
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", sim_port)
                writer.close()
                break
            await asyncio.sleep(0.1)
        serial = f"127.0.0.1:{sim_port}"
        adb = await asyncio.to_thread(DebianAdbServer, home)
        adb_env = {**adb.env, "ANDROID_ADB_SERVER_PORT": str(adb.port)}
        await run_adb(adb_env, "connect", serial)
        if await adb.wait_for_state(serial, "device") != "device":
            raise RuntimeError("adb never saw the simulated phone")

        async def shell(command: str) -> str:
            return (await run_adb(adb_env, "-s", serial, "shell", command)).decode().strip()

        entry = await asyncio.to_thread(ensure_mobile_mcp, args.mobile_mcp_dir, "1.0.4")
        mobile_env = {**adb_env, "MOBILEMCP_DISABLE_TELEMETRY": "1", "PATH": os.environ.get("PATH", "")}
        async with contextlib.AsyncExitStack() as stack:
            ours_session = await stack.enter_async_context(
                stdio_session(
                    phone_agent_command(),
                    ["mcp", "--port", str(mcp_port), "--self-check-delay", "0"],
                    env=dict(os.environ),  # the SDK passes on only a few variables: PHONE_AGENT_HOME too
                    cwd=str(ROOT),
                )
            )
            stack.push_async_callback(
                asyncio.to_thread, subprocess.run, [phone_agent_command(), "stop", "--port", str(mcp_port)],
                capture_output=True,
            )  # fmt: skip
            playwright = await stack.enter_async_context(async_playwright())
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            stack.push_async_callback(browser.close)
            page = await browser.new_page()
            await page.goto(page_link(f"http://127.0.0.1:{mcp_port}/?device=tcp:127.0.0.1:{sim_port}"))
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
            await page.wait_for_selector(".mcp-badge--ready", timeout=30_000)
            with contextlib.suppress(Exception):  # the live view on scrcpy, as a user has it
                scrcpy = "canvas#screen[data-source=scrcpy]"
                await page.wait_for_selector(scrcpy, state="attached", timeout=30_000)
            source = await page.evaluate("document.querySelector('canvas#screen')?.dataset.source")
            node = shutil.which("node") or "node"
            mobile_session = await stack.enter_async_context(
                stdio_session(node, [str(entry), "--stdio"], env=mobile_env, cwd=str(tmp))
            )
            stack.callback(stop_mobilecli_daemon, home)
            sides = {OURS: Side(OURS, ours_session, serial), MOBILE: Side(MOBILE, mobile_session, serial)}
            every = await stack.enter_async_context(
                stdio_session(
                    phone_agent_command(),
                    ["mcp", "--port", str(mcp_port), "--tools", "all", "--self-check-delay", "0"],
                    env=dict(os.environ),
                    cwd=str(ROOT),
                )
            )
            sizes[(OURS, "tools/list (default)")] = chars(await ours_session.list_tools())
            sizes[(OURS, "tools/list (all)")] = chars(await every.list_tools())
            sizes[(MOBILE, "tools/list (default)")] = sizes[(MOBILE, "tools/list (all)")] = chars(
                await mobile_session.list_tools()
            )

            async def reset(side: Side) -> None:
                await shell("svc bluetooth disable; am force-stop com.android.settings")
                await side.home()

            async def measure(side: Side, op: str) -> list[float]:
                await reset(side)
                if op == "task":
                    side.reset_read()
                    side.steps = []
                    took = await timed(side.task)
                    if side.name == OURS:
                        task_steps(side.steps, extra)
                    side.steps = None
                    sizes[(side.name, "task text")] = side.read["text"]
                    sizes[(side.name, "task structuredContent")] = side.read["structured"]
                    sizes[(side.name, "list_elements text")] = side.listing["text"]
                    sizes[(side.name, "list_elements structuredContent")] = side.listing["structured"]
                    for _ in range(40):  # the last tap may still be on its way (not timed)
                        if await shell("settings get global bluetooth_on") == "1":
                            break
                        await asyncio.sleep(0.05)
                    else:
                        raise RuntimeError(f"{side.name}: the task did not turn Bluetooth on")
                    return [took]
                call = {
                    "tap": lambda: side.tap_xy(*EMPTY_SPOT),
                    "list_elements": side.list,
                    "take_screenshot": side.screenshot,
                }[op]
                if side.name != OURS or op != "take_screenshot":
                    return [await timed(call) for _ in range(args.calls)]
                took = []
                for _ in range(args.calls):  # with the page's own time for each (not timed)
                    before, _ = await page.evaluate(ROW_OF, op)
                    took.append(await timed(call))
                    extra["screenshotPage"].append(await page_ms(page, op, before))
                return took

            forwarded = (await run_adb(adb_env, "-s", serial, "forward", "tcp:0", "tcp:9008")).decode()
            server = ServerDump(int(forwarded.strip()))
            stack.callback(server.close)

            async def after_action(direct: bool) -> float:
                """list_elements (or the server's own dump) right after a tap by ref opened Settings."""
                ours = sides[OURS]
                await reset(ours)
                first, _ = await page.evaluate(ROW_OF, "list_elements")
                ref = ours.find(await ours.list(), "Settings")
                await page_ms(page, "list_elements", first)  # that listing's row drawn (not timed)
                before, _ = await page.evaluate(ROW_OF, "list_elements")
                await server.connect()
                await ours.tap_ref(ref)
                if direct:
                    return await timed(server.dump)
                took = await timed(ours.list)
                extra["listAfterAction"]["page"].append(await page_ms(page, "list_elements", before))
                return took

            for side in sides.values():  # warm-up: first calls start servers, load code
                for op in args.ops:
                    await measure(side, op)
            listing = "list_elements" in args.ops
            if listing:
                await after_action(True)
            for number in range(args.rounds):
                for op in args.ops:
                    order = (OURS, MOBILE) if number % 2 == 0 else (MOBILE, OURS)
                    for name in order:
                        times.setdefault((name, op), []).extend(await measure(sides[name], op))
                for direct in (number % 2 == 0, number % 2 != 0) if listing else ():
                    key = "dump" if direct else "ours"
                    extra["listAfterAction"][key].append(await after_action(direct))
            tree = (await sides[OURS].list()).structured_content
            print(f"[{phone}] phone-agent's live view: {source}; its tree: {tree.get('treeSource')}")
            for side in sides.values():
                print(f"[{phone}] {side.name}: {side.retries} listings asked again after a failure")
    finally:
        if adb is not None:
            adb.stop()
        sim.terminate()
        sim.wait(10)
    return times


def report_sizes(phone: str, sizes: dict[tuple[str, str], int]) -> None:
    print(f"\n### {phone} phone: characters an agent reads\n")
    print("| what | phone-agent | mobile-mcp | ratio | target |")
    print("|---|---|---|---|---|")
    for what in dict.fromkeys(what for _, what in sizes):
        a, b = sizes[(OURS, what)], sizes[(MOBILE, what)]
        target = SIZE_TARGETS.get(what)
        ratio = a / b if b else float("inf")
        verdict = "" if target is None else f"≤ {target}× {'met' if ratio <= target else 'NOT met'}"
        print(f"| {what} | {a:,} | {b:,} | {ratio:.2f}× | {verdict} |")
    own = sizes[(OURS, "list_elements structuredContent")] / max(1, sizes[(OURS, "list_elements text")])
    print(f"\nphone-agent's list_elements: structuredContent {own:.2f}× its text (target ≤ 3×)")


def report(phone: str, times: dict[tuple[str, str], list[float]]) -> None:
    print(f"\n### {phone} phone\n")
    print("| action | phone-agent median (p10–p90) | mobile-mcp median (p10–p90) | ratio | target |")
    print("|---|---|---|---|---|")
    for op in (op for op in OPS if (OURS, op) in times):
        ours, mobile = times[(OURS, op)], times[(MOBILE, op)]
        a, b = statistics.median(ours), statistics.median(mobile)
        target = TARGETS[phone].get(op)
        verdict = "" if target is None else f"≤ {target}× {'met' if a / b <= target else 'NOT met'}"
        print(
            f"| {op} | {a:.0f} ms ({pct(ours, 0.1):.0f}–{pct(ours, 0.9):.0f}) | {b:.0f} ms "
            f"({pct(mobile, 0.1):.0f}–{pct(mobile, 0.9):.0f}) | {a / b:.2f}× | {verdict} |"
        )


def report_steps(phone: str, extra: dict[str, Any]) -> None:
    print(f"\n### {phone} phone: phone-agent's task step by step\n")
    print("| step | median (p10–p90) | settledMs median |")
    print("|---|---|---|")
    for name in TASK_STEPS:
        values = extra["steps"].get(name) or [0.0]
        settled = extra["settledMs"].get(name)
        said = f"{statistics.median(settled):.0f}" if settled else ""
        spread = f"{pct(values, 0.1):.0f}–{pct(values, 0.9):.0f}"
        print(f"| {name} | {statistics.median(values):.0f} ms ({spread}) | {said} |")
    inside = [value for value in extra["screenshotPage"] if value == value]  # no NaN
    if inside:
        print(
            f"\ntake_screenshot in the page (its activity row: arrival to answer) "
            f"{statistics.median(inside):.0f} ms ({pct(inside, 0.1):.0f}–{pct(inside, 0.9):.0f}); the rest "
            "is the call's way there and back"
        )
    ours, dump = extra["listAfterAction"]["ours"], extra["listAfterAction"]["dump"]
    if ours and dump:
        ratio = statistics.median(ours) / statistics.median(dump)
        met = "met" if ratio <= LIST_AFTER_ACTION_TARGET else "NOT met"
        print(
            f"\nlist_elements after an action {statistics.median(ours):.0f} ms ({pct(ours, 0.1):.0f}–"
            f"{pct(ours, 0.9):.0f}) vs the hierarchy server's own dump after it "
            f"{statistics.median(dump):.0f} ms ({pct(dump, 0.1):.0f}–{pct(dump, 0.9):.0f}): "
            f"{ratio:.2f}× (target ≤ {LIST_AFTER_ACTION_TARGET}× {met})"
        )
        inside = [value for value in extra["listAfterAction"]["page"] if value == value]  # no NaN
        if inside:
            print(
                f"of which in the page (its activity row: arrival to answer) "
                f"{statistics.median(inside):.0f} ms ({pct(inside, 0.1):.0f}–{pct(inside, 0.9):.0f}); "
                "the rest is the call's way there and back"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phone", choices=("default", "realistic", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5, help="calls per round of tap, list and screenshot")
    parser.add_argument("--mobile-mcp-dir", type=Path, default=DEFAULT_MOBILE_MCP_DIR)
    parser.add_argument("--json", type=Path, help="write the figures here too (scripts/perf_table.py)")
    parser.add_argument(
        "--ops", nargs="+", choices=OPS, default=list(OPS), help="time only these (default: all of them)"
    )
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-vs-mobile-mcp-"))
    (tmp / "home").mkdir()
    os.environ["PHONE_AGENT_HOME"] = str(tmp / "home")  # the front's, its server's and the page link's
    try:
        phones = ("default", "realistic") if args.phone == "both" else (args.phone,)
        figures: dict[str, dict[str, dict[str, list[float]]]] = {}
        after: dict[str, dict[str, list[float]]] = {}
        for phone in phones:
            sizes: dict[tuple[str, str], int] = {}
            extra: dict[str, Any] = {
                "steps": {},
                "settledMs": {},
                "listAfterAction": {"ours": [], "dump": [], "page": []},
                "screenshotPage": [],
            }
            times = asyncio.run(run_phone(phone, args, tmp, sizes, extra))
            report(phone, times)
            report_steps(phone, extra)
            if "task" in args.ops:
                report_sizes(phone, sizes)
            figures[phone] = {
                op: {"ours": times[(OURS, op)], "mobile": times[(MOBILE, op)]}
                for op in OPS
                if (OURS, op) in times
            }
            after[phone] = extra["listAfterAction"]
        if args.json:
            args.json.write_text(json.dumps({"vsMobileMcp": figures, "listAfterAction": after}, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
