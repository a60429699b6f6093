"""The CPython side of phone-agent: the page's web server, the relay WebSocket and the MCP server on stdio.

``relay`` runs the pure relay (``phone_agent.relay``: its core and its frames) on asyncio
against the page's WebSocket; ``access`` decides which Host and Origin headers are let in;
``static_files`` serves the page; ``app`` puts them into one Starlette app; ``mcp_bridge`` is the MCP
server built on the SDK's low-level ``Server``; ``runtime`` runs it all in one process.
"""
