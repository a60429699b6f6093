"""WebMcpService: Channel B. Registers the catalog's tools on ``document.modelContext``.

As WebMCP's current draft has it: ``registerTool(tool, {signal})`` (``navigator.modelContext`` where a
Chrome still has only that), unregistering by aborting the signal (the API has no ``unregisterTool``),
tool names checked against ``[A-Za-z0-9_.-]{1,128}`` before they are offered, and the ``toolchange``
event followed: tools other scripts of the page add or withdraw show as cards and in the activity log
(``on_others``). Nothing of the removed API is used (``provideContext``, ``unregisterTool``,
``requestUserInteraction``): confirmations are the page's own UI.

Under the compact profile (the default) only the core group and ``tool_groups`` are registered: an
in-page model's context is small. ``tool_groups`` registers the groups it enables (this service is the
page's ``GroupSwitch`` for WebMCP calls); every tool stays callable by name through the dispatcher.

Each tool's ``execute`` validates and dispatches through the shared ToolDispatcher, answers every
failure as an ``isError`` result (Chrome turns a thrown error into an opaque "UnknownError"), and
cancels the call when ``options.signal`` aborts.
"""

from __future__ import annotations

import asyncio
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from .. import errors
from ..tools.catalog import listed_tools, tools_for_profile
from ..tools.dispatch import ToolDispatcher
from ..tools.spec import Channel, ToolSpec, webmcp_name_ok
from .interop import console_log, console_warn, from_js, is_nullish, to_js_json

NAME_RULE = "[A-Za-z0-9_.-]{1,128}"
ENABLE_STEPS = (
    "[WebMCP] document.modelContext is not available, so the phone tools are not offered to in-page "
    "agents (the MCP relay still works). To enable WebMCP: use Chrome 149 or newer, open "
    "chrome://flags/#enable-webmcp-testing, set it to Enabled, restart Chrome, and open this page over "
    "http://localhost, http://127.0.0.1 or https."
)


def get_model_context() -> Any:
    """``document.modelContext``, else the deprecated ``navigator.modelContext``.

    The navigator property is read only after an ``in`` check: merely reading it logs a deprecation
    warning in the Chrome builds that still have it.
    """
    context = getattr(js.document, "modelContext", None)
    if not is_nullish(context):
        return context
    if js.Reflect.has(js.navigator, "modelContext"):
        context = getattr(js.navigator, "modelContext", None)
        return None if is_nullish(context) else context
    return None


