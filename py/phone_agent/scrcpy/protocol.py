"""scrcpy 2.5's server command line and video stream, sans I/O.

The client pushes the server jar, runs it with ``app_process`` and connects to the
``localabstract:scrcpy`` socket it listens on (forward tunnel): the first socket (video) starts
with one dummy byte, then the device name in 64 NUL-padded bytes, then the codec meta (``u32``
codec id, ``u32`` width, ``u32`` height), then packets, each behind a 12-byte header: a big-endian
``u64`` whose top bit flags a config packet (SPS/PPS), the next bit a key frame and the rest the
PTS in µs, then a ``u32`` size. A codec id of 0 or 1 instead of the meta means the device disabled
the stream (1: a configuration error). All integers are big-endian (Java's ByteBuffer).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

SCRCPY_VERSION = "2.5"
SERVER_SHA256 = "1488b1105d6aff534873a26bf610cd2aea06ee867dd7a4d9c6bb2c091396eb15"
SERVER_SIZE = 69624
DEVICE_PATH = "/data/local/tmp/scrcpy-server.jar"
SERVER_CLASS = "com.genymobile.scrcpy.Server"
SOCKET_NAME = "scrcpy"  # without an scid; with one: scrcpy_%08x
DEVICE_NAME_LENGTH = 64

CODEC_H264 = 0x68323634  # "h264"
CODEC_H265 = 0x68323635  # "h265"
CODEC_AV1 = 0x00617631  # "\0av1"
CODEC_NAMES = {CODEC_H264: "h264", CODEC_H265: "h265", CODEC_AV1: "av1"}
STREAM_DISABLED, STREAM_ERROR = 0, 1

FLAG_CONFIG = 1 << 63
FLAG_KEY_FRAME = 1 << 62
PTS_MASK = FLAG_KEY_FRAME - 1
FRAME_HEADER = struct.Struct(">QI")
CODEC_META = struct.Struct(">III")


class ScrcpyProtocolError(ValueError):
    """Bytes that are not a scrcpy 2.5 video stream."""


# ----- the server's command line


@dataclass(frozen=True)
class ScrcpyServerOptions:
    """The options this project runs the server with (others keep the server's defaults)."""

    max_size: int = 1024
    max_fps: int = 30
    video_bit_rate: int = 4_000_000
    video_codec: str = "h264"
    tunnel_forward: bool = True
    video: bool = True
    audio: bool = False
    control: bool = True
    scid: int | None = None  # None: the plain socket name "scrcpy"
    cleanup: bool = True
    power_on: bool = False
    log_level: str = "info"
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def socket_name(self) -> str:
        return SOCKET_NAME if self.scid is None else f"{SOCKET_NAME}_{self.scid:08x}"

    def arguments(self) -> list[str]:
        """``key=value`` pairs after the version, in the order scrcpy's own client writes them."""
        pairs: dict[str, str] = {}
        if self.scid is not None:
            pairs["scid"] = f"{self.scid:08x}"
        pairs["log_level"] = self.log_level
        pairs["video"] = _bool(self.video)
        pairs["audio"] = _bool(self.audio)
        pairs["video_codec"] = self.video_codec
        pairs["max_size"] = str(self.max_size)
        pairs["video_bit_rate"] = str(self.video_bit_rate)
        pairs["max_fps"] = str(self.max_fps)
        pairs["tunnel_forward"] = _bool(self.tunnel_forward)
        pairs["control"] = _bool(self.control)
        pairs["cleanup"] = _bool(self.cleanup)
        pairs["power_on"] = _bool(self.power_on)
        pairs.update(self.extra)
        return [f"{key}={value}" for key, value in pairs.items()]


def _bool(value: bool) -> str:
    return "true" if value else "false"


def server_command(
    options: ScrcpyServerOptions, jar_path: str = DEVICE_PATH, version: str = SCRCPY_VERSION
) -> str:
    """The shell command line that starts the server (what ``adb shell`` runs)."""
    args = " ".join(options.arguments())
    return f"CLASSPATH={jar_path} app_process / {SERVER_CLASS} {version} {args}"


@dataclass
class ParsedOptions:
    """The server's view of its arguments (``Options.parse`` of scrcpy 2.5, the part we honour)."""

    max_size: int = 0
    max_fps: int = 0
    video_codec: str = "h264"
    tunnel_forward: bool = False
    video: bool = True
    audio: bool = True
    control: bool = True
    scid: int = -1
    send_dummy_byte: bool = True
    send_device_meta: bool = True
    send_codec_meta: bool = True
    send_frame_meta: bool = True
    unknown: list[str] = field(default_factory=list)

    @property
    def socket_name(self) -> str:
        return SOCKET_NAME if self.scid == -1 else f"{SOCKET_NAME}_{self.scid:08x}"


def version_mismatch(client_version: str, server_version: str = SCRCPY_VERSION) -> str:
    """The server's message when the client asks for another version."""
    return f"The server version ({server_version}) does not match the client ({client_version})"


def parse_server_arguments(args: Iterable[str], server_version: str = SCRCPY_VERSION) -> ParsedOptions:
    """``[version, key=value, …]`` as the 2.5 server reads them; ValueError with its message."""
    args = list(args)
    if not args:
        raise ValueError("Missing client version")
    if args[0] != server_version:
        raise ValueError(version_mismatch(args[0], server_version))
    options = ParsedOptions()
    for arg in args[1:]:
        key, sep, value = arg.partition("=")
        if not sep:
            raise ValueError(f'Invalid key=value pair: "{arg}"')
        as_bool = value == "true"  # Java's Boolean.parseBoolean: anything else is false
        if key == "max_size":
            options.max_size = int(value) & ~7
        elif key == "max_fps":
            options.max_fps = int(value)
        elif key == "video_codec":
            if value not in ("h264", "h265", "av1"):
                raise ValueError(f"Video codec {value} not supported")
            options.video_codec = value
        elif key == "scid":
            options.scid = int(value, 16)
        elif key in ("tunnel_forward", "video", "audio", "control"):
            setattr(options, key, as_bool)
        elif key in ("send_dummy_byte", "send_device_meta", "send_codec_meta", "send_frame_meta"):
            setattr(options, key, as_bool)
        elif key == "raw_stream":
            if as_bool:
                options.send_dummy_byte = options.send_device_meta = False
                options.send_codec_meta = options.send_frame_meta = False
        elif key not in KNOWN_KEYS:
            options.unknown.append(key)  # the server logs "Unknown server option" and goes on
    return options


KNOWN_KEYS = frozenset(
    "log_level audio_codec video_source audio_source video_bit_rate audio_bit_rate lock_video_orientation "
    "crop display_id show_touches stay_awake video_codec_options audio_codec_options video_encoder "
    "audio_encoder power_off_on_close clipboard_autosync downsize_on_error cleanup power_on list_encoders "
    "list_displays list_cameras list_camera_sizes camera_id camera_size camera_facing camera_ar camera_fps "
    "camera_high_speed".split()
)


def video_size(width: int, height: int, max_size: int) -> tuple[int, int]:
    """The stream's size for a screen: the long side capped at ``max_size`` (0: no cap), both sides
    multiples of 8 (the scaled one rounded to the nearest), as the 2.5 server computes it."""
    width &= ~7
    height &= ~7
    if max_size <= 0 or max(width, height) <= max_size:
        return width, height
    portrait = height > width
    major, minor = (height, width) if portrait else (width, height)
    minor = (minor * max_size // major + 4) & ~7
    major = max_size
    return (minor, major) if portrait else (major, minor)


# ----- the device side of the video socket


def encode_device_meta(name: str) -> bytes:
    """The device name, UTF-8, cut at a character boundary to 63 bytes, NUL-padded to 64."""
    raw = name.encode()
    cut = DEVICE_NAME_LENGTH - 1
    if len(raw) > cut:
        raw = raw[:cut].decode("utf-8", "ignore").encode()
    return raw.ljust(DEVICE_NAME_LENGTH, b"\0")


def encode_codec_meta(codec_id: int, width: int, height: int) -> bytes:
    return CODEC_META.pack(codec_id, width, height)


def encode_packet(data: bytes, pts_us: int, *, config: bool = False, key_frame: bool = False) -> bytes:
    """One packet behind its 12-byte header (a config packet carries no PTS)."""
    if config:
        head = FLAG_CONFIG
    else:
        head = (pts_us & PTS_MASK) | (FLAG_KEY_FRAME if key_frame else 0)
    return FRAME_HEADER.pack(head, len(data)) + data


# ----- the client side of the video socket


@dataclass(frozen=True, slots=True)
class DeviceMeta:
    name: str


@dataclass(frozen=True, slots=True)
class CodecMeta:
    codec_id: int
    width: int
    height: int

    @property
    def codec(self) -> str:
        return CODEC_NAMES.get(self.codec_id, f"0x{self.codec_id:08x}")


@dataclass(frozen=True, slots=True)
class StreamDisabled:
    """The device sent 0 (stream disabled) or 1 (configuration error) instead of codec meta."""

    error: bool


@dataclass(frozen=True, slots=True)
class VideoPacket:
    data: bytes
    pts_us: int | None  # None for a config packet
    config: bool
    key_frame: bool


VideoEvent = DeviceMeta | CodecMeta | StreamDisabled | VideoPacket


class VideoStreamParser:
    """Bytes of the video socket in, ``VideoEvent`` out; any split of the input gives the same events.

    ``dummy_byte`` (forward tunnel) and ``device_meta`` say what comes before the codec meta, as
    the options the server was started with do. ``max_packet`` guards against garbage lengths.
    """

    def __init__(
        self, *, dummy_byte: bool = True, device_meta: bool = True, max_packet: int = 16 * 1024 * 1024
    ) -> None:
        self.max_packet = max_packet
        self._buffer = bytearray()
        self._need_dummy = dummy_byte
        self._need_device_meta = device_meta
        self._need_codec_meta = True
        self._header: tuple[int, int] | None = None
        self.codec: CodecMeta | None = None
        self.ended = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def cut_short(self) -> str | None:
        """What the stream would end inside of if it ended now; None: between two packets."""
        if self._header is not None:
            return f"a packet ({len(self._buffer)} of its {self._header[1]} bytes came)"
        if self._buffer:
            return f"a header ({len(self._buffer)} bytes of it came)"
        return None

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[VideoEvent]:
        if self.ended:
            raise ScrcpyProtocolError("data after the stream was disabled")
        buffer = self._buffer
        buffer += data
        events: list[VideoEvent] = []
        while True:
            if self._need_dummy:
                if not buffer:
                    break
                if buffer[0] != 0:
                    raise ScrcpyProtocolError(f"expected the dummy byte 0, got {buffer[0]}")
                del buffer[:1]
                self._need_dummy = False
            elif self._need_device_meta:
                if len(buffer) < DEVICE_NAME_LENGTH:
                    break
                raw = bytes(buffer[:DEVICE_NAME_LENGTH]).split(b"\0", 1)[0]
                del buffer[:DEVICE_NAME_LENGTH]
                self._need_device_meta = False
                events.append(DeviceMeta(raw.decode("utf-8", "replace")))
            elif self._need_codec_meta:
                if len(buffer) >= 4 and int.from_bytes(buffer[:4], "big") in (STREAM_DISABLED, STREAM_ERROR):
                    error = buffer[3] == STREAM_ERROR
                    del buffer[:4]
                    self.ended = True
                    events.append(StreamDisabled(error))
                    break
                if len(buffer) < CODEC_META.size:
                    break
                codec_id, width, height = CODEC_META.unpack_from(buffer)
                del buffer[: CODEC_META.size]
                if codec_id not in CODEC_NAMES:
                    raise ScrcpyProtocolError(f"unknown codec id 0x{codec_id:08x}")
                self._need_codec_meta = False
                self.codec = CodecMeta(codec_id, width, height)
                events.append(self.codec)
            elif self._header is None:
                if len(buffer) < FRAME_HEADER.size:
                    break
                head, size = FRAME_HEADER.unpack_from(buffer)
                del buffer[: FRAME_HEADER.size]
                if size > self.max_packet:
                    raise ScrcpyProtocolError(f"packet of {size} bytes (limit {self.max_packet})")
                self._header = (head, size)
            else:
                head, size = self._header
                if len(buffer) < size:
                    break
                payload = bytes(buffer[:size])
                del buffer[:size]
                self._header = None
                config = bool(head & FLAG_CONFIG)
                events.append(
                    VideoPacket(
                        payload,
                        None if config else head & PTS_MASK,
                        config,
                        not config and bool(head & FLAG_KEY_FRAME),
                    )
                )
        return events


class ConfigMerger:
    """Prepends the last config packet (SPS/PPS) to the next media packet, as scrcpy's client does:
    a decoder fed Annex B needs them in front of the key frame they describe."""

    def __init__(self) -> None:
        self.config: bytes | None = None
        self._pending: bytes | None = None

    def push(self, packet: VideoPacket) -> VideoPacket | None:
        """The packet to decode, or None for a config packet (kept for the next one)."""
        if packet.config:
            self.config = self._pending = packet.data
            return None
        if self._pending is None:
            return packet
        merged = VideoPacket(self._pending + packet.data, packet.pts_us, False, packet.key_frame)
        self._pending = None
        return merged
