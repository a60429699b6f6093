"""People in the loop, for real in the page: named secrets typed unseen on the simulated phone's Login
Demo, from the page's own Settings → Secrets (WebMCP, and the agent by name) and from the relay's server
environment (Channel A); the value is absent from every model request, answer, report, record, the
activity log and the server's log.

Shares test_agent_page's rig (a served page with the scripted model, the simulated phone, a relay port).
"""

from __future__ import annotations

import json
import os

import pytest

from tests.agent.model_server import Reply, call, plan
from tests.browser.test_agent_page import Rig, fresh, rig  # noqa: F401 (the shared fixtures)
from tests.support import eventually, mcp_stdio_session, result_text

pytestmark = pytest.mark.browser

VALUE = "hunter2"
USERNAME = "id=com.phoneagent.login:id/username"
PASSWORD = "id=com.phoneagent.login:id/password"


async def _save_secret(page, name: str, value: str) -> None:
    await page.fill("#secret-name", name)
    await page.fill("#secret-value", value)
    await page.click("#secret-save")

    async def saved() -> bool:
        return await page.get_attribute("#secrets-state", "data-state") == "saved"

    await eventually(saved)


async def _delete_secret(page, name: str) -> None:
    await page.click(f'#secret-list button.secret-delete[data-secret="{name}"]')
    await page.wait_for_selector(f'#secret-list li[data-secret="{name}"]', state="detached")


def sign_in_script() -> list:
    return [
        plan("Sign in to Login Demo"),
        call("open_app", "I open Login Demo.", packageName="com.phoneagent.login"),
        call("type_text", text="mobium", target=USERNAME),
        Reply(
            "tool",
            name="type_secret",
            text="I type the password by its name.",
            args={"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True},
        ),
        call("finish_task", conclusion="Signed in as mobium"),
    ]


async def test_a_page_secret_signs_the_demo_in_through_webmcp_and_the_agent_by_name(fresh: Rig):  # noqa: F811
    page = fresh.page
    await _save_secret(page, "DEMO_PASSWORD", VALUE)
    try:
        assert await page.input_value("#secret-value") == ""  # never shown again
        item = page.locator('#secret-list li[data-secret="DEMO_PASSWORD"]')
        assert await item.get_attribute("data-source") == "page"
        # Kept encrypted: the stored record holds no value in the clear, and the key cannot be exported.
        stored = await page.evaluate(
            """() => new Promise((resolve, reject) => {
                const open = indexedDB.open("phone-agent");
                open.onsuccess = () => {
                  const db = open.result;
                  const tx = db.transaction(["settings", "keys"], "readonly");
                  const sealed = tx.objectStore("settings").get("secrets");
                  const key = tx.objectStore("keys").get("secrets-key");
                  tx.oncomplete = () => resolve({
                    sealed: sealed.result, extractable: key.result.extractable,
                    algorithm: key.result.algorithm.name, usages: key.result.usages});
                  tx.onerror = () => reject(tx.error);
                };
                open.onerror = () => reject(open.error);
            })"""
        )
        assert VALUE not in json.dumps(stored) and "DEMO_PASSWORD" in stored["sealed"]
        assert (stored["extractable"], stored["algorithm"]) == (False, "AES-GCM")

        # WebMCP: type_secret into the password field; an unknown name lists the known ones.
        fresh.sim.phone.launch("com.phoneagent.login")
        typed = await fresh.webmcp("type_text", {"text": "mobium", "target": USERNAME})
        assert not typed.get("isError"), typed
        answer = await fresh.webmcp(
            "type_secret", {"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True}
        )
        assert not answer.get("isError"), answer
        assert fresh.sim.phone.state()["screen"] == "login/welcome"
        unknown = await fresh.webmcp("type_secret", {"name": "NOT_THERE"})
        assert unknown["structuredContent"]["code"] == "invalid_argument"
        assert "DEMO_PASSWORD" in unknown["structuredContent"]["remedy"]

        # The agent, told the goal with the secret's name only.
        fresh.sim.phone.reset()
        fresh.model.add(*sign_in_script())
        result = await fresh.webmcp_json(
            "run_agent_task", {"goal": "Sign in to Login Demo as mobium using the secret DEMO_PASSWORD"}
        )
        assert result["status"] == "finished", result
        assert fresh.sim.phone.state()["screen"] == "login/welcome"
        assert "DEMO_PASSWORD" in json.dumps(fresh.model.requests[1])  # the prompt lists the name
        record = await fresh.webmcp_json("get_task_result", {"taskId": result["taskId"]})
        assert [c["name"] for c in record["steps"][0]["toolCalls"]][2] == "type_secret"
        activity = await page.text_content("#activity")
        panel = await page.text_content("#agent-tasks")
        for where in (
            json.dumps(fresh.model.requests),
            json.dumps(answer),
            json.dumps(record),
            activity,
            panel,
        ):
            assert VALUE not in where
        assert VALUE not in await page.content()
    finally:
        await _delete_secret(page, "DEMO_PASSWORD")


async def test_a_server_secret_is_typed_over_the_relay_and_never_logged(fresh: Rig):  # noqa: F811
    os.environ["PHONE_AGENT_SECRET_SERVER_PASSWORD"] = VALUE
    try:
        async with mcp_stdio_session(*fresh.relay_args()) as session:
            await fresh.relay_connected()
            item = fresh.page.locator('#secret-list li[data-secret="SERVER_PASSWORD"]')
            await item.wait_for(state="attached", timeout=10_000)
            assert await item.get_attribute("data-source") == "server"
            fresh.sim.phone.launch("com.phoneagent.login")
            await session.call_tool("type_text", {"text": "mobium", "target": USERNAME})
            result = await session.call_tool(
                "type_secret", {"name": "SERVER_PASSWORD", "target": PASSWORD, "submit": True}
            )
            assert result.is_error is not True, result_text(result)
            assert fresh.sim.phone.state()["screen"] == "login/welcome"
            assert VALUE not in result_text(result) and VALUE not in result.model_dump_json()
    finally:
        del os.environ["PHONE_AGENT_SECRET_SERVER_PASSWORD"]
    home = os.environ["PHONE_AGENT_HOME"]
    logs = [
        os.path.join(root, name)
        for root, _, names in os.walk(home)
        for name in names
        if name.endswith(".log")
    ]
    assert logs, "the background server keeps a log"
    for path in logs:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        assert VALUE not in text, path
    assert "SERVER_PASSWORD" in "".join(open(p, encoding="utf-8", errors="replace").read() for p in logs)
    # The relay gone, the server's names go with it.
    await fresh.page.wait_for_selector('#secret-list li[data-secret="SERVER_PASSWORD"]', state="detached")
