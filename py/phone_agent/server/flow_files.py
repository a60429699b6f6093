"""Flows from the disk, for ``phone-agent flow run`` and ``flow check``: a flow file with every file it
names (runFlow's and retry's flows, runScript's scripts, addMedia's media), read from the flows' folder
only, and a folder planned as a Maestro workspace (``flows.workspace``).

The flows' folder is ``--root``, or the Maestro project a flow file or folder is in (the nearest folder
named ``.maestro`` or ``maestro``, else the nearest holding a Maestro workspace ``config.yaml``), else the
folder given (``flow run DIR``) or the flow file's own folder: a path that leaves it — through ``..``, an
absolute path or a symbolic link — is not read, and the reader refuses the flow naming it. CPython only
(it reads the disk).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

from ..flows.flow_reader import Flow, FlowError, read_flow
from ..flows.references import FLOW, MEDIA, references
from ..flows.workspace import WorkspaceError, WorkspacePlan, is_flow_file, plan, read_config
from ..flows.yaml_nodes import YamlError, parse_all

MAX_TEXT_BYTES = 1 << 20  # a flow or a script
MAESTRO_DEPTH = 6  # how far above a flow file its Maestro project folder is looked for
PROJECT_NAMES = (".maestro", "maestro")  # the folders Maestro projects keep their flows in
# A config.yaml holding one of these keys is a Maestro workspace config (its folder is a project).
WORKSPACE_KEYS = (
    "flows", "includeTags", "excludeTags", "executionOrder", "local", "platform", "testOutputDir"
)  # fmt: skip
MAX_MEDIA_BYTES = 32 << 20  # all of a flow's media together
# What a runFlow name that is no file here stands for while the flow is read here: the page may hold a
# saved flow of that name (the page says when it does not).
_SAVED_ELSEWHERE = "appId: saved.flow\n---\n- back\n"


@dataclass
class FlowFile:
    """One flow to run: where it is, its text, its path in the flows' folder, the files it names (text
    and media in base64, by path in the folder), its name, tags and notes."""

    path: Path
    text: str
    relative: str = ""
    files: dict[str, str] = field(default_factory=dict)
    media: dict[str, str] = field(default_factory=dict)
    name: str = ""
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _inside(root: Path, candidate: Path) -> bool:
    try:
        candidate.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def project_folder(folder: Path) -> Path | None:
    """The Maestro project ``folder`` is in (itself included): the nearest folder named ``.maestro`` or
    ``maestro`` (the conventional places, where ``flows/``, ``subflows/``, ``scripts/`` sit side by side),
    else the nearest holding a Maestro workspace config (``config.yaml`` with Maestro's keys); looked for
    at most MAESTRO_DEPTH folders up. None when there is none."""
    chain = [folder, *folder.parents][:MAESTRO_DEPTH]
    named = next((candidate for candidate in chain if candidate.name.lower() in PROJECT_NAMES), None)
    return named or next((candidate for candidate in chain if _holds_workspace_config(candidate)), None)


def _holds_workspace_config(folder: Path) -> bool:
    for name in ("config.yaml", "config.yml"):
        path = folder / name
        try:
            if not path.is_file() or path.stat().st_size > MAX_TEXT_BYTES:
                continue
            documents = [doc for doc in parse_all(path.read_text(encoding="utf-8")) if doc is not None]
        except (OSError, UnicodeDecodeError, YamlError):
            continue
        if documents and documents[0].kind == "map":
            if any(str(key.value) in WORKSPACE_KEYS for key, _ in documents[0].pairs):
                return True
    return False


def default_root(path: Path) -> Path:
    """The flows' folder of a flow file given alone: the Maestro project it is in (``project_folder``),
    else its own folder."""
    folder = path.resolve().parent
    return project_folder(folder) or folder


def folder_root(folder: Path) -> Path:
    """The flows' folder of a folder of flows given (``flow run DIR``, ``flow check DIR``): the Maestro
    project it is part of (so ``flows/`` reads ``../subflows/``, as Maestro does), else the folder itself."""
    resolved = folder.resolve()
    return project_folder(resolved) or resolved


def _read_text(path: Path, source: str) -> str:
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            raise FlowError(f"the file is larger than {MAX_TEXT_BYTES >> 20} MiB", 1, 1, source)
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FlowError(f"cannot read the file: {exc}", 1, 1, source) from None


def load_flow(path: Path, root: Path | None = None, saved_elsewhere: bool = True) -> FlowFile:
    """The flow at ``path`` and every file it names inside ``root`` (its own folder by default); FlowError
    (with ``problems``) when it cannot be read. ``saved_elsewhere``: a runFlow name that is no file here
    may be a flow saved in the page (``flow run``); else it is a missing file (``flow check``)."""
    root = root if root is not None else default_root(path)
    if not _inside(root, path):
        raise FlowError(f"the flow is outside the flows' folder {root}", 1, 1, str(path))
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    flow = FlowFile(path, _read_text(path, str(path)), relative)
    pending = [(relative, flow.text)]
    seen = {relative}
    media_bytes = 0
    while pending:
        where, body = pending.pop()
        for reference in references(body, where):
            if reference.outside or reference.path in seen:
                continue
            seen.add(reference.path)
            candidate = root / reference.path
            if not candidate.is_file() or not _inside(root, candidate):
                continue  # the reader says what is missing or outside
            if reference.kind == MEDIA:
                data = candidate.read_bytes()
                media_bytes += len(data)
                if media_bytes > MAX_MEDIA_BYTES:
                    raise FlowError(f"the flow's media pass {MAX_MEDIA_BYTES >> 20} MiB", 1, 1, str(path))
                flow.media[reference.path] = base64.b64encode(data).decode("ascii")
                continue
            text = _read_text(candidate, str(candidate))
            flow.files[reference.path] = text
            if reference.kind == FLOW:
                pending.append((reference.path, text))
    saved = (lambda name: _SAVED_ELSEWHERE) if saved_elsewhere else None
    read = read_flow(flow.text, flow.files, saved, str(path), flow.media, relative)
    flow.name = read.name or path.stem
    flow.tags = list(read.tags)
    flow.notes = list(read.notes)
    return flow


def read_loaded(flow: FlowFile) -> Flow:
    """The flow as the page will read it (for callers that want the commands)."""
    return read_flow(
        flow.text, flow.files, lambda name: _SAVED_ELSEWHERE, str(flow.path), flow.media, flow.relative
    )


@dataclass
class Workspace:
    """A folder of flows, planned: the flows in the order they run, the sequence's rule, and the problems
    of the flows that could not be read (each a FlowError)."""

    root: Path
    plan: WorkspacePlan
    flows: dict[str, FlowFile]
    problems: list[FlowError] = field(default_factory=list)


def load_workspace(
    folder: Path,
    include_tags: list[str] | None = None,
    exclude_tags: list[str] | None = None,
    saved_elsewhere: bool = True,
) -> Workspace:
    """The workspace in ``folder``: its config.yaml (or config.yml), its flows read, planned by tags."""
    config_path = next(
        (folder / name for name in ("config.yaml", "config.yml") if (folder / name).is_file()), None
    )
    config = (
        read_config(_read_text(config_path, str(config_path)), str(config_path))
        if config_path
        else read_config("")
    )
    paths = flow_files_in(folder)
    flows: dict[str, FlowFile] = {}
    problems: list[FlowError] = []
    headers: dict[str, tuple[str, list[str]]] = {}
    # Only the flows the patterns choose are read (a subflow is read through the flow naming it).
    from ..flows.workspace import glob_pattern

    patterns = [glob_pattern(glob) for glob in config.flows]
    root = folder_root(folder)
    for relative in paths:
        if not any(pattern.fullmatch(relative) for pattern in patterns):
            continue
        try:
            loaded = load_flow(folder / relative, root, saved_elsewhere)
        except FlowError as exc:
            problems.extend(exc.problems)
            continue
        flows[relative] = loaded
        headers[relative] = (_header_name(loaded), loaded.tags)
    planned = plan(paths, config, headers, include_tags, exclude_tags)
    readable = set(flows)
    planned.sequence = [path for path in planned.sequence if path in readable]
    planned.flows = [path for path in planned.flows if path in readable]
    return Workspace(folder, planned, flows, problems)


def flow_files_in(folder: Path) -> list[str]:
    """Every flow file under ``folder`` (its subfolders too, hidden ones aside), as paths in it."""
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file()
        and is_flow_file(path.name)
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def check_folder(
    folder: Path, include_tags: list[str] | None = None, exclude_tags: list[str] | None = None
) -> tuple[list[FlowFile], list[FlowError], list[str]]:
    """``flow check DIR``: every flow file under ``folder`` read (not only those the workspace would run:
    a check looks at them all; tags given narrow them), the problems, and notes on what ``flow run DIR``
    would say of the workspace's config (patterns or tags that match nothing)."""
    flows: list[FlowFile] = []
    problems: list[FlowError] = []
    root = folder_root(folder)
    for relative in flow_files_in(folder):
        try:
            flows.append(load_flow(folder / relative, root, saved_elsewhere=False))
        except FlowError as exc:
            problems.extend(exc.problems)
    include, exclude = include_tags or [], exclude_tags or []
    if include or exclude:
        flows = [
            flow
            for flow in flows
            if (not include or any(tag in include for tag in flow.tags))
            and not any(tag in exclude for tag in flow.tags)
        ]
        if not flows and not problems:
            shown = f"include: {', '.join(include) or 'none'}; exclude: {', '.join(exclude) or 'none'}"
            problems.append(FlowError(f"the tags match no flow ({shown})", 1, 1, str(folder)))
    notes = []
    try:
        load_workspace(folder, include, exclude, saved_elsewhere=False)
    except WorkspaceError as exc:
        where = f"{exc.source}:{exc.line}:{exc.column}" if exc.source else str(folder)
        if exc.source:  # the config itself cannot be read: that is a problem, not a note
            problems.append(FlowError(exc.reason, exc.line, exc.column, exc.source))
        else:
            notes.append(f"{where}: note: flow run would stop here: {exc.reason}")
    return flows, problems, notes


def _header_name(flow: FlowFile) -> str:
    return flow.name if flow.name != flow.path.stem else ""


__all__ = [
    "FlowFile",
    "Workspace",
    "WorkspaceError",
    "check_folder",
    "default_root",
    "flow_files_in",
    "folder_root",
    "load_flow",
    "load_workspace",
    "read_loaded",
]
