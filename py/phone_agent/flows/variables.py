"""A flow's variables: ``${NAME}`` from the flow's ``env`` and ``--env``, ``${maestro.copiedText}``, and
``${secret:NAME}`` (a secret typed by name, never expanded into the flow); and ``StepFailed``, how a
command says it did not do what it says. Pure."""

from __future__ import annotations

import re
from typing import Any

_VARIABLE = re.compile(r"\$\{\s*([^{}]*?)\s*\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
# ``inputText: ${secret:NAME}`` (a recorded type_secret) types the secret by name, never spelled out.
SECRET_TEXT = re.compile(r"\$\{secret:([A-Za-z0-9_]{1,64})\}")


class StepFailed(Exception):
    """A command that did not do what it says; the message says why, as the report shows it."""


def expand(value: Any, env: dict[str, str], copied: str = "") -> Any:
    """``value`` with every ``${NAME}`` replaced from ``env`` (``maestro.copiedText`` too)."""
    if isinstance(value, dict):
        return {key: expand(inner, env, copied) for key, inner in value.items()}
    if isinstance(value, list):
        return [expand(inner, env, copied) for inner in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "maestro.copiedText":
            return copied
        if name.startswith("secret:"):
            return match.group(0)
        if name in env:
            return env[name]
        if _NAME.fullmatch(name):
            raise StepFailed(
                f"the variable {name} has no value: give it in the flow's env or with --env {name}=VALUE"
            )
        raise StepFailed(
            f"${{{name}}} is a JavaScript expression; phone-agent expands ${{NAME}} variables only"
        )

    return _VARIABLE.sub(one, value)
