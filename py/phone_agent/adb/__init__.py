"""Pure-Python ADB: the wire protocol as bytes in, packets out.

No sockets, threads, asyncio or ``js`` here: these modules run unchanged in CPython (the simulated
phone, tests) and in Pyodide (the page's ADB host). ``packet`` frames messages; ``keys`` handles
Android's RSA public-key format and the AUTH signature.
"""

from phone_agent.adb.packet import (
    MAX_PAYLOAD,
    MAX_PAYLOAD_V1,
    VERSION,
    VERSION_MIN,
    VERSION_SKIP_CHECKSUM,
    AdbPacket,
    AdbPacketParser,
    AdbProtocolError,
    AuthType,
    Command,
    checksum,
)

__all__ = [
    "MAX_PAYLOAD",
    "MAX_PAYLOAD_V1",
    "VERSION",
    "VERSION_MIN",
    "VERSION_SKIP_CHECKSUM",
    "AdbPacket",
    "AdbPacketParser",
    "AdbProtocolError",
    "AuthType",
    "Command",
    "checksum",
]
