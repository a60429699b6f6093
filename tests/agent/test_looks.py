"""Where the agent's looks come from: the live scrcpy frame when the setting allows it and the frame is
fresh, else the phone's screenshot with the reason; the frame (smaller, scaled by max_size) gives the
model the same image size and the same image→device mapping as a screenshot; the task's report and
its progress say which source the looks came from.

The live frame here is the simulated phone's own screen through the sim's scrcpy encoder (H.264 by
libx264 at the stream's size) and decoded again with PyAV — what the page's VideoDecoder draws."""

from __future__ import annotations

import io

import av
import pytest
from PIL import Image, ImageChops, ImageStat

from phone_agent.agent.screen import ScreenMapping, observe
from phone_agent.agent.settings import ScreenSettings
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.scrcpy.protocol import video_size
from phone_agent.sim.screen_encoder import ScreenEncoder
from phone_agent.tasks import AgentTask, TaskStatus
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.screen_source import (
    MAX_FRAME_AGE_S,
    SCRCPY,
    SCREENCAP,
    FrameState,
    LookChoice,
    LookTally,
    choose_look,
    take_look,
)
from phone_agent.tools.spec import Channel
from tests.agent.conftest import FAST
from tests.agent.model_server import call, plan, request_images, tap_on, wifi_script
from tests.agent.pillow_codec import PillowCodec
from tests.agent.sim_device import SimDevice

SIZE = (1080, 2400)


def test_the_live_frame_only_when_allowed_running_and_fresh():
    fresh = FrameState(True, True, 0.2, SIZE)
    assert choose_look(fresh) == LookChoice(SCRCPY)
    assert choose_look(FrameState(False, True, 0.2, SIZE)) == LookChoice(SCREENCAP, "turned off in Settings")
    assert choose_look(FrameState(True, False, None, None)) == LookChoice(SCREENCAP, "scrcpy is not running")
    assert choose_look(FrameState(True, True, None, SIZE)).reason == "scrcpy has drawn no frame yet"
    assert choose_look(FrameState(True, True, 0.2, None)).source == SCREENCAP
    stalled = choose_look(FrameState(True, True, MAX_FRAME_AGE_S + 0.5, SIZE))
    assert stalled == LookChoice(SCREENCAP, "the scrcpy stream stalled (last frame 3.0 s ago)")
    assert (
        choose_look(FrameState(True, True, MAX_FRAME_AGE_S, SIZE)).source == SCRCPY
    )  # the bound is inclusive
    assert choose_look(FrameState(True, True, 1.0, SIZE), max_age_s=0.5).source == SCREENCAP


def stream_frame(device: SimDevice, max_size: int) -> bytes:
    """The phone's screen as the scrcpy stream carries it (encoded and decoded), as a PNG."""
    width, height = video_size(*SIZE, max_size)
    encoder = ScreenEncoder(width, height, 30)
    decoder = av.CodecContext.create("h264", "r")
    try:
        # the config packet (SPS, PPS) goes in front of the key frame, as scrcpy's clients do
        data = b"".join(packet.data for packet in encoder.encode(device.phone.screenshot(), 0))
    finally:
        encoder.close()
    frames = decoder.decode(av.Packet(data))
    (frame,) = frames
    out = io.BytesIO()
    frame.to_image().save(out, "PNG")
    return out.getvalue()


class Live:
    """The page's live view as the agent sees it: a state and the latest frame."""

    def __init__(self, device: SimDevice, max_size: int = 1024, enabled: bool = True) -> None:
        self.device, self.max_size, self.enabled = device, max_size, enabled
        self.running, self.age = True, 0.1
        self.reads = 0
        self.broken = False

    def frame_state(self) -> FrameState:
        return FrameState(self.enabled, self.running, self.age, SIZE)

    async def frame_png(self) -> bytes:
        self.reads += 1
        if self.broken:
            raise RuntimeError("the canvas is gone")
        return stream_frame(self.device, self.max_size)


