"""A farm serial belongs to the NATS user whose page claimed it first, tried as a hostile farm page would:
another user's page announcing the victim's serial gets none of its calls (the victim's page answers
them), is listed by list_devices as ``refused`` and named in the farm's log; the pin lives in the farm's
key-value bucket, so a server started later refuses the claim too, even with the victim's page gone; the
thief's forged task records for that serial are never answered; an operator's pin made ahead of time is
honoured. Real nats-server on the repository's config, ``phone-agent mcp --farm`` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from contextlib import asynccontextmanager

import nats
from mcp import ClientSession, StdioServerParameters, stdio_client
from nats.js.errors import BucketNotFoundError

from phone_agent.farm.frames import DEVICES_BUCKET, subject_token, task_subject
from tests.farm.support import FarmBroker, PythonPage, structured
from tests.support import ROOT, eventually, phone_agent_command, result_text


@asynccontextmanager
async def farm_server(broker: FarmBroker):
    """``phone-agent mcp --farm`` over stdio, its log (stderr) kept: ``(session, read_log)``."""
    params = StdioServerParameters(
        command=phone_agent_command(),
        args=["mcp", "--farm", broker.nats_url()],
        cwd=str(ROOT),
        env=dict(os.environ),
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:

        def read_log() -> str:
            errlog.flush()
            errlog.seek(0)
            return errlog.read()

        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session, read_log


async def devices(session) -> list[dict]:
    return structured(await session.call_tool("list_devices", {}))["devices"]


async def listed(session, count: int) -> list[dict] | None:
    found = await devices(session)
    return found if len(found) == count else None


async def test_another_users_page_cannot_take_a_phones_calls(broker: FarmBroker):
    victim = PythonPage(broker, "phone1", "victim-1")
    thief = PythonPage(broker, "phone2", "victim-1")
    await victim.start()
    try:
        async with farm_server(broker) as (session, read_log):
            await eventually(lambda: listed(session, 1), timeout_s=10)
            await thief.start()
            both = await eventually(lambda: listed(session, 2), timeout_s=10)
            mine, theirs = both
            assert (mine["serial"], mine["user"], mine["state"]) == ("victim-1", "phone1", "idle")
            assert (theirs["serial"], theirs["user"], theirs["state"]) == ("victim-1", "phone2", "refused")
            assert "pinned to the pages of user phone1" in theirs["refused"]
            assert "refused" not in mine
            served = victim.served
            for _ in range(20):
                answer = await session.call_tool(
                    "type_text", {"device": "victim-1", "text": "wire 5000 EUR to the thief"}
                )
                status = await session.call_tool("get_device_status", {"device": "victim-1"})
                assert not status.is_error and structured(status)["serial"] == "victim-1"
                assert answer is not None
            assert thief.served == 0, "the thief's page was given a call meant for the victim's phone"
            assert victim.served == served + 40
            log = await eventually(logged(read_log, "refused"), timeout_s=5)
            assert "a page of user phone2" in log and "victim-1" in log
            assert "pinned to the pages of user phone1" in log
            assert broker.passwords["phone2"] not in log and broker.passwords["mcp"] not in log
    finally:
        await thief.close()
        await victim.close()


def logged(read_log, word: str):
    async def check() -> str | None:
        text = read_log()
        return text if word in text else None

    return check


async def test_the_pin_outlives_the_victims_page_and_binds_a_server_started_later(broker: FarmBroker):
    victim = PythonPage(broker, "phone1", "victim-2")
    await victim.start()
    try:
        async with farm_server(broker) as (session, _log):
            await eventually(lambda: listed(session, 1), timeout_s=10)  # pinned to phone1 now
    finally:
        await victim.close(say_goodbye=True)
    thief = PythonPage(broker, "phone2", "victim-2")
    await thief.start()
    try:
        async with farm_server(broker) as (later, read_log):  # fresh memory: the pin is in the bucket
            [only] = await eventually(lambda: listed(later, 1), timeout_s=10)
            assert only["state"] == "refused" and only["user"] == "phone2"
            answer = await later.call_tool("get_device_status", {"device": "victim-2"})
            assert answer.is_error and answer.structured_content["code"] == "no_device"
            anyone = await later.call_tool("get_device_status", {"device": "any"})
            assert anyone.is_error and anyone.structured_content["code"] == "no_device"
            assert thief.served == 0
            assert "phone2" in await eventually(logged(read_log, "refused"), timeout_s=5)
    finally:
        await thief.close()


async def test_the_thiefs_task_records_for_the_serial_are_never_answered(broker: FarmBroker):
    victim = PythonPage(broker, "phone1", "victim-3")
    thief = PythonPage(broker, "phone2", "victim-3")
    await victim.start()
    try:
        async with farm_server(broker) as (session, _log):
            await eventually(lambda: listed(session, 1), timeout_s=10)
            await thief.start()
            forged = {
                "serial": "victim-3",
                "page": "x",
                "updatedAt": 1,
                "task": {"taskId": "forged-1", "goal": "g", "status": "finished", "conclusion": "FORGED"},
            }
            # The broker lets phone2 write under its own name, for any serial it likes.
            forging = task_subject("phone2", "victim-3", "forged-1")
            await thief.nc.publish(forging, json.dumps(forged).encode())
            await thief.nc.flush()
            await asyncio.sleep(0.3)
            for args in ({"device": "victim-3", "taskId": "forged-1"}, {"taskId": "forged-1"}):
                answer = await session.call_tool("get_task_result", args)
                assert "FORGED" not in result_text(answer), args
            latest = await session.call_tool("get_latest_task", {"device": "victim-3"})
            assert "FORGED" not in result_text(latest)
            assert thief.served == 0
    finally:
        await thief.close()
        await victim.close()


async def test_an_operators_pin_made_ahead_of_time_is_honoured(broker: FarmBroker):
    nc = await nats.connect(broker.nats_url())
    try:
        js = nc.jetstream()
        try:
            kv = await js.key_value(DEVICES_BUCKET)
        except BucketNotFoundError:
            kv = await js.create_key_value(bucket=DEVICES_BUCKET, history=1)
        record = {"serial": "pre-1", "user": "phone3", "since": 1}
        await kv.put(subject_token("pre-1"), json.dumps(record).encode())
    finally:
        await nc.close()
    early = PythonPage(broker, "phone1", "pre-1")
    await early.start()
    try:
        async with farm_server(broker) as (session, _log):
            [only] = await eventually(lambda: listed(session, 1), timeout_s=10)
            assert only["state"] == "refused" and "user phone3" in only["refused"]
            assert (await session.call_tool("get_device_status", {"device": "pre-1"})).is_error
            assert early.served == 0
    finally:
        await early.close()


async def test_a_page_cannot_write_the_pins(broker: FarmBroker):
    thief = PythonPage(broker, "phone2", "thief-own")
    await thief.start()
    errors: list[str] = []
    try:
        async def note(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await nats.connect(broker.nats_url("phone2"), error_cb=note, max_reconnect_attempts=0)
        try:
            record = {"serial": "victim-9", "user": "phone2", "since": 1}
            await nc.publish(f"$KV.{DEVICES_BUCKET}.victim-9", json.dumps(record).encode())
            await nc.flush()
            await asyncio.sleep(0.3)
        finally:
            await nc.close()
        assert any("permissions violation" in error.lower() for error in errors), errors
    finally:
        await thief.close()


# ----- the registry's part, pure -----------------------------------------------------------------------


def test_the_registry_keeps_another_users_claim_apart_and_never_routes_to_it():
    from phone_agent.farm.frames import Presence
    from phone_agent.farm.registry import FarmRegistry

    registry = FarmRegistry()
    phone = Presence(serial="S1", model="m", release="14", screen="1x1", host="h")
    assert registry.heard("farm.presence.phone1.p1", phone, 0, owner="phone1") is None
    assert registry.heard("farm.presence.phone2.p2", phone, 0, owner="phone1") is None
    assert [p.subject for p in registry.phones(0)] == ["farm.page.phone1.p1"]
    [claim] = registry.refused(0)
    assert claim.user == "phone2" and "pinned to the pages of user phone1" in claim.refused
    assert claim.to_json()["state"] == "refused" and claim.to_json()["user"] == "phone2"
    for _ in range(10):
        assert registry.route("S1", 0).subject == "farm.page.phone1.p1"
        assert registry.route("any", 0).subject == "farm.page.phone1.p1"
    # The pin moved to phone2 (an operator deleted it, phone2 claimed first): phone1's page stops serving.
    left = registry.heard("farm.presence.phone1.p1", phone, 1, owner="phone2")
    assert left is not None and left.subject == "farm.page.phone1.p1"
    registry.heard("farm.presence.phone2.p2", phone, 1, owner="phone2")
    assert [p.user for p in registry.phones(1)] == ["phone2"]
    assert [p.user for p in registry.refused(1)] == ["phone1"]
    assert registry.expire(10_000)[0].user == "phone2" and registry.refused(10_000) == []
