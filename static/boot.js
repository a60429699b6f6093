// Keeps the boot screen honest: says when Python is slow to start, and shows start-up failures.
const message = document.getElementById("boot-message");
const started = performance.now();
const slow = setTimeout(() => {
  if (document.documentElement.dataset.state === "booting") {
    message.textContent = "Still starting Python… (the first load fetches about 12 MB; later loads come from the cache)";
  }
}, 8000);
window.addEventListener("error", (event) => {
  if (document.documentElement.dataset.state === "booting") {
    document.documentElement.dataset.state = "failed";
    message.textContent = `phone-agent could not start: ${event.message || event.error}`;
  }
});
new MutationObserver(() => {
  if (document.documentElement.dataset.state !== "booting") {
    clearTimeout(slow);
    document.documentElement.dataset.bootMs = String(Math.round(performance.now() - started));
  }
}).observe(document.documentElement, { attributes: true, attributeFilter: ["data-state"] });

// The activity log's rows (browser/ui.py), a batch drawn in one call from Python: one crossing of the
// Python–JavaScript boundary per batch, not a dozen per row (each ~0.1 ms in Pyodide). `rows` is JSON,
// newest first: [failed, time, channel, tool, preview, duration, caller, callId, parent, depth]. Text
// goes in as textContent only.
window.phoneAgentActivity = (rows, limit, indentRem) => {
  const listing = document.getElementById("activity");
  document.getElementById("activity-empty")?.remove();
  const batch = document.createDocumentFragment();
  for (const [failed, time, channel, tool, preview, duration, caller, callId, parent, depth] of JSON.parse(rows)) {
    const row = document.createElement("li");
    row.className = "activity__row" + (failed ? " activity__row--error" : "") + (parent ? " activity__row--child" : "");
    Object.assign(row.dataset, { caller, callId, parent, depth: String(depth) });
    if (depth) row.style.paddingLeft = `${depth * indentRem}rem`;
    for (const [tag, text, cls] of [
      ["span", time, "activity__time"],
      ["span", channel, "activity__channel"],
      ["code", tool, "activity__tool"],
      ["span", failed ? "✗" : "✓", "activity__status"],
      ["span", preview, "activity__text"],
      ["span", duration, "activity__ms"],
    ]) {
      const node = document.createElement(tag);
      if (text) node.textContent = text;
      node.className = cls;
      row.append(node);
    }
    batch.append(row);
  }
  listing.prepend(batch);
  while (listing.children.length > limit) listing.lastElementChild.remove();
};
