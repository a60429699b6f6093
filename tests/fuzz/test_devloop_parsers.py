"""Property tests on the developer loop's parsers of outside input: an APK's zip and binary manifest,
logcat lines, the dropbox and crash buffer, ``dumpsys notification`` and ``pm install``'s answer.
Whatever comes in, only the documented error comes out (``NotAnApk`` for a file that is no APK), and a
manifest the tests write reads back."""

from __future__ import annotations

import io
import zipfile

from hypothesis import given
from hypothesis import strategies as st

from phone_agent.device.install import install_failure
from phone_agent.errors import ErrorCode
from phone_agent.tools.apk import NotAnApk, parse_manifest, read_apk
from phone_agent.tools.logs import parse_crash_buffer, parse_dropbox, parse_logcat
from phone_agent.tools.notifications import parse_notifications
from tests.adb_host.apk_maker import make_apk, manifest_axml
from tests.fuzz.targets import FUZZ

packages = st.from_regex(r"[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8}){1,3}", fullmatch=True)
log_text = st.text(alphabet=st.sampled_from(list("0123456789-:. EFIWVD\n\tabcABC()=@/|_,[]>")), max_size=400)


@FUZZ
@given(st.binary(max_size=600))
def test_any_manifest_bytes_read_or_are_not_an_apk(data: bytes) -> None:
    try:
        parse_manifest(data)
    except NotAnApk:
        pass


@FUZZ
@given(
    st.binary(max_size=200), st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=255)
)
def test_a_damaged_manifest_in_a_zip_is_not_an_apk_or_reads(noise: bytes, at: int, value: int) -> None:
    manifest = bytearray(manifest_axml("com.example.app", 7, "7.0"))
    manifest[at % len(manifest)] = value
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("AndroidManifest.xml", bytes(manifest) + noise)
    for data in (archive.getvalue(), archive.getvalue()[: at + 4], b"PK" + noise):
        try:
            info = read_apk(data)
        except NotAnApk:
            continue
        assert isinstance(info.package_name, str) and isinstance(info.version_code, int)


@FUZZ
@given(packages, st.integers(min_value=0, max_value=2**31 - 1), st.text(min_size=1, max_size=20))
def test_a_manifest_reads_back(package: str, code: int, name: str) -> None:
    info = read_apk(make_apk(package, code, name))
    assert (info.package_name, info.version_code, info.version_name) == (package, code, name)


@FUZZ
@given(log_text)
def test_logcat_dropbox_and_notification_text_parse_without_errors(text: str) -> None:
    lines = parse_logcat(text)
    assert all(line.level in "VDIWEF" for line in lines)
    parse_crash_buffer(lines)
    for crash in parse_dropbox("========================================\n" + text):
        assert crash.kind in ("crash", "anr", "native")
    parse_notifications("  NotificationRecord(0x1: pkg=a key=b: x)\n" + text)


@FUZZ
@given(st.text(max_size=200))
def test_pm_install_answers_are_success_or_install_failed(text: str) -> None:
    failure = install_failure(text)
    assert failure is None or failure.code is ErrorCode.INSTALL_FAILED
