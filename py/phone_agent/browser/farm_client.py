"""FarmClient: the page's membership of a NATS phone farm, over the vendored ``@nats-io/nats-core``.

A thin adapter: it loads the NATS client the page serves from ``static/vendor/nats/`` (never a CDN),
connects with ``wsconnect`` and the farm URL's credentials, hands every message on the page's subjects
to the pure ``FarmPageService`` and publishes what it answers; it announces the phone every heartbeat
and says goodbye when the page is hidden for good. ``html[data-farm]`` tells the state: ``joining``,
``joined``, ``refused`` (wrong credentials) or ``lost``, and is removed when the page leaves the farm
(``stop``: off). The credentials are never logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.code import run_js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..farm.frames import (
    DEFAULT_HEARTBEAT_MS,
    DISCOVER_SUBJECT,
    FarmPageSettings,
    FarmUrl,
    farm_page_settings,
    parse_farm_url,
)
from ..farm.page import FarmPageService
from ..tools.dispatch import ToolDispatcher
from .interop import is_nullish, to_js_json

NATS_MODULE = "static/vendor/nats/nats-core.mjs"
RETRY_S = 5.0
RETRY_REFUSED_S = 30.0
CLOSE_S = 2.0
STORE_LIMIT_S = 10.0  # IndexedDB answers in milliseconds; a stuck store must not stall the page

StatusCallback = Callable[[str], None]


class FarmClient:
    def __init__(
        self, context: ToolDispatcher, settings: FarmPageSettings, on_state: StatusCallback | None = None
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
            if not self._proxies:
                goodbye = create_proxy(lambda _event: self._leave())
                self._proxies.append(goodbye)
                js.window.addEventListener("pagehide", goodbye)

    async def stop(self) -> None:
        """Leave the farm now, without a reload: say so (the MCP servers drop the phone at once), close
        the connection, stop retrying, stop serving."""
        nc = self._nc
        if self._runner is not None:
            self._runner.cancel()
        for proxy in self._proxies:
            js.window.removeEventListener("pagehide", proxy)
            proxy.destroy()
        self._proxies.clear()
        if nc is not None:
            self._leave()
            try:
                await asyncio.wait_for(_await_js(nc.close()), CLOSE_S)
            except Exception as exc:  # already closed, or a broker that does not answer: gone either way
                js.console.warn(f"[farm] closing the connection: {self._scrub(str(exc))}")
        self._nc = None
        self.service.close()
        self.state = "off"
        js.document.documentElement.removeAttribute("data-farm")
        if self._on_state is not None:
            self._on_state("off")

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
        connecting = module.wsconnect(to_js_json(options))
        try:
            nc = await connecting
        except asyncio.CancelledError:
            # stop() came while connecting: the JavaScript promise still settles; close what it brings.
            connecting.then(lambda late: late.close(), lambda _error: None)
            raise
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


class FarmMembership:
    """Which farm the page is in: the one its URL names (``?farm=``, which wins), else the one kept in
    IndexedDB (``settings`` store, key ``farm``, ``{"url": "ws://…"}``), which the Settings panel's Farm
    field sets. ``use`` keeps a new URL (or forgets it) and joins or leaves at once, without reload.
    What it shows (``shown``) never carries the credentials."""

    def __init__(self, context: ToolDispatcher, on_state: StatusCallback | None = None) -> None:
        from .storage import IndexedDbStore

        self.context = context
        self.on_state = on_state
        self.client: FarmClient | None = None
        self.stored: FarmUrl | None = None  # the kept URL, parsed (its text stays in IndexedDB)
        self.from_query = False
        self._heartbeat_ms = DEFAULT_HEARTBEAT_MS
        self._store = IndexedDbStore("settings")
        # One change at a time: a Join then a Leave in quick succession must not leave a client that a
        # slow stop() forgot (it would go on serving), nor keep one URL while the page is in another.
        self._changing = asyncio.Lock()

    @property
    def state(self) -> str:
        return self.client.state if self.client is not None else "off"

    @property
    def shown(self) -> str | None:
        """The farm in use (or kept), credentials masked."""
        if self.client is not None:
            return self.client.url.shown
        return self.stored.shown if self.stored is not None else None

    async def start(self) -> None:
        """Join the farm the page's URL or its stored settings name, if any."""
        stored = None
        try:
            saved = await asyncio.wait_for(self._store.get(FARM_SETTING_KEY), STORE_LIMIT_S)
            stored = saved.get("url") if isinstance(saved, dict) else None
        except Exception:  # no IndexedDB (private mode): the URL parameter still works
            pass
        kept = farm_page_settings("", stored)
        self.stored = kept.url
        settings = farm_page_settings(str(js.location.href), stored)
        self.from_query = settings.from_query
        self._heartbeat_ms = settings.heartbeat_ms
        if settings.refused:
            js.console.warn(f"[farm] {settings.refused}")
        self._join(settings.url)

    async def use(self, text: str | None) -> None:
        """Keep ``text`` as the page's farm URL (None or empty: forget it) and join it now, leaving the
        farm the page was in; ValueError (naming no credential) for a URL that cannot be a farm's. With
        ``?farm=`` in the page's URL, that farm stays in use: the kept one applies without it."""
        url = parse_farm_url(text, ("ws", "wss")) if text else None
        async with self._changing:
            self.stored = url
            write = (
                self._store.put(FARM_SETTING_KEY, {"url": text})
                if text
                else self._store.delete(FARM_SETTING_KEY)
            )
            if not self.from_query:
                await self._leave()
                self._join(url)
            try:
                await asyncio.wait_for(write, STORE_LIMIT_S)
            except Exception as exc:  # in use anyway; it will not survive a reload
                js.console.warn(f"[farm] the farm URL is not kept in this browser: {exc}")

    def _join(self, url: FarmUrl | None) -> None:
        if url is None:
            return
        self.client = FarmClient(self.context, FarmPageSettings(url, self._heartbeat_ms), self._state_changed)
        self.client.start()

    async def _leave(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.stop()
            self._state_changed("off")

    def _state_changed(self, state: str) -> None:
        if self.on_state is not None:
            self.on_state(state)
