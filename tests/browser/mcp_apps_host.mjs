// A minimal MCP Apps host for tests/browser/test_mcp_apps.py, built with ext-apps' AppBridge: it renders a
// view's HTML (a ui:// resource) in a sandboxed frame and hands each of the view's tool calls to
// window.relayCall (the test relays it to a real MCP client session of phone-agent).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.openView = async (html) => {
  const frame = document.createElement("iframe");
  frame.id = "view";
  frame.setAttribute("sandbox", "allow-scripts");
  frame.style.cssText = "width: 420px; height: 900px; border: 0";
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: "phone-agent test host", version: "1.0.0" }, { serverTools: {} });
  bridge.oncalltool = (params) => window.relayCall(params);
  const ready = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  await ready;
  return true;
};
