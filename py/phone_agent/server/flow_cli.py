"""``phone-agent flow run FILE…``: Maestro flows from files, run on the page's phone through the shared
server (``run_flow``), reported as text or JUnit XML, for CI.

The files are read here (the page has no file system): each flow's text and the flows its ``runFlow``
commands name (paths relative to the file naming them) are sent with the call. Every flow is read before
any runs; one that cannot be read stops the command with exit 2 and ``FILE:LINE:COLUMN: message``. A
``runFlow`` name that is no file here is left to the page's saved flows. Exit 0 when every flow passed,
1 when a step failed (or a flow could not be run), 2 when a flow could not be read. Screenshots
(``takeScreenshot`` and the one taken when a step fails) are written as files: ``takeScreenshot`` paths
relative to the working directory, a failure's next to the report (``--output``) or in the working
directory, named after the flow. A path that would leave the working directory (absolute, or with
``..``) is refused when the flow is read, and checked again, resolved, before anything is written.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ..flows.flow_reader import FlowError, read_flow
from ..flows.output_paths import OutputPathError, output_path
from ..flows.yaml_reader import Node, YamlError, parse_all
from . import background
from .front import FrontOptions
from .tool_client import ToolClient, error_line

# What a runFlow name not found as a file stands for while the flow is checked here.
_SAVED_ELSEWHERE = "appId: saved.flow\n---\n- back\n"


@dataclass
class FlowFile:
    """One flow to run: where it came from, its text, the files its runFlow commands name."""

    path: Path
    text: str
    files: dict[str, str] = field(default_factory=dict)
    name: str = ""


@dataclass
class FlowOutcome:
    """How one flow went: its report (run_flow's structuredContent), or why it could not run."""

    flow: FlowFile
    report: dict[str, Any] | None = None
    problem: str = ""
    failure_png: Path | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.report is not None and bool(self.report.get("passed"))


def _run_flow_files(node: Node | None) -> list[str]:
    """The file names ``runFlow`` commands in a parsed document name (nested ones too)."""
    found: list[str] = []
    if node is None:
        return found
    stack = [node]
    while stack:
        current = stack.pop()
        if current.kind == "seq":
            stack.extend(current.value)
        elif current.kind == "map":
            for key, value in current.pairs:
                if key.value == "runFlow":
                    if value.kind == "scalar" and value.value:
                        found.append(str(value.value))
                    elif value.kind == "map" and (file := value.get("file")) is not None and file.value:
                        found.append(str(file.value))
                stack.append(value)
    return found


def load_flow(path: Path) -> FlowFile:
    """The flow at ``path`` and every file its runFlow commands name; FlowError when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FlowError(f"cannot read the file: {exc}", 1, 1, str(path)) from None
    flow = FlowFile(path, text)
    pending = [(path, text)]
    seen = {path.resolve()}
    while pending:
        where, body = pending.pop()
        try:
            documents = parse_all(body)
        except YamlError as exc:
            raise FlowError(exc.reason, exc.line, exc.column, str(where)) from None
        for name in (ref for doc in documents for ref in _run_flow_files(doc)):
            if name in flow.files or "${" in name:
                continue
            candidate = (where.parent / name).resolve()
            if not candidate.is_file():
                continue  # perhaps a saved flow's name: the page knows
            try:
                flow.files[name] = candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise FlowError(f"cannot read {name}: {exc}", 1, 1, str(where)) from None
            if candidate not in seen:
                seen.add(candidate)
                pending.append((candidate, flow.files[name]))
    read = read_flow(text, flow.files, lambda name: _SAVED_ELSEWHERE, str(path))
    flow.name = read.name or path.stem
    return flow


async def run_flows(
    options: FrontOptions, flows: list[FlowFile], env: dict[str, str], device: str | None, report_dir: Path
) -> list[FlowOutcome]:
    """Run each flow on the page's phone, in order; a flow that cannot be run does not stop the rest."""
    outcomes = []
    async with ToolClient(options) as client:
        if device:
            status = await client.call("get_device_status", {})
            serial = (status.get("structuredContent") or {}).get("serial")
            if status.get("isError") or serial != device:
                problem = (
                    error_line(status)
                    if status.get("isError")
                    else (
                        f"the page's phone is {serial!r}, not {device!r}"
                        if serial
                        else "the page has no phone"
                    )
                )
                return [FlowOutcome(flow, problem=problem) for flow in flows]
        for flow in flows:
            outcomes.append(await _run_one(client, flow, env, report_dir))
    return outcomes


async def _run_one(client: ToolClient, flow: FlowFile, env: dict[str, str], report_dir: Path) -> FlowOutcome:
    started = time.monotonic()
    arguments: dict[str, Any] = {"yaml": flow.text, "env": env}
    if flow.files:
        arguments["files"] = flow.files
    print(f"phone-agent: running {flow.path} ({flow.name})", file=sys.stderr, flush=True)
    answer = await client.call(
        "run_flow", arguments, lambda line: print(f"  {line}", file=sys.stderr, flush=True)
    )
    outcome = FlowOutcome(flow, seconds=time.monotonic() - started)
    if answer.get("isError"):
        outcome.problem = error_line(answer)
        return outcome
    report = answer.get("structuredContent") or {}
    outcome.report = report
    content = answer.get("content", [])
    for shot in report.get("screenshots", []):
        target = _under(Path.cwd(), shot.get("path"))
        if target is None:  # the flow was checked when read: only a page that lies gets here
            where = shot.get("path")
            print(f"phone-agent: not written, outside the working directory: {where!r}", file=sys.stderr)
            continue
        _write_image(content, shot.get("image"), target)
    failure = report.get("failure") or {}
    if "image" in failure:
        target = report_dir / f"{_safe(flow.name)}-failure.png"
        if _write_image(content, failure["image"], target):
            outcome.failure_png = target
    return outcome


def _under(folder: Path, path: Any) -> Path | None:
    """``folder / path`` when it stays under ``folder`` once resolved (links followed), else None."""
    try:
        relative = output_path(path) if isinstance(path, str) else None
    except OutputPathError:
        relative = None
    if relative is None:
        return None
    base = folder.resolve()
    target = (base / relative).resolve()
    return target if base in target.parents else None


def _safe(name: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in name) or "flow"


def _write_image(content: list[dict[str, Any]], index: Any, path: Path) -> bool:
    if not isinstance(index, int) or not 0 <= index < len(content) or content[index].get("type") != "image":
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(content[index]["data"]))
    return True


