"""The one road every tool call takes: from an MCP client (through the server, or an MCP App view),
WebMCP, a flow's step, the page's agent or the live view.

A call (``call.Call``: the tool, its arguments, who made it and under which call) passes the steps
listed in ``steps.page_steps`` — the one place their order is written — and then the tool's handler
(``chain.CallPipeline``). Each step is a plain object in its own module, called with the call and the rest
of the chain (Starlette's middleware and the MCP SDK's handler chain are the models).

This ``__init__`` imports nothing, so a handler's module (``flow_tools``) may use the chain and the
call without the steps that use the handlers. Pure: no I/O.
"""
