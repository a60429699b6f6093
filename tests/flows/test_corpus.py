"""Our own corpus of Maestro flows (tests/flows/corpus, a workspace; tests/flows/corpus_refused): every
flow of it is read, together they use every command and every key of the grammar, and every flow Maestro
refuses is refused here too, naming the line and column Maestro's own error points at and what it says.
A few of the corpus's flows run on the simulated phone here; bench/bench_flow_corpus.py runs them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from phone_agent.flows import grammar as g
from phone_agent.flows.flow_reader import FlowError
from phone_agent.flows.yaml_nodes import Node, parse_all
from phone_agent.server.flow_files import load_flow, load_workspace
from tests.flows.test_run_flow import call

CORPUS = Path(__file__).parent / "corpus"
REFUSED = Path(__file__).parent / "corpus_refused"


def flow_paths() -> list[Path]:
    return sorted(path for path in CORPUS.rglob("*.yaml") if path.name != "config.yaml")


def test_the_corpus_has_at_least_150_flows_and_every_one_is_read():
    paths = flow_paths()
    assert len(paths) >= 150
    for path in paths:
        load_flow(path, CORPUS, saved_elsewhere=False)  # raises FlowError naming FILE:LINE:COL
    workspace = load_workspace(CORPUS)
    assert not workspace.problems and len(workspace.plan.flows) >= 145


def _uses(node: Node, found: set[tuple[str, str]], where: str = "") -> None:
    """(command, key) pairs a document uses, selectors' and conditions' keys as ("selector", key)."""
    if node.kind == "seq":
        for item in node.value:
            _uses(item, found, where)
        return
    if node.kind != "map":
        if node.kind == "scalar" and where == "commands" and node.value in g.COMMANDS:
            found.add((str(node.value), ""))
        return
    for key, value in node.pairs:
        name = str(key.value)
        if where == "commands" and name in g.COMMANDS:
            found.add((name, ""))
            if value.kind == "map":
                for inner, inner_value in value.pairs:
                    found.add((name, str(inner.value)))
                    kind = g.COMMANDS[name].all_keys().get(str(inner.value))
                    if kind in (g.SEL, g.SELS):
                        _selector_keys(inner_value, found)
                    if kind == g.COND:
                        found.update(("condition", str(k.value)) for k, _ in inner_value.pairs)
                        for k, v in inner_value.pairs:
                            if str(k.value) in ("visible", "notVisible"):
                                _selector_keys(v, found)
                    if kind == g.CMDS:
                        _uses(inner_value, found, "commands")
                if g.COMMANDS[name].selector:
                    _selector_keys(value, found)
        elif where == "commands" and name == "action":
            found.add(("action", str(value.value)))
        elif where == "header":
            found.add(("header", name))
            if name in ("onFlowStart", "onFlowComplete"):
                _uses(value, found, "commands")


def _selector_keys(node: Node, found: set[tuple[str, str]]) -> None:
    items = node.value if node.kind == "seq" else [node]
    for item in items:
        if item.kind == "map":
            for key, value in item.pairs:
                found.add(("selector", str(key.value)))
                if g.SELECTOR_KEYS.get(str(key.value)) in (g.SEL, g.SELS):
                    _selector_keys(value, found)


def test_the_corpus_uses_every_command_and_every_key_of_the_grammar():
    found: set[tuple[str, str]] = set()
    for path in flow_paths():
        documents = [doc for doc in parse_all(path.read_text(encoding="utf-8")) if doc is not None]
        _uses(documents[0], found, "header")
        _uses(documents[1], found, "commands")
    missing = [name for name in g.COMMANDS if (name, "") not in found]
    assert not missing, f"commands no corpus flow uses: {missing}"
    missing_keys = [
        f"{name}.{key}"
        for name, spec in g.COMMANDS.items()
        for key in sorted(set(spec.keys) | set(g.COMMON))
        if (name, key) not in found
    ]
    assert not missing_keys, f"keys no corpus flow uses: {missing_keys}"
    assert not [key for key in g.SELECTOR_KEYS if ("selector", key) not in found]
    assert not [key for key in g.CONDITION_KEYS if ("condition", key) not in found and key != "optional"]
    assert not [key for key in g.HEADER_KEYS if ("header", key) not in found]
    assert not [alias for alias in g.ACTION_ALIASES if ("action", alias) not in found]


def expectations() -> list[tuple[str, int, int, str]]:
    rows = []
    for line in (REFUSED / "expected.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, where, words = line.split("\t")
        row, column = where.split(":")
        rows.append((name, int(row), int(column), words))
    return rows


@pytest.mark.parametrize(("name", "line", "column", "words"), expectations())
def test_every_flow_maestro_refuses_is_refused_naming_line_and_column(name, line, column, words):
    path = REFUSED / name
    with pytest.raises(FlowError) as caught:
        load_flow(path, REFUSED, saved_elsewhere=False)
    assert (caught.value.line, caught.value.column) == (line, column), caught.value.location()
    assert words in caught.value.reason, caught.value.location()
    assert caught.value.location().startswith(f"{path}:{line}:{column}: error: ")


def test_every_refused_flow_has_its_expectation():
    listed = {row[0] for row in expectations()}
    assert listed == {path.name for path in REFUSED.glob("*.yaml")}


@pytest.mark.parametrize(
    "relative",
    ["settings/wifi-off-and-on.yaml", "messages/scripted-message.yaml", "catalog/item-27-price.yaml",
     "login/scripted-credentials.yaml", "system/env-and-filename.yaml"],
)  # fmt: skip
async def test_corpus_flows_run_on_the_simulated_phone(dispatcher, relative):
    loaded = load_flow(CORPUS / relative, CORPUS)
    args = {"yaml": loaded.text, "path": loaded.relative, "files": loaded.files, "media": loaded.media}
    report = (await call(dispatcher, "run_flow", **args))["structuredContent"]
    assert report["passed"], [step for step in report["steps"] if step["status"] != "passed"]
