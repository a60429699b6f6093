"""People in the loop, for real in the page: named secrets typed unseen on the simulated phone's Login
Demo, from the page's own Settings → Secrets (WebMCP, and the agent by name) and from the relay's server
environment (Channel A); the value is absent from every model request, answer, report, record, the
activity log and the server's log.

The MCP caller is asked too: a take over answered by the client's user, a confirmation refused by it
over HTTP, the person at the page answering first (the client's question withdrawn), and a 2026-07-28
client answering by input requests.

Shares test_agent_page's rig (a served page with the scripted model, the simulated phone, a relay port).
"""

from __future__ import annotations

import asyncio
import json
import os

import mcp.types as types
import pytest

from tests.agent.model_server import Reply, call, plan, tap_on
from tests.browser.rigs import AgentRig as Rig
from tests.browser.rigs import AgentRigSpec
from tests.server.harness import http_session, modern_client, token
from tests.support import eventually, result_text

pytestmark = pytest.mark.browser
RIG = AgentRigSpec()

VALUE = "hunter2"
USERNAME = "id=com.phoneagent.login:id/username"
PASSWORD = "id=com.phoneagent.login:id/password"


async def _save_secret(page, name: str, value: str) -> None:
    await page.fill("#secret-name", name)
    await page.fill("#secret-value", value)
    await page.click("#secret-save")

    async def saved() -> bool:
        # this save's own word: the kept page may still say "saved" from an earlier test's save
        said = (await page.text_content("#secrets-state") or "").strip()
        state = await page.get_attribute("#secrets-state", "data-state")
        return state == "saved" and said.startswith(f"Saved {name}.")

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


async def test_a_page_secret_signs_the_demo_in_through_webmcp_and_the_agent_by_name(fresh: Rig):
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


async def test_a_server_secret_is_typed_over_the_relay_and_never_logged(fresh: Rig):
    os.environ["PHONE_AGENT_SECRET_SERVER_PASSWORD"] = VALUE
    try:
        async with fresh.relayed() as session:
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


def take_over_script() -> list:
    return [
        plan("Sign in to Login Demo"),
        call("open_app", packageName="com.phoneagent.login"),
        Reply("tool", name="take_over", text="I have no password.", args={"reason": "Sign in to Login Demo"}),
        tap_on("Welcome, mobium", "I check the page."),
        call("finish_task", conclusion="Signed in"),
    ]


async def test_a_take_over_is_shown_announced_to_the_mcp_caller_and_ended_by_done(fresh: Rig):
    page = fresh.page
    fresh.model.add(*take_over_script())
    progressed: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progressed.append(message or "")

    async def person() -> str:
        await page.wait_for_selector("#takeover", state="visible", timeout=20_000)
        reason = await page.text_content("#takeover-reason")
        assert await page.get_attribute("html", "data-person") == "takeover"
        # The person signs in on the phone themselves, then says Done.
        phone = fresh.sim.phone
        with phone.locked():
            phone.drafts["com.phoneagent.login:id/username"] = "mobium"
            phone.drafts["com.phoneagent.login:id/password"] = VALUE
            phone._act("sign_in")
        await page.click("#takeover-done")
        return reason

    async with fresh.relayed() as session:
        helper = asyncio.ensure_future(person())
        result = await session.call_tool(
            "run_agent_task", {"goal": "Sign in to Login Demo"}, progress_callback=on_progress
        )
    assert await helper == "Sign in to Login Demo"
    report = result_text(result)
    assert report.startswith("## ✅ Agent Task Completed"), report
    assert "Waiting for you: Sign in to Login Demo" in progressed
    assert await page.is_hidden("#takeover")
    assert fresh.sim.phone.state()["screen"] == "login/welcome"
    assert "Welcome, mobium" in json.dumps(fresh.model.requests[-2])  # the agent looked again


