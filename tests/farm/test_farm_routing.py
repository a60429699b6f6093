"""Routing over the farm: ``phone-agent mcp --farm`` (real subprocesses, the SDK's stdio client) calls
pages played by Python on a real nats-server. Every answer must come from the phone the call named."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import AsyncExitStack

import jsonschema
import mcp.types as types

from phone_agent.farm.frames import farm_envelope
from phone_agent.relay.frames import CallFrame
from phone_agent.tools.catalog import listed_tools, tools_for_profile
from tests.farm.support import (
    PAGE_USERS,
    FarmBroker,
    PythonPage,
    SteppedAgent,
    farm_mcp,
    routed_calls,
    structured,
)
from tests.support import eventually, mcp_stdio_session, result_text

SERIALS = ("farm-a", "farm-b", "farm-c")


async def start_pages(broker: FarmBroker, **options) -> list[PythonPage]:
    pairs = zip(PAGE_USERS, SERIALS, strict=True)
    pages = [PythonPage(broker, user, serial, **options) for user, serial in pairs]
    for page in pages:
        await page.start()
    return pages


async def listed(session) -> list[dict]:
    return structured(await session.call_tool("list_devices", {}))["devices"]


async def test_every_tool_is_offered_with_a_device_and_list_devices(broker: FarmBroker):
    async with farm_mcp(broker) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert list(tools) == [spec.name for spec in listed_tools()] + ["list_devices"]
        assert [name for name, tool in tools.items() if not tool.output_schema] == []
        for spec in listed_tools():
            schema = tools[spec.name].input_schema
            assert schema["properties"]["device"]["type"] == "string"
            assert "device" not in schema.get("required", [])
        empty = await session.call_tool("get_device_status", {})
        assert empty.is_error and empty.structured_content["code"] == "no_device"
        assert await listed(session) == []
        for wrong in ({"device": "farm-a"}, {"verbose": True}):  # list_devices takes no argument
            refused = await session.call_tool("list_devices", wrong)
            assert refused.is_error and refused.structured_content["code"] == "invalid_argument"
            assert refused.structured_content["details"]["field"] == next(iter(wrong))


async def test_list_devices_answers_what_its_output_schema_says(broker: FarmBroker):
    page = PythonPage(broker, PAGE_USERS[0], SERIALS[0])
    await page.start()
    try:
        async with farm_mcp(broker) as session:
            tools = (await session.list_tools()).tools
            schema = next(t for t in tools if t.name == "list_devices").output_schema
            devices = await eventually(lambda: _one(session), timeout_s=10)
            answer = structured(await session.call_tool("list_devices", {}))
            jsonschema.validate(answer, schema)
            assert devices[0]["serial"] == SERIALS[0] and devices[0]["state"] == "idle"
            assert isinstance(devices[0]["since"], int) and devices[0]["since"] > 0
    finally:
        await page.close()


async def _one(session) -> list[dict] | None:
    devices = await listed(session)
    return devices if len(devices) == 1 else None


async def test_calls_land_on_the_phone_they_name_from_two_servers(broker: FarmBroker):
    pages = await start_pages(broker)
    try:
        async with AsyncExitStack() as stack:
            servers = [await stack.enter_async_context(farm_mcp(broker)) for _ in range(2)]
            for session in servers:
                devices = await eventually(lambda s=session: _three(s), timeout_s=10)
                assert [d["serial"] for d in devices] == list(SERIALS)
                assert {d["state"] for d in devices} == {"idle"}
                assert devices[0]["model"] == "Model of farm-a" and devices[0]["screen"] == "1080x2400"

            # Omitted with several phones: invalid_argument naming them.
            which = await servers[0].call_tool("get_device_status", {})
            assert which.is_error and which.structured_content["code"] == "invalid_argument"
            assert all(serial in result_text(which) for serial in SERIALS)
            unknown = await servers[1].call_tool("take_screenshot", {"device": "nope"})
            assert unknown.is_error and unknown.structured_content["code"] == "no_device"
            assert "list_devices" in unknown.structured_content["remedy"]

            # 1 000 calls spread over the phones and the servers, all at once in waves.
            elapsed, misrouted = await routed_calls(servers, SERIALS, 1000, wave=100)
            assert misrouted == []
            assert sum(page.served for page in pages) == 1000
            print(f"1000 routed calls in {elapsed:.2f}s")
    finally:
        for page in pages:
            await page.close()


async def _three(session):
    devices = await listed(session)
    return devices if len(devices) == 3 else None


async def test_any_spreads_agent_tasks_over_idle_phones_and_records_outlive_the_page(broker: FarmBroker):
    pages = await start_pages(broker, agent_s=0.6)
    try:
        async with farm_mcp(broker) as first, farm_mcp(broker) as second:
            await eventually(lambda: _three(first), timeout_s=10)
            await eventually(lambda: _three(second), timeout_s=10)
            progress: list[str] = []

            async def run(session, goal):
                async def on_progress(value, total, message):
                    progress.append(message)

                return await session.call_tool(
                    "run_agent_task", {"goal": goal, "device": "any"}, progress_callback=on_progress
                )

            reports = await asyncio.gather(run(first, "one"), run(second, "two"), run(first, "three"))
            texts = [result_text(report) for report in reports]
            assert not any(report.is_error for report in reports), texts
            used = {serial for serial in SERIALS for text in texts if f"done on {serial}" in text}
            assert used == set(SERIALS), texts
            assert any(message.startswith("working on farm-") for message in progress)

            # The task record outlives its page and is read from the other server.
            task = pages[0].context.get_all_tasks()[-1]
            await pages[0].close()
            await eventually(lambda: _count(second, 2), timeout_s=10)
            record = await second.call_tool("get_task_result", {"taskId": task.id})
            assert not record.is_error, result_text(record)
            assert structured(record)["taskId"] == task.id
            assert structured(record)["status"] == "finished"
            assert structured(record)["conclusion"] == "done on farm-a"
            latest = await first.call_tool("get_latest_task", {"device": "farm-a"})
            assert structured(latest)["taskId"] == task.id
    finally:
        for page in pages:
            await page.close()


async def _count(session, wanted):
    devices = await listed(session)
    return devices if len(devices) == wanted else None


async def test_a_page_closed_mid_call_costs_its_caller_no_device_and_nobody_else_anything(broker: FarmBroker):
    pages = await start_pages(broker, heartbeat_s=0.5)
    slow = pages[1]
    slow.context.device.delay_s = 30.0  # its screenshot never comes back in time
    try:
        async with farm_mcp(broker) as session:
            await eventually(lambda: _three(session), timeout_s=10)
            call = asyncio.ensure_future(session.call_tool("take_screenshot", {"device": "farm-b"}))
            await eventually(lambda: _async(slow.served >= 1), timeout_s=5)
            closed_at = time.monotonic()
            await slow.close()
            answer = await asyncio.wait_for(call, 10)
            waited = time.monotonic() - closed_at
            assert answer.is_error and answer.structured_content["code"] == "no_device", result_text(answer)
            assert "list_devices" in answer.structured_content["remedy"]
            assert waited < 5.0
            devices = await listed(session)
            assert [d["serial"] for d in devices] == ["farm-a", "farm-c"]
            for serial in ("farm-a", "farm-c"):
                status = await session.call_tool("get_device_status", {"device": serial})
                assert structured(status)["serial"] == serial
            gone = await session.call_tool("get_device_status", {"device": "farm-b"})
            assert gone.structured_content["code"] == "no_device"
            # A page that says goodbye leaves at once.
            await pages[2].close(say_goodbye=True)
            await eventually(lambda: _count(session, 1), timeout_s=2)
            only = await session.call_tool("get_device_status", {})
            assert structured(only)["serial"] == "farm-a"
    finally:
        for page in pages:
            await page.close()


async def _async(value):
    return value


async def test_a_page_refuses_a_call_for_another_phone(broker: FarmBroker):
    import nats

    [page] = [PythonPage(broker, "phone1", "farm-a")]
    await page.start()
    try:
        nc = await nats.connect(broker.nats_url("mcp"))
        try:
            envelope = farm_envelope("farm-z", CallFrame("x1", "get_device_status", {}).to_wire())
            reply = await nc.request(page.service.subject, envelope.encode(), timeout=5)
            answer = json.loads(reply.data)
            assert answer["id"] == "x1" and answer["result"]["isError"] is True
            assert answer["result"]["structuredContent"]["code"] == "no_device"
            assert "farm-z" in answer["result"]["content"][0]["text"]
        finally:
            await nc.close()
    finally:
        await page.close()


async def test_a_call_the_server_gives_up_on_is_cancelled_in_its_page(broker: FarmBroker):
    [page] = [PythonPage(broker, "phone2", "farm-b", agent_s=30.0)]
    await page.start()
    try:
        async with farm_mcp(broker, "--tool-timeout", "run_agent_task=1500") as session:
            await eventually(lambda: _count(session, 1), timeout_s=10)
            started = time.monotonic()
            # device omitted: the farm holds one phone
            answer = await session.call_tool("run_agent_task", {"goal": "Wait long"})
            assert answer.is_error and answer.structured_content["code"] == "timeout", result_text(answer)
            assert time.monotonic() - started < 10
            # The cancel frame reached the page: its agent stopped, the phone is free again.
            await eventually(lambda: _async(not page.context.is_running()), timeout_s=5)
            task = page.context.get_all_tasks()[-1]
            assert task.goal == "Wait long"
    finally:
        await page.close()


async def test_the_tool_profile_narrows_the_farm_tools_but_keeps_list_devices(broker: FarmBroker):
    async with farm_mcp(broker, "--tools", "read-only") as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names == [spec.name for spec in tools_for_profile("read-only")] + ["list_devices"]
        refused = await session.call_tool("run_agent_task", {"goal": "x", "device": "any"})
        assert refused.is_error and refused.structured_content["code"] == "unknown_tool"
        assert not (await session.call_tool("list_devices", {})).is_error


class AskingAgent(SteppedAgent):
    """Hands the phone over as the real agent does: asks the call's caller through its progress sink
    (``ask``, the farm page's link) and concludes with the caller's answer."""

    async def run(self, task, device, timeout_ms, progress):
        answer = await progress.ask("takeover", f"Take over {device.serial}: sign in")
        task = await super().run(task, device, timeout_ms, progress)
        task.conclusion = f"the caller answered {answer}"
        return task


async def test_an_agent_on_a_farm_page_asks_the_mcp_caller_too(broker: FarmBroker):
    pages = await start_pages(broker)
    pages[1].context.agent = AskingAgent(0.05)
    asked: list[str] = []

    async def elicit(_context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    try:
        async with mcp_stdio_session("--farm", broker.nats_url(), elicitation_callback=elicit) as session:
            await eventually(lambda: _three(session), timeout_s=10)
            report = await session.call_tool("run_agent_task", {"goal": "Sign in", "device": SERIALS[1]})
            assert not report.is_error, result_text(report)
            assert "the caller answered cancel" in result_text(report)
            assert asked == [f"Take over {SERIALS[1]}: sign in"]
    finally:
        for page in pages:
            await page.close()
