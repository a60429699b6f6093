// The phone view (MCP Apps, ui://phone-agent/phone): the screen refreshed by take_screenshot calls through
// the host (>= 2 frames a second), a click taps, a drag swipes, Back/Home/Recents press keys. Every call
// goes through the host to phone-agent's tools, marked as the app's ("phone-agent/caller": "app"), so it
// shows in the page's activity log like any caller's. Bundled with ext-apps by scripts/vendoring.py.
import { App } from "@modelcontextprotocol/ext-apps/app-with-deps";

const CALLER_META = { "phone-agent/caller": "app" };
const FRAME_MS = 400; // 2.5 frames a second
const IN_FLIGHT = 3; // screenshots asked for at once: a frame takes longer than FRAME_MS to come
const DRAG_PX = 12; // a pointer moved further than this swipes
const screen = document.getElementById("screen");
const status = document.getElementById("status");
const app = new App({ name: "phone-agent phone view", version: "1.0.0" });
let device = null; // {deviceWidth, deviceHeight} of the last frame
let asked = 0; // screenshots asked for and not answered yet
let sequence = 0; // the newest frame asked for
let shown = 0; // the newest frame shown (an older one that comes late is dropped)

function say(text, error = false) {
  status.textContent = text;
  status.classList.toggle("error", error);
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
}

export async function call(name, args) {
  const result = await app.callServerTool({ name, arguments: args, _meta: CALLER_META });
  if (result.isError) say(textOf(result) || `${name} failed`, true);
  return result;
}

function show(result, number = sequence) {
  if (number < shown) return;
  shown = number;
  const image = (result.content || []).find((c) => c.type === "image");
  if (!image) return;
  screen.src = `data:${image.mimeType};base64,${image.data}`;
  const info = result.structuredContent || {};
  if (info.deviceWidth && info.deviceHeight) device = info;
}

async function refresh() {
  if (asked >= IN_FLIGHT) return;
  asked += 1;
  const number = ++sequence;
  try {
    const result = await call("take_screenshot", { maxSide: 720, format: "jpeg", settle: false });
    if (!result.isError) {
      show(result, number);
      if (status.classList.contains("error") === false) say("Live: click to tap, drag to swipe");
    }
  } catch (error) {
    say(String(error.message || error), true);
  } finally {
    asked -= 1;
  }
}

function toDevice(event) {
  const box = screen.getBoundingClientRect();
  const x = ((event.clientX - box.left) / box.width) * device.deviceWidth;
  const y = ((event.clientY - box.top) / box.height) * device.deviceHeight;
  return [Math.max(0, Math.min(device.deviceWidth - 1, Math.round(x))), Math.max(0, Math.min(device.deviceHeight - 1, Math.round(y)))];
}

async function act(name, args) {
  say(`${name}…`);
  const result = await call(name, args);
  if (!result.isError) say(textOf(result));
  await refresh();
}

let down = null;
screen.addEventListener("pointerdown", (event) => {
  if (!device) return;
  screen.setPointerCapture(event.pointerId);
  down = { event, at: performance.now() };
});
screen.addEventListener("pointerup", (event) => {
  if (!down || !device) return;
  const [x0, y0] = toDevice(down.event);
  const [x1, y1] = toDevice(event);
  const moved = Math.hypot(event.clientX - down.event.clientX, event.clientY - down.event.clientY);
  const durationMs = Math.round(Math.min(5000, Math.max(100, performance.now() - down.at)));
  down = null;
  if (moved < DRAG_PX) act("tap", { x: x0, y: y0 });
  else act("swipe", { startX: x0, startY: y0, endX: x1, endY: y1, durationMs });
});
for (const button of document.querySelectorAll("#keys button")) {
  button.addEventListener("click", () => act("press_key", { key: button.dataset.key }));
}

app.ontoolresult = (params) => show(params);
await app.connect();
say("Connected");
await refresh();
setInterval(refresh, FRAME_MS);