async def test_a_take_over_ended_by_cancel_and_by_the_timeout(fresh: Rig):
    page = fresh.page
    fresh.model.add(*take_over_script())
    run = asyncio.ensure_future(fresh.webmcp_json("run_agent_task", {"goal": "Sign in to Login Demo"}))
    await page.wait_for_selector("#takeover", state="visible", timeout=20_000)
    # Meanwhile the live view's controls are the person's remote control.
    await page.click("#nav-home")

    async def home() -> bool:
        return fresh.sim.phone.state()["screen"] == "home"

    await eventually(home)
    await page.click("#takeover-cancel")
    answer = await run
    assert answer["status"] == "aborted" and answer["error"] == "The person cancelled: Sign in to Login Demo"
    assert await page.is_hidden("#takeover")

    await fresh.idle()
    fresh.model.script.clear()
    fresh.model.add(*take_over_script())
    answer = await fresh.webmcp_json(
        "run_agent_task", {"goal": "Sign in to Login Demo", "takeoverTimeoutMs": 1500}
    )
    assert answer["status"] == "aborted" and answer["error"] == "Nobody took over within 2 s"
    assert await page.is_hidden("#takeover")


def send_script() -> list:
    return [
        plan("Send the message"),
        call("open_app", packageName="com.google.android.apps.messaging"),
        tap_on("Zhang San"),
        call("type_text", text="see you tomorrow", target="id=compose_message_text"),
        tap_on("Send SMS"),
        plan("Stop"),
        call("finish_task", conclusion="Not sent"),
    ]


async def test_a_sensitive_action_refused_and_left_unanswered(fresh: Rig):
    page = fresh.page
    fresh.model.add(*send_script())
    run = asyncio.ensure_future(fresh.webmcp_json("run_agent_task", {"goal": "Send it to Zhang San"}))
    await page.wait_for_selector("#confirm", state="visible", timeout=20_000)
    assert "sending a message" in await page.text_content("#confirm-action")
    await page.click("#confirm-no")
    answer = await run
    assert fresh.sim.phone.state()["sent"] == []
    record = await fresh.webmcp_json("get_task_result", {"taskId": answer["taskId"]})
    assert record["steps"][0]["status"] == "failed"
    assert record["steps"][0]["error"] == "Not confirmed: the person refused"

    await fresh.idle()
    fresh.sim.phone.reset()
    fresh.model.script.clear()
    fresh.model.add(*send_script())
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Send it", "confirmTimeoutMs": 1000})
    record = await fresh.webmcp_json("get_task_result", {"taskId": answer["taskId"]})
    assert record["steps"][0]["error"] == "Not confirmed: nobody answered within 1 s"
    assert fresh.sim.phone.state()["sent"] == [] and await page.is_hidden("#confirm")


async def test_a_react_task_reaches_the_goal_a_plan_one_reaches(fresh: Rig):
    page = fresh.page
    fresh.sim.phone.set_wifi(False)
    fresh.model.add(tap_on("Settings"), tap_on("Network & internet"), tap_on("Wi-Fi"))
    fresh.model.add(call("finish_task", conclusion="Wi-Fi is on"))
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on", "mode": "react"})
    assert answer["status"] == "finished" and fresh.sim.phone.state()["wifi"] is True
    assert (answer["stepsCompleted"], answer["totalSteps"]) == (4, 4)
    assert not any("submit_plan" in json.dumps(r["tools"]) for r in fresh.model.requests)

    # The page's Setting makes ReAct the default, for the relay's caller too (same report format).
    await page.select_option("#settings-agent-mode", "react")
    await page.wait_for_selector("#agent-options-state[data-mode=react]", state="attached")
    try:
        fresh.sim.phone.reset()
        fresh.sim.phone.set_wifi(False)
        fresh.model.script.clear()
        fresh.model.add(tap_on("Settings"), tap_on("Network & internet"), tap_on("Wi-Fi"))
        fresh.model.add(call("finish_task", conclusion="Wi-Fi is on"))
        async with fresh.relayed() as session:
            result = await session.call_tool("run_agent_task", {"goal": "Turn Wi-Fi on"})
        report = result_text(result)
        assert report.startswith("## ✅ Agent Task Completed"), report
        assert "**Steps**: 4/4 succeeded" in report and "### ✅ Step 1: tap" in report
        assert fresh.sim.phone.state()["wifi"] is True
    finally:
        await page.select_option("#settings-agent-mode", "plan")


