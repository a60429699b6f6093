"""Relay, the asyncio front end of the relay core, against a fake page link (no sockets)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from phone_agent.relay.core import RelayCore
from phone_agent.relay.frames import CLOSE_REPLACED, CLOSE_SHUTDOWN
from phone_agent.server.relay import Relay

ANSWER = {"content": [{"type": "text", "text": "ok"}]}


class FakeLink:
    def __init__(self, fail_sends: bool = False) -> None:
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed: tuple[int, str] | None = None
        self.fail_sends = fail_sends

    async def send_text(self, text: str) -> None:
        if self.fail_sends:
            raise ConnectionError("socket gone")
        self.sent.put_nowait(json.loads(text))

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    async def next_sent(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.sent.get(), 5)


def relay(**overrides: int) -> Relay:
    return Relay(RelayCore(timeout_overrides=overrides), self_check_delay_s=0)


async def test_a_failing_progress_handler_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    r = relay()
    link = FakeLink()
    page = await r.page_connected(link)
    delivered: list[int] = []

    async def handler(seq: int, message: str) -> None:
        delivered.append(seq)
        if seq == 1:
            raise RuntimeError("stdout is gone")

    call = asyncio.create_task(r.call("run_agent_task", {"goal": "g"}, handler))
    request = await link.next_sent()
    for seq in (1, 2):
        r.page_frame(page, json.dumps({"id": request["id"], "type": "progress", "seq": seq, "message": "m"}))
    r.page_frame(page, json.dumps({"id": request["id"], "result": ANSWER}))
    with caplog.at_level(logging.WARNING, "phone_agent"):
        assert await asyncio.wait_for(call, 5) == ANSWER
    assert delivered == [1, 2]  # the second report still went out, and before the answer
    assert "could not forward progress 1" in caplog.text


async def test_a_send_that_fails_answers_browser_disconnected_and_forgets_the_call() -> None:
    r = relay()
    await r.page_connected(FakeLink(fail_sends=True))
    result = await asyncio.wait_for(r.call("get_latest_task", {}), 5)
    assert result["isError"] and result["structuredContent"]["code"] == "browser_not_connected"
    assert r.core.pending == {}


async def test_a_timeout_answers_the_timeout_error_and_sends_cancel() -> None:
    r = relay(take_screenshot=50)
    link = FakeLink()
    await r.page_connected(link)
    result = await asyncio.wait_for(r.call("take_screenshot", {}), 5)
    assert result["content"][0]["text"] == 'Tool "take_screenshot" timed out after 50ms'
    request = await link.next_sent()
    assert await link.next_sent() == {"id": request["id"], "type": "cancel"}
    assert r.core.pending == {}


async def test_progress_does_not_extend_the_time_limit() -> None:
    r = relay(run_agent_task=300)
    link = FakeLink()
    page = await r.page_connected(link)
    call = asyncio.create_task(r.call("run_agent_task", {"goal": "g"}))
    request = await link.next_sent()
    for seq in range(1, 8):
        r.page_frame(
            page, json.dumps({"id": request["id"], "type": "progress", "seq": seq, "message": "busy"})
        )
        await asyncio.sleep(0.06)
    result = await asyncio.wait_for(call, 5)
    assert result["content"][0]["text"] == 'Tool "run_agent_task" timed out after 300ms'


async def test_a_cancelled_call_sends_cancel_to_the_page() -> None:
    r = relay()
    link = FakeLink()
    await r.page_connected(link)
    call = asyncio.create_task(r.call("get_latest_task", {}))
    request = await link.next_sent()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await link.next_sent() == {"id": request["id"], "type": "cancel"}
    assert r.core.pending == {}


async def test_a_replaced_page_is_closed_with_the_replaced_code() -> None:
    r = relay()
    old, new = FakeLink(), FakeLink()
    await r.page_connected(old)
    await r.page_connected(new)
    for _ in range(100):
        if old.closed:
            break
        await asyncio.sleep(0.01)
    assert old.closed is not None and old.closed[0] == CLOSE_REPLACED
    assert new.closed is None


async def test_the_self_check_asks_for_device_status_and_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    r = Relay(RelayCore(), self_check_delay_s=0.05)
    link = FakeLink()
    with caplog.at_level(logging.INFO, "phone_agent"):
        page = await r.page_connected(link)
        request = await link.next_sent()
        assert request["tool"] == "get_device_status" and request["args"] == {}
        answer = {"content": [{"type": "text", "text": '{"connected":false}'}]}
        r.page_frame(page, json.dumps({"id": request["id"], "result": answer}))
        for _ in range(100):
            if "device status" in caplog.text:
                break
            await asyncio.sleep(0.01)
    assert 'page connected; device status: {"connected":false}' in caplog.text


async def test_no_self_check_for_a_page_that_left() -> None:
    r = Relay(RelayCore(), self_check_delay_s=0.05)
    link = FakeLink()
    page = await r.page_connected(link)
    r.page_disconnected(page)
    await asyncio.sleep(0.2)
    assert link.sent.empty()


async def test_closing_the_relay_fails_pending_calls_and_closes_the_page() -> None:
    r = relay()
    link = FakeLink()
    await r.page_connected(link)
    call = asyncio.create_task(r.call("take_screenshot", {}))
    await link.next_sent()
    await r.close()
    result = await asyncio.wait_for(call, 5)
    assert result["isError"] and result["structuredContent"]["code"] == "browser_not_connected"
    assert link.closed is not None and link.closed[0] == CLOSE_SHUTDOWN
    assert not r.has_page


async def test_a_call_cancelled_while_its_request_is_being_sent_is_forgotten() -> None:
    r = relay()
    link = FakeLink()
    release = asyncio.Event()
    sending = asyncio.Event()

    async def slow_send(text: str) -> None:
        sending.set()
        await release.wait()

    link.send_text = slow_send  # type: ignore[method-assign]
    await r.page_connected(link)
    call = asyncio.create_task(r.call("get_latest_task", {}))
    await asyncio.wait_for(sending.wait(), 5)
    assert len(r.core.pending) == 1
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert r.core.pending == {}


async def _a_page_came_and_went(r: Relay) -> None:
    r.page_disconnected(await r.page_connected(FakeLink()))


async def test_before_any_page_paired_a_call_answers_at_once_with_the_command_that_gives_the_link() -> None:
    r = Relay(RelayCore(page_url="http://127.0.0.1:7999/"), self_check_delay_s=0, page_wait_s=5)
    started = asyncio.get_running_loop().time()
    none = await r.call("get_latest_task", {})
    assert asyncio.get_running_loop().time() - started < 0.5
    error = none["structuredContent"]
    assert error["code"] == "browser_not_connected" and error["retryable"] is True
    assert none["content"][0]["text"] == (
        "Browser not connected. Open the phone-agent page first. No phone-agent page has connected since "
        "the server started: run `phone-agent url --port 7999` and open the link it prints in Chrome."
    )
    assert error["details"] == {"command": "phone-agent url --port 7999", "neverPaired": True}
    assert "?token=" not in json.dumps(none)  # the link's token never goes to a caller


async def test_before_any_page_paired_a_call_waits_for_a_page_that_is_booting() -> None:
    r = Relay(RelayCore(), self_check_delay_s=0, page_wait_s=5)
    r.page_booting()  # a browser asked /api/config: its page pairs within seconds
    await _a_call_waits_and_a_page_that_pairs_answers_it(r)


async def _a_call_waits_and_a_page_that_pairs_answers_it(r: Relay) -> None:
    call = asyncio.create_task(r.call("get_latest_task", {}))
    await asyncio.sleep(0.2)
    assert not call.done()
    link = FakeLink()
    page = await r.page_connected(link)
    request = await link.next_sent()
    assert request["tool"] == "get_latest_task"
    r.page_frame(page, json.dumps({"id": request["id"], "result": ANSWER}))
    assert await asyncio.wait_for(call, 5) == ANSWER


async def test_a_call_with_no_page_waits_for_one_within_the_page_wait() -> None:
    r = Relay(RelayCore(), self_check_delay_s=0, page_wait_s=5)
    await _a_page_came_and_went(r)  # a page paired before: it may come back (a reload, a new server's page)
    await _a_call_waits_and_a_page_that_pairs_answers_it(r)


async def test_the_page_wait_is_bounded_and_bad_arguments_do_not_wait() -> None:
    r = Relay(RelayCore(), self_check_delay_s=0, page_wait_s=0.3)
    await _a_page_came_and_went(r)
    started = asyncio.get_running_loop().time()
    bad = await r.call("get_task_result", {})
    assert bad["structuredContent"]["code"] == "invalid_argument"
    assert asyncio.get_running_loop().time() - started < 0.2
    none = await r.call("get_latest_task", {})
    assert none["structuredContent"]["code"] == "browser_not_connected"
    assert 0.25 <= asyncio.get_running_loop().time() - started < 2