def text_report(outcomes: list[FlowOutcome]) -> str:
    lines = []
    for outcome in outcomes:
        title = f"{outcome.flow.name} ({outcome.flow.path})"
        if outcome.passed:
            lines.append(f"PASSED {title} in {outcome.seconds:.1f} s")
            continue
        lines.append(f"FAILED {title}")
        failure = (outcome.report or {}).get("failure")
        if failure:
            lines.append(
                f"  step {failure['index']} (line {failure.get('line', '?')}) `{failure['command']}`: "
                f"{failure['error']}"
            )
        elif outcome.problem:
            lines.append(f"  {outcome.problem}")
        if outcome.failure_png is not None:
            lines.append(f"  screenshot: {outcome.failure_png}")
    passed = sum(1 for outcome in outcomes if outcome.passed)
    lines.append(f"{passed}/{len(outcomes)} flows passed")
    return "\n".join(lines) + "\n"


def junit_report(outcomes: list[FlowOutcome]) -> str:
    """JUnit XML: one testcase per flow, a failure naming the step's command and why, the screenshot
    as an attachment (``[[ATTACHMENT|path]]``, the form Jenkins and GitLab read)."""
    failures = sum(1 for outcome in outcomes if not outcome.passed)
    total = sum(outcome.seconds for outcome in outcomes)
    suites = ElementTree.Element(
        "testsuites", tests=str(len(outcomes)), failures=str(failures), time=f"{total:.3f}"
    )
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name="phone-agent flows",
        tests=str(len(outcomes)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{total:.3f}",
    )
    for outcome in outcomes:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=str(outcome.flow.path),
            name=outcome.flow.name,
            time=f"{outcome.seconds:.3f}",
        )
        if outcome.passed:
            continue
        failure = (outcome.report or {}).get("failure")
        if failure:
            message = f"step {failure['index']} `{failure['command']}` failed: {failure['error']}"
        else:
            message = outcome.problem or "the flow did not pass"
        element = ElementTree.SubElement(case, "failure", message=message, type="flow_failed")
        steps = (outcome.report or {}).get("steps", [])
        element.text = (
            "\n".join(
                f"{step['index']}. [{step['status']}] {step['command']}"
                + (f": {step['error']}" if "error" in step else "")
                for step in steps
            )
            or message
        )
        if outcome.failure_png is not None:
            out = ElementTree.SubElement(case, "system-out")
            out.text = f"[[ATTACHMENT|{outcome.failure_png.resolve()}]]"
    ElementTree.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
    )


def run_flow_command(
    options: FrontOptions,
    paths: list[Path],
    env: dict[str, str],
    device: str | None,
    report_format: str,
    output: Path | None,
) -> int:
    """``phone-agent flow run``: the exit code (0 passed, 1 a step failed, 2 a flow unreadable)."""
    flows, unreadable = [], False
    for path in paths:
        try:
            flows.append(load_flow(path))
        except FlowError as exc:
            unreadable = True
            print(f"{exc.source or path}:{exc.line}:{exc.column}: error: {exc.reason}", file=sys.stderr)
    if unreadable:
        return 2
    report_dir = output.parent if output is not None else Path.cwd()
    try:
        outcomes = asyncio.run(run_flows(options, flows, env, device, report_dir))
    except background.ServerProblem as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(
            f"phone-agent: error: cannot run the flows on the server on port {options.port}: {exc}",
            file=sys.stderr,
        )
        return 1
    report = junit_report(outcomes) if report_format == "junit" else text_report(outcomes)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(report, encoding="utf-8")
        if report_format != "junit":
            sys.stdout.write(report)
    else:
        sys.stdout.write(report)
    if any("invalid_flow" in outcome.problem for outcome in outcomes):
        return 2
    return 0 if all(outcome.passed for outcome in outcomes) else 1
