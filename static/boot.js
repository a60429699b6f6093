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
