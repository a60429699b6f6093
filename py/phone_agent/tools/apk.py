"""What install_app needs to know of an APK before it sends it: that it is one (a zip holding a binary
``AndroidManifest.xml``), and its manifest's package name, versionName and versionCode.

Android's binary XML (AXML): chunks of ``{u16 type, u16 header size, u32 size}``; a string pool
(UTF-8 or UTF-16), a resource map (attribute name index → resource id: obfuscated APKs leave the
attribute names empty, the ids remain), then start-element chunks whose attributes carry a typed value.
Pure: bytes in, ``ApkInfo`` out; ``NotAnApk`` says why a file is not an APK.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass

RES_XML = 0x0003
RES_STRING_POOL = 0x0001
RES_XML_RESOURCE_MAP = 0x0180
RES_XML_START_ELEMENT = 0x0102
UTF8_FLAG = 0x100
TYPE_STRING = 0x03
TYPE_INT_DEC, TYPE_INT_HEX = 0x10, 0x11
ATTR_VERSION_CODE = 0x0101021B
ATTR_VERSION_NAME = 0x0101021C
MANIFEST_MAX = 16 * 1024 * 1024


class NotAnApk(ValueError):
    """The bytes are not an APK; the message says why."""


@dataclass(frozen=True)
class ApkInfo:
    package_name: str
    version_name: str
    version_code: int


def _strings(data: bytes, at: int) -> list[str]:
    _t, header_size, _size, count, _styles, flags, strings_start, _styles_start = struct.unpack_from(
        "<HHIIIIII", data, at
    )
    offsets = struct.unpack_from(f"<{count}I", data, at + header_size)
    base = at + strings_start
    utf8 = bool(flags & UTF8_FLAG)
    out = []
    for offset in offsets:
        pos = base + offset
        if utf8:
            pos += 2 if data[pos] & 0x80 else 1  # the length in UTF-16 units
            length = data[pos]
            if length & 0x80:
                length = ((length & 0x7F) << 8) | data[pos + 1]
                pos += 1
            pos += 1
            out.append(data[pos : pos + length].decode("utf-8", "replace"))
        else:
            length = struct.unpack_from("<H", data, pos)[0]
            pos += 2
            if length & 0x8000:
                length = ((length & 0x7FFF) << 16) | struct.unpack_from("<H", data, pos)[0]
                pos += 2
            out.append(data[pos : pos + 2 * length].decode("utf-16-le", "replace"))
    return out


def parse_manifest(data: bytes) -> ApkInfo:
    """The package, versionName and versionCode of a binary AndroidManifest.xml."""
    try:
        kind, _header, total = struct.unpack_from("<HHI", data, 0)
        if kind != RES_XML:
            raise NotAnApk("AndroidManifest.xml is not Android binary XML")
        strings: list[str] = []
        ids: list[int] = []
        at = 8
        end = min(total, len(data))
        while at + 8 <= end:
            kind, header_size, size = struct.unpack_from("<HHI", data, at)
            if size < 8:
                break
            if kind == RES_STRING_POOL:
                strings = _strings(data, at)
            elif kind == RES_XML_RESOURCE_MAP:
                ids = list(struct.unpack_from(f"<{(size - header_size) // 4}I", data, at + header_size))
            elif kind == RES_XML_START_ELEMENT:
                return _manifest_element(data, at + header_size, strings, ids)
            at += size
    except (struct.error, IndexError) as exc:
        raise NotAnApk(f"its AndroidManifest.xml is damaged ({exc})") from None
    raise NotAnApk("its AndroidManifest.xml has no <manifest> element")


def _manifest_element(data: bytes, ext: int, strings: list[str], ids: list[int]) -> ApkInfo:
    _ns, name, attr_start, attr_size, attr_count = struct.unpack_from("<IIHHH", data, ext)
    if name >= len(strings) or strings[name] != "manifest":
        raise NotAnApk("its AndroidManifest.xml does not begin with <manifest>")
    values: dict[str | int, str | int] = {}
    for index in range(attr_count):
        pos = ext + attr_start + index * attr_size
        _ans, aname, raw, _vsize, _res0, vtype, vdata = struct.unpack_from("<IIIHBBI", data, pos)
        if vtype == TYPE_STRING:
            value: str | int = strings[vdata]
        elif vtype in (TYPE_INT_DEC, TYPE_INT_HEX):
            value = vdata
        elif raw != 0xFFFFFFFF and raw < len(strings):
            value = strings[raw]
        else:
            value = vdata
        key: str | int = ids[aname] if aname < len(ids) and ids[aname] else strings[aname]
        values[key] = value
    package = values.get("package")
    if not isinstance(package, str) or not package:
        raise NotAnApk("its manifest names no package")
    code = values.get(ATTR_VERSION_CODE, values.get("versionCode", 0))
    name_value = values.get(ATTR_VERSION_NAME, values.get("versionName", ""))
    return ApkInfo(
        package_name=package,
        version_name=str(name_value) if name_value is not None else "",
        version_code=int(code) if isinstance(code, int) or str(code).isdigit() else 0,
    )


def read_apk(data: bytes) -> ApkInfo:
    """The manifest of the APK ``data``; NotAnApk when it is not one."""
    if not data.startswith(b"PK"):
        raise NotAnApk("it is not a zip archive (an APK is one)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            try:
                entry = archive.getinfo("AndroidManifest.xml")
            except KeyError:
                raise NotAnApk("the archive has no AndroidManifest.xml") from None
            if entry.file_size > MANIFEST_MAX:
                raise NotAnApk("its AndroidManifest.xml is implausibly large")
            manifest = archive.read(entry)
    except zipfile.BadZipFile as exc:
        raise NotAnApk(f"it is not a readable zip archive ({exc})") from None
    return parse_manifest(manifest)
