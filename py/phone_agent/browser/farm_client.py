"""FarmClient: the page's membership of a NATS phone farm, over the vendored ``@nats-io/nats-core``.

A thin adapter: it loads the NATS client the page serves from ``static/vendor/nats/`` (never a CDN),
connects with ``wsconnect`` and the farm URL's credentials, hands every message on the page's subjects
to the pure ``FarmPageService`` and publishes what it answers; it announces the phone every heartbeat
and says goodbye when the page is hidden for good. ``html[data-farm]`` tells the state: ``joining``,
``joined``, ``refused`` (wrong credentials) or ``lost``. The credentials are never logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.code import run_js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..context import McpServiceContext
from ..farm_frames import DISCOVER_SUBJECT, FarmPageSettings
from ..farm_page import FarmPageService
from .interop import is_nullish, to_js_json

NATS_MODULE = "static/vendor/nats/nats-core.mjs"
RETRY_S = 5.0
RETRY_REFUSED_S = 30.0

StatusCallback = Callable[[str], None]


class FarmClient:
    def __init__(
        self, context: McpServiceContext, settings: FarmPageSettings, on_state: StatusCallback | None = None
    ) -> None:
        assert settings.url is not None
        self.settings = settings
        self.url = settings.url
        self.state = "off"
        self._on_state = on_state
        self._nc: Any = None
        self._proxies: list[Any] = []
        self._runner: asyncio.Task[None] | None = None
        self._background: set[asyncio.Future[Any]] = set()
        ttl_ms = max(3 * settings.heartbeat_ms + settings.heartbeat_ms // 2, 500)
        self.service = FarmPageService(
            context, self.url.subject_user, self._publish, host=str(js.location.host), ttl_ms=ttl_ms
        )

    def start(self) -> None:
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run())
            goodbye = create_proxy(lambda _event: self._leave())
            self._proxies.append(goodbye)
            js.window.addEventListener("pagehide", goodbye)

    def _set_state(self, state: str) -> None:
        self.state = state
        js.document.documentElement.dataset.farm = state
        if self._on_state is not None:
            self._on_state(state)

    async def _run(self) -> None:
        importer = run_js("(url) => import(url)")
        # The bundle is CommonJS turned into an ES module: the package's exports are its default export.
        module = (await importer(str(js.URL.new(NATS_MODULE, js.document.baseURI).href))).default
        while True:
            self._set_state("joining")
            wait_s = RETRY_S
            try:
                await self._session(module)
            except Exception as exc:
                text = str(exc)
                if "authorization" in text.lower() or "authentication" in text.lower():
                    self._set_state("refused")
                    js.console.warn(f"[farm] {self.url.shown} refused this page's credentials")
                    wait_s = RETRY_REFUSED_S
                else:
                    self._set_state("lost")
                    js.console.warn(f"[farm] cannot reach {self.url.shown}: {self._scrub(text)}")
            await asyncio.sleep(wait_s)

    async def _session(self, module: Any) -> None:
        options = {"servers": self.url.server, "name": "phone-agent page", "reconnect": False}
        if self.url.token:
            options["token"] = self.url.token
        elif self.url.user:
            options["user"] = self.url.user
            options["pass"] = self.url.password or ""
        nc = await module.wsconnect(to_js_json(options))
        self._nc = nc
        service = self.service

        def on_call(error: Any, msg: Any) -> None:
            if is_nullish(error) and not is_nullish(msg):
                reply = None if is_nullish(msg.reply) else str(msg.reply)
                service.receive(str(msg.subject), reply, str(msg.string()))

        def on_discover(error: Any, _msg: Any) -> None:
            if is_nullish(error):
                announcing = asyncio.ensure_future(service.announce())
                self._background.add(announcing)
                announcing.add_done_callback(self._background.discard)

        handlers = []  # this connection's callbacks, released when it ends
        for subject, handler in ((service.subject, on_call), (DISCOVER_SUBJECT, on_discover)):
            proxy = create_proxy(handler)
            handlers.append(proxy)
            options_js = js.Object.new()
            options_js.callback = proxy
            nc.subscribe(subject, options_js)
        await nc.flush()
        self._set_state("joined")
        js.console.log(f"[farm] joined {self.url.shown} as {service.subject}")
        closed = asyncio.ensure_future(_await_js(nc.closed()))
        try:
            while not closed.done():
                try:
                    await service.announce()
                except Exception as exc:  # a phone that does not answer is announced at the next beat
                    js.console.warn(f"[farm] could not announce the phone: {exc}")
                await asyncio.wait({closed}, timeout=self.settings.heartbeat_ms / 1000)
        finally:
            self._nc = None
            for proxy in handlers:
                proxy.destroy()
        error = closed.result()
        raise ConnectionError("the broker closed the connection" if is_nullish(error) else str(error))

    def _scrub(self, text: str) -> str:
        """An error's text for the console, with any credential in it masked."""
        for secret in (self.url.password, self.url.token):
            if secret:
                text = text.replace(secret, "***")
        return text[:300]

    def _publish(self, subject: str, body: str) -> None:
        nc = self._nc
        if nc is not None:
            nc.publish(subject, body)

    def _leave(self) -> None:
        try:
            self.service.leave()
            if self._nc is not None:
                self._nc.flush()
        except Exception:
            pass


async def _await_js(promise: Any) -> Any:
    return await promise


FARM_SETTING_KEY = "farm"


async def start_farm(context: McpServiceContext) -> FarmClient | None:
    """Join the farm the page's URL (``?farm=``) or its stored settings name; None when there is none."""
    from ..farm_frames import farm_page_settings
    from .storage import IndexedDbStore

    stored = None
    try:
        saved = await IndexedDbStore("settings").get(FARM_SETTING_KEY)
        stored = saved.get("url") if isinstance(saved, dict) else None
    except Exception:  # no IndexedDB (private mode): the URL parameter still works
        pass
    settings = farm_page_settings(str(js.location.href), stored)
    if settings.refused:
        js.console.warn(f"[farm] {settings.refused}")
    if settings.url is None:
        return None
    client = FarmClient(context, settings)
    client.start()
    return client
