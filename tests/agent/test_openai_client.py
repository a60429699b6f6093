"""The OpenAI-compatible client against the scripted server: streamed and whole answers, every error
bounded and explained, the key sent but never shown."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from phone_agent.agent.model import ModelError, collect_turn
from phone_agent.agent.openai_client import OpenAIChatModel
from phone_agent.agent.settings import ModelSettings
from tests.agent.model_server import call, malformed, silent, stall, status, text
from tests.support import free_port

TOOLS = [{"type": "function", "function": {"name": "tap", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_call_and_thinking_streamed_or_whole(settings, http, model_server, stream):
    model = OpenAIChatModel(dataclasses.replace(settings, stream=stream), http)
    model_server.add(call("tap", "I will tap the button.", x=5, y=6))
    deltas: list[str] = []
    turn = await collect_turn(model, MESSAGES, TOOLS, deltas.append)
    assert turn.text == "I will tap the button."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("tap", {"x": 5, "y": 6})]
    assert len(deltas) == (5 if stream else 1)  # token by token when streamed
    request = model_server.requests[0]
    assert request.get("stream", False) is stream
    assert request["model"] == "scripted-vl" and request["tools"] == TOOLS
    assert model_server.headers[0]["authorization"] == "Bearer sk-test-SECRET-123"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (401, "refused the API key (HTTP 401): bad key. Check the API key in Settings."),
        (403, "denied access (HTTP 403): bad key."),
        (404, "answered HTTP 404: bad key. Check the base URL"),
        (429, "rate-limiting or out of quota (HTTP 429): bad key."),
        (500, "failed (HTTP 500): bad key."),
        (418, "rejected the request (HTTP 418): bad key"),
    ],
)
async def test_http_errors_name_the_providers_answer(model, model_server, code, expected):
    model_server.add(status(code, '{"error": {"message": "bad key", "type": "x"}}'))
    with pytest.raises(ModelError) as raised:
        await collect_turn(model, MESSAGES, TOOLS)
    assert expected in str(raised.value)
    assert raised.value.status == code
    assert raised.value.retryable is (code in (429, 500))
    assert "SECRET" not in str(raised.value)


async def test_plain_text_error_bodies_are_quoted(model, model_server):
    model_server.add(status(502, "Bad Gateway from nginx"))
    with pytest.raises(ModelError, match="HTTP 502\\): Bad Gateway from nginx"):
        await collect_turn(model, MESSAGES, TOOLS)


@pytest.mark.parametrize("stream", [True, False])
async def test_malformed_json(settings, http, model_server, stream):
    model = OpenAIChatModel(dataclasses.replace(settings, stream=stream), http)
    model_server.add(malformed())
    with pytest.raises(ModelError, match="malformed JSON"):
        await collect_turn(model, MESSAGES, TOOLS)


async def test_a_stalled_stream_ends_at_the_idle_limit(settings, http, model_server):
    model = OpenAIChatModel(dataclasses.replace(settings, idle_timeout_ms=300), http)
    model_server.add(stall())
    with pytest.raises(ModelError, match=r"nothing arrived for 0\.3 s"):
        await asyncio.wait_for(collect_turn(model, MESSAGES, TOOLS), 3)


async def test_no_answer_at_all_ends_at_the_request_limit(settings, http, model_server):
    model = OpenAIChatModel(dataclasses.replace(settings, request_timeout_ms=400), http)
    model_server.add(silent())
    with pytest.raises(ModelError, match=r"did not answer within 0\.4 s"):
        await asyncio.wait_for(collect_turn(model, MESSAGES, TOOLS), 3)


@pytest.mark.parametrize(
    ("provider", "advice"),
    [
        ("ollama", "OLLAMA_ORIGINS=http://127.0.0.1:7788 ollama serve"),
        ("lmstudio", "Enable CORS"),
        ("vllm", "--allowed-origins"),
        ("custom", "Ollama with OLLAMA_ORIGINS=http://127.0.0.1:7788"),
    ],
)
async def test_an_unreachable_provider_explains_cors(http, provider, advice):
    settings = ModelSettings(
        provider=provider, base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", api_key="k"
    )
    model = OpenAIChatModel(settings, http, page_origin="http://127.0.0.1:7788")
    with pytest.raises(ModelError) as raised:
        await collect_turn(model, MESSAGES, TOOLS)
    message = str(raised.value)
    assert "does not allow requests from http://127.0.0.1:7788 (CORS)" in message
    assert advice in message


async def test_text_answers_arrive_as_text(model, model_server):
    model_server.add(text("click(start_box='(1,2)')"))
    turn = await collect_turn(model, MESSAGES, TOOLS)
    assert turn.tool_calls == [] and turn.text == "click(start_box='(1,2)')"
