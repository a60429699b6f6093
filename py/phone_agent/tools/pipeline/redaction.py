"""The secret redaction step: every answer, error, progress line and so every activity row and task
record made of them passes through the page's ``SecretBook`` (a secret typed into a plain field must
not come back as text: ``named_secrets``); images are left to the tools that make them."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def redacting(progress: ProgressSink | None, redact: Redact) -> ProgressSink | None:
    if progress is None:
        return None
    return lambda line: progress(redact(line))


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