async def _open_thread_with_draft(rigged: Rig) -> None:
    phone = rigged.sim.phone
    with phone.locked():
        phone.launch("com.google.android.apps.messaging")
        phone._act("conversation:Zhang San")
        phone.drafts["Zhang San"] = "see you tomorrow"
        phone._act("focus:com.google.android.apps.messaging:id/compose_message_text")


async def test_direct_mcp_calls_are_asked_only_with_confirm_always(fresh: Rig):
    page = fresh.page
    await _open_thread_with_draft(fresh)
    async with fresh.relayed() as session:
        sent = await session.call_tool("tap", {"target": "desc=Send SMS"})
        assert sent.is_error is not True, result_text(sent)
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert await page.is_hidden("#confirm")

    fresh.sim.phone.reset()
    await _open_thread_with_draft(fresh)
    await page.wait_for_selector("#relay-badge.mcp-badge--off", state="attached", timeout=15_000)
    async with fresh.relayed("--confirm", "always") as session:
        refused = asyncio.ensure_future(session.call_tool("tap", {"target": "desc=Send SMS"}))
        await page.wait_for_selector("#confirm", state="visible", timeout=15_000)
        assert "sending a message" in await page.text_content("#confirm-action")
        await page.click("#confirm-no")
        result = await refused
        assert result.is_error is True and result_text(result).startswith("Not confirmed: the person refused")
        assert fresh.sim.phone.state()["sent"] == []
        allowed = asyncio.ensure_future(session.call_tool("tap", {"target": "desc=Send SMS"}))
        await page.wait_for_selector("#confirm", state="visible", timeout=15_000)
        await page.click("#confirm-yes")
        assert (await allowed).is_error is not True
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]


async def test_a_saved_secret_survives_a_reload_and_still_types(fresh: Rig):
    page = fresh.page
    await _save_secret(page, "KEPT_PASSWORD", VALUE)
    await page.reload()
    await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
    await page.uncheck("#live-toggle")  # as the rig's pages run
    try:
        await page.wait_for_selector('#secret-list li[data-secret="KEPT_PASSWORD"]', state="attached")
        assert await page.input_value("#secret-value") == ""
        fresh.sim.phone.launch("com.phoneagent.login")
        await fresh.webmcp("type_text", {"text": "mobium", "target": USERNAME})
        answer = await fresh.webmcp(
            "type_secret", {"name": "KEPT_PASSWORD", "target": PASSWORD, "submit": True}
        )
        assert not answer.get("isError"), answer
        assert fresh.sim.phone.state()["screen"] == "login/welcome"  # decrypted to the very value
    finally:
        await _delete_secret(page, "KEPT_PASSWORD")


# -- the MCP caller is asked too (elicitation, 2025-11-25) ------------------------------------------


