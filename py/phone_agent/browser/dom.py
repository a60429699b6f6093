"""Small DOM helpers the page's panels share: building elements, and owning listeners and tasks.

Text goes in through ``textContent`` only (never HTML), so tool results cannot inject markup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]


def element(tag: str, text: str = "", cls: str = "") -> Any:
    """A new element with ``text`` as its text and ``cls`` as its class."""
    node = js.document.createElement(tag)
    if text:
        node.textContent = text
    if cls:
        node.className = cls
    return node


class PanelEvents:
    """The event listeners and background tasks of one panel. Listener proxies are kept alive (a
    destroyed proxy breaks its listener) and tasks referenced until done (asyncio keeps only weak
    references to tasks)."""

    def __init__(self) -> None:
        self._proxies: list[Any] = []
        self._tasks: set[asyncio.Future[Any]] = set()

    def listen(self, element_id: str, event: str, handler: Callable[[Any], Any]) -> None:
        self.listen_to(js.document.getElementById(element_id), event, handler)

    def listen_to(self, target: Any, event: str, handler: Callable[[Any], Any]) -> None:
        """``handler`` for ``event`` on ``target`` (the document, a node made later …)."""
        proxy = create_proxy(handler)
        self._proxies.append(proxy)
        target.addEventListener(event, proxy)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
