"""Apps: the device tools that open, stop and name the phone's apps — open_app, stop_app, open_url,
list_apps and get_current_app.

Each handler stands beside its catalog entry. A package may be named by a part of its name that picks
one installed app (``settings`` → ``com.android.settings``). ``app_json`` is how every tool reports an
app (also list_elements). Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

import re
from typing import Any

from .. import errors
from .results import action_result
from .session import DeviceSession, current_app_or_none
from .spec import BOOLEAN, STRING, STRING_OR_NULL, CallEnv, ToolSpec, object_schema, result_schema

PACKAGE = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "description": "The app's package name, e.g. com.android.settings (list_apps lists them); a part "
    "of one that names a single installed app is accepted too.",
}
APP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"packageName": STRING_OR_NULL, "activityName": STRING_OR_NULL},
    "required": ["packageName", "activityName"],
}


def app_json(focus: str | None) -> dict[str, Any]:
    """``package/activity`` (as ``Device.current_app`` answers) as the tools report an app."""
    if not focus or "/" not in focus:
        return {"packageName": focus or None, "activityName": None}
    package, activity = focus.split("/", 1)
    if activity.startswith("."):
        activity = package + activity
    return {"packageName": package, "activityName": activity}


_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")


async def resolve_package(phone: DeviceSession, tool: str, name: str) -> str:
    """An installed package for ``name``: itself, or the one installed package whose name contains it
    (``settings`` → ``com.android.settings``); app_not_installed or invalid_argument otherwise."""
    wanted = name.strip()
    packages = await phone.device.list_apps()
    if wanted in packages:
        return wanted
    if _PACKAGE.fullmatch(wanted):
        raise errors.app_not_installed(wanted)
    key = wanted.lower().replace(" ", "")
    found = [package for package in packages if package.lower().rsplit(".", 1)[-1] == key]
    if not found:
        found = [package for package in packages if key and key in package.lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise errors.app_not_installed(wanted)
    raise errors.invalid_argument(
        tool,
        "packageName",
        f"matches several installed packages ({', '.join(found[:8])})",
        f"Call {tool} with one of those package names.",
    )


async def open_app(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    package = await resolve_package(phone, "open_app", args["packageName"])
    await phone.device.open_app(package)
    return action_result(f"opened {package}", {"packageName": package})


OPEN_APP = ToolSpec(
    name="open_app",
    title="Open an app",
    description="Open an installed app by its package name (its launcher activity).",
    input_schema=object_schema({"packageName": PACKAGE}, required=["packageName"]),
    read_only=False,
    consequential=False,
    relay_timeout_ms=30_000,
    output_schema=result_schema({"packageName": STRING}, ["packageName"]),
    run=open_app,
    agent_action=True,
)


async def stop_app(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    package = await resolve_package(phone, "stop_app", args["packageName"])
    await phone.device.stop_app(package)
    return action_result(f"stopped {package}", {"packageName": package})


STOP_APP = ToolSpec(
    name="stop_app",
    title="Stop an app",
    description="Force-stop an installed app by its package name.",
    input_schema=object_schema({"packageName": PACKAGE}, required=["packageName"]),
    read_only=False,
    consequential=False,
    relay_timeout_ms=30_000,
    output_schema=result_schema({"packageName": STRING}, ["packageName"]),
    run=stop_app,
    idempotent=True,
)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


async def open_url(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    url = args["url"].strip()
    if not _URL.fullmatch(url) or any(ord(ch) < 32 for ch in url):
        raise errors.invalid_argument(
            "open_url", "url", "is not a URL", "Give an absolute URL such as https://example.com/."
        )
    await phone.device.open_url(url)
    app = app_json(await current_app_or_none(phone.device))
    return action_result(
        f"opened {url} in {app['packageName'] or 'an app'}", {"url": url, "packageName": app["packageName"]}
    )


OPEN_URL = ToolSpec(
    name="open_url",
    title="Open a URL",
    description="Open a URL (https://…, or an app link) in the app the phone chooses for it; answers "
    "which app took it.",
    input_schema=object_schema(
        {
            "url": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4000,
                "description": "An absolute URL, e.g. https://example.com/.",
            }
        },
        required=["url"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=30_000,
    output_schema=result_schema({"url": STRING, "packageName": STRING_OR_NULL}, ["url", "packageName"]),
    run=open_url,
    agent_action=True,
)


async def list_apps(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    packages = await phone.device.list_apps(third_party_only=not args["includeSystem"])
    which = "installed" if args["includeSystem"] else "user-installed (includeSystem=true lists all)"
    text = f"{len(packages)} {which} apps:\n" + "\n".join(packages)
    return action_result(text, {"apps": [{"packageName": package} for package in packages]})


LIST_APPS = ToolSpec(
    name="list_apps",
    title="List installed apps",
    description="The installed apps' package names: user-installed ones, or all with includeSystem=true.",
    input_schema=object_schema(
        {
            "includeSystem": {
                **BOOLEAN,
                "default": False,
                "description": "Also list the system's own apps (default false).",
            }
        }
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=20_000,
    output_schema=result_schema(
        {
            "apps": {
                "type": "array",
                "items": result_schema({"packageName": STRING, "label": STRING}, ["packageName"]),
            }
        },
        ["apps"],
    ),
    run=list_apps,
)


async def get_current_app(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    app = app_json(await phone.device.current_app())
    if app["packageName"] is None:
        return action_result("No app window has the focus.", app)
    return action_result(f"{app['packageName']}/{app['activityName']}", app)


GET_CURRENT_APP = ToolSpec(
    name="get_current_app",
    title="Get the current app",
    description="The package and activity of the app in the foreground.",
    input_schema=object_schema({}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=APP_SCHEMA,
    untrusted_content=True,
    run=get_current_app,
)
