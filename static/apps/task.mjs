// The task view (MCP Apps, ui://phone-agent/task): a running agent task's steps as they happen
// (get_latest_task, then get_task_result polled through the host), Cancel (abort_task), and the agent's
// open question (answer_question, the views' own tool): Done/Cancel for a take over, Allow/Refuse for a
// confirmation, taken by the page as it takes an elicitation's answer (whoever answers first wins). Every call
// goes through the host to phone-agent's tools, marked as the app's ("phone-agent/caller": "app").
// Bundled with ext-apps by scripts/vendoring.py.
import { App } from "@modelcontextprotocol/ext-apps/app-with-deps";

const CALLER_META = { "phone-agent/caller": "app" };
const POLL_MS = 1000;
const ENDED = new Set(["finished", "failed", "aborted"]);
const app = new App({ name: "phone-agent task view", version: "1.0.0" });
const goal = document.getElementById("goal");
const state = document.getElementById("state");
const steps = document.getElementById("steps");
const cancel = document.getElementById("cancel");
const question = document.getElementById("question");
const questionText = document.getElementById("question-text");
const answers = document.getElementById("answers");
const BUTTONS = { takeover: [["done", "Done"], ["cancel", "Cancel"]], confirm: [["yes", "Allow"], ["no", "Refuse"]] };
let shownAsk = null;
let taskId = null; // the task of the call this view shows, once its result came (else the latest task)
let timer = null;

function call(name, args) {
  return app.callServerTool({ name, arguments: args, _meta: CALLER_META });
}

function taskOf(result) {
  if (result.isError) return null;
  if (result.structuredContent && result.structuredContent.taskId) return result.structuredContent;
  const text = (result.content || []).find((c) => c.type === "text");
  try {
    return text ? JSON.parse(text.text) : null;
  } catch {
    return null;
  }
}

function render(task) {
  if (task.goal) goal.textContent = task.goal;
  state.textContent = `${task.status}${task.conclusion ? ": " + task.conclusion : ""}${task.error ? ": " + task.error : ""}`;
  steps.replaceChildren(
    ...(task.steps || []).map((step) => {
      const item = document.createElement("li");
      item.dataset.status = step.status;
      item.textContent = `${step.title} (${step.status})`;
      if (step.summary || step.error) {
        const summary = document.createElement("span");
        summary.className = "summary";
        summary.textContent = step.summary || step.error;
        item.append(summary);
      }
      return item;
    }),
  );
  const ended = ENDED.has(task.status);
  cancel.hidden = ended;
  if (ended && taskId && timer) clearInterval(timer);
}

function showQuestion(open) {
  question.hidden = !open;
  if (!open || open.askId === shownAsk) return;
  shownAsk = open.askId;
  questionText.textContent = open.message;
  answers.replaceChildren(
    ...(BUTTONS[open.kind] || []).map(([answer, label]) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.dataset.answer = answer;
      button.addEventListener("click", async () => {
        const result = await call("answer_question", { askId: open.askId, answer });
        state.textContent = (result.content || []).map((c) => c.text || "").join(" ");
        question.hidden = true;
      });
      return button;
    }),
  );
}

async function poll() {
  try {
    const asked = await call("answer_question", {});
    const open = asked.isError ? [] : (asked.structuredContent || {}).questions || [];
    showQuestion(open[0]);
    if (!open.length) shownAsk = null;
    const result = taskId ? await call("get_task_result", { taskId }) : await call("get_latest_task", {});
    const task = taskOf(result);
    if (task) render(task);
  } catch (error) {
    state.textContent = String(error.message || error);
  }
}

cancel.addEventListener("click", async () => {
  const result = await call("abort_task", {});
  state.textContent = (result.content || []).map((c) => c.text || "").join(" ");
  await poll();
});

app.ontoolresult = (params) => {
  const task = taskOf(params);
  if (task) {
    taskId = task.taskId;
    render(task);
  }
};
await app.connect();
await poll();
timer = setInterval(poll, POLL_MS);
