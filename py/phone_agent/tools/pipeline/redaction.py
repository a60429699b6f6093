"""The secret redaction step: every answer, error, progress line and so every activity row and task
record made of them passes through the page's ``SecretBook`` (a secret typed into a plain field must
not come back as text: ``named_secrets``); images are left to the tools that make them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..named_secrets import SecretBook
from ..spec import ProgressSink
from .call import Call, Next, Result
from .host import PipelineHost

Redact = Callable[[str], str]


def redact_result(result: Result, redact: Redact) -> Result:
    """``result`` with its text parts and its structured content passed through ``redact``."""
    content = [
        {**item, "text": redact(item["text"])} if item.get("type") == "text" and "text" in item else item
        for item in result.get("content", [])
    ]
    clean: Result = {**result, "content": content} if "content" in result else dict(result)
    if "structuredContent" in result:
        clean["structuredContent"] = redact_value(result["structuredContent"], redact)
    return clean


def redact_value(value: Any, redact: Redact) -> Any:
    """Any JSON value with its strings (keys too) passed through ``redact``."""
    return json.loads(redact(json.dumps(value, ensure_ascii=False)))


class RedactedProgress:
    """A call's progress sink whose lines pass through ``redact``; a sink that can ask the call's MCP
    client (the relay's ``ask``: a take over, a confirmation) still can, its questions redacted too."""

    def __init__(self, sink: ProgressSink, redact: Redact) -> None:
        self._sink, self._redact = sink, redact
        asks = getattr(sink, "ask", None)
        self.ask: Callable[[str, str], Awaitable[str | None]] | None = None
        if asks is not None:
            self.ask = lambda kind, message: asks(kind, redact(message))

    def __call__(self, line: str) -> None:
        self._sink(self._redact(line))


def redacting(progress: ProgressSink | None, redact: Redact) -> ProgressSink | None:
    return None if progress is None else RedactedProgress(progress, redact)


class Redaction:
    def __init__(self, host: PipelineHost | None = None) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        book = self.host.secrets if self.host is not None else None
        if not isinstance(book, SecretBook):
            return await call_next(call)
        call.progress = redacting(call.progress, book.redact)
        result = await call_next(call)
        return redact_result(result, book.redact)
