"""The relay of Channel A, pure: ``frames`` is its wire format (both halves: one class per frame, what
the server and the page send and read, the close codes), ``core`` the server's pending calls, ids and
time limits, ``settings`` where the page's relay client connects and how it retries. The asyncio
adapters are ``server.relay`` and ``browser.relay_client``."""
