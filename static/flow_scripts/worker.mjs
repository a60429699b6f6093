// The page's flow-script Worker: the engine (engine.mjs, QuickJS as WebAssembly) in a dedicated Worker,
// so a script never runs in the page's own context, Maestro's synchronous http object can block (a
// synchronous XMLHttpRequest, allowed in workers), and a script the interrupt handler cannot stop dies
// with the Worker (browser/flow_scripts.py terminates it). One Worker serves one flow run.
import { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline, variant } from "../vendor/quickjs/quickjs.mjs";
import { FlowScripts, ScriptFailure } from "./engine.mjs";

function syncHttp(request) {
  const xhr = new XMLHttpRequest();
  xhr.open(request.method, request.url, false);
  xhr.timeout = request.timeoutMs;
  for (const [key, value] of Object.entries(request.headers || {})) xhr.setRequestHeader(key, value);
  xhr.send(request.body ?? null);
  const headers = {};
  for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
    const at = line.indexOf(":");
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: xhr.status, headers, body: xhr.responseText };
}

const ready = newQuickJSWASMModuleFromVariant(variant);
let scripts = null;

self.onmessage = async (event) => {
  const { id, op, options, request } = event.data;
  let answer;
  try {
    if (op === "open") {
      scripts?.close();
      scripts = new FlowScripts(await ready, options, syncHttp, shouldInterruptAfterDeadline);
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
  self.postMessage(answer);
};
