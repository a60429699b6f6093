"""Waits: wait_for, the device tool that watches the screen until an element is visible, gone,
enabled, checked or unchecked — bounded by its timeoutMs, optionally held for stableForMs.

The handler stands beside its catalog entry. Pure: the phone is reached only through the ``Device``
interface, and time through the ``DeviceSession``'s clock and sleep.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from .locators import Element
from .results import action_result
from .spec import INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import ELEMENT_SCHEMA, TARGET, parse_tool_target

DEFAULT_WAIT_MS = 5_000
MAX_WAIT_MS = 60_000
WAIT_POLL_S = 0.25
CONDITIONS = ("visible", "gone", "enabled", "checked", "unchecked")


def _condition_met(condition: str, found: list[Element]) -> bool:
    if condition == "gone":
        return not found
    if not found:
        return False
    first = found[0]
    return {
        "visible": True,
        "enabled": first.enabled,
        "checked": first.checked,
        "unchecked": not first.checked,
    }[condition]


async def wait_for(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    target = parse_tool_target("wait_for", args["target"])
    old: Element | None = None
    if target.ref is not None:
        snapshot = phone.state.snapshot
        old = snapshot.by_ref.get(target.ref) if snapshot is not None else None
        if old is None:
            raise errors.unknown_ref(target.ref)
    condition, limit, stable = args["condition"], args["timeoutMs"], args["stableForMs"]
    started = phone.monotonic_ms()
    held_since: float | None = None
    while True:
        snapshot = await phone.screen()
        if old is not None:
            same = snapshot.find_same(old)
            found = [same] if same is not None else []
        else:
            found = target.find(snapshot)
        now = phone.monotonic_ms()
        if _condition_met(condition, found):
            held_since = now if held_since is None else held_since
            if now - held_since >= stable:
                phone.state.snapshot = snapshot
                waited = round(now - started)
                structured: dict[str, Any] = {"waitedMs": waited, "condition": condition}
                text = f'"{target}" is {condition} (after {waited} ms)'
                if found:
                    structured["element"] = found[0].to_json()
                    text += f": {found[0].line()}"
                return action_result(text, structured)
        else:
            held_since = None
        if now - started >= limit:
            raise errors.wait_timed_out(str(target), condition, limit)
        await phone.sleep(min(WAIT_POLL_S, max(0.0, (limit - (now - started)) / 1000)))


WAIT_FOR = ToolSpec(
    name="wait_for",
    title="Wait for an element",
    description="Wait until target is visible, gone, enabled, checked or unchecked, checking the "
    "screen a few times a second, for at most timeoutMs (default 5000, at most 60000); "
    "stableForMs asks the condition to hold that long. Not met in time is a timeout error.",
    input_schema=object_schema(
        {
            "target": TARGET,
            "condition": {
                "type": "string",
                "enum": list(CONDITIONS),
                "description": "What to wait for: visible, gone, enabled, checked or unchecked.",
            },
            "timeoutMs": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_WAIT_MS,
                "default": DEFAULT_WAIT_MS,
                "description": "Longest wait in ms (default 5000, at most 60000).",
            },
            "stableForMs": {
                "type": "integer",
                "minimum": 0,
                "maximum": 10_000,
                "default": 0,
                "description": "The condition must hold this long (default 0).",
            },
        },
        required=["target", "condition"],
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=45_000,
    timeout_arg="timeoutMs",
    output_schema=result_schema(
        {"waitedMs": INTEGER, "condition": STRING, "element": ELEMENT_SCHEMA}, ["waitedMs"]
    ),
    untrusted_content=True,
    run=wait_for,
)
