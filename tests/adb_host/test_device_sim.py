"""AdbDevice end to end against the simulated phone: info, screenshot, input, apps, UI dump."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from phone_agent.adb.device import AdbDevice, escape_input_text, is_input_text_safe
from phone_agent.errors import DeviceError


@pytest.fixture
def device(client) -> AdbDevice:
    return AdbDevice(client, transport="tcp")


async def test_info_reports_the_phone(device, sim):
    info = await device.info()
    props = sim.phone.props
    assert info == {
        "model": props["ro.product.model"],
        "brand": props["ro.product.brand"],
        "release": props["ro.build.version.release"],
        "sdk": props["ro.build.version.sdk"],
        "manufacturer": props["ro.product.manufacturer"],
        "serial": sim.serial,
        "screenWidth": 1080,
        "screenHeight": 2400,
        "transport": "tcp",
    }


async def test_screenshot_is_a_1080x2400_png(device):
    png = await device.screenshot_png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", png[16:24]) == (1080, 2400)
    assert Image.open(io.BytesIO(png)).size == (1080, 2400)


async def test_tap_on_a_clickable_node_changes_the_next_screenshot(device):
    before = await device.screenshot_png()
    nodes = await device.ui_nodes()
    target = next(n for n in nodes if n.clickable and n.bounds.width > 0 and n.label)
    await device.tap(*target.bounds.center)
    after = await device.screenshot_png()
    assert after != before


async def test_open_app_and_current_app(device, sim):
    apps = await device.list_apps()
    assert "com.android.settings" in apps
    third_party = await device.list_apps(third_party_only=True)
    assert third_party and set(third_party) < set(apps)
    await device.open_app("com.android.settings")
    assert (await device.current_app() or "").startswith("com.android.settings/")
    with pytest.raises(DeviceError, match="not installed"):
        await device.open_app("com.example.nothere")


async def test_key_events_go_home(device):
    await device.open_app("com.android.settings")
    await device.press_key("home")
    assert "launcher" in (await device.current_app() or "")
    with pytest.raises(DeviceError, match="unknown key"):
        await device.press_key("nope")


async def test_ui_dump_parses_into_nodes(device):
    nodes = await device.ui_nodes()
    assert nodes and all(n.bounds.right >= n.bounds.left for n in nodes)
    assert any(n.clickable for n in nodes)


async def focus_a_text_field(device: AdbDevice) -> None:
    await device.open_app("com.android.chrome")
    for node in await device.ui_nodes():
        if node.class_name.endswith("EditText"):
            await device.tap(*node.bounds.center)
            return
    pytest.fail("no text field on the Chrome screen of the simulated phone")


async def test_text_with_spaces_and_quotes_arrives_exactly(device, sim):
    await focus_a_text_field(device)
    text = 'it\'s a "test" & more; $HOME `x` \\ 100%'
    await device.type_text(text)
    assert sim.phone.state()["focused_text"] == text


async def test_non_ascii_text_goes_through_adbkeyboard_and_the_keyboard_comes_back(device, sim):
    from phone_agent.sim.android.apps import GBOARD_IME

    await device.shell(f"ime set {GBOARD_IME}")  # the person's keyboard (the sim starts on ADBKeyBoard)
    await focus_a_text_field(device)
    before = sim.phone.state()["ime"]
    assert before == GBOARD_IME
    await device.type_text("héllo 你好 👋")
    assert sim.phone.state()["focused_text"] == "héllo 你好 👋"
    # ADBKeyBoard typed it, then the person's own keyboard was selected again.
    assert sim.phone.state()["ime"] == before
    await device.type_text(" ok ✓")
    assert sim.phone.state()["focused_text"] == "héllo 你好 👋 ok ✓"
    assert sim.phone.state()["ime"] == before


def hide_packages(sim, *packages: str):
    """Make ``pm list packages`` on the sim leave out ``packages`` (as on a phone without them)."""
    original = sim.phone.run

    def run(argv, stdin, fs):
        result = original(argv, stdin, fs)
        if argv[:3] == ["pm", "list", "packages"]:
            for package in packages:
                result.stdout = result.stdout.replace(f"package:{package}\n".encode(), b"")
        return result

    sim.phone.run = run
    return original


async def test_non_ascii_without_adbkeyboard_goes_through_the_clipboard(device, sim):
    await focus_a_text_field(device)
    await device.shell("ime disable com.android.adbkeyboard/.AdbIME")
    original = hide_packages(sim, "com.android.adbkeyboard")
    try:
        await device.type_text("见到你 'soon'")
        assert sim.phone.state()["focused_text"] == "见到你 'soon'"
        assert sim.phone.state()["clipboard"] == "见到你 'soon'"
    finally:
        sim.phone.run = original


async def test_non_ascii_without_adbkeyboard_or_clipper_is_a_clear_error(device, sim):
    await device.shell("ime disable com.android.adbkeyboard/.AdbIME")
    original = hide_packages(sim, "com.android.adbkeyboard", "ca.zgrs.clipper")
    try:
        with pytest.raises(DeviceError, match="neither ADBKeyBoard nor Clipper is installed") as caught:
            await device.type_text("你好")
        assert "Install ADBKeyBoard" in caught.value.remedy
    finally:
        sim.phone.run = original


async def test_shell_gives_output_and_exit_code(device):
    result = await device.shell("echo hi; exit 4")
    assert (result.stdout, result.exit_code) == (b"hi\n", 4)


async def test_push_and_pull_files(device, sim):
    await device.push(b"abc" * 1000, "/sdcard/Download/t.txt")
    assert await device.pull("/sdcard/Download/t.txt") == b"abc" * 1000
    with pytest.raises(DeviceError, match="No such file"):
        await device.pull("/sdcard/none.txt")


def test_input_text_escaping():
    assert escape_input_text("a b") == "a%sb"
    assert escape_input_text("it's") == "'it'\"'\"'s'"
    assert escape_input_text("$x;y") == "'$x;y'"
    assert (
        is_input_text_safe("Hello, world! ~")
        and not is_input_text_safe("é")
        and not is_input_text_safe("a\n")
    )


async def test_a_lost_connection_is_no_phone_device_connected(sim, host_key):
    from phone_agent.errors import ErrorCode, PhoneDisconnectedError
    from phone_agent.server.adb_tcp import connect_adbd

    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    device = AdbDevice(client, transport="tcp")
    assert (await device.shell("echo up")).stdout == b"up\n"
    for connection in list(sim._connections.values()):
        connection.abort("unplugged")
    with pytest.raises(PhoneDisconnectedError) as caught:
        await device.screenshot_png()
    assert str(caught.value) == "No phone device connected."
    assert caught.value.code == ErrorCode.NO_DEVICE and isinstance(caught.value, DeviceError)
    with pytest.raises(PhoneDisconnectedError):
        await device.tap(1, 1)
    await client.close()


async def test_ui_nodes_retries_a_dump_that_could_not_get_idle_and_never_reads_the_old_file(device, sim):
    from phone_agent.device.shell_result import ShellResult

    await device.open_app("com.android.settings")
    assert "Network & internet" in [n.label for n in await device.ui_nodes()]  # leaves its dump file
    await device.open_app("com.google.android.apps.messaging")
    original = sim.phone.run
    dumps = []

    def run(argv, stdin, fs):
        if argv[:2] == ["uiautomator", "dump"]:
            dumps.append(argv)
            if len(dumps) == 1:  # as some phones do: an error, exit status 0, the old file left as it was
                return ShellResult(stdout=b"ERROR: could not get idle state.\n")
        return original(argv, stdin, fs)

    sim.phone.run = run
    try:
        labels = [n.label for n in await device.ui_nodes()]
    finally:
        sim.phone.run = original
    assert len(dumps) == 2
    assert "Zhang San" in labels and "Network & internet" not in labels
