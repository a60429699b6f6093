"""The page's ADB key: one RSA-2048 key per browser profile, made once, kept in IndexedDB.

WebCrypto generates the key (fast, with a good random source); the raw ADB signature — PKCS#1 v1.5
padding over the token taken as an already computed SHA-1 digest, which WebCrypto cannot do — is
computed in Python from the exported private exponent. Keeping one key is what makes the phone ask
"Allow USB debugging?" only the first time.
"""

from __future__ import annotations

import json

import js  # type: ignore[import-not-found]

from ..adb.keys import AdbKeyError, AdbPrivateKey
from ..adb.keystore import key_from_json, key_to_json
from .interop import from_js, to_js_json
from .storage import IndexedDbStore

KEY_NAME = "adbkey"
KEY_COMMENT = "phone-agent@browser"


class IndexedDbKeyStore:
    """``adb.keystore.KeyStore`` in the page's IndexedDB."""

    def __init__(self) -> None:
        self._store = IndexedDbStore("keys")

    async def load(self) -> bytes | None:
        value = await self._store.get(KEY_NAME)
        return json.dumps(value).encode() if isinstance(value, dict) else None

    async def save(self, data: bytes) -> None:
        await self._store.put(KEY_NAME, json.loads(data))


async def generate_key() -> AdbPrivateKey:
    """A new RSA-2048 key from WebCrypto (exported as JWK, read by the pure key code)."""
    algorithm = to_js_json({"name": "RSASSA-PKCS1-v1_5", "modulusLength": 2048, "hash": "SHA-1"})
    algorithm.publicExponent = js.Uint8Array.new(to_js_json([1, 0, 1]))
    pair = await js.crypto.subtle.generateKey(algorithm, True, to_js_json(["sign", "verify"]))
    jwk = from_js(await js.crypto.subtle.exportKey("jwk", pair.privateKey))
    return key_from_json(json.dumps(jwk))


async def load_or_create_browser_key(store: IndexedDbKeyStore | None = None) -> tuple[AdbPrivateKey, bool]:
    """This profile's key, and whether it was just made (a phone will then ask to allow it)."""
    store = store or IndexedDbKeyStore()
    data = await store.load()
    if data:
        try:
            return key_from_json(data), False
        except AdbKeyError as exc:
            js.console.warn(f"[ADB] the stored key is unusable ({exc}); making a new one")
    key = await generate_key()
    await store.save(key_to_json(key))
    return key, True
