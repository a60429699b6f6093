"""The relay of Channel A, pure: ``frames`` is its wire format (both halves: what the server sends and
parses, what the page sends and parses, the close codes), ``core`` the server's pending calls, ids
and time limits. The asyncio adapters are ``server.relay`` and ``browser.relay_client``."""
