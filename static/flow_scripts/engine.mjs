// Flow scripts: the JavaScript of Maestro flows (${…}, evalScript, runScript, assertTrue, conditions)
// run in QuickJS compiled to WebAssembly — a separate interpreter with its own heap, which sees nothing
// of the page: no DOM, no fetch, no storage, no timers. What it gets is what Maestro gives scripts:
// `output` (shared by a run's scripts), `maestro.copiedText` and `maestro.platform`, the flow's env as
// globals, `json()`, `relativePoint()`, `console.log` (collected into the flow's log) and Maestro's
// synchronous `http` object, which reaches only the hosts the caller allowed (phone-agent flow run
// --allow-http HOST) through the host's `syncHttp`. Each evaluation is bounded in time (QuickJS's
// interrupt handler) and the whole context in memory (QuickJS's allocator limit).
//
// Shared by the page's Worker (worker.mjs) and the Node host the CPython tests use (node_host.mjs): they
// hand in the QuickJS module and their own `syncHttp(request) -> {status, headers, body}`.

const RESERVED = new Set(["output", "maestro", "http", "console", "json", "relativePoint", "fetch",
  "__maestroString", "globalThis"]);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_LOG_LINES = 1000;
const MAX_LOG_LINE = 10000;

// Maestro's runtime prelude (its GraalJS engine's): undeclared names read as undefined, so
// `${MY_VAR || 'default'}` works; json() and relativePoint(); the value of an evaluation as a string.
const PRELUDE = `
Object.setPrototypeOf(globalThis, new Proxy(Object.prototype, { has(target, key) { return true; } }));
globalThis.output = {};
globalThis.maestro = { copiedText: "", platform: "unknown" };
globalThis.json = function json(text) { return JSON.parse(text); };
globalThis.relativePoint = function relativePoint(x, y) {
  return Math.ceil(x * 100) + "%," + Math.ceil(y * 100) + "%";
};
globalThis.__maestroString = function (value) { return String(value); };
`;

export class ScriptFailure extends Error {
  constructor(kind, message, source = "", line = 0) {
    super(message);
    this.kind = kind;
    this.source = source;
    this.line = line;
  }

  toJSON() {
    return { kind: this.kind, message: this.message, source: this.source, line: this.line };
  }
}

