"""A flow's ``${…}``: a bare ``${NAME}`` from the flow's ``env`` and ``--env``, ``${maestro.copiedText}``
and ``${maestro.platform}`` here, anything else — ``${USER || 'nobody'}``, ``${output.token}`` — by the
run's JavaScript engine (``scripts``); ``${secret:NAME}`` (a secret typed by name) is never expanded into
the flow; ``\\${…}`` stays as written. And ``StepFailed``, how a command says it did not do what it says.
Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .scripts import ScriptError, ScriptSession, bare_name, split_template

# ``inputText: ${secret:NAME}`` (a recorded type_secret) types the secret by name, never spelled out.
SECRET_TEXT = re.compile(r"\$\{secret:([A-Za-z0-9_]{1,64})\}")


class StepFailed(Exception):
    """A command that did not do what it says; the message says why, as the report shows it."""


@dataclass
class Variables:
    """What ``${…}`` may use during a run: the env in scope, what copyTextFrom copied, the JavaScript
    session (None where no engine is at hand), and the lines scripts logged since they were last taken."""

    env: dict[str, str]
    copied: str = ""
    scripts: ScriptSession | None = None
    platform: str = "android"
    logs: list[str] = field(default_factory=list)

    async def expand(self, value: Any, source: str = "", line: int = 0) -> Any:
        """``value`` (a string, or a dict or list of them) with every ``${…}`` replaced."""
        if isinstance(value, dict):
            return {key: await self.expand(inner, source, line) for key, inner in value.items()}
        if isinstance(value, list):
            return [await self.expand(inner, source, line) for inner in value]
        if not isinstance(value, str) or "${" not in value:
            return value
        out = []
        for is_code, part in split_template(value):
            out.append(await self.evaluate(part, source, line) if is_code else part)
        return "".join(out)

    async def evaluate(self, code: str, source: str = "", line: int = 0) -> str:
        """One ``${code}``'s value as text."""
        name = bare_name(code)
        stripped = code.strip()
        if stripped.startswith("secret:"):
            return "${" + code + "}"
        if name is not None and name in self.env:
            return self.env[name]
        if stripped == "maestro.copiedText":
            return self.copied
        if stripped == "maestro.platform":
            return self.platform
        if not stripped:
            return ""
        if self.scripts is None:
            if name is not None:
                raise StepFailed(
                    f"the variable {name} has no value: give it in the flow's env or with --env {name}=VALUE"
                )
            raise StepFailed(f"${{{code}}} needs the page's JavaScript engine, which this run does not have")
        value = await self.run(code, "expression", source, line, {})
        if name is not None and value in ("undefined", "null"):  # a script may have set it; none did
            raise StepFailed(
                f"the variable {name} has no value: give it in the flow's env or with --env {name}=VALUE"
            )
        return value

    async def run(self, code: str, kind: str, source: str, line: int, env: dict[str, str]) -> str:
        """Run JavaScript in the session (``kind``: expression or script), keeping what it logged."""
        if self.scripts is None:
            raise StepFailed("JavaScript needs the page's JavaScript engine, which this run does not have")
        try:
            result = await self.scripts.evaluate(
                code, kind=kind, source=source, line=line, env={**self.env, **env}, copied_text=self.copied
            )
        except ScriptError as exc:
            raise StepFailed(str(exc)) from None
        self.logs.extend(result.logs)
        return result.value

    def take_logs(self) -> list[str]:
        taken, self.logs = self.logs, []
        return taken
