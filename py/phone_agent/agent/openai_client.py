"""The OpenAI-compatible chat-completions client: OpenAI, DashScope, Ollama, vLLM, LM Studio, OpenRouter.

Streams over SSE (text token by token, tool-call arguments assembled from their deltas) or asks for
one whole answer. Every wait is bounded: the answer's headers by ``request_timeout_ms``, each chunk of
a stream by ``idle_timeout_ms``. Every failure becomes a ``ModelError`` a person can act on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from .model import ChatModel, Message, ModelError, ModelEvent, ToolSchema
from .ports import HttpClient, HttpResponse, NetworkError
from .settings import ModelSettings
from .sse import ChatChunkAssembler, SseParser

ERROR_BODY_CHARS = 300


def provider_message(body: bytes) -> str:
    """The provider's own words from an error body (``{"error": {"message"}}`` or the text itself)."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text[:ERROR_BODY_CHARS] or "no details"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("msg") or error.get("detail")
            if message:
                return str(message)[:ERROR_BODY_CHARS]
        elif isinstance(error, str):
            return error[:ERROR_BODY_CHARS]
        if isinstance(data.get("message"), str):
            return data["message"][:ERROR_BODY_CHARS]
    return text[:ERROR_BODY_CHARS]


class OpenAIChatModel:
    """A ``ChatModel`` over an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(self, settings: ModelSettings, http: HttpClient, page_origin: str = "") -> None:
        self.settings = settings
        self.http = http
        self.page_origin = page_origin

    @property
    def label(self) -> str:
        return f"{self.settings.provider_label} model {self.settings.model}"

    @property
    def url(self) -> str:
        base = self.settings.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def request_body(self, messages: list[Message], tools: list[ToolSchema]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.stream:
            body["stream"] = True
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream, application/json"}
        if self.settings.api_key:
            headers["authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    async def stream(self, messages: list[Message], tools: list[ToolSchema]) -> AsyncIterator[ModelEvent]:
        body = json.dumps(self.request_body(messages, tools), ensure_ascii=False).encode()
        response = await self._post(body)
        try:
            if response.status != 200:
                raise self.http_error(response.status, await self._read_bounded(response))
            content_type = response.headers.get("content-type", "")
            if self.settings.stream and "text/event-stream" in content_type:
                async for event in self._events_from_stream(response):
                    yield event
            else:
                raw = await self._read_bounded(response)
                for event in self.events_from_body(raw):
                    yield event
        finally:
            await response.aclose()

    async def _post(self, body: bytes) -> HttpResponse:
        timeout_ms = self.settings.request_timeout_ms
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                return await self.http.post(self.url, body, self._headers(), timeout_ms)
        except NetworkError as exc:
            raise self.network_error(exc) from None
        except TimeoutError:
            raise ModelError(
                f"The {self.label} at {self.settings.base_url} did not answer within "
                f"{timeout_ms / 1000:g} s.",
                retryable=True,
            ) from None

    async def _read_bounded(self, response: HttpResponse) -> bytes:
        try:
            async with asyncio.timeout(self.settings.request_timeout_ms / 1000):
                return await response.read()
        except TimeoutError:
            raise ModelError(
                f"The {self.label} sent no complete answer within "
                f"{self.settings.request_timeout_ms / 1000:g} s.",
                retryable=True,
            ) from None
        except NetworkError as exc:
            raise ModelError(f"The connection to the {self.label} broke: {exc}", retryable=True) from None

    async def _events_from_stream(self, response: HttpResponse) -> AsyncIterator[ModelEvent]:
        parser = SseParser()
        assembler = ChatChunkAssembler()
        chunks = response.chunks()
        idle_s = self.settings.idle_timeout_ms / 1000
        done = False
        while not done:
            try:
                async with asyncio.timeout(idle_s):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                events = parser.finish()
                done = True
            except TimeoutError:
                raise ModelError(
                    f"The {self.label} stopped sending its answer: nothing arrived for {idle_s:g} s.",
                    retryable=True,
                ) from None
            except NetworkError as exc:
                raise ModelError(
                    f"The connection to the {self.label} broke mid-answer: {exc}", retryable=True
                ) from None
            else:
                events = parser.feed(chunk)
            for sse in events:
                data = sse.data.strip()
                if data == "[DONE]":
                    done = True
                    break
                if not data:
                    continue
                chunk_json = self._json(data)
                if "error" in chunk_json and not chunk_json.get("choices"):
                    raise ModelError(
                        f"The {self.label} reported an error mid-answer: {provider_message(data.encode())}"
                    )
                for event in assembler.add_chunk(chunk_json):
                    yield event
        if not assembler.saw_choice:
            raise ModelError(f"The {self.label} ended its answer without any content.", retryable=True)
        for event in assembler.finish():
            yield event

    def events_from_body(self, raw: bytes) -> list[ModelEvent]:
        """The events of one non-streamed completion (or an SSE body sent without its content type)."""
        text = raw.decode("utf-8", errors="replace").strip()
        if text.startswith("data:"):
            parser = SseParser()
            assembler = ChatChunkAssembler()
            events: list[ModelEvent] = []
            for sse in parser.feed(raw) + parser.finish():
                if sse.data.strip() and sse.data.strip() != "[DONE]":
                    events += assembler.add_chunk(self._json(sse.data))
            return events + assembler.finish()
        data = self._json(text)
        if "error" in data and not data.get("choices"):
            raise ModelError(f"The {self.label} reported an error: {provider_message(raw)}")
        assembler = ChatChunkAssembler()
        events = assembler.add_chunk(data)
        if not assembler.saw_choice:
            raise ModelError(f"The {self.label} answered without any choices: {text[:ERROR_BODY_CHARS]}")
        return events + assembler.finish()

    def _json(self, text: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, ValueError) as exc:
            raise ModelError(
                f"The {self.label} answered malformed JSON ({exc}): {text[:120]!r}", retryable=True
            ) from None
        if not isinstance(value, dict):
            raise ModelError(f"The {self.label} answered JSON that is not an object: {text[:120]!r}")
        return value

    def http_error(self, status: int, body: bytes) -> ModelError:
        said = provider_message(body)
        where = f"{self.settings.provider_label} ({self.url})"
        if status == 401:
            message = f"{where} refused the API key (HTTP 401): {said}. Check the API key in Settings."
        elif status == 403:
            message = (
                f"{where} denied access (HTTP 403): {said}. Check the key's permissions and that "
                f"the model {self.settings.model!r} is enabled for it."
            )
        elif status == 404:
            message = (
                f"{where} answered HTTP 404: {said}. Check the base URL (it usually ends in /v1) and "
                f"the model name {self.settings.model!r}."
            )
        elif status == 429:
            message = f"{where} is rate-limiting or out of quota (HTTP 429): {said}. Wait, or check the plan."
        elif status >= 500:
            message = f"{where} failed (HTTP {status}): {said}. The provider's server had a problem."
        else:
            message = f"{where} rejected the request (HTTP {status}): {said}"
        return ModelError(message, status=status, retryable=status == 429 or status >= 500)

    def network_error(self, exc: BaseException) -> ModelError:
        origin = self.page_origin or "this page's origin"
        return ModelError(
            f"Could not reach the {self.label} at {self.settings.base_url}: the request got no answer "
            f"({exc}). Either the server is not running or unreachable, or it does not allow requests "
            f"from {origin} (CORS): {self.settings.cors_advice(self.page_origin)}.",
            retryable=False,
        )


def chat_model_for(
    settings: ModelSettings | None,
    http: HttpClient,
    page_origin: str = "",
    builtin: Callable[[ModelSettings], ChatModel | None] | None = None,
) -> ChatModel | None:
    """The model these settings name: the OpenAI-compatible client, or (provider ``chrome``) what
    ``builtin`` makes (the page's Prompt API adapter); None when nothing usable is configured."""
    if settings is None or not settings.is_complete:
        return None
    if settings.provider == "chrome":
        return builtin(settings) if builtin is not None else None
    return OpenAIChatModel(settings, http, page_origin)
