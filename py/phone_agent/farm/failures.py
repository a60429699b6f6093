"""The farm's failures: a call's ``device`` argument that names no phone, a phone gone from the farm, a
page holding another phone, an answer too large for the broker. Codes and shapes as every failure
(``errors.ToolError``); kept beside the farm that raises them."""

from __future__ import annotations

from ..errors import ErrorCode, ToolError


def bad_device_argument() -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        'Argument "device" must be a phone\'s serial or "any".',
        remedy="Call list_devices for the serials.",
        details={"field": "device"},
    )


def gone_device(serial: str) -> ToolError:
    return ToolError(
        ErrorCode.NO_DEVICE,
        f'No phone "{serial}" in the farm: its page is closed or lost its network.',
        remedy="Call list_devices to see the phones the farm holds now, then call again with one of them.",
        retryable=True,
        details={"device": serial},
    )


def empty_farm() -> ToolError:
    return ToolError(
        ErrorCode.NO_DEVICE,
        "No phone in the farm: no phone-agent page has joined it.",
        remedy="Open a phone-agent page with ?farm=ws://USER:PASSWORD@HOST:PORT next to a phone, then call "
        "list_devices.",
        retryable=True,
    )


def which_device(serials: list[str]) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f'Argument "device" is required: the farm holds {len(serials)} phones ({", ".join(serials)}).',
        remedy='Call again with "device" set to one of these serials, or to "any" for an idle one.',
        details={"field": "device", "devices": serials},
    )


def wrong_device(held: str | None, wanted: str) -> ToolError:
    """A farm call that reached a page holding another phone (or none)."""
    held_text = f'phone "{held}"' if held else "no phone"
    return ToolError(
        ErrorCode.NO_DEVICE,
        f'This page holds {held_text}, not "{wanted}": the call was not addressed to its phone.',
        remedy="Call list_devices to see which page holds which phone now, then call again.",
        retryable=True,
        details={"device": wanted},
    )


def answer_too_large(tool: str) -> ToolError:
    """A farm answer the broker would not carry (most likely over its max_payload)."""
    return ToolError(
        ErrorCode.INTERNAL,
        f'The answer of "{tool}" could not be sent over the farm (too large for the broker?).',
        remedy="Raise max_payload in the broker's configuration (docs/farm.md), then call again.",
        retryable=True,
    )