class WebMcpService:
    def __init__(self, context: ToolDispatcher) -> None:
        self._context = context
        self._controller: Any = None
        self._proxies: list[Any] = []
        self.registered: list[str] = []
        # Tools other scripts of the page registered, by name (their descriptions), as last seen.
        self.others: dict[str, str] = {}
        # Told (added, withdrawn, all others now) when other scripts' tools change.
        self.on_others: Any = None
        self._change_proxy: Any = None
        self._watching: Any = None
        # The tool groups tool_groups enabled (compact profile): registered beside the core group.
        self._groups: frozenset[str] = frozenset()
        self._options: Any = None
        context.groups = self

    def enabled(self) -> frozenset[str]:
        return self._groups

    async def enable(self, names: frozenset[str]) -> None:
        """Register the tools these groups add (``tools.groups.GroupSwitch``)."""
        self._groups = names
        model_context = get_model_context()
        if model_context is None or self._controller is None:
            return
        for spec in listed_tools(self._context.profile, names):
            if spec.name not in self.registered:
                await self._register_spec(model_context, spec)
        console_log(
            f"[WebMCP] {len(self.registered)} tools registered after enabling {', '.join(sorted(names))}"
        )

    @property
    def available(self) -> bool:
        return get_model_context() is not None

    async def register(self) -> bool:
        """Register the tools of the page's profile (the server's ``--tools``, all by default); False
        (with a console warning) where WebMCP is missing."""
        model_context = get_model_context()
        if model_context is None:
            console_warn(ENABLE_STEPS)
            return False
        self.unregister()
        self._controller = js.AbortController.new()
        self._options = js.Object.new()
        self._options.signal = self._controller.signal
        self._follow_changes(model_context)
        for spec in listed_tools(self._context.profile, self._groups):
            await self._register_spec(model_context, spec)
        console_log(f"[WebMCP] {len(self.registered)} tools registered: {', '.join(self.registered)}")
        await self.refresh_others(model_context)  # tools other scripts registered before this page
        return True

    async def _register_spec(self, model_context: Any, spec: ToolSpec) -> None:
        if not webmcp_name_ok(spec.name):
            console_warn(f"[WebMCP] {spec.name!r} is not a WebMCP tool name ({NAME_RULE}); skipped")
            return
        proxy = create_proxy(self._make_execute(spec))
        self._proxies.append(proxy)
        await self._register_one(model_context, spec, proxy, self._options)
        self.registered.append(spec.name)

    async def _register_one(self, model_context: Any, spec: ToolSpec, execute: Any, options: Any) -> None:
        """Register with ``outputSchema`` where Chrome takes it (159+); a Chrome that refuses the
        descriptor because of it gets the tool without it rather than no tool at all."""
        base = {
            "name": spec.name,
            "title": spec.title,
            "description": spec.description,
            "inputSchema": spec.input_schema,
            "annotations": spec.webmcp_annotations(),
        }
        attempts = (
            [base] if spec.output_schema is None else [{**base, "outputSchema": spec.output_schema}, base]
        )
        for number, attempt in enumerate(attempts, 1):
            descriptor = to_js_json(attempt)
            descriptor.execute = execute
            try:
                await model_context.registerTool(descriptor, options)
                return
            except Exception:
                if number == len(attempts):
                    raise

    def _follow_changes(self, model_context: Any) -> None:
        """Listen to ``toolchange`` (once): each change re-reads the page's tools (``getTools``)."""
        if self._change_proxy is not None or is_nullish(getattr(model_context, "addEventListener", None)):
            return

        def on_change(_event: Any = None) -> None:
            self._watching = asyncio.ensure_future(self.refresh_others(model_context))

        self._change_proxy = create_proxy(on_change)
        model_context.addEventListener("toolchange", self._change_proxy)

    async def refresh_others(self, model_context: Any = None) -> None:
        """Compare the page's tools with ours: tell ``on_others`` what other scripts added or withdrew."""
        model_context = model_context or get_model_context()
        if model_context is None or is_nullish(getattr(model_context, "getTools", None)):
            return
        try:
            listed = from_js(await model_context.getTools())
        except Exception as exc:
            console_warn(f"[WebMCP] could not list the page's tools: {exc}")
            return
        # Ours: the profile's tools (a change fired while ours are being registered must not count them).
        ours = {spec.name for spec in tools_for_profile(self._context.profile)}
        now = {
            str(tool.get("name")): str(tool.get("description") or "")
            for tool in listed or []
            if isinstance(tool, dict) and tool.get("name") not in ours
        }
        added = [name for name in now if name not in self.others]
        withdrawn = [name for name in self.others if name not in now]
        self.others = now
        if (added or withdrawn) and self.on_others is not None:
            self.on_others(added, withdrawn, dict(now))

    def unregister(self) -> None:
        """Withdraw the tools (abort the registration signal) and free their callbacks."""
        if self._controller is not None:
            self._controller.abort()
            self._controller = None
        for proxy in self._proxies:
            proxy.destroy()
        self._proxies.clear()
        self.registered.clear()

    def _make_execute(self, spec: ToolSpec) -> Any:
        context = self._context

        async def execute(tool_input: Any = None, options: Any = None) -> Any:
            try:
                args = from_js(tool_input)
                signal = None if is_nullish(options) else getattr(options, "signal", None)
                if is_nullish(signal):
                    signal = None
                if signal is not None and signal.aborted:
                    return to_js_json(errors.cancelled(spec.name).to_result())
                call = asyncio.ensure_future(context.dispatch(spec.name, args, Channel.WEBMCP))
                on_abort = None
                if signal is not None:
                    on_abort = create_proxy(lambda _event=None: call.cancel())
                    signal.addEventListener("abort", on_abort)
                try:
                    result = await call
                except asyncio.CancelledError:
                    result = errors.cancelled(spec.name).to_result()
                finally:
                    if on_abort is not None:
                        signal.removeEventListener("abort", on_abort)
                        on_abort.destroy()
            except Exception as exc:  # never throw out of execute: Chrome would hide the reason
                result = errors.internal(spec.name, exc).to_result()
            return to_js_json(result)

        return execute
