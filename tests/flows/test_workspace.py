"""Folders of flows as Maestro runs them (config.yaml: flows, includeTags/excludeTags, executionOrder;
--include-tags/--exclude-tags) and ``phone-agent flow check``: every problem of every flow as
FILE:LINE:COL: error: …, exit 0 or 2, no phone needed; and no flow reads a file outside its folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from phone_agent.flows.flow_reader import FlowError
from phone_agent.flows.workspace import WorkspaceConfig, WorkspaceError, glob_pattern, plan, read_config
from phone_agent.server.flow_files import load_flow, load_workspace
from tests.flows.test_cli import phone_agent, write

FLOW = "appId: com.android.settings\n{header}---\n- launchApp\n"


def flow(tags: list[str] | None = None, name: str = "") -> str:
    header = f"name: {name}\n" if name else ""
    header += f"tags: [{', '.join(tags)}]\n" if tags else ""
    return FLOW.format(header=header)


def test_globs_match_as_javas_path_matcher_does():
    assert glob_pattern("*").fullmatch("a.yaml") and not glob_pattern("*").fullmatch("sub/a.yaml")
    assert glob_pattern("sub/*").fullmatch("sub/a.yaml") and not glob_pattern("sub/*").fullmatch(
        "sub/x/a.yaml"
    )
    assert glob_pattern("**").fullmatch("sub/x/a.yaml")
    assert glob_pattern("{login,signup}/*.yaml").fullmatch("signup/b.yaml")
    assert glob_pattern("flow?.yml").fullmatch("flow1.yml") and not glob_pattern("flow?.yml").fullmatch(
        "flow12.yml"
    )


def test_a_plan_takes_the_configs_patterns_tags_and_order():
    paths = ["a.yaml", "b.yaml", "c.yml", "config.yaml", "sub/d.yaml", "notes.txt"]
    headers = {
        "a.yaml": ("Alpha", ["smoke"]),
        "b.yaml": ("", ["slow"]),
        "c.yml": ("", []),
        "sub/d.yaml": ("", ["smoke"]),
    }
    planned = plan(paths, WorkspaceConfig(), headers)
    assert planned.flows == ["a.yaml", "b.yaml", "c.yml"] and planned.sequence == []
    config = read_config(
        "flows:\n  - '*'\n  - sub/*\nincludeTags: smoke\nexecutionOrder:\n  flowsOrder: [d, Alpha]\n"
    )
    planned = plan(paths, config, headers)
    assert planned.sequence == ["sub/d.yaml", "a.yaml"] and planned.flows == []
    planned = plan(paths, WorkspaceConfig(), headers, exclude_tags=["slow"])
    assert planned.flows == ["a.yaml", "c.yml"]
    with pytest.raises(WorkspaceError, match="the tags match no flow"):
        plan(paths, WorkspaceConfig(), headers, include_tags=["nightly"])
    with pytest.raises(WorkspaceError, match="match no flow file"):
        plan(paths, read_config("flows: [nothing/*]\n"), headers)
    with pytest.raises(WorkspaceError, match="holds no flow files"):
        plan(["config.yaml", "x.txt"], WorkspaceConfig(), {})
    with pytest.raises(WorkspaceError) as caught:
        read_config("flows: [a\n", "ws/config.yaml")
    assert (caught.value.source, caught.value.line) == ("ws/config.yaml", 1)


def test_a_workspace_reads_its_flows_and_their_subflows_and_scripts(tmp_path: Path):
    write(tmp_path, "config.yaml", "flows:\n  - tests/*\nexcludeTags: [wip]\n")
    write(
        tmp_path,
        "tests/login.yaml",
        "appId: a\ntags: [smoke]\n---\n- runFlow: ../subflows/open.yaml\n- runScript: ../scripts/s.js\n",
    )
    write(tmp_path, "tests/wip.yaml", flow(["wip"]))
    write(tmp_path, "subflows/open.yaml", "appId: a\n---\n- launchApp\n")
    write(tmp_path, "scripts/s.js", "output.x = 1\n")
    workspace = load_workspace(tmp_path)
    assert workspace.plan.flows == ["tests/login.yaml"] and not workspace.problems
    loaded = workspace.flows["tests/login.yaml"]
    assert set(loaded.files) == {"subflows/open.yaml", "scripts/s.js"} and loaded.tags == ["smoke"]


def test_nothing_outside_the_flows_folder_is_read(tmp_path: Path):
    secret = write(tmp_path, "secret.txt", "hunter2\n")
    folder = tmp_path / "flows"
    cases = {
        "runflow.yaml": ("- runFlow: ../secret.yaml\n", "is outside the flows' folder"),
        "script.yaml": ("- runScript: ../secret.txt\n", "is outside the flows' folder"),
        "absolute.yaml": (f"- runScript: {secret}\n", "write a path relative to the flow's folder"),
        "media.yaml": ("- addMedia:\n    - ../../etc/passwd.png\n", "is outside the flows' folder"),
    }
    for name, (body, words) in cases.items():
        path = write(folder, name, "appId: a\n---\n" + body)
        with pytest.raises(FlowError) as caught:
            load_flow(path)
        assert words in caught.value.reason and caught.value.line == body.count("\n") + 2, caught.value
    os.symlink(secret, folder / "linked.js")
    path = write(folder, "linked.yaml", "appId: a\n---\n- runScript: linked.js\n")
    with pytest.raises(FlowError, match="was not sent"):
        load_flow(path)  # a link inside that points outside is not followed


async def test_flow_check_lists_every_problem_of_a_folder_and_exits_2(tmp_path: Path):
    folder = tmp_path / "flows"
    write(folder, "good.yaml", "appId: a\njsEngine: graaljs\n---\n- launchApp\n- evalScript: ${1 + 1}\n")
    bad = write(folder, "bad.yaml", "appId: a\n---\n- tapOn: {txt: OK}\n- launchApp\n- teleport: home\n")
    broken = write(folder, "broken.yaml", 'appId: a\n---\n- inputText: "never closed\n')
    headless = write(folder, "headless.yaml", "- launchApp\n")
    write(folder, "sub/inner.yaml", "appId: a\n---\n- swipe: {direction: SIDEWAYS}\n")
    code, out, err = await phone_agent("flow", "check", str(folder))
    assert code == 2, (out, err)
    assert f"{bad}:3:11: error: tapOn has no key 'txt'" in out
    assert f"{bad}:5:3: error: unsupported command 'teleport'" in out
    assert f"{broken}:3:14: error: this quoted string is not closed" in out
    assert f"{headless}:1:1: error: a flow has two sections" in out
    inner = folder / "sub" / "inner.yaml"  # a check reads every flow file, a subfolder's too
    assert f"{inner}:3:22: error: direction must be one of UP, DOWN, LEFT, RIGHT" in out
    assert f"{folder / 'good.yaml'}:2:1: note: header key 'jsEngine' changes nothing here" in out
    assert "5 problems" in err
    code, out, err = await phone_agent("flow", "check", str(folder / "good.yaml"))
    assert code == 0, (out, err)
    code, out, _ = await phone_agent("flow", "check", str(folder / "sub" / "inner.yaml"))
    assert code == 2 and "inner.yaml:3:22: error: direction must be one of UP, DOWN, LEFT, RIGHT" in out


async def test_flow_check_reads_a_workspace_with_tags_from_the_command_line(tmp_path: Path):
    write(tmp_path, "config.yaml", "includeTags: [smoke]\n")
    write(tmp_path, "a.yaml", flow(["smoke"]))
    write(tmp_path, "b.yaml", flow(["smoke", "slow"]))
    code, out, err = await phone_agent("flow", "check", str(tmp_path), "--exclude-tags", "slow,flaky")
    assert code == 0 and "1 flow read" in err, (out, err)
    code, out, err = await phone_agent(
        "flow", "check", str(tmp_path), "--include-tags", "nightly", "--exclude-tags", "smoke"
    )
    assert code == 2 and "the tags match no flow" in out


def test_a_flow_in_a_maestro_folder_reads_its_subflows_beside_it_and_nothing_above(tmp_path: Path):
    project = tmp_path / "app" / ".maestro"
    write(project, "subflows/login.yaml", "appId: a\n---\n- launchApp\n")
    flow_path = write(project, "flows/checkout.yaml", "appId: a\n---\n- runFlow: ../subflows/login.yaml\n")
    assert set(load_flow(flow_path).files) == {"subflows/login.yaml"}
    write(tmp_path, "app/secret.js", "steal()\n")
    leaking = write(project, "flows/leak.yaml", "appId: a\n---\n- runScript: ../../secret.js\n")
    with pytest.raises(FlowError, match="outside the flows' folder"):
        load_flow(leaking)


def test_a_flow_reads_the_files_of_the_maestro_project_it_is_in_and_nothing_above(tmp_path: Path):
    # e2e/maestro/tests/… reading ../common/… (a folder named maestro), and a suite whose folder holds
    # Maestro's workspace config: both are the flows' folder of a flow given alone or of a subfolder given.
    suite = tmp_path / "app" / "e2e" / "maestro"
    write(suite, "common/onboarding.yaml", "appId: a\n---\n- runScript: ../elements/ids.js\n")
    write(suite, "elements/ids.js", "output.ok = true\n")
    test = write(suite, "tests/tickets.yaml", "appId: a\n---\n- runFlow: ../common/onboarding.yaml\n")
    assert set(load_flow(test).files) == {"common/onboarding.yaml", "elements/ids.js"}
    write(tmp_path, "app/e2e/secret.js", "steal()\n")
    leaking = write(suite, "tests/leak.yaml", "appId: a\n---\n- runScript: ../../secret.js\n")
    with pytest.raises(FlowError, match="outside the flows' folder"):
        load_flow(leaking)
    configured = tmp_path / "mobile" / "ui-tests"
    write(configured, "config.yaml", "flows:\n  - flows/*\n")
    write(configured, "subflows/login.yaml", "appId: a\n---\n- launchApp\n")
    checkout = write(configured, "flows/checkout.yaml", "appId: a\n---\n- runFlow: ../subflows/login.yaml\n")
    assert set(load_flow(checkout).files) == {"subflows/login.yaml"}
    workspace = load_workspace(configured / "flows")  # a subfolder given: its project's files are read
    assert workspace.plan.flows == ["checkout.yaml"] and not workspace.problems
    # a config.yaml that is no Maestro workspace config does not make its folder a project
    plain = tmp_path / "plain"
    write(plain, "config.yaml", "database: {host: localhost}\n")
    write(plain, "subflows/login.yaml", "appId: a\n---\n- launchApp\n")
    alone = write(plain, "flows/checkout.yaml", "appId: a\n---\n- runFlow: ../subflows/login.yaml\n")
    with pytest.raises(FlowError, match="outside the flows' folder"):
        load_flow(alone)
