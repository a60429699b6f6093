"""The agent runs unchanged in Pyodide: the vendored Pyodide (Python 3.14) under Node loads
``phone_agent.agent`` from py/ and runs a whole task (plan, taps, an extraction with stitching) with
the real OpenAI-compatible client and SSE parser, against an in-memory phone, model and codec."""

from __future__ import annotations

from tests.support import run_in_node_pyodide

CHECK = r"""
import json, struct, sys, zlib
sys.path.insert(0, "/mnt/py")
from phone_agent.agent.config import AgentConfig
from phone_agent.agent.openai_client import chat_model_for
from phone_agent.agent.settings import ModelSettings
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.agent.extract import ExtractConfig
from phone_agent.agent.ports import RgbaImage
from phone_agent.device.interface import Bounds, UiNode
from phone_agent.tasks import AgentTask

W, H = 64, 400
CONTENT = [bytes([(y * 7 + x * 13) % 251 for x in range(W * 4)]) for y in range(1200)]


def png(offset):  # a real PNG header (the agent reads its size); the pixels travel beside it
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    head = struct.pack(">IIBBBBB", W, H, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"tEXt", b"offset\x00%d" % offset)


def pixels(data):
    offset = int(data.split(b"offset\x00")[1].split(b"\x00")[0][:-4]) if b"offset" in data else 0
    rows = [b"\x10" * (W * 4)] * 20 + CONTENT[offset : offset + H - 40] + [b"\xee" * (W * 4)] * 20
    return b"".join(rows)


class Phone:
    def __init__(self):
        self.offset, self.taps = 0, []
    async def screenshot_png(self):
        return png(self.offset)
    async def tap(self, x, y):
        self.taps.append((x, y))
        self.offset = min(self.offset + 1, 10)  # the screen changes a little
    async def swipe(self, x1, y1, x2, y2, ms):
        self.offset = min(self.offset + (y1 - y2), 1200 - (H - 40))
    async def ui_nodes(self):
        return [UiNode(Bounds(0, 20, W, H - 20), text="List", scrollable=True)]
    async def current_app(self):
        return "com.example/.Main"


class Codec:
    async def decode(self, data, width, height):
        if (width, height) == (W, H):
            return RgbaImage(W, H, pixels(data))
        return RgbaImage(width, height, bytes(width * height * 4))
    async def scale(self, data, width, height, mime, quality):
        return b"jpeg" + data[-20:]
    async def stitch(self, crops, width, mime, quality):
        return b"stitched:%d" % sum(c.bottom - c.top for c in crops)


def sse(name, **args):
    events = [{"choices": [{"index": 0, "delta": {"content": "Thinking "}}]}]
    text = json.dumps(args)
    first = {"index": 0, "id": "c", "function": {"name": name, "arguments": text[:5]}}
    events.append({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    rest = {"index": 0, "function": {"arguments": text[5:]}}
    events.append({"choices": [{"index": 0, "delta": {"tool_calls": [rest]}}]})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


class Response:
    status, headers = 200, {"content-type": "text/event-stream"}
    def __init__(self, body):
        self.body = body
    async def chunks(self):
        for i in range(0, len(self.body), 7):
            yield self.body[i : i + 7]
    async def read(self):
        return self.body
    async def aclose(self):
        pass


class Http:
    def __init__(self, replies):
        self.replies, self.bodies = replies, []
    async def post(self, url, body, headers, timeout_ms):
        self.bodies.append(json.loads(body))
        return Response(self.replies.pop(0))


async def main():
    http = Http([
        sse("submit_plan", steps=[{"title": "Tap", "description": "Tap it"}, {"title": "Extract"}]),
        sse("tap", x=10, y=100),
        sse("finish_step", summary="tapped"),
        sse("extract_scrolling_content", instruction="all rows"),
        b'data: {"choices": [{"index": 0, "delta": {"content": "row 1, row 2"}}]}\n\ndata: [DONE]\n\n',
    ])
    model = chat_model_for(ModelSettings(base_url="http://m/v1", model="m"), http)
    config = AgentConfig(settle_ms=0, with_current_app=True, extract=ExtractConfig(settle_ms=0, max_frames=8))
    agent = PlanAndResolveAgent(lambda: model, Codec(), config=config)
    phone, lines = Phone(), []
    task = await agent.run(AgentTask("t", "Read the list", 0), phone, 20_000, lines.append)
    assert task.status == "finished", (task.status, task.error)
    assert task.conclusion == "row 1, row 2", task.conclusion
    assert phone.taps == [(10, 100)], phone.taps
    result = task.steps[1].tool_calls[0].result
    assert "stitched 1239 px (reached the end)" in result, result  # 400 rows + 839 scrolled (from offset 1)
    assert [line.split()[0] for line in lines][:3] == ["💭", "📋", "▶️"], lines
    assert lines[-1].startswith("✅ Step 2 completed (success"), lines
    print("PYODIDE-OK", sys.version.split()[0])

await main()
"""


def test_the_agent_runs_in_pyodide(tmp_path):
    done = run_in_node_pyodide(CHECK, tmp_path)
    assert done.returncode == 0 and "PYODIDE-OK 3.1" in done.stdout, (done.stdout + done.stderr)[-3000:]
