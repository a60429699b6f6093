"""A device-side ``AdbConnection`` without a socket, and the bytes a host would send it: shared by
``test_connection.py`` and ``test_streams.py``."""

from __future__ import annotations

from phone_agent.adb.connection import AdbConnection, Side
from phone_agent.adb.events import StreamRequested
from phone_agent.adb.keys import AdbPublicKey
from phone_agent.adb.packet import VERSION, AdbPacket, AdbPacketParser, Command

FEATURES = ("shell_v2", "cmd", "delayed_ack")
PROPERTIES = {"ro.product.name": "sim", "ro.product.model": "Sim", "ro.product.device": "sim"}
TOKEN = bytes(range(20))


class Trusting:
    """A device authenticator with a list of trusted keys; offered keys wait for ``authorize``."""

    def __init__(self, *keys: AdbPublicKey, required: bool = True, accept_offers: bool = False) -> None:
        self.keys = list(keys)
        self.required = required
        self.accept_offers = accept_offers
        self.offered: list[AdbPublicKey] = []

    def verify(self, token: bytes, signature: bytes) -> AdbPublicKey | None:
        return next((k for k in self.keys if k.verify(token, signature)), None)

    def offer(self, key: AdbPublicKey) -> bool:
        self.offered.append(key)
        return self.accept_offers


def make_device(auth: Trusting | None = None, features: tuple[str, ...] = FEATURES) -> AdbConnection:
    return AdbConnection(
        Side.DEVICE,
        features=features,
        properties=PROPERTIES,
        device_auth=auth or Trusting(required=False),
        token_source=lambda n: TOKEN[:n],
    )


def sent(connection: AdbConnection) -> list[AdbPacket]:
    parser = AdbPacketParser()
    parser.verify_checksum = False
    for chunk in connection.data_to_send():
        parser.receive_data(chunk)
    return parser.packets_received()


def host(packet: AdbPacket, *, checksum: bool = True) -> bytes:
    return packet.encode(with_checksum=checksum)


def cnxn(
    features: str = "shell_v2,cmd,delayed_ack", version: int = VERSION, max_payload: int = 1 << 20
) -> bytes:
    return host(AdbPacket(Command.CNXN, version, max_payload, f"host::features={features}\x00".encode()))


def online_device(features: str = "shell_v2,cmd") -> AdbConnection:
    device = make_device()
    device.receive_data(cnxn(features))
    sent(device)
    device.events_received()
    return device


def open_on(device: AdbConnection, remote: int = 9, window: int = 0) -> int:
    device.receive_data(host(AdbPacket(Command.OPEN, remote, window, b"exec:echo hi\x00"), checksum=False))
    assert device.events_received() == [StreamRequested(remote, "exec:echo hi")]
    local = device.accept(remote)
    assert local is not None
    return local
