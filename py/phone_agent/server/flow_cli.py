"""``phone-agent flow run FILE|DIR…`` and ``flow check``: Maestro flows from files, or folders of flows run
as Maestro workspaces (``config.yaml``: flows, include/exclude tags, executionOrder), run on the page's
phone through the shared server (``run_flow``) and reported as text or one JUnit XML report, for CI; or
read without a phone, every problem listed as ``FILE:LINE:COL: error: …``.

The files are read here (the page has no file system): each flow's text and the files it names
(``server/flow_files.py``: runFlow's flows, runScript's scripts, addMedia's media, from the flows' folder
only) are sent with the call. Every flow is read before any runs; one that cannot be read stops the command
with exit 2 and ``FILE:LINE:COLUMN: error: message``. A ``runFlow`` name that is no file here is left to the
page's saved flows. Exit 0 when every flow passed, 1 when a step failed (or a flow could not be run), 2
when a flow could not be read. Screenshots and recordings (``takeScreenshot``, ``startRecording``, and the
screenshot taken when a step fails) are written as files: the flow's paths relative to the working
directory, a failure's next to the report (``--output``) or in the working directory, named after the flow.
A path that would leave the working directory (absolute, or with ``..``) is refused when the flow is read,
and checked again, resolved, before anything is written.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ..flows.flow_reader import FlowError
from ..flows.output_paths import OutputPathError, output_path
from ..flows.workspace import WorkspaceError
from . import background
from .flow_files import FlowFile, check_folder, load_flow, load_workspace
from .front import FrontOptions
from .tool_client import ToolClient, error_line

__all__ = ["FlowFile", "FlowOutcome", "Reading", "check_flows", "load_flow", "run_flow_command"]


@dataclass
class Reading:
    """How flows are found and read: a folder's tags, the root a flow file may read from, and the hosts
    its scripts may reach."""

    include_tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    root: Path | None = None
    allow_http: list[str] = field(default_factory=list)


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


@dataclass
class Planned:
    """The flows to run, in order: ``sequence`` (a workspace's executionOrder) may stop early."""

    flows: list[FlowFile] = field(default_factory=list)
    sequence: list[FlowFile] = field(default_factory=list)
    continue_on_failure: bool = True
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_flows(paths: list[Path], reading: Reading, saved_elsewhere: bool = True) -> Planned:
    """Every flow the paths name, read: files as they are, folders as workspaces."""
    planned = Planned()
    for path in paths:
        if path.is_dir():
            try:
                workspace = load_workspace(path, reading.include_tags, reading.exclude_tags, saved_elsewhere)
            except WorkspaceError as exc:
                where = f"{exc.source}:{exc.line}:{exc.column}" if exc.source else str(path)
                planned.problems.append(f"{where}: error: {exc.reason}")
                continue
            planned.problems += [problem.location(str(path)) for problem in workspace.problems]
            planned.sequence += [workspace.flows[name] for name in workspace.plan.sequence]
            planned.flows += [workspace.flows[name] for name in workspace.plan.flows]
            planned.continue_on_failure = planned.continue_on_failure and workspace.plan.continue_on_failure
            continue
        try:
            planned.flows.append(load_flow(path, reading.root, saved_elsewhere))
        except FlowError as exc:
            planned.problems += [problem.location(str(path)) for problem in exc.problems]
    for flow in [*planned.sequence, *planned.flows]:
        planned.notes += flow.notes
    return planned


def check_flows(paths: list[Path], reading: Reading) -> int:
    """``phone-agent flow check``: every problem of every flow (a folder's every flow file), and the
    notes; exit 0 or 2."""
    files = [path for path in paths if not path.is_dir()]
    planned = plan_flows(files, reading, saved_elsewhere=False)
    for folder in (path for path in paths if path.is_dir()):
        flows, found, notes = check_folder(folder, reading.include_tags, reading.exclude_tags)
        planned.flows += flows
        planned.problems += [problem.location(str(folder)) for problem in found]
        planned.notes += [note for flow in flows for note in flow.notes] + notes
    problems = list(dict.fromkeys(planned.problems))  # a subflow's problem once, however often included
    for line in [*problems, *dict.fromkeys(planned.notes)]:
        print(line)
    count = len(planned.flows) + len(planned.sequence)
    print(
        f"phone-agent: {count} flow{'s' if count != 1 else ''} read, "
        f"{len(problems)} problem{'s' if len(problems) != 1 else ''}",
        file=sys.stderr,
    )
    return 2 if problems else 0


def maestro_env() -> dict[str, str]:
    """The caller's MAESTRO_… environment variables, which Maestro hands its flows too."""
    return {key: value for key, value in os.environ.items() if key.startswith("MAESTRO_") and value}


async def run_flows(
    options: FrontOptions,
    flows: list[FlowFile] | Planned,
    env: dict[str, str],
    device: str | None,
    report_dir: Path,
    allow_http: list[str] | None = None,
) -> list[FlowOutcome]:
    """Run each flow on the page's phone, in order (a workspace's sequence first); a flow that cannot be
    run does not stop the rest."""
    planned = flows if isinstance(flows, Planned) else Planned(flows=list(flows))
    flows = [*planned.sequence, *planned.flows]
    outcomes: list[FlowOutcome] = []
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
        stopped = False
        for flow in flows:
            if stopped and flow in planned.sequence:
                outcomes.append(
                    FlowOutcome(flow, problem="not run: an earlier flow of executionOrder failed")
                )
                continue
            outcome = await _run_one(client, flow, env, report_dir, allow_http or [])
            outcomes.append(outcome)
            if flow in planned.sequence and not outcome.passed and not planned.continue_on_failure:
                stopped = True
    return outcomes


async def _run_one(
    client: ToolClient, flow: FlowFile, env: dict[str, str], report_dir: Path, allow_http: list[str]
) -> FlowOutcome:
    started = time.monotonic()
    arguments: dict[str, Any] = {"yaml": flow.text, "env": env, "path": flow.relative or flow.path.name}
    if flow.files:
        arguments["files"] = flow.files
    if flow.media:
        arguments["media"] = flow.media
    if allow_http:
        arguments["allowHttp"] = ",".join(allow_http)
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
    for kept, write in (("screenshots", _write_image), ("recordings", _write_resource)):
        for item in report.get(kept, []):
            target = _under(Path.cwd(), item.get("path"))
            if target is None:  # the flow was checked when read: only a page that lies gets here
                where = item.get("path")
                print(f"phone-agent: not written, outside the working directory: {where!r}", file=sys.stderr)
                continue
            write(content, item.get("image", item.get("resource")), target)
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


def _write_resource(content: list[dict[str, Any]], index: Any, path: Path) -> bool:
    if (
        not isinstance(index, int)
        or not 0 <= index < len(content)
        or content[index].get("type") != "resource"
    ):
        return False
    blob = (content[index].get("resource") or {}).get("blob")
    if not isinstance(blob, str):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(blob))
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
        steps = (outcome.report or {}).get("steps", [])
        logs = [f"console.log: {line}" for step in steps for line in step.get("logs", [])]
        if outcome.passed:
            if logs:
                ElementTree.SubElement(case, "system-out").text = "\n".join(logs)
            continue
        failure = (outcome.report or {}).get("failure")
        if failure:
            message = f"step {failure['index']} `{failure['command']}` failed: {failure['error']}"
        else:
            message = outcome.problem or "the flow did not pass"
        element = ElementTree.SubElement(case, "failure", message=message, type="flow_failed")
        element.text = (
            "\n".join(
                f"{step['index']}. [{step['status']}] {step['command']}"
                + (f": {step['error']}" if "error" in step else "")
                for step in steps
            )
            or message
        )
        if outcome.failure_png is not None:
            logs.append(f"[[ATTACHMENT|{outcome.failure_png.resolve()}]]")
        if logs:
            ElementTree.SubElement(case, "system-out").text = "\n".join(logs)
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
    reading: Reading | None = None,
) -> int:
    """``phone-agent flow run``: the exit code (0 passed, 1 a step failed, 2 a flow unreadable)."""
    reading = reading or Reading()
    planned = plan_flows(paths, reading)
    for problem in planned.problems:
        print(problem, file=sys.stderr)
    if planned.problems:
        return 2
    report_dir = output.parent if output is not None else Path.cwd()
    variables = {**maestro_env(), **env}
    try:
        outcomes = asyncio.run(run_flows(options, planned, variables, device, report_dir, reading.allow_http))
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
