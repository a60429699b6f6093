"""Packages: the device tools that install and manage apps — install_app, uninstall_app, clear_app_data
and set_permission.

install_app reads the APK's manifest here first (``apk.py``): a file that is not an APK is refused
before a byte is sent, and the answer names the package and version it installed. The phone's
refusals come back in Android's words (``INSTALL_FAILED_…`` as install_failed with a remedy; a
permission the app never asked for as invalid_argument). Pure: the phone is reached only through the
``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..device.shell_args import (
    PACKAGE_PATTERN,
    PERMISSION_PATTERN,
    command,
    for_tool,
    package_name,
    permission_name,
)
from ..errors import DeviceError
from .apk import NotAnApk, read_apk
from .files import CLIENT_PATH, CONTENT_BASE64, PUSH_MAX, TRANSFER_TIMEOUT_MS, content_of, transfer_progress
from .results import action_result
from .session import DeviceSession
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .transfer import read_whole, source_of

PACKAGE_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": PACKAGE_PATTERN,
    "description": "The app's exact package name, e.g. com.example.app (list_apps lists them).",
}


async def installed_package(phone: DeviceSession, tool: str, name: str) -> str:
    """``name`` when it is an installed package's exact name; app_not_installed (or invalid_argument for
    something that is no package name) otherwise."""
    package = for_tool(package_name, name, tool, "packageName")
    if package not in await phone.device.list_apps():
        raise errors.app_not_installed(package)
    return package


async def install_app(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    source = source_of(env)
    if source is None:
        data = content_of("install_app", args)
    else:  # the caller's file, streamed: its manifest is read before anything reaches the phone
        data = await read_whole(source, PUSH_MAX, "install_app", transfer_progress(env, "receiving the APK"))
    try:
        info = read_apk(data)
    except NotAnApk as exc:
        raise errors.not_an_apk(str(exc)) from None
    phone = env.session()
    if not args["replace"] and info.package_name in await phone.device.list_apps():
        raise errors.install_failed(
            "INSTALL_FAILED_ALREADY_EXISTS",
            f"Failure [INSTALL_FAILED_ALREADY_EXISTS: {info.package_name} is installed already]",
            "Call install_app with replace=true to update it, or uninstall_app first.",
        )
    sending = transfer_progress(env, f"sending {info.package_name}")
    await phone.device.install_apk(
        data, replace=True, grant_permissions=args["grantPermissions"], progress=sending
    )
    if env.progress is not None:
        env.progress(f"installed {info.package_name}")
    structured = {
        "packageName": info.package_name,
        "versionName": info.version_name,
        "versionCode": info.version_code,
    }
    return action_result(
        f"installed {info.package_name} {info.version_name} (versionCode {info.version_code})", structured
    )


INSTALL_APP = ToolSpec(
    name="install_app",
    title="Install an app",
    description="Install an APK on the phone (sent over ADB sync, installed with pm install): its bytes as "
    "contentBase64, or path (an .apk on your machine, through phone-agent mcp). replace (default true) "
    "updates an installed app keeping its data; grantPermissions grants its runtime permissions. "
    "Answers the package name and version.",
    input_schema=object_schema(
        {
            "path": CLIENT_PATH,
            "contentBase64": CONTENT_BASE64,
            "replace": {**BOOLEAN, "default": True, "description": "Update the app when it is installed."},
            "grantPermissions": {
                **BOOLEAN,
                "default": False,
                "description": "Grant every runtime permission the app asks for (pm install -g).",
            },
        }
    ),
    read_only=False,
    consequential=True,
    relay_timeout_ms=TRANSFER_TIMEOUT_MS,
    output_schema=result_schema(
        {"packageName": STRING, "versionName": STRING, "versionCode": INTEGER},
        ["packageName", "versionName", "versionCode"],
    ),
    run=install_app,
    client_file="upload",
)


def _said(result: Any) -> str:
    return (result.stdout + result.stderr).decode("utf-8", "replace").strip()


async def uninstall_app(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    package = await installed_package(phone, "uninstall_app", args["packageName"])
    keep = args["keepData"]
    result = await phone.device.shell(command("pm", "uninstall", *(["-k"] if keep else []), package), 60_000)
    said = _said(result)
    if "Success" not in said:
        raise DeviceError(
            f"the phone refused to uninstall {package}: {said[:300] or 'no answer'}",
            remedy="A system app cannot be uninstalled (stop_app or clear_app_data it instead); for "
            "another app, check that no device policy protects it.",
            retryable=False,
        )
    return action_result(
        f"uninstalled {package}" + (" (its data kept)" if keep else ""),
        {"packageName": package, "keptData": keep},
    )


UNINSTALL_APP = ToolSpec(
    name="uninstall_app",
    title="Uninstall an app",
    description="Uninstall an app by its exact package name; keepData keeps its data and caches (pm "
    "uninstall -k).",
    input_schema=object_schema(
        {
            "packageName": PACKAGE_NAME,
            "keepData": {**BOOLEAN, "default": False, "description": "Keep the app's data (default false)."},
        },
        required=["packageName"],
    ),
    read_only=False,
    consequential=True,
    relay_timeout_ms=90_000,
    output_schema=result_schema({"packageName": STRING, "keptData": BOOLEAN}, ["packageName", "keptData"]),
    run=uninstall_app,
)


async def clear_app_data(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    package = await installed_package(phone, "clear_app_data", args["packageName"])
    result = await phone.device.shell(command("pm", "clear", package), 60_000)
    said = _said(result)
    if "Success" not in said:
        raise DeviceError(f"the phone did not clear {package}'s data: {said[:300] or 'no answer'}")
    return action_result(f"cleared the data of {package} (it is stopped, as new)", {"packageName": package})


CLEAR_APP_DATA = ToolSpec(
    name="clear_app_data",
    title="Clear an app's data",
    description="Delete an app's data and caches and reset its runtime permissions, as Settings' Clear "
    "storage does (pm clear); the app is stopped.",
    input_schema=object_schema({"packageName": PACKAGE_NAME}, required=["packageName"]),
    read_only=False,
    consequential=True,
    relay_timeout_ms=90_000,
    output_schema=result_schema({"packageName": STRING}, ["packageName"]),
    run=clear_app_data,
    idempotent=True,
)


async def set_permission(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    permission = for_tool(permission_name, args["permission"], "set_permission", "permission")
    phone = env.session()
    package = await installed_package(phone, "set_permission", args["packageName"])
    if "." not in permission:
        permission = "android.permission." + permission.upper()
    granted = args["granted"]
    line = command("pm", "grant" if granted else "revoke", package, permission)
    result = await phone.device.shell(line, 30_000)
    said = _said(result)
    if result.exit_code not in (0, -1) or "Exception" in said:
        reason = said.splitlines()[-1] if said else "no answer"
        if "Unknown package" in said:
            raise errors.app_not_installed(package)
        if "SecurityException" in said or "IllegalArgumentException" in said:
            raise errors.invalid_argument(
                "set_permission",
                "permission",
                f"cannot be changed: {reason.split(': ', 1)[-1]}",
                "Only runtime permissions the app declares in its manifest can be granted or revoked "
                "(dumpsys package PACKAGE lists them under 'runtime permissions').",
            )
        raise DeviceError(f"the phone did not change {permission}: {reason[:300]}")
    verb = "granted" if granted else "revoked"
    return action_result(
        f"{verb} {permission} for {package}",
        {"packageName": package, "permission": permission, "granted": granted},
    )


SET_PERMISSION = ToolSpec(
    name="set_permission",
    title="Grant or revoke a permission",
    description="Grant (granted=true) or revoke a runtime permission of an app, e.g. "
    "android.permission.CAMERA (pm grant / pm revoke).",
    input_schema=object_schema(
        {
            "packageName": PACKAGE_NAME,
            "permission": {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "pattern": PERMISSION_PATTERN,
                "description": "The permission, e.g. android.permission.CAMERA (CAMERA alone means that).",
            },
            "granted": {**BOOLEAN, "description": "true grants it, false revokes it."},
        },
        required=["packageName", "permission", "granted"],
    ),
    read_only=False,
    consequential=True,
    relay_timeout_ms=45_000,
    output_schema=result_schema(
        {"packageName": STRING, "permission": STRING, "granted": BOOLEAN},
        ["packageName", "permission", "granted"],
    ),
    run=set_permission,
    idempotent=True,
)
