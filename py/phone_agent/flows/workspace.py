"""A folder of flows run as Maestro runs a workspace: its ``config.yaml`` (``flows``: glob patterns, by
default ``*``, the folder's own flows; ``includeTags``/``excludeTags``; ``executionOrder``: flows run first,
in order, with ``continueOnFailure``), the tags given on the command line added to the config's, and every
``.yaml``/``.yml`` file but ``config`` a flow. Pure: paths, the config's text and each flow's name and tags
in, the plan out; ``server/flow_files.py`` walks the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .yaml_nodes import Node, YamlError, parse_all


class WorkspaceError(ValueError):
    """A workspace that cannot be planned (no flows, patterns or tags that match nothing …)."""

    def __init__(self, message: str, source: str = "", line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.reason, self.source, self.line, self.column = message, source, line, column


@dataclass
class WorkspaceConfig:
    """What a workspace's config.yaml says (Maestro's WorkspaceConfig; other keys are ignored, as there)."""

    flows: list[str] = field(default_factory=lambda: ["*"])
    include_tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    flows_order: list[str] = field(default_factory=list)
    continue_on_failure: bool = True


@dataclass
class WorkspacePlan:
    """Which flows run: ``sequence`` first, in the order the config names them (stopping at the first
    failure unless ``continue_on_failure``), then ``flows``."""

    sequence: list[str]
    flows: list[str]
    continue_on_failure: bool = True


def is_flow_file(path: str) -> bool:
    """A flow is a .yaml or .yml file not named config (Maestro's rule)."""
    name = path.rsplit("/", 1)[-1]
    stem, _, extension = name.rpartition(".")
    return extension in ("yaml", "yml") and stem != "config" and bool(stem)


def read_config(text: str, source: str = "config.yaml") -> WorkspaceConfig:
    """A workspace's config.yaml; WorkspaceError (line and column) when it is not what Maestro reads."""
    config = WorkspaceConfig()
    if not text.strip():
        return config
    try:
        documents = [doc for doc in parse_all(text) if doc is not None]
    except YamlError as exc:
        raise WorkspaceError(exc.reason, source, exc.line, exc.column) from None
    if not documents:
        return config
    node = documents[0]
    if node.kind != "map":
        raise WorkspaceError(
            "the workspace config must be `key: value` lines", source, node.line, node.column
        )
    for key, value in node.pairs:
        name = str(key.value)
        if name == "flows":
            config.flows = _strings(value, name, source)
        elif name == "includeTags":
            config.include_tags = _strings(value, name, source)
        elif name == "excludeTags":
            config.exclude_tags = _strings(value, name, source)
        elif name == "executionOrder" and not value.is_null:
            _execution_order(config, value, source)
        # ``local: {deterministicOrder}`` (Maestro's deprecated sort by name) changes nothing: the plan is
        # always sorted by path; any other key is ignored, as Maestro ignores it.
    return config


def _strings(node: Node, what: str, source: str) -> list[str]:
    if node.kind == "scalar" and node.value is not None:
        return [str(node.value)]  # Maestro takes one text for a list of one
    if node.kind != "seq" or any(item.kind != "scalar" or item.value is None for item in node.value):
        raise WorkspaceError(f"{what} must be a text or a list of texts", source, node.line, node.column)
    return [str(item.value) for item in node.value]


def _execution_order(config: WorkspaceConfig, node: Node, source: str) -> None:
    if node.kind != "map":
        raise WorkspaceError(
            "executionOrder takes flowsOrder and continueOnFailure", source, node.line, node.column
        )
    order = node.get("flowsOrder")
    if order is not None and not order.is_null:
        config.flows_order = _strings(order, "flowsOrder", source)
    going_on = node.get("continueOnFailure")
    if going_on is not None and going_on.kind == "scalar" and going_on.value is not None:
        word = str(going_on.value).lower()
        if word not in ("true", "false"):
            raise WorkspaceError(
                "continueOnFailure must be true or false", source, going_on.line, going_on.column
            )
        config.continue_on_failure = word == "true"


def glob_pattern(glob: str) -> re.Pattern[str]:
    """A Maestro (Java PathMatcher) glob as a regular expression over paths in the folder: ``*`` and
    ``?`` stay within a folder, ``**`` crosses folders, ``{a,b}`` and ``[…]`` as in a shell."""
    out, index, depth = [], 0, 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            out.append("(?:")
            depth += 1
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
        elif char == "," and depth:
            out.append("|")
        elif char == "[":
            end = glob.find("]", index + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[index + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out).lstrip("/"))


def plan(
    paths: list[str],
    config: WorkspaceConfig,
    headers: dict[str, tuple[str, list[str]]],
    include_tags: list[str] | None = None,
    exclude_tags: list[str] | None = None,
) -> WorkspacePlan:
    """The flows of ``paths`` (relative, ``/``-separated) the workspace runs. ``headers`` gives each flow
    path's name (its header's, else its file's stem) and tags; ``include_tags``/``exclude_tags`` are the
    command line's, added to the config's."""
    flows = sorted(path for path in paths if is_flow_file(path))
    if not flows:
        raise WorkspaceError("the folder holds no flow files (.yaml or .yml)")
    patterns = [glob_pattern(glob) for glob in config.flows]
    matched = [path for path in flows if any(pattern.fullmatch(path) for pattern in patterns)]
    if not matched:
        if config.flows == ["*"]:
            raise WorkspaceError(
                "the folder's top level holds no flows: to run flows in subfolders, list them in "
                "config.yaml's flows (for example flows: ['subfolder/*'])"
            )
        raise WorkspaceError("the config's flow patterns match no flow file: " + ", ".join(config.flows))
    include = [*(include_tags or []), *config.include_tags]
    exclude = [*(exclude_tags or []), *config.exclude_tags]
    kept = [
        path
        for path in matched
        if (not include or any(tag in include for tag in headers.get(path, ("", []))[1]))
        and not any(tag in exclude for tag in headers.get(path, ("", []))[1])
    ]
    if not kept:
        raise WorkspaceError(
            "the tags match no flow (include: " + (", ".join(include) or "none")
            + "; exclude: " + (", ".join(exclude) or "none") + ")"
        )  # fmt: skip
    by_name = {headers.get(path, ("", []))[0] or _stem(path): path for path in kept}
    sequence = _sequence(by_name, config.flows_order)
    rest = [path for path in kept if path not in sequence]
    return WorkspacePlan(sequence, rest, config.continue_on_failure)


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _sequence(by_name: dict[str, str], order: list[str]) -> list[str]:
    """Maestro's executionOrder: the named flows, in order, as far as each is found (a name in the order
    that is no flow ends the sequence there, and names no flow at all is an error)."""
    if not order:
        return []
    if not any(name in by_name for name in order):
        return []
    sequence = []
    for name in order:
        if name not in by_name:
            if not sequence:
                missing = ", ".join(name for name in order if name not in by_name)
                raise WorkspaceError(f"executionOrder names flows that are not found: {missing}")
            break
        sequence.append(by_name[name])
    return sequence
