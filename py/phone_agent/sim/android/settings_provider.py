"""The simulated phone's SettingsProvider: `settings get/put/list` over its namespaces (global, secure,
system), with Wi-Fi, Bluetooth and the input method kept as the phone's own state (a mixin of
VirtualPhone, as system_ui.py's SystemWindows is)."""

from __future__ import annotations

from collections.abc import Callable


class SettingsProvider:
    """`settings` values: most live in a table; a few are the phone's own switches."""

    wifi: bool
    bluetooth: bool
    ime: str
    settings: dict[str, dict[str, str]]

    _changed: Callable[[], None]  # VirtualPhone's: redraw and count a change

    def set_wifi(self, on: bool) -> None:
        self.wifi = on
        self._changed()

    def set_bluetooth(self, on: bool) -> None:
        self.bluetooth = on
        self._changed()

    def get_setting(self, namespace: str, key: str) -> str | None:
        if namespace == "global" and key == "wifi_on":
            return "1" if self.wifi else "0"
        if namespace == "global" and key == "bluetooth_on":
            return "1" if self.bluetooth else "0"
        if namespace == "secure" and key == "default_input_method":
            return self.ime
        return self.settings.get(namespace, {}).get(key)

    def put_setting(self, namespace: str, key: str, value: str) -> None:
        if namespace == "global" and key == "wifi_on":
            self.set_wifi(value not in ("0", ""))
        elif namespace == "global" and key == "bluetooth_on":
            self.set_bluetooth(value not in ("0", ""))
        elif namespace == "secure" and key == "default_input_method":
            self.ime = value
        else:
            self.settings.setdefault(namespace, {})[key] = value
        self._changed()

    def all_settings(self, namespace: str) -> dict[str, str]:
        values = dict(self.settings.get(namespace, {}))
        for key in ("wifi_on", "bluetooth_on", "default_input_method"):
            value = self.get_setting(namespace, key)
            if value is not None:
                values[key] = value
        return values
