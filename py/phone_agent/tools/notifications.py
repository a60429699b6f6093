"""Notifications: the device tools list_notifications (``dumpsys notification --noredact``) and
open_notifications (``cmd statusbar expand-notifications|expand-settings``). Pure: the phone is reached
only through the ``Device`` interface.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..errors import DeviceError
from .results import action_result
from .spec import BOOLEAN, STRING, STRING_OR_NULL, CallEnv, ToolSpec, object_schema, result_schema

_RECORD = re.compile(r"^\s*NotificationRecord\(0x[0-9a-f]+: pkg=(\S+) .*?key=(\S+?)(?::| )", re.MULTILINE)
_EXTRA = re.compile(r"^\s*android\.(title|text|bigText)=\w+ \((.*)\)\s*$")
_CREATED = re.compile(r"^\s*(?:mCreationTimeMs|postTime)=(\d+)")


def parse_notifications(text: str) -> list[dict[str, Any]]:
    """The posted notifications of ``dumpsys notification --noredact`` (its Notification List)."""
    found: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        record = _RECORD.match(line)
        if record is not None:
            current = {"packageName": record.group(1), "title": "", "text": "", "postedAt": None,
                       "key": record.group(2)}  # fmt: skip
            found.append(current)
            continue
        if current is None:
            continue
        extra = _EXTRA.match(line)
        if extra is not None:
            field = "text" if extra.group(1) == "bigText" and not current["text"] else extra.group(1)
            if field in ("title", "text") and not current[field]:
                current[field] = extra.group(2)
            continue
        created = _CREATED.match(line)
        if created is not None and current["postedAt"] is None and int(created.group(1)) > 0:
            ms = int(created.group(1))
            current["postedAt"] = (
                time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"
            )
    return found


async def list_notifications(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    result = await phone.device.shell("dumpsys notification --noredact", 20_000)
    if result.exit_code not in (0, -1):
        said = (result.stderr or result.stdout).decode("utf-8", "replace").strip()
        raise DeviceError(f"dumpsys notification failed: {said[:300]}")
    notes = parse_notifications(result.stdout.decode("utf-8", "replace"))
    lines = [f"{n['packageName']}: {n['title']}" + (f" — {n['text']}" if n["text"] else "") for n in notes]
    head = f"{len(notes)} notifications" + (":\n" + "\n".join(lines) if lines else ".")
    return action_result(head, {"notifications": notes})


NOTIFICATION = result_schema(
    {"packageName": STRING, "title": STRING, "text": STRING, "postedAt": STRING_OR_NULL, "key": STRING},
    ["packageName", "title", "text", "postedAt", "key"],
)
LIST_NOTIFICATIONS = ToolSpec(
    name="list_notifications",
    title="List notifications",
    description="The notifications the phone shows now: app, title, text, when posted (UTC) and key.",
    input_schema=object_schema({}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=30_000,
    output_schema=result_schema(
        {"notifications": {"type": "array", "items": NOTIFICATION}}, ["notifications"]
    ),
    untrusted_content=True,
    run=list_notifications,
)


async def open_notifications(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    quick = args["quickSettings"]
    command = f"cmd statusbar {'expand-settings' if quick else 'expand-notifications'}"
    result = await phone.device.shell(command, 15_000)
    if result.exit_code not in (0, -1):
        said = (result.stderr or result.stdout).decode("utf-8", "replace").strip()
        raise DeviceError(f"`{command}` failed: {said[:300]}")
    opened = "quickSettings" if quick else "notifications"
    return action_result(
        f"opened the {'quick settings' if quick else 'notification shade'}", {"opened": opened}
    )


OPEN_NOTIFICATIONS = ToolSpec(
    name="open_notifications",
    title="Open the notification shade",
    description="Pull down the notification shade, or the quick settings with quickSettings=true (back "
    "closes it).",
    input_schema=object_schema(
        {"quickSettings": {**BOOLEAN, "default": False, "description": "Open quick settings instead."}}
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema(
        {"opened": {"type": "string", "enum": ["notifications", "quickSettings"]}}, ["opened"]
    ),
    run=open_notifications,
    agent_action=False,
    idempotent=True,
)
