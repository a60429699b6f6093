"""``agent.extract`` on its own: scroll and capture the simulated phone's screen until it stops moving,
stitch the frames, and ask the scripted model (over HTTP) for the extraction; the phone's scroll
position and the images the model got say what happened."""

from __future__ import annotations

import pytest

from phone_agent.agent.extract import ExtractConfig, ExtractionError, extract_scrolling_content
from phone_agent.sim.android.screens import catalog_max_scroll
from tests.agent.model_server import request_images, text

CONFIG = ExtractConfig(settle_ms=0)
CATALOG = "com.phoneagent.catalog"


async def test_a_long_list_is_scrolled_to_its_end_and_sent_as_one_stitched_image(
    device, codec, model, model_server
):
    await device.open_app(CATALOG)
    model_server.add(text("the titles"))
    streamed: list[str] = []
    result = await extract_scrolling_content(
        device, codec, model, "the first 20 titles", "List the titles", CONFIG, on_text=streamed.append
    )

    assert result.summary == "the titles" and "".join(streamed) == "the titles"
    assert device.phone.state()["catalog_scroll"] == catalog_max_scroll()
    assert result.reached_end and result.note == "" and result.frames > 1
    assert result.stitched_height == 2400 + catalog_max_scroll()
    assert (
        result.describe()
        == f"captured {result.frames} frames, stitched {result.stitched_height} px (reached the end)"
    )
    (request,) = model_server.requests
    assert "tools" not in request
    images = request_images(request)
    assert len(images) == len(result.images) and {image.width for image in images} == {CONFIG.output_width}
    assert "Instruction: the first 20 titles" in str(request) and "Task goal: List the titles" in str(request)


async def test_at_most_max_frames_are_captured_and_the_result_says_it_stopped_early(
    device, codec, model, model_server
):
    await device.open_app(CATALOG)
    model_server.add(text("some titles"))
    config = ExtractConfig(settle_ms=0, max_frames=2)
    result = await extract_scrolling_content(device, codec, model, "titles", "goal", config)

    assert result.frames == 2 and not result.reached_end
    assert result.note == "stopped after 2 frames"
    assert result.describe().endswith("(stopped before the end); stopped after 2 frames")
    assert 0 < device.phone.state()["catalog_scroll"] < catalog_max_scroll()


async def test_an_answer_with_nothing_in_it_is_an_extraction_error(device, codec, model, model_server):
    await device.open_app(CATALOG)
    model_server.add(text("   "))
    with pytest.raises(ExtractionError, match="the model extracted nothing from the captured content"):
        await extract_scrolling_content(
            device, codec, model, "titles", "goal", ExtractConfig(settle_ms=0, max_frames=2)
        )
