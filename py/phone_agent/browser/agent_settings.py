"""The Settings card: which model the agent asks (provider, base URL, API key, model), kept in
IndexedDB ("settings" store) and resolved against the defaults the server hands the page
(``phone-agent serve|mcp --model-base-url … --model …``): the page's own settings win when set.

The API key lives in a password field and in IndexedDB only; what the card shows and logs is
``ModelSettings.to_public_json`` (whether a key is set, never the key).

The card's Screen part (``ScreenSettings``: scrcpy on or off, its max size and frame rate, whether the
agent looks at its frames) is kept under its own key and saved by the same Save; "Use server
defaults" leaves it alone. A change is handed to ``on_screen_change`` (the Phone card restarts the
stream); the page's URL parameters still win, and the card says so. The card says first what the live
view runs now (its ``#live-source`` line: scrcpy, or screencap and why), then what the settings ask for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]

from ..agent.settings import PROVIDERS, ModelSettings, ScreenSettings, resolve_model_settings
from .dom import PanelEvents
from .interop import is_nullish
from .prompt_api import builtin_availability, unavailable_text
from .scrcpy_view import LIVE_SOURCE_EVENT
from .storage import IndexedDbStore

SETTINGS_KEY = "model"
SCREEN_KEY = "screen"
STORE_LIMIT_S = 10.0  # IndexedDB answers in milliseconds; a stuck store must not stall the page
FIELDS = ("provider", "baseUrl", "apiKey", "model")
FIELD_IDS = {
    "provider": "settings-provider",
    "baseUrl": "settings-base-url",
    "apiKey": "settings-api-key",
    "model": "settings-model",
}


class SettingsCard:
    """The model settings: stored, shown, and resolved into the ``ModelSettings`` the agent uses."""

    def __init__(self, server_defaults: dict[str, Any] | None, on_change: Callable[[], None]) -> None:
        self._doc = js.document
        self._store = IndexedDbStore("settings")
        self._server = server_defaults if isinstance(server_defaults, dict) else None
        self._page: dict[str, Any] | None = None
        self._on_change = on_change
        self.screen = ScreenSettings()
        self.on_screen_change: Callable[[ScreenSettings], None] | None = None
        self._events = PanelEvents()
        self.builtin = "unknown"
        select = self._field("provider")
        select.replaceChildren()
        for key, (label, _url, _advice) in PROVIDERS.items():
            option = self._doc.createElement("option")
            option.value = key
            option.textContent = label
            select.append(option)
        self._events.listen("settings-form", "submit", self._on_submit)
        self._events.listen("settings-clear", "click", lambda _e: self._events.spawn(self.clear()))
        self._events.listen("settings-provider", "change", lambda _e: self._provider_changed())
        self._events.listen_to(self._doc, LIVE_SOURCE_EVENT, lambda _e: self._fill_screen())

    # -- wiring ---------------------------------------------------------------------------------

    def _field(self, name: str) -> Any:
        return self._doc.getElementById(FIELD_IDS[name])

    # -- state ----------------------------------------------------------------------------------

    def resolved(self) -> ModelSettings | None:
        """The settings to use now: the page's when complete, else the server's, else None."""
        return resolve_model_settings(self._page, self._server)

    async def load(self) -> None:
        """Read the stored settings (a broken store only loses them) and show what is in use."""
        try:
            stored = await asyncio.wait_for(self._store.get(SETTINGS_KEY), STORE_LIMIT_S)
        except Exception as exc:  # IndexedDB refused (private mode, quota): the server's defaults apply
            js.console.warn(f"[settings] could not read the stored model settings: {exc}")
            stored = None
        self._page = stored if isinstance(stored, dict) else None
        self._fill(self._page or {})
        self._show()
        try:
            screen = await asyncio.wait_for(self._store.get(SCREEN_KEY), STORE_LIMIT_S)
        except Exception as exc:  # the defaults apply
            js.console.warn(f"[settings] could not read the stored screen settings: {exc}")
            screen = None
        self.screen = ScreenSettings.from_json(screen if isinstance(screen, dict) else None)
        self._fill_screen()
        self._events.spawn(self._check_builtin())  # in the background: the page's start never waits on it

    async def save(self, values: dict[str, Any]) -> None:
        """Use these settings from now on, and keep them (a store that fails only loses the keeping)."""
        page: dict[str, Any] = {name: str(values.get(name) or "").strip() for name in FIELDS}
        page["stream"] = values.get("stream") is not False
        self._page = page
        self._fill(page)
        self._show()
        self._on_change()
        await self._keep(self._store.put(SETTINGS_KEY, page))
        screen = values.get("screen")
        if isinstance(screen, dict):
            await self.save_screen(screen)

    async def save_screen(self, values: dict[str, Any]) -> None:
        """Use these screen settings from now on (invalid numbers keep their defaults), and keep them."""
        screen = ScreenSettings.from_json(values)
        changed = screen != self.screen
        self.screen = screen
        self._fill_screen()
        if changed and self.on_screen_change is not None:
            self.on_screen_change(screen)
        await self._keep(self._store.put(SCREEN_KEY, screen.to_json()))

    async def clear(self) -> None:
        """Forget this page's settings: the server's defaults apply again."""
        self._page = None
        self._fill({})
        self._show()
        self._on_change()
        await self._keep(self._store.delete(SETTINGS_KEY))

    async def _keep(self, write: Any) -> None:
        try:
            await asyncio.wait_for(write, STORE_LIMIT_S)
        except Exception as exc:  # the settings apply anyway; say they will not survive a reload
            node = self._doc.getElementById("settings-state")
            node.textContent = f"{node.textContent} (not stored in this browser: {exc})"

    # -- the card ---------------------------------------------------------------------------------

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        values: dict[str, Any] = {name: str(self._field(name).value) for name in FIELDS}
        values["stream"] = bool(self._doc.getElementById("settings-stream").checked)
        values["screen"] = {
            "liveLooks": bool(self._doc.getElementById("settings-live-looks").checked),
            "scrcpy": bool(self._doc.getElementById("settings-scrcpy").checked),
            "scrcpyMaxSize": str(self._doc.getElementById("settings-scrcpy-max-size").value),
            "scrcpyMaxFps": str(self._doc.getElementById("settings-scrcpy-max-fps").value),
        }
        self._events.spawn(self.save(values))

    def _provider_changed(self) -> None:
        provider = str(self._field("provider").value)
        default_url = PROVIDERS.get(provider, ("", "", ""))[1]
        self._field("baseUrl").placeholder = default_url or "http://127.0.0.1:11434/v1"
        chrome = provider == "chrome"
        for name in ("baseUrl", "apiKey", "model"):
            self._field(name).disabled = chrome
        self._events.spawn(self._check_builtin())

    def _fill(self, values: dict[str, Any]) -> None:
        server = self._server or {}
        provider = values.get("provider") or "custom"
        self._field("provider").value = provider if provider in PROVIDERS else "custom"
        for name in ("baseUrl", "apiKey", "model"):
            self._field(name).value = values.get(name) or ""
        self._doc.getElementById("settings-stream").checked = values.get("stream") is not False
        # The server's defaults show as placeholders: what applies when the field stays empty.
        self._field("baseUrl").placeholder = (
            server.get("baseUrl")
            or PROVIDERS[self._field("provider").value][1]
            or "http://127.0.0.1:11434/v1"
        )
        self._field("model").placeholder = server.get("model") or "e.g. qwen2.5-vl-7b-instruct"
        key = "(none)"
        if server.get("apiKey"):
            key = "set by the server"
        elif server.get("apiKeyWithheld"):  # the server keeps it for the page opened with its link
            key = "set by the server: open this page with its link (phone-agent url) to use it"
        self._field("apiKey").placeholder = key
        chrome = self._field("provider").value == "chrome"
        for name in ("baseUrl", "apiKey", "model"):
            self._field(name).disabled = chrome

    def _fill_screen(self) -> None:
        screen = self.screen
        self._doc.getElementById("settings-live-looks").checked = screen.live_looks
        self._doc.getElementById("settings-scrcpy").checked = screen.scrcpy
        self._doc.getElementById("settings-scrcpy-max-size").value = str(screen.max_size)
        self._doc.getElementById("settings-scrcpy-max-fps").value = str(screen.max_fps)
        url = str(js.location.href)
        used = screen.with_query(url)
        live = self._doc.getElementById("live-source")
        running = "" if is_nullish(live) else str(live.textContent or "")
        text = (running.rstrip(".") or "Live view: not running (no phone)") + ". Settings: "
        if used.scrcpy:
            size = f"at most {used.max_size} px" if used.max_size else "at the phone's size"
            text += f"scrcpy, {size}, {used.max_fps} fps"
        else:
            text += "screenshots (scrcpy off)"
        text += "; the agent looks at " + (
            "the latest scrcpy frame when fresh." if used.live_looks and used.scrcpy else "screenshots."
        )
        overridden = screen.overridden_by(url)
        if overridden:
            text += " The page's URL sets " + ", ".join(f"?{name}" for name in overridden) + "."
        node = self._doc.getElementById("settings-screen-state")
        node.textContent = text
        node.dataset.maxSize = str(used.max_size)
        node.dataset.maxFps = str(used.max_fps)
        node.dataset.scrcpy = "on" if used.scrcpy else "off"

    async def _check_builtin(self) -> None:
        self.builtin = await builtin_availability()
        node = self._doc.getElementById("settings-builtin")
        node.dataset.availability = self.builtin
        if self.builtin == "available":
            node.textContent = "Chrome built-in model: available (Prompt API with image input)."
        else:
            node.textContent = unavailable_text(self.builtin)

    def _show(self) -> None:
        node = self._doc.getElementById("settings-state")
        settings = self.resolved()
        page_complete = self._page is not None and ModelSettings.from_json(self._page).is_complete
        if settings is None:
            node.textContent = "No model configured: choose a provider and a model, then Save."
            node.dataset.source = "none"
        else:
            source = "these settings" if page_complete else "the server's defaults (phone-agent --model)"
            what = (
                settings.provider_label
                if settings.provider == "chrome"
                else f"{settings.model} at {settings.base_url}"
            )
            key = ", API key set" if settings.api_key else ""
            whole = ", whole answers (no streaming)" if not settings.stream else ""
            node.textContent = f"Using {what}{key}{whole} — from {source}."
            node.dataset.source = "page" if page_complete else "server"
