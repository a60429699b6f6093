"""The flow commands that reach the phone's system, run on the simulated phone and checked from outside
with Debian's adb: setLocation and travel (Android's test location providers, the shell allowed to mock
locations), airplane mode (cmd connectivity), addMedia (pushed, then seen by the media scanner), killApp
(am kill), screen recording, random input, launchApp's arguments (intent extras), clearKeychain."""

from __future__ import annotations

import base64
import io
import re

from PIL import Image

from tests.flows.test_run_flow import call

SETTINGS = "appId: com.android.settings\n---\n"


def png() -> str:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


async def run(dispatcher, body: str, header: str = SETTINGS, **args) -> dict:
    result = await call(dispatcher, "run_flow", yaml=header + body, **args)
    report = result["structuredContent"]
    assert report["passed"], report
    return result


async def test_set_location_needs_the_mock_permission_and_travel_moves_the_phone(dispatcher, by_adb):
    refused = await by_adb.shell("cmd location providers add-test-provider gps 2>&1; true")
    assert "SecurityException" in refused  # as on Android: the shell may not mock locations yet
    await run(dispatcher, "- setLocation:\n    latitude: 52.3676\n    longitude: 4.9041\n")
    assert "gps provider [mock]" in (dumped := await by_adb.shell("dumpsys location"))
    assert "Location[gps 52.367600,4.904100]" in dumped
    assert "MOCK_LOCATION: allow" in await by_adb.shell("appops get com.android.shell MOCK_LOCATION")
    travel = "- travel:\n    points:\n      - 52.3676,4.9041\n      - 52.3700,4.9100\n    speed: 100000\n"
    await run(dispatcher, travel)
    assert "Location[gps 52.370000,4.910000]" in await by_adb.shell("dumpsys location")


async def test_airplane_mode_turns_wifi_off_and_back_and_toggles(dispatcher, by_adb, sim):
    await run(dispatcher, "- setAirplaneMode: enabled\n")
    assert (await by_adb.shell("cmd connectivity airplane-mode")).strip() == "enabled"
    assert not await by_adb.wifi_on()
    assert (await by_adb.shell("settings get global airplane_mode_on")).strip() == "1"
    await run(dispatcher, "- toggleAirplaneMode\n")
    assert (await by_adb.shell("cmd connectivity airplane-mode")).strip() == "disabled"
    assert await by_adb.wifi_on()
    await run(dispatcher, "- setAirplaneMode:\n    value: enabled\n- toggleAirplaneMode\n")
    assert (await by_adb.shell("cmd connectivity airplane-mode")).strip() == "disabled"


async def test_add_media_pushes_the_files_and_the_media_scanner_lists_them(dispatcher, by_adb):
    media = {
        "assets/red square.png": png(),
        "assets/clip.mp4": base64.b64encode(b"\0\0\0\x18ftypmp42").decode(),
    }
    body = "- addMedia:\n    - ../assets/red square.png\n    - ../assets/clip.mp4\n"
    await run(dispatcher, body, path="flows/media.yaml", media=media)
    assert "red square.png" in await by_adb.shell("ls /sdcard/Pictures")
    listed = await by_adb.shell("content query --uri content://media/external/images/media")
    assert "_data=/sdcard/Pictures/red square.png" in listed and "mime_type=image/png" in listed
    assert "_data=/sdcard/Movies/clip.mp4" in await by_adb.shell(
        "content query --uri content://media/external/video/media"
    )


async def test_kill_app_ends_a_background_apps_process_and_launch_arguments_reach_the_app(
    dispatcher, sim, by_adb
):
    login = "appId: com.phoneagent.login\n---\n"
    await run(
        dispatcher, "- launchApp:\n    arguments:\n      username: mobium\n      remember: true\n", login
    )
    state = sim.phone.state()
    assert state["package"] == "com.phoneagent.login"
    assert state["app_state"]["com.phoneagent.login.extras"] == '{"remember": "true", "username": "mobium"}'
    assert 'text="mobium"' in await by_adb.screen_texts()  # Login Demo fills the username it was given
    assert (await by_adb.shell("pidof com.phoneagent.login")).strip()
    await run(dispatcher, "- launchApp\n- killApp\n", login)  # in front: `am kill` leaves it running
    assert (await by_adb.shell("pidof com.phoneagent.login")).strip()
    await run(dispatcher, "- pressKey: Home\n- killApp: com.phoneagent.login\n- clearKeychain\n")
    assert not (await by_adb.shell("pidof com.phoneagent.login; true")).strip()


async def test_random_input_types_what_its_kind_says_and_a_recording_comes_back(dispatcher, sim):
    login = "appId: com.phoneagent.login\n---\n- launchApp\n- tapOn: {id: username}\n"
    kinds = {
        "inputRandomText:\n    length: 12": r"[A-Za-z]{12}",
        "inputRandomNumber:\n    length: 6": r"[1-9][0-9]{5}",
        "inputRandomEmail": r"[a-zë.]+[0-9]+@example\.(com|org|net)",
        "inputRandomPersonName": r"\S+ \S+",
    }
    for command, pattern in kinds.items():
        await run(dispatcher, f"- eraseText\n- {command}\n", login)
        typed = sim.phone.state()["focused_text"]
        assert re.fullmatch(pattern, typed), (command, typed)
    body = "- startRecording: videos/run\n- tapOn: Settings\n- stopRecording\n"
    result = await run(dispatcher, body, "appId: com.android.settings\n---\n- launchApp\n")
    [recording] = result["structuredContent"]["recordings"]
    assert recording["path"] == "videos/run.mp4"
    resource = result["content"][recording["resource"]]["resource"]
    assert resource["mimeType"] == "video/mp4" and base64.b64decode(resource["blob"])[4:8] == b"ftyp"