def difference(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB").resize(a.size, Image.BILINEAR))
    return sum(ImageStat.Stat(diff).mean) / 3


async def test_a_look_takes_the_frame_or_falls_back_to_screencap_saying_why():
    device = SimDevice()
    live = Live(device, max_size=480)
    look = await take_look(device, live)
    assert (look.source, look.reason, look.device_width, look.device_height) == (SCRCPY, "", 1080, 2400)
    assert Image.open(io.BytesIO(look.png)).size == (216, 480)  # the stream's size, not the phone's
    assert "screenshot" not in " ".join(device.calls)

    live.age = 10.0
    stalled = await take_look(device, live)
    assert stalled.source == SCREENCAP and "stalled" in stalled.reason
    assert Image.open(io.BytesIO(stalled.png)).size == SIZE

    live.age, live.broken = 0.1, True
    broken = await take_look(device, live)
    assert (broken.source, broken.reason) == (
        SCREENCAP,
        "the scrcpy frame could not be read: the canvas is gone",
    )

    plain = await take_look(device, None)
    assert (plain.source, plain.reason) == (SCREENCAP, "")


@pytest.mark.parametrize("max_size", [1024, 480])
async def test_the_model_gets_the_same_image_size_and_mapping_from_a_frame(max_size: int):
    device = SimDevice()
    codec = PillowCodec()
    from_phone = await observe(device, codec, max_side=1024)
    from_frame = await observe(device, codec, max_side=1024, live=Live(device, max_size))
    assert from_frame.source == SCRCPY and from_phone.source == SCREENCAP
    assert from_frame.mapping == from_phone.mapping == ScreenMapping(1080, 2400, 461, 1024)
    # the elements the model is told about sit at the same image points, and map back into themselves
    assert [n.line() for n in from_frame.nodes] == [n.line() for n in from_phone.nodes]
    settings_icon = next(n for n in from_frame.nodes if n.label == "Settings")
    element = next(e for e in from_frame.snapshot.elements if e.label == "Settings")
    assert element.bounds.contains(*from_frame.mapping.to_device(settings_icon.x, settings_icon.y))
    # and the picture is the phone's screen (H.264 is lossy, and a 480 px stream is blurrier)
    image, phone_image = (Image.open(io.BytesIO(o.image)) for o in (from_frame, from_phone))
    assert image.size == phone_image.size == (461, 1024)
    assert difference(image, phone_image) < 8


def test_the_tally_reports_the_sources_and_says_when_they_switch():
    lines: list[str] = []
    summaries: list[str | None] = []
    tally = LookTally(lines.append, summaries.append)
    assert tally.summary() is None
    tally.add(SCRCPY)
    tally.add(SCRCPY)
    assert lines == [] and summaries[-1] == "scrcpy frame (2 looks)"  # one source: no progress line
    tally.add(SCREENCAP, "the scrcpy stream stalled (last frame 4.0 s ago)")
    tally.add(SCRCPY)
    assert lines == [
        "📷 Screen: screencap (the scrcpy stream stalled (last frame 4.0 s ago))",
        "📷 Screen: scrcpy frame",
    ]
    assert summaries[-1] == (
        "scrcpy frame (3 looks), screencap (1 look: the scrcpy stream stalled (last frame 4.0 s ago))"
    )


async def test_a_task_on_live_frames_says_so_in_its_report(model, codec, model_server):
    device = SimDevice()
    device.phone.set_wifi(False)
    live = Live(device)
    agent = PlanAndResolveAgent(model, codec, config=FAST, live=live)
    context = ToolDispatcher()
    context.device, context.agent = device, agent
    model_server.add(*wifi_script())
    lines: list[str] = []
    result = await context.dispatch("run_agent_task", {"goal": "Turn Wi-Fi on"}, Channel.RELAY, lines.append)
    report = result["content"][0]["text"]
    assert device.phone.state()["wifi"] is True, report
    looks = live.reads
    assert looks >= 4 and f"**Screen**: scrcpy frame ({looks} looks)" in report
    assert result["structuredContent"]["screenSource"] == f"scrcpy frame ({looks} looks)"
    assert not any(line.startswith("📷") for line in lines)  # one source all along
    assert all(image.size == (461, 1024) for r in model_server.requests for image in request_images(r))

    # the setting off: every look a screenshot, and the report says why
    device.phone.reset()
    device.phone.set_wifi(False)
    live.enabled = False
    model_server.add(
        plan("Turn Wi-Fi on"),
        tap_on("Settings"),
        call("finish_task", conclusion="done"),
    )
    task = await agent.run(AgentTask("t2", "Turn Wi-Fi on", 0), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert task.screen_source == "screencap (2 looks: turned off in Settings)"  # the plan's, the tap's
    assert live.reads == looks


def test_screen_settings_persist_validate_and_yield_to_the_url():
    assert ScreenSettings() == ScreenSettings(live_looks=True, scrcpy=True, max_size=1024, max_fps=30)
    stored = ScreenSettings(live_looks=False, scrcpy=True, max_size=800, max_fps=20)
    assert ScreenSettings.from_json(stored.to_json()) == stored
    assert ScreenSettings.from_json({"scrcpyMaxSize": "100", "scrcpyMaxFps": 500}) == ScreenSettings()
    assert ScreenSettings.from_json({"scrcpyMaxSize": "0"}).max_size == 0  # the phone's own size
    assert ScreenSettings.from_json(None) == ScreenSettings()
    url = "http://127.0.0.1:1/?device=tcp:x:1&scrcpyMaxSize=480&scrcpyMaxFps=10"
    assert stored.with_query(url) == ScreenSettings(False, True, 480, 10)
    assert stored.overridden_by(url) == ["scrcpyMaxSize", "scrcpyMaxFps"]
    assert not stored.with_query("http://h/?scrcpy=0").scrcpy
    assert stored.with_query("http://h/?scrcpyMaxSize=abc") == stored
    # The card says the URL overrides only what it really changes: invalid values are ignored.
    assert stored.overridden_by("http://h/?scrcpyMaxSize=abc&scrcpyMaxFps=-5&scrcpy=1") == []
    assert stored.overridden_by("http://h/?scrcpy=0&scrcpyMaxFps=500&scrcpyMaxSize=640") == [
        "scrcpy",
        "scrcpyMaxSize",
    ]


def test_the_screen_source_survives_the_page_history():
    from phone_agent.browser.task_history import task_from_record, task_record

    task = AgentTask("t1", "Turn Wi-Fi on", 0, screen_source="scrcpy frame (4 looks)")
    assert task_record(task)["screenSource"] == "scrcpy frame (4 looks)"
    assert task_from_record(task_record(task), 0).screen_source == "scrcpy frame (4 looks)"
    assert "screenSource" not in task_record(AgentTask("t2", "goal", 0))  # only when it was said


async def shot(context: ToolDispatcher, **args) -> dict:
    return await context.dispatch("take_screenshot", args, Channel.WEBMCP)


async def test_take_screenshot_answers_the_live_frame_only_when_asked_and_fresh():
    import base64

    device = SimDevice()
    live = Live(device, max_size=480, enabled=False)  # take_screenshot does not follow the agent's setting
    context = ToolDispatcher()
    context.device, context.image_codec = device, PillowCodec()

    # the default stays the phone's own screenshot, whatever the live view holds
    phone = await shot(context)
    assert phone["structuredContent"]["source"] == "phone" and phone["structuredContent"]["width"] == 1080
    assert [item["type"] for item in phone["content"]] == ["image"] and live.reads == 0
    assert base64.b64decode(phone["content"][0]["data"]) == device.phone.screenshot_png()

    # no live view in this context (CPython, or a page without one): an error saying so, no screenshot
    calls = len(device.calls)
    missing = await shot(context, source="live")
    assert missing["isError"] and missing["structuredContent"]["code"] == "invalid_argument"
    assert "there is no live view here" in missing["content"][0]["text"]
    assert 'source "phone"' in missing["structuredContent"]["remedy"]
    assert missing["structuredContent"]["retryable"] is False
    assert len(device.calls) == calls

    context.live_screen = live
    live.enabled = True
    frame = await shot(context, source="live")
    image, note = frame["content"]
    picture = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    assert picture.size == (216, 480) and image["mimeType"] == "image/png"  # the stream's own size
    data = frame["structuredContent"]
    assert data["source"] == "live" and (data["width"], data["height"]) == picture.size
    assert (data["deviceWidth"], data["deviceHeight"]) == SIZE
    assert (data["scaleX"], data["scaleY"]) == (5.0, 5.0)
    assert "216x480 pixels of a 1080x2400 screen" in note["text"] and "scrcpy frame" in note["text"]
    assert len(device.calls) == calls  # the phone was not asked
    assert difference(picture, device.phone.screenshot()) < 8

    # maxSide and format as for the phone's screenshot; the mapping still reaches the device's pixels
    small = (await shot(context, source="live", maxSide=200, format="jpeg"))["structuredContent"]
    assert (small["width"], small["height"], small["format"]) == (90, 200, "jpeg")
    mapping = (small["deviceWidth"], small["deviceHeight"], small["scaleX"], small["scaleY"])
    assert mapping == (1080, 2400, 12, 12)

    for age, running, reason, retryable in (
        (10.0, True, "the scrcpy stream stalled (last frame 10.0 s ago)", True),
        (None, True, "scrcpy has drawn no frame yet", True),
        (0.1, False, "scrcpy is not running", False),
    ):
        live.age, live.running = age, running
        refused = await shot(context, source="live")
        assert refused["isError"], refused
        error = refused["structuredContent"]
        assert error["code"] == "invalid_argument" and error["details"]["reason"] == reason
        assert refused["content"][0]["text"] == f'take_screenshot cannot answer source "live": {reason}.'
        assert error["retryable"] is retryable and "scrcpy" in error["remedy"]
    live.age, live.running, live.broken = 0.1, True, True
    broken = await shot(context, source="live")
    assert broken["isError"] and "could not be read: the canvas is gone" in broken["content"][0]["text"]
    assert len(device.calls) == calls


def test_a_landscape_frame_maps_to_the_turned_screen():
    from phone_agent.tools.screen_source import oriented

    assert oriented((1080, 2400), (464, 1024)) == (1080, 2400)
    assert oriented((1080, 2400), (1024, 464)) == (2400, 1080)
    assert oriented((2400, 1080), (464, 1024)) == (1080, 2400)
    assert oriented((1080, 2400), (512, 512)) == (1080, 2400)
