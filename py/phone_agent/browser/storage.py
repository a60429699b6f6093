"""IndexedDB from Python: a small key-value store per object store, awaited like asyncio.

The page keeps its ADB key, its task history and its saved flows here, so they survive a reload.
Values are JSON.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_once_callable  # type: ignore[import-not-found]

DB_NAME = "phone-agent"
DB_VERSION = 2  # 2: the "flows" store (a new store needs a new version to be created)
STORES = ("keys", "tasks", "settings", "flows")
OPEN_TIMEOUT_S = 10.0
COMMIT_TIMEOUT_S = 10.0


def _await_request(request: Any) -> asyncio.Future[Any]:
    """A future settled by an IDBRequest's success or error event."""
    future: asyncio.Future[Any] = asyncio.get_event_loop().create_future()

    def on_success(_event: Any) -> None:
        if not future.done():
            future.set_result(request.result)

    def on_error(_event: Any) -> None:
        if not future.done():
            error = request.error
            future.set_exception(OSError(f"IndexedDB: {getattr(error, 'message', error)}"))

    request.onsuccess = create_once_callable(on_success)
    request.onerror = create_once_callable(on_error)
    return future


def _await_commit(transaction: Any) -> asyncio.Future[None]:
    """A future settled when a transaction commits (``complete``), or fails when it aborts."""
    future: asyncio.Future[None] = asyncio.get_event_loop().create_future()

    def on_complete(_event: Any) -> None:
        if not future.done():
            future.set_result(None)

    def on_failed(_event: Any) -> None:
        if not future.done():
            error = getattr(transaction.error, "message", transaction.error) or "aborted"
            future.set_exception(OSError(f"IndexedDB: not stored ({error})"))

    transaction.oncomplete = create_once_callable(on_complete)
    transaction.onabort = create_once_callable(on_failed)
    transaction.onerror = create_once_callable(on_failed)
    return future


class IndexedDbStore:
    """JSON values by string key in one object store of the page's database."""

    _db: Any = None

    def __init__(self, store: str) -> None:
        if store not in STORES:
            raise ValueError(f"unknown object store {store!r}")
        self.store = store

    @classmethod
    async def _database(cls) -> Any:
        if cls._db is None:
            request = js.indexedDB.open(DB_NAME, DB_VERSION)

            def upgrade(_event: Any) -> None:
                db = request.result
                for name in STORES:
                    if not db.objectStoreNames.contains(name):
                        db.createObjectStore(name)

            request.onupgradeneeded = create_once_callable(upgrade)
            cls._db = await asyncio.wait_for(_await_request(request), OPEN_TIMEOUT_S)
        return cls._db

    async def _object_store(self, mode: str) -> Any:
        db = await self._database()
        return db.transaction(self.store, mode).objectStore(self.store)

    async def get(self, key: str) -> Any:
        value = await _await_request((await self._object_store("readonly")).get(key))
        if value is None or not isinstance(value, str):
            return None
        return json.loads(value)

    async def _write(self, write: Any) -> None:
        """Run ``write(object_store)`` in a readwrite transaction and wait until it commits: a
        request's success alone is not yet stored (a reload right after it can lose the write)."""
        db = await self._database()
        transaction = db.transaction(self.store, "readwrite")
        committed = _await_commit(transaction)
        try:
            await _await_request(write(transaction.objectStore(self.store)))
        finally:
            await asyncio.wait_for(committed, COMMIT_TIMEOUT_S)

    async def put(self, key: str, value: Any) -> None:
        text = json.dumps(value)
        await self._write(lambda store: store.put(text, key))

    async def delete(self, key: str) -> None:
        await self._write(lambda store: store.delete(key))

    async def get_raw(self, key: str) -> Any:
        """A value stored as it is (a structured clone, e.g. a non-extractable CryptoKey), or None."""
        value = await _await_request((await self._object_store("readonly")).get(key))
        return None if value is None or isinstance(value, str) else value

    async def put_raw(self, key: str, value: Any) -> None:
        """Keep a JavaScript value as it is (IndexedDB clones it: a CryptoKey stays non-extractable)."""
        await self._write(lambda store: store.put(value, key))

    async def values(self) -> list[Any]:
        found = await _await_request((await self._object_store("readonly")).getAll())
        return [json.loads(item) for item in found.to_py() if isinstance(item, str)]
