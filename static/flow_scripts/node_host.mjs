// The flow scripts' engine (engine.mjs: QuickJS as WebAssembly, the same module the page's Worker runs)
// in Node, for the CPython side (server/node_scripts.py, the tests): one JSON request a line on stdin,
// one JSON answer a line on stdout. `http` is made synchronous with a child Node process per request.
import { spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-wasmfile-release-sync";
import { FlowScripts, ScriptFailure } from "./engine.mjs";

const FETCH = `
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", async () => {
  const request = JSON.parse(input);
  try {
    const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body,
      signal: AbortSignal.timeout(request.timeoutMs), redirect: "manual" });
    const headers = {};
    response.headers.forEach((value, key) => (headers[key] = value));
    process.stdout.write(JSON.stringify({ status: response.status, headers, body: await response.text() }));
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: String(error && error.message || error) }));
  }
});`;

function syncHttp(request) {
  const child = spawnSync(process.execPath, ["-e", FETCH], {
    input: JSON.stringify(request), timeout: request.timeoutMs + 2000, maxBuffer: 64 << 20, encoding: "utf8",
  });
  if (child.error) throw child.error;
  const answer = JSON.parse(child.stdout || '{"error": "no answer"}');
  if (answer.error) throw new Error(answer.error);
  return answer;
}

const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
let scripts = null;
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { id, op, options, request } = JSON.parse(line);
  let answer;
  try {
    if (op === "open") {
      scripts?.close();
      scripts = new FlowScripts(QuickJS, options, syncHttp, shouldInterruptAfterDeadline);
      answer = { id, ok: true };
    } else if (op === "evaluate") {
      answer = { id, ok: true, ...scripts.evaluate(request) };
    } else {
      scripts?.close();
      scripts = null;
      answer = { id, ok: true };
    }
  } catch (error) {
    const failure = error instanceof ScriptFailure ? error : new ScriptFailure("script_error", String(error?.message || error));
    answer = { id, ok: false, error: failure.toJSON() };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
