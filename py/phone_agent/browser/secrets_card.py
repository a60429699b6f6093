"""Settings → Secrets: the page's own secrets by name, typed by ``type_secret`` and never shown again.

A secret is saved as a name and a value (``#secret-name``, ``#secret-value``, **Save secret**); from then
on the card lists its name only (``#secret-list``, each with **Delete**), beside the names the server's
environment offers (``PHONE_AGENT_SECRET_<NAME>``, told over the relay). The values are kept in IndexedDB
encrypted with AES-GCM under a WebCrypto key made once per browser profile as non-extractable (the key
itself is stored as a CryptoKey: script can use it, nothing can read it out), each value with its own
random IV. The card fills the page's ``SecretBook`` (tools/named_secrets.py); nothing here logs a value.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import js  # type: ignore[import-not-found]

from ..tools.named_secrets import MAX_VALUE_CHARS, NAME_RULE, SecretBook, valid_name
from .dom import PanelEvents
from .interop import to_js_json
from .storage import IndexedDbStore

KEY_NAME = "secrets-key"  # in the "keys" store: the AES-GCM CryptoKey
SECRETS_KEY = "secrets"  # in the "settings" store: {name: {"iv": b64, "data": b64}}
STORE_LIMIT_S = 10.0


def _js_bytes(data: bytes) -> Any:
    return js.Uint8Array.new(to_js_json(list(data)))


def _py_bytes(buffer: Any) -> bytes:
    return bytes(js.Uint8Array.new(buffer).to_py())


class SecretVault:
    """The encrypted store: values in, values out, under the profile's non-extractable key."""

    def __init__(self) -> None:
        self._keys = IndexedDbStore("keys")
        self._store = IndexedDbStore("settings")
        self._key: Any = None

    async def _crypto_key(self) -> Any:
        if self._key is None:
            key = await self._keys.get_raw(KEY_NAME)
            if key is None:
                algorithm = to_js_json({"name": "AES-GCM", "length": 256})
                key = await js.crypto.subtle.generateKey(algorithm, False, to_js_json(["encrypt", "decrypt"]))
                await self._keys.put_raw(KEY_NAME, key)
            self._key = key
        return self._key

    async def load(self) -> dict[str, str]:
        sealed = await self._store.get(SECRETS_KEY)
        if not isinstance(sealed, dict) or not sealed:
            return {}
        key = await self._crypto_key()
        found: dict[str, str] = {}
        for name, box in sealed.items():
            try:
                algorithm = to_js_json({"name": "AES-GCM"})
                algorithm.iv = _js_bytes(base64.b64decode(box["iv"]))
                sealed_bytes = _js_bytes(base64.b64decode(box["data"]))
                plain = await js.crypto.subtle.decrypt(algorithm, key, sealed_bytes)
                found[name] = _py_bytes(plain).decode("utf-8")
            except Exception:  # a value sealed under a key that is gone: drop it, say only its name
                js.console.warn(f"[secrets] the stored secret {name} cannot be read any more; set it again")
        return found

    async def save(self, secrets: dict[str, str]) -> None:
        key = await self._crypto_key()
        sealed: dict[str, dict[str, str]] = {}
        for name, value in secrets.items():
            iv = js.crypto.getRandomValues(js.Uint8Array.new(12))
            algorithm = to_js_json({"name": "AES-GCM"})
            algorithm.iv = iv
            data = await js.crypto.subtle.encrypt(algorithm, key, _js_bytes(value.encode("utf-8")))
            sealed[name] = {
                "iv": base64.b64encode(_py_bytes(iv.buffer)).decode("ascii"),
                "data": base64.b64encode(_py_bytes(data)).decode("ascii"),
            }
        await self._store.put(SECRETS_KEY, sealed)


class SecretsCard:
    """The Secrets part of Settings, and the page's ``SecretBook`` it fills."""

    def __init__(self, book: SecretBook) -> None:
        self._doc = js.document
        self.book = book
        self._vault = SecretVault()
        self._page: dict[str, str] = {}
        self._server: list[str] = []
        self._events = PanelEvents()
        self._events.listen("secrets-form", "submit", self._on_submit)
        self._events.listen("secret-list", "click", self._on_click)

    async def load(self) -> None:
        try:
            self._page = await asyncio.wait_for(self._vault.load(), STORE_LIMIT_S)
        except Exception as exc:  # a broken store loses the secrets, never the page
            js.console.warn(f"[secrets] could not read the stored secrets: {exc}")
            self._page = {}
        self.book.set_page(self._page)
        self._show("")

    def server_names(self, names: list[str]) -> None:
        """The names the relay's server offers (its environment), shown beside the page's own."""
        self._server = [name for name in names if valid_name(name)]
        self.book.set_server_names(self._server)
        self._show(None)

    async def save(self, name: str, value: str) -> None:
        name = name.strip()
        if not valid_name(name):
            self._show(f"A secret's name is {NAME_RULE}, e.g. DEMO_PASSWORD.", state="invalid")
            return
        if not value or len(value) > MAX_VALUE_CHARS:
            self._show(f"Type the value of {name} (1 to {MAX_VALUE_CHARS} characters).", state="invalid")
            return
        self._page = {**self._page, name: value}
        self.book.set_page(self._page)
        await self._keep(f"Saved {name}.")

    async def delete(self, name: str) -> None:
        self._page = {key: value for key, value in self._page.items() if key != name}
        self.book.set_page(self._page)
        await self._keep(f"Deleted {name}.")

    async def _keep(self, said: str) -> None:
        try:
            await asyncio.wait_for(self._vault.save(self._page), STORE_LIMIT_S)
        except Exception as exc:
            self._show(f"{said} (not stored in this browser: {exc})", state="unstored")
            return
        self._show(said, state="saved")

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        name_field = self._doc.getElementById("secret-name")
        value_field = self._doc.getElementById("secret-value")
        name, value = str(name_field.value or ""), str(value_field.value or "")
        value_field.value = ""  # the value is never shown again
        if valid_name(name.strip()):
            name_field.value = ""
        self._events.spawn(self.save(name, value))

    def _on_click(self, event: Any) -> None:
        target = event.target
        name = target.dataset.secret if target is not None and target.dataset is not None else None
        if isinstance(name, str) and name and target.classList.contains("secret-delete"):
            self._events.spawn(self.delete(name))

    def _show(self, said: str | None, state: str = "") -> None:
        listing = self._doc.getElementById("secret-list")
        listing.replaceChildren()
        names = sorted(set(self._page) | set(self._server))
        for name in names:
            item = self._doc.createElement("li")
            item.dataset.secret = name
            code = self._doc.createElement("code")
            code.textContent = name
            item.append(code)
            whose = self._doc.createElement("span")
            whose.className = "muted small"
            ours = name in self._page
            whose.textContent = " this page" if ours else " the server (PHONE_AGENT_SECRET_" + name + ")"
            item.dataset.source = "page" if ours else "server"
            item.append(whose)
            if ours:
                button = self._doc.createElement("button")
                button.type = "button"
                button.className = "button secret-delete"
                button.dataset.secret = name
                button.textContent = "Delete"
                item.append(button)
            listing.append(item)
        node = self._doc.getElementById("secrets-state")
        if said is not None:
            count = len(names)
            summary = f"{count} secret{'s' if count != 1 else ''}" if count else "No secrets yet."
            node.textContent = f"{said} {summary}".strip() if said else summary
            node.dataset.state = state or "loaded"
