"""What Android's package manager answers to ``pm install``, in the tools' words: ``Success``, or
``Failure [INSTALL_FAILED_… : why]`` turned into an ``install_failed`` ToolError with a remedy for the
reasons a developer meets. Pure: no I/O.
"""

from __future__ import annotations

import re

from ..errors import ToolError, install_failed

_FAILURE = re.compile(r"Failure \[([A-Z0-9_]+)(?::?\s*([^\]]*))?\]")
_ANY_REASON = re.compile(r"\b(INSTALL_(?:FAILED|PARSE_FAILED)_[A-Z0-9_]+)")

REMEDIES: dict[str, str] = {
    "INSTALL_FAILED_ALREADY_EXISTS": "The app is installed already: call install_app with replace=true, "
    "or uninstall_app first.",
    "INSTALL_FAILED_UPDATE_INCOMPATIBLE": "The installed app is signed with another key: call uninstall_app "
    "for it (its data goes with it), then install again.",
    "INSTALL_FAILED_VERSION_DOWNGRADE": "The installed app has a higher versionCode: uninstall_app it first, "
    "or build the APK with a higher versionCode.",
    "INSTALL_FAILED_OLDER_SDK": "The APK needs a newer Android than the phone has (its minSdkVersion): "
    "build it for the phone's SDK or use a newer phone.",
    "INSTALL_FAILED_NO_MATCHING_ABIS": "The APK's native libraries are not built for the phone's CPU: build "
    "it for the phone's ABI (getprop ro.product.cpu.abi) or as a universal APK.",
    "INSTALL_FAILED_INSUFFICIENT_STORAGE": "The phone is out of storage: remove apps or files, then retry.",
    "INSTALL_FAILED_TEST_ONLY": "The APK is marked testOnly: build a debug or release APK without it.",
    "INSTALL_PARSE_FAILED_NO_CERTIFICATES": "The APK is not signed: sign it (apksigner, or a debug build) "
    "and install again.",
    "INSTALL_FAILED_INVALID_APK": "The file is not a valid APK: rebuild it and send the .apk itself.",
    "INSTALL_PARSE_FAILED_NOT_APK": "The file is not a valid APK: rebuild it and send the .apk itself.",
    "INSTALL_FAILED_USER_RESTRICTED": "The phone refused installs over USB: allow 'Install via USB' in the "
    "phone's Developer options, then retry.",
}
DEFAULT_REMEDY = "Read Android's reason above; fix the APK or the phone's state, then call install_app again."


def install_failure(output: str) -> ToolError | None:
    """None when ``pm install`` said Success; else the install_failed error its answer describes."""
    text = output.strip()
    if re.search(r"^Success\s*$", text, re.MULTILINE) and "Failure" not in text:
        return None
    match = _FAILURE.search(text)
    reason = match.group(1) if match else ""
    if not reason:
        found = _ANY_REASON.search(text)
        reason = found.group(1) if found else "INSTALL_FAILED_UNKNOWN"
    shown = match.group(0) if match else (text.splitlines()[-1] if text else "no answer from pm install")
    return install_failed(reason, shown[:400], REMEDIES.get(reason, DEFAULT_REMEDY))
