"""The CPython side of phone-agent: the page's web server, the relay WebSocket and the MCP server on stdio.

``phone_agent.relay.core`` (pure) holds the pending calls, ids and time limits; ``relay`` here runs it
on asyncio against the page's WebSocket; ``access`` decides which Host and Origin headers are let in;
``static_files`` serves the page; ``app`` puts them into one Starlette app; ``mcp_bridge`` is the MCP
server built on the SDK's low-level ``Server``; ``runtime`` runs it all in one process.
"""
