"""Pure-Python ADB, shared by the simulated phone (device side) and the page (host side).

No sockets, threads or ``js`` here: these modules run unchanged in CPython and in Pyodide. The wire
layer is sans-I/O (bytes in, packets and events out): ``packet`` frames messages, ``keys`` handles
Android's RSA key format and the AUTH signature, ``connection`` is the connection state machine of
both ends (what it reports is ``events``, who answers AUTH is an ``auth`` strategy, its streams and
their flow control are ``streams``; ``host`` sets it up as a host with key authentication),
``shell_protocol`` and ``sync_protocol`` the service codecs. On top, ``client`` (an asyncio driver
over any byte transport), ``services``, ``smart_socket`` (the adb server) and ``device`` (AdbDevice).
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
