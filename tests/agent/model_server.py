"""A scripted OpenAI-compatible model server on 127.0.0.1 for the agent's tests.

Each POST to ``/v1/chat/completions`` takes the next reply of the script: a tool call, text, an HTTP
error, malformed JSON, a stream that stalls. Replies can be functions of the request (``tap_on``
reads the UI element list the agent sent and taps the element with that label). It streams SSE when
the request asks for ``stream`` and answers one JSON object otherwise, and records every request so
tests can check prompts, tools and images.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

STALL_LIMIT_S = 30.0  # a stalled reply still ends (the test's own bound is far shorter)


@dataclass
class Reply:
    kind: str  # tool, text, status, malformed, stall, silent, bad_args, dynamic
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    status: int = 200
    body: str = ""
    make: Callable[[dict[str, Any]], Reply] | None = None


def call(name: str, thinking: str = "", **args: Any) -> Reply:
    return Reply("tool", name=name, args=args, text=thinking)


def plan(*titles: str) -> Reply:
    return call(
        "submit_plan", "Planning the steps.", steps=[{"title": t, "description": f"{t}."} for t in titles]
    )


def text(content: str) -> Reply:
    return Reply("text", text=content)


def status(code: int, body: str) -> Reply:
    return Reply("status", status=code, body=body)


def malformed() -> Reply:
    return Reply("malformed")


def stall() -> Reply:
    """Headers and a first chunk, then silence."""
    return Reply("stall")


def silent() -> Reply:
    """No answer at all: not even headers."""
    return Reply("silent")


def bad_args(name: str, raw: str) -> Reply:
    return Reply("bad_args", name=name, body=raw)


def dynamic(make: Callable[[dict[str, Any]], Reply]) -> Reply:
    return Reply("dynamic", make=make)


def last_user_text(request: dict[str, Any]) -> str:
    for message in reversed(request["messages"]):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
    return ""


def element_point(request: dict[str, Any], label: str) -> tuple[int, int]:
    """The centre the agent gave for the element with this label in its last screen message."""
    pattern = re.compile(r'^- (?:@e\d+ )?"' + re.escape(label) + r'" .*? at \((\d+), (\d+)\)', re.MULTILINE)
    match = pattern.search(last_user_text(request))
    if match is None:
        raise AssertionError(f"no element {label!r} in the prompt:\n{last_user_text(request)}")
    return int(match.group(1)), int(match.group(2))


def element_ref(request: dict[str, Any], label: str) -> str:
    """The ref the agent gave for the element with this label in its last screen message."""
    pattern = re.compile(r'^- (@e\d+) "' + re.escape(label) + r'" ', re.MULTILINE)
    match = pattern.search(last_user_text(request))
    if match is None:
        raise AssertionError(f"no element {label!r} with a ref in the prompt:\n{last_user_text(request)}")
    return match.group(1)


def tap_ref(label: str, thinking: str = "") -> Reply:
    """A tap on the element by its ref (as the strongest agents address elements)."""

    def make(request: dict[str, Any]) -> Reply:
        return call("tap", thinking or f"I tap {label}.", target=element_ref(request, label))

    return Reply(kind="dynamic", make=make)


def tap_on(label: str, thinking: str = "") -> Reply:
    def make(request: dict[str, Any]) -> Reply:
        x, y = element_point(request, label)
        return call("tap", thinking or f"I tap {label}.", x=x, y=y)

    return dynamic(make)


# ----- scripts several tests run ------------------------------------------------------------------


def wifi_script(settings_thinking: str = "") -> list[Reply]:
    """ "Turn Wi-Fi on" from the home screen: open Settings (step 1), then Network & internet, Wi-Fi."""
    return [
        plan("Open Settings", "Turn Wi-Fi on"),
        tap_on("Settings", settings_thinking),
        call("finish_step", summary="Settings is open"),
        tap_on("Network & internet"),
        tap_on("Wi-Fi"),
        call("finish_task", conclusion="Wi-Fi is on"),
    ]


def message_script(open_thinking: str = "") -> list[Reply]:
    """'Send "see you tomorrow" to Zhang San' in two steps: open the chat, then type and send."""
    return [
        plan("Open the chat with Zhang San", "Send the message"),
        call("open_app", open_thinking, packageName="com.google.android.apps.messaging"),
        tap_on("Zhang San"),
        call("finish_step", summary="The chat is open"),
        tap_on("Text message"),
        call("type_text", text="see you tomorrow"),
        tap_on("Send SMS"),
        call("finish_step", summary="Sent"),
    ]


def stalling_script() -> list[Reply]:
    """Step 1 taps Settings; in step 2 the model starts streaming and then goes silent (``stall``)."""
    return [
        plan("Open Settings", "Wait for the model"),
        tap_on("Settings"),
        call("finish_step", summary="Settings is open"),
        stall(),
    ]


def request_images(request: dict[str, Any]) -> list[Image.Image]:
    images = []
    for message in request["messages"]:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                images.append(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    return images


class ScriptedModelServer:
    """``allow_origin`` (e.g. a page's origin, or ``*``) makes it answer CORS preflights and send
    ``Access-Control-Allow-Origin``, so a browser page on another port can call it; None (the default)
    sends no CORS headers at all, like a provider that does not allow the page."""

    def __init__(self, script: list[Reply] | None = None, allow_origin: str | None = None) -> None:
        self.allow_origin = allow_origin
        self.preflights = 0
        self.script: list[Reply] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def settings(self, api_key: str = "sk-test-SECRET-123") -> Any:
        """The page's model Settings for this server (a custom provider, short time bounds)."""
        from phone_agent.agent.settings import ModelSettings

        return ModelSettings(
            provider="custom",
            base_url=self.base_url,
            model="scripted-vl",
            api_key=api_key,
            request_timeout_ms=5_000,
            idle_timeout_ms=2_000,
        )

    async def start(self) -> ScriptedModelServer:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=2)
        if self._server is not None:
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = await reader.readline()
        if not request_line:
            return
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if request_line.split(b" ", 1)[0] == b"OPTIONS":
            self._preflight(writer, headers)
            await writer.drain()
            return
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        request = json.loads(body)
        self.requests.append(request)
        self.headers.append(headers)
        reply = (
            self.script.pop(0) if self.script else status(500, '{"error": {"message": "script exhausted"}}')
        )
        while reply.kind == "dynamic":
            assert reply.make is not None
            reply = reply.make(request)
        await self._respond(writer, reply, bool(request.get("stream")))

    async def _respond(self, writer: asyncio.StreamWriter, reply: Reply, stream: bool) -> None:
        if reply.kind == "silent":
            await self._wait_stop()
            return
        if reply.kind == "status":
            self._head(writer, reply.status, "application/json", reply.body.encode())
            await writer.drain()
            return
        if reply.kind == "malformed":
            body = b'{"choices": [{"index": 0, "message": {"content": "oops"'
            self._head(
                writer, 200, "text/event-stream" if stream else "application/json", None if stream else body
            )
            if stream:
                writer.write(b"data: " + body + b"\n\n")
            await writer.drain()
            return
        if not stream:
            body = json.dumps(self._completion(reply)).encode()
            self._head(writer, 200, "application/json", body)
            await writer.drain()
            return
        self._head(writer, 200, "text/event-stream", None)
        await self._event(writer, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        if reply.kind == "stall":
            await self._wait_stop()
            return
        for word in re.findall(r"\S+\s*", reply.text):
            await self._event(writer, {"choices": [{"index": 0, "delta": {"content": word}}]})
        if reply.kind in ("tool", "bad_args"):
            arguments = reply.body if reply.kind == "bad_args" else json.dumps(reply.args, ensure_ascii=False)
            first = {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": reply.name, "arguments": ""},
            }
            await self._event(writer, {"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
            third = max(1, len(arguments) // 3)
            for start in range(0, len(arguments), third):
                piece = {"index": 0, "function": {"arguments": arguments[start : start + third]}}
                await self._event(writer, {"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]})
        finish = "tool_calls" if reply.kind in ("tool", "bad_args") else "stop"
        await self._event(writer, {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()

    def _completion(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.kind in ("tool", "bad_args"):
            arguments = reply.body if reply.kind == "bad_args" else json.dumps(reply.args, ensure_ascii=False)
            message["tool_calls"] = [
                {"id": "call_1", "type": "function", "function": {"name": reply.name, "arguments": arguments}}
            ]
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.name else "stop"}
            ],
        }

    def _cors_lines(self) -> list[str]:
        if self.allow_origin is None:
            return []
        return [f"Access-Control-Allow-Origin: {self.allow_origin}", "Vary: Origin"]

    def _preflight(self, writer: asyncio.StreamWriter, headers: dict[str, str]) -> None:
        self.preflights += 1
        lines = ["HTTP/1.1 204 No Content", "Connection: close", "Content-Length: 0", *self._cors_lines()]
        if self.allow_origin is not None:
            asked = headers.get("access-control-request-headers", "content-type, authorization")
            lines += [
                "Access-Control-Allow-Methods: POST, OPTIONS",
                f"Access-Control-Allow-Headers: {asked}",
                "Access-Control-Max-Age: 600",
            ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())

    def _head(self, writer: asyncio.StreamWriter, code: int, content_type: str, body: bytes | None) -> None:
        lines = [f"HTTP/1.1 {code} X", f"Content-Type: {content_type}", "Connection: close"]
        lines += self._cors_lines()
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))

    @staticmethod
    async def _event(writer: asyncio.StreamWriter, data: dict[str, Any]) -> None:
        writer.write(b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n")
        await writer.drain()

    async def _wait_stop(self) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), STALL_LIMIT_S)
        except TimeoutError:
            pass