// "api.example.com" allows that host on any port; "127.0.0.1:8080" that port only.
export function hostAllowed(url, allowedHosts) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new ScriptFailure("http_not_allowed", `http: ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ScriptFailure("http_not_allowed", `http: only http and https URLs, not ${parsed.protocol}`);
  }
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  for (const entry of allowedHosts) {
    const wanted = entry.toLowerCase();
    if (wanted === host || wanted === `${host}:${port}` || wanted === `[${host}]` || wanted === `[${host}]:${port}`) {
      return parsed;
    }
  }
  const hint = allowedHosts.length
    ? `only ${allowedHosts.join(", ")} ${allowedHosts.length === 1 ? "is" : "are"} allowed`
    : "no host is allowed";
  throw new ScriptFailure("http_not_allowed",
    `http: ${parsed.host} is not an allowed host (${hint}; allow it with phone-agent flow run --allow-http ${parsed.host})`);
}

export class FlowScripts {
  // QuickJS: a QuickJSWASMModule; options: {allowedHosts, timeoutMs, memoryBytes, platform};
  // syncHttp({method, url, headers, body, timeoutMs}) -> {status, headers, body}.
  constructor(QuickJS, options, syncHttp, interruptAfter) {
    this.options = { allowedHosts: [], timeoutMs: 10000, memoryBytes: 64 << 20, platform: "android", ...options };
    this.syncHttp = syncHttp;
    this.interruptAfter = interruptAfter;
    this.runtime = QuickJS.newRuntime();
    this.runtime.setMemoryLimit(this.options.memoryBytes);
    this.runtime.setMaxStackSize(256 << 10);
    this.vm = this.runtime.newContext();
    this.logs = [];
    this.deadline = 0;
    this.install();
  }

  install() {
    const vm = this.vm;
    this.unwrap(vm.evalCode(PRELUDE, "maestro-runtime"), "maestro-runtime", "script_error");
    vm.getProp(vm.global, "maestro").consume((maestro) => {
      vm.newString(this.options.platform).consume((platform) => vm.setProp(maestro, "platform", platform));
    });
    const console = vm.newObject();
    vm.newFunction("log", (...args) => {
      const line = args.map((arg) => this.text(arg)).join(" ");
      if (this.logs.length < MAX_LOG_LINES) this.logs.push(line.slice(0, MAX_LOG_LINE));
    }).consume((log) => vm.setProp(console, "log", log));
    vm.setProp(vm.global, "console", console);
    console.dispose();
    const http = vm.newObject();
    for (const method of ["get", "post", "put", "delete", "request"]) {
      vm.newFunction(method, (url, params) => this.http(method, url, params)).consume((fn) => vm.setProp(http, method, fn));
    }
    vm.setProp(vm.global, "http", http);
    http.dispose();
    vm.newFunction("fetch", () => {
      throw new Error("fetch is not available to flow scripts: use Maestro's http.get/post/put/delete/request "
        + "(it reaches only hosts allowed with phone-agent flow run --allow-http HOST)");
    }).consume((fn) => vm.setProp(vm.global, "fetch", fn));
  }

  text(handle) {
    return this.vm.getString(this.unwrap(this.vm.callFunction(this.stringFn(), this.vm.undefined, handle), "", "script_error"));
  }

  stringFn() {
    if (!this._stringFn) this._stringFn = this.vm.getProp(this.vm.global, "__maestroString");
    return this._stringFn;
  }

  http(method, urlHandle, paramsHandle) {
    const vm = this.vm;
    const url = vm.typeof(urlHandle) === "string" ? vm.getString(urlHandle) : this.text(urlHandle);
    const params = paramsHandle && vm.typeof(paramsHandle) === "object" ? vm.dump(paramsHandle) : {};
    let parsed;
    try {
      parsed = hostAllowed(url, this.options.allowedHosts);
    } catch (failure) {
      this.httpFailure = failure;
      throw new Error(failure.message);
    }
    if (params && params.multipartForm) throw new Error("http: multipartForm is not supported by phone-agent");
    const verb = method === "request" ? String((params && params.method) || "GET").toUpperCase() : method.toUpperCase();
    const headers = {};
    for (const [key, value] of Object.entries((params && params.headers) || {})) headers[key] = String(value);
    const body = params && params.body !== undefined && params.body !== null ? String(params.body) : undefined;
    const remaining = Math.max(1000, this.deadline - Date.now());
    let answer;
    try {
      answer = this.syncHttp({ method: verb, url: parsed.href, headers, body, timeoutMs: remaining });
    } catch (error) {
      throw new Error(`http: ${verb} ${parsed.host} failed: ${error && error.message ? error.message : error}`);
    }
    const result = vm.newObject();
    vm.setProp(result, "ok", answer.status >= 200 && answer.status < 300 ? vm.true : vm.false);
    vm.newNumber(answer.status).consume((status) => vm.setProp(result, "status", status));
    vm.newString(answer.body ?? "").consume((text) => vm.setProp(result, "body", text));
    const headerObject = vm.newObject();
    for (const [key, value] of Object.entries(answer.headers || {})) {
      vm.newString(String(value)).consume((text) => vm.setProp(headerObject, key, text));
    }
    vm.setProp(result, "headers", headerObject);
    headerObject.dispose();
    return result;
  }

  // request: {code, kind: "expression" | "script", source, line, env, copiedText}
  evaluate(request) {
    const vm = this.vm;
    const { code, kind, source = "", line = 0 } = request;
    const env = request.env || {};
    this.logs = [];
    this.httpFailure = null;
    const set = [];
    for (const [key, value] of Object.entries(env)) {
      if (!IDENTIFIER.test(key) || RESERVED.has(key)) continue;
      vm.newString(String(value)).consume((text) => vm.setProp(vm.global, key, text));
      set.push(key);
    }
    vm.getProp(vm.global, "maestro").consume((maestro) => {
      vm.newString(request.copiedText || "").consume((text) => vm.setProp(maestro, "copiedText", text));
    });
    this.deadline = Date.now() + this.options.timeoutMs;
    this.runtime.setInterruptHandler(this.interruptAfter(this.deadline));
    // A runFlow script runs in a scope of its own (its var, let, const and functions are its own, as in
    // Maestro); the wrapper stays on the first line, so its lines are the file's.
    const body = kind === "script" ? `(function () {${code}\n})();` : code;
    const filename = source || (kind === "script" ? "script.js" : "expression");
    try {
      const handle = this.unwrap(vm.evalCode(body, filename), filename, "script_error", kind === "script" ? 0 : line);
      const value = handle.consume((result) => this.text(result));
      return { value: kind === "script" ? "" : value, logs: this.logs };
    } finally {
      this.runtime.removeInterruptHandler();
      if (set.length) {
        const cleared = vm.evalCode(`for (const key of ${JSON.stringify(set)}) delete globalThis[key];`);
        (cleared.error || cleared.value).dispose();
      }
    }
  }

  unwrap(result, source, kind, line = 0) {
    if (!result.error) return result.value;
    const error = result.error.consume((handle) => this.vm.dump(handle));
    const message = error && typeof error === "object" ? `${error.name || "Error"}: ${error.message}` : String(error);
    const stack = error && typeof error === "object" ? String(error.stack || "") : "";
    let where = line;
    const escaped = source.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const match = stack.match(new RegExp(`${escaped}:(\\d+)`));
    if (match && !line) where = Number(match[1]);
    if (this.httpFailure) {
      throw new ScriptFailure(this.httpFailure.kind, this.httpFailure.message, source, where);
    }
    if (/interrupted/i.test(message)) {
      throw new ScriptFailure("timeout",
        `${source} ran longer than ${this.options.timeoutMs} ms and was stopped (timeout)`, source, where);
    }
    if (/out of memory/i.test(message) || /stack overflow/i.test(message)) {
      throw new ScriptFailure("memory",
        `${source} used more than its ${Math.round(this.options.memoryBytes / 1048576)} MiB of memory or stack: ${message}`,
        source, where);
    }
    throw new ScriptFailure(kind, message, source, where);
  }

  close() {
    if (this._stringFn) this._stringFn.dispose();
    this.vm.dispose();
    this.runtime.dispose();
  }
}
