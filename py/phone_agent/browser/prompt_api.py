"""Chrome's built-in model (the Prompt API, ``LanguageModel``) as the agent's ``ChatModel``.

The Prompt API has no function calling, so the tools are described in the system prompt and the
model answers one JSON object ``{"name": …, "arguments": {…}}`` per turn, which the agent's text
action parser reads like any text-only model's answer. Screenshots go in as image inputs (Blobs).
Where ``LanguageModel.availability()`` says the model cannot run (headless Chromium, no on-device
model), ``stream`` raises a ``ModelError`` that says so plainly, and the Settings card shows it.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import JsException, to_js  # type: ignore[import-not-found]

from ..agent.model import Message, ModelError, ModelEvent, TextDelta, ToolSchema, TurnEnd
from .interop import is_nullish, to_js_json

# The languages named: Chrome warns (and may refuse a model) when the output language is not given.
AVAILABILITY_OPTIONS = {
    "expectedInputs": [{"type": "text", "languages": ["en"]}, {"type": "image"}],
    "expectedOutputs": [{"type": "text", "languages": ["en"]}],
}
CHUNK_LIMIT_S = 120.0  # the longest silence inside an on-device answer
CREATE_LIMIT_S = 300.0  # a first use may download the model


def _language_model() -> Any:
    model = getattr(js, "LanguageModel", None)
    return None if is_nullish(model) else model


async def builtin_availability() -> str:
    """``available``, ``downloadable``, ``downloading`` or ``unavailable`` (also without the API)."""
    api = _language_model()
    if api is None:
        return "unavailable"
    try:
        return str(await asyncio.wait_for(_settled(api.availability(to_js_json(AVAILABILITY_OPTIONS))), 10))
    except (JsException, TimeoutError):
        return "unavailable"


async def _settled(promise: Any) -> Any:
    return await promise


def unavailable_text(availability: str) -> str:
    """What a person reads when the built-in model cannot run here."""
    if availability == "unavailable":
        return (
            "Chrome's built-in model is unavailable in this browser (LanguageModel.availability() "
            'answered "unavailable"): it needs desktop Chrome 138+ with the on-device model (Gemini '
            "Nano) and image input; headless and unsupported machines have none. Choose an "
            "OpenAI-compatible provider in Settings instead."
        )
    if availability in ("downloadable", "downloading"):
        return (
            f"Chrome's built-in model is {availability}: the on-device model has to be downloaded "
            "first (it starts on first use; wait and try again)."
        )
    return f"Chrome's built-in model answered availability {availability!r}."


def _blob_from_data_url(url: str) -> Any:
    head, _, data = url.partition(",")
    mime = head[5:].split(";", 1)[0] or "image/png"
    return js.Blob.new(to_js([to_js(base64.b64decode(data))]), to_js_json({"type": mime}))


def _tool_prompt(tools: list[ToolSchema]) -> str:
    if not tools:
        return ""
    lines = [
        "Answer with exactly one JSON object and nothing else: "
        '{"name": "<tool name>", "arguments": {...}}. The tools:'
    ]
    for tool in tools:
        function = tool.get("function", {})
        parameters = json.dumps(function.get("parameters", {}), separators=(",", ":"))
        lines.append(f"- {function.get('name')}: {function.get('description', '')} Arguments: {parameters}")
    return "\n".join(lines)


def prompt_messages(messages: list[Message], tools: list[ToolSchema]) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the Prompt API messages (text and image parts) for OpenAI messages."""
    system: list[str] = []
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            system.append(str(content or ""))
            continue
        parts: list[dict[str, Any]] = []
        if isinstance(content, str) and content:
            parts.append({"type": "text", "value": content})
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    parts.append({"type": "text", "value": part.get("text", "")})
                elif part.get("type") == "image_url":
                    parts.append({"type": "image", "url": part["image_url"]["url"]})
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            written = {"name": function.get("name"), "arguments": function.get("arguments") or "{}"}
            parts.append({"type": "text", "value": json.dumps(written, ensure_ascii=False)})
        if role == "tool":
            parts = [{"type": "text", "value": f"Result: {content}"}]
            role = "user"
        if parts:
            converted.append({"role": "assistant" if role == "assistant" else "user", "content": parts})
    tool_text = _tool_prompt(tools)
    return "\n\n".join([*system, tool_text] if tool_text else system), converted


class PromptApiModel:
    """A ``ChatModel`` over ``LanguageModel``: one fresh session per request (the agent sends the whole
    conversation each time, as with chat completions)."""

    label = "Chrome built-in model"

    async def stream(self, messages: list[Message], tools: list[ToolSchema]) -> AsyncIterator[ModelEvent]:
        api = _language_model()
        availability = await builtin_availability()
        if api is None or availability != "available":
            raise ModelError(unavailable_text(availability if api is not None else "unavailable"))
        system, converted = prompt_messages(messages, tools)
        controller = js.AbortController.new()
        session = None
        try:
            initial = [{"role": "system", "content": system}]
            create = to_js_json({**AVAILABILITY_OPTIONS, "initialPrompts": initial})
            create.signal = controller.signal
            session = await asyncio.wait_for(_settled(api.create(create)), CREATE_LIMIT_S)
            prompt = to_js_json(converted)
            # Images travel as Blobs, put in place of their data URLs.
            for index, message in enumerate(converted):
                for part_index, part in enumerate(message["content"]):
                    if part["type"] == "image":
                        js_part = prompt[index].content[part_index]
                        js_part.value = _blob_from_data_url(part["url"])
                        js.Reflect.deleteProperty(js_part, "url")
            options = js.Object.new()
            options.signal = controller.signal
            reader = session.promptStreaming(prompt, options).getReader()
            while True:
                result = await asyncio.wait_for(_settled(reader.read()), CHUNK_LIMIT_S)
                if result.done:
                    break
                text = str(result.value)
                if text:
                    yield TextDelta(text)
            yield TurnEnd("stop")
        except TimeoutError:
            raise ModelError(
                f"Chrome's built-in model gave no answer within {CHUNK_LIMIT_S:g} s.", retryable=True
            ) from None
        except JsException as exc:
            raise ModelError(f"Chrome's built-in model failed: {exc}") from None
        finally:
            controller.abort()
            if session is not None:
                session.destroy()
