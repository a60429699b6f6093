"""The Phone card's DOM: the state line, the phone's facts, the Disconnect button, ``data-phone`` on
the page, and the connect buttons a browser or a page without its server cannot use. Nothing here
decides anything: ``PhonePanel`` (browser/phone.py) tells the card what to show.
"""

from __future__ import annotations

from typing import Any

import js  # type: ignore[import-not-found]

from ..device.interface import DeviceInfo


class PhoneCard:
    """What the Phone card shows (see the module's docstring)."""

    def __init__(self) -> None:
        self._doc = js.document

    def say(self, text: str, kind: str = "") -> None:
        """The card's state line; ``kind`` is "", "busy", "ok" or "error"."""
        node = self._doc.getElementById("device-state")
        node.textContent = text
        node.className = f"device-state device-state--{kind}" if kind else "device-state"

    def tcp_target(self) -> str:
        return str(self._doc.getElementById("tcp-target").value).strip()

    def no_usb(self) -> None:
        button = self._doc.getElementById("connect-usb")
        button.disabled = True
        button.title = "This browser has no WebUSB: use Chrome or Edge on a desktop"

    def no_bridge(self) -> None:
        for element_id in ("connect-tcp-button", "connect-adb-server"):
            node = self._doc.getElementById(element_id)
            node.disabled = True
            node.title = "Needs the page to be served by phone-agent (its ADB bridge)"

    def show_phone(self, info: DeviceInfo, description: str) -> None:
        """A phone is connected: say so, list its facts, offer Disconnect."""
        self.say(f"Connected: {info.model} ({description})", "ok")
        facts = self._doc.getElementById("device-facts")
        facts.replaceChildren()
        for label, value in (
            ("Model", f"{info.brand} {info.model}"),
            ("Android", f"{info.release} (SDK {info.sdk})"),
            ("Serial", info.serial),
            ("Screen", f"{info.screen_width}×{info.screen_height}"),
            ("Link", info.transport),
        ):
            term: Any = self._doc.createElement("dt")
            term.textContent = label
            detail: Any = self._doc.createElement("dd")
            detail.textContent = value
            facts.append(term, detail)
        self._doc.documentElement.dataset.phone = "connected"
        self._doc.getElementById("disconnect").hidden = False

    def show_no_phone(self, chosen: bool) -> None:
        """No phone is connected; Disconnect stays offered while one is still ``chosen`` (its link
        is down and reconnecting)."""
        self._doc.documentElement.dataset.phone = "none"
        self._doc.getElementById("disconnect").hidden = not chosen
        self._doc.getElementById("device-facts").replaceChildren()