class CallerUser:
    """The MCP client's elicitation callback: the user behind the caller. ``act`` runs before it answers
    ``reply``; without a reply it never answers (until the server withdraws the question)."""

    def __init__(self, reply: types.ElicitResult | None, act=None, before=None) -> None:
        self.reply, self.act, self.before = reply, act, before
        self.messages: list[str] = []
        self.withdrawn = asyncio.Event()

    async def __call__(self, _context, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.messages.append(params.message)
        if self.reply is None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn.set()
                raise
        if self.before is not None:
            await self.before()
        if self.act is not None:
            self.act()
        return self.reply


def _sign_in_on_the_phone(phone) -> None:
    with phone.locked():
        phone.drafts["com.phoneagent.login:id/username"] = "mobium"
        phone.drafts["com.phoneagent.login:id/password"] = VALUE
        phone._act("sign_in")


async def test_the_mcp_caller_takes_over_and_the_page_card_closes(fresh: Rig):
    page = fresh.page
    fresh.model.add(*take_over_script())
    user = CallerUser(
        types.ElicitResult(action="accept", content={"done": True}),
        act=lambda: _sign_in_on_the_phone(fresh.sim.phone),
        before=lambda: page.wait_for_selector("#takeover", state="visible", timeout=20_000),
    )
    async with fresh.relayed(elicitation_callback=user) as session:
        result = await session.call_tool("run_agent_task", {"goal": "Sign in to Login Demo"})
    report = result_text(result)
    assert report.startswith("## ✅ Agent Task Completed"), report
    assert len(user.messages) == 1 and "Sign in to Login Demo" in user.messages[0]
    assert VALUE not in user.messages[0]
    assert fresh.sim.phone.state()["screen"] == "login/welcome"
    assert await page.is_hidden("#takeover")
    assert await page.get_attribute("html", "data-person") is None


async def test_over_http_the_mcp_caller_refuses_a_sensitive_action(fresh: Rig):
    page = fresh.page
    fresh.model.add(*send_script())
    user = CallerUser(
        types.ElicitResult(action="decline"),
        before=lambda: page.wait_for_selector("#confirm", state="visible", timeout=20_000),
    )
    bearer = await asyncio.to_thread(token)
    async with fresh.relayed():  # starts the shared server the page relays to
        async with http_session(fresh.relay_port, bearer, elicitation_callback=user) as session:
            result = await session.call_tool("run_agent_task", {"goal": "Send it to Zhang San"})
    assert result.is_error is not True, result_text(result)
    assert len(user.messages) == 1 and "sending a message" in user.messages[0]
    assert fresh.sim.phone.state()["sent"] == []
    assert "Not confirmed: the person refused" in result_text(result)
    assert await page.is_hidden("#confirm")


async def test_the_person_at_the_page_answers_first_and_the_callers_question_is_withdrawn(fresh: Rig):
    page = fresh.page
    fresh.model.add(*take_over_script())
    user = CallerUser(None)

    async def person() -> None:
        await page.wait_for_selector("#takeover", state="visible", timeout=20_000)
        async with asyncio.timeout(20):
            while not user.messages:  # the caller was asked too
                await asyncio.sleep(0.05)
        _sign_in_on_the_phone(fresh.sim.phone)
        await page.click("#takeover-done")

    async with fresh.relayed(elicitation_callback=user) as session:
        helper = asyncio.ensure_future(person())
        result = await session.call_tool("run_agent_task", {"goal": "Sign in to Login Demo"})
        await helper
        await asyncio.wait_for(user.withdrawn.wait(), 20)
    assert result_text(result).startswith("## ✅ Agent Task Completed"), result_text(result)
    assert fresh.sim.phone.state()["screen"] == "login/welcome"


async def test_a_2026_mcp_caller_takes_over_by_input_requests(fresh: Rig):
    page = fresh.page
    fresh.model.add(*take_over_script())
    user = CallerUser(
        types.ElicitResult(action="accept"),
        act=lambda: _sign_in_on_the_phone(fresh.sim.phone),
        before=lambda: page.wait_for_selector("#takeover", state="visible", timeout=20_000),
    )
    async with fresh.relayed():  # starts the shared server the page relays to
        async with modern_client(fresh.relay_port, elicitation_callback=user) as client:
            result = await client.call_tool("run_agent_task", {"goal": "Sign in to Login Demo"})
    assert result_text(result).startswith("## ✅ Agent Task Completed"), result_text(result)
    assert len(user.messages) == 1 and "Sign in to Login Demo" in user.messages[0]
    assert fresh.sim.phone.state()["screen"] == "login/welcome"
    assert await page.is_hidden("#takeover")
