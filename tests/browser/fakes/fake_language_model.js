// Chrome's Prompt API (LanguageModel) for browser tests: headless Chromium has no on-device model, so
// this one answers from a script the test sets (window.__promptScript) and records what it was asked
// (window.__promptLog). It holds the page to the API's rules as Chrome does: image input must be
// declared in availability() and create(), a session takes a system prompt in initialPrompts, images
// come as Blobs, and answers stream as text chunks.
// Script entries: {name, arguments} (answered as that JSON), {tapOn: "label"} (a tap on the centre
// the last screen's UI summary gives that label), or {text: "..."} (answered as is).
(() => {
  const log = [];
  window.__promptLog = log;
  window.__promptScript = [];
  // Chrome warns when a request names no output language (and may pick a model that cannot answer).
  const namesOutputLanguage = (options) =>
    Array.isArray(options?.expectedOutputs) &&
    options.expectedOutputs.every((output) => Array.isArray(output.languages) && output.languages.length);
  const languageWarning = (options) => {
    if (!namesOutputLanguage(options)) {
      console.warn("No output language was specified in a LanguageModel API request.");
    }
  };
  const declaresImage = (options) =>
    Array.isArray(options?.expectedInputs) && options.expectedInputs.some((input) => input.type === "image");

  function answerFor(step, texts) {
    if (step === undefined) return '{"name": "fail_step", "arguments": {"reason": "script exhausted"}}';
    if (step.text !== undefined) return step.text;
    if (step.tapOn !== undefined) {
      const screen = texts[texts.length - 1] || "";
      const escaped = step.tapOn.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const found = screen.match(new RegExp(`- (?:@e\\d+ )?"${escaped}" [^\\n]* at \\((\\d+), (\\d+)\\)`));
      if (!found) return `{"name": "fail_step", "arguments": {"reason": "no ${step.tapOn} on the screen"}}`;
      return JSON.stringify({ name: "tap", arguments: { x: Number(found[1]), y: Number(found[2]) } });
    }
    return JSON.stringify(step);
  }

  class Session {
    constructor(system) {
      this.system = system;
      this.destroyed = false;
    }

    promptStreaming(messages, options) {
      if (this.destroyed) throw new DOMException("the session was destroyed", "InvalidStateError");
      const entry = { system: this.system, roles: [], texts: [], images: [] };
      const blobs = [];
      for (const message of messages) {
        entry.roles.push(message.role);
        for (const part of message.content) {
          if (part.type === "image") {
            if (!(part.value instanceof Blob)) throw new TypeError("an image input must be a Blob");
            blobs.push(part.value);
          } else if (part.type === "text") {
            entry.texts.push(String(part.value));
          } else {
            throw new TypeError(`unknown input type ${part.type}`);
          }
        }
      }
      log.push(entry);
      const answer = answerFor(window.__promptScript.shift(), entry.texts);
      const signal = options?.signal;
      return new ReadableStream({
        async start(controller) {
          for (const blob of blobs) {
            const bitmap = await createImageBitmap(blob); // a real image, or this rejects
            entry.images.push({ type: blob.type, width: bitmap.width, height: bitmap.height });
            bitmap.close();
          }
          for (let at = 0; at < answer.length; at += 7) {
            if (signal?.aborted) return controller.error(new DOMException("aborted", "AbortError"));
            controller.enqueue(answer.slice(at, at + 7));
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          controller.close();
        },
      });
    }

    destroy() {
      this.destroyed = true;
    }
  }

  window.LanguageModel = {
    async availability(options) {
      languageWarning(options);
      return declaresImage(options) ? "available" : "unavailable";
    },
    async create(options) {
      languageWarning(options);
      if (!declaresImage(options)) throw new DOMException("image input was not declared", "NotSupportedError");
      const prompts = options?.initialPrompts || [];
      if (prompts.length !== 1 || prompts[0].role !== "system") {
        throw new TypeError("expected one system prompt in initialPrompts");
      }
      return new Session(String(prompts[0].content));
    },
  };
})();
