"""The page's saved flows, in IndexedDB (the ``flows`` object store): the ``FlowLibrary`` the
dispatcher's flow tools use, so save_flow from MCP, WebMCP or the Flows card keeps one same set, and a
reload keeps it."""

from __future__ import annotations

import time
from typing import Any

from .storage import IndexedDbStore


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    return {"name": record["name"], "savedAt": record["savedAt"], "bytes": len(record["yaml"].encode())}


class IndexedDbFlowLibrary:
    """Flows by name: ``{name, yaml, savedAt}`` records."""

    def __init__(self) -> None:
        self.store = IndexedDbStore("flows")

    async def save(self, name: str, yaml: str) -> dict[str, Any]:
        record = {"name": name, "yaml": yaml, "savedAt": int(time.time() * 1000)}
        await self.store.put(name, record)
        return _summary(record)

    async def get(self, name: str) -> str | None:
        record = await self.store.get(name)
        return record["yaml"] if isinstance(record, dict) and isinstance(record.get("yaml"), str) else None

    async def names(self) -> list[dict[str, Any]]:
        records = [
            r for r in await self.store.values() if isinstance(r, dict) and isinstance(r.get("yaml"), str)
        ]
        return sorted((_summary(record) for record in records), key=lambda summary: summary["name"])

    async def delete(self, name: str) -> bool:
        if await self.store.get(name) is None:
            return False
        await self.store.delete(name)
        return True
