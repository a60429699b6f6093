// Tango (@yume-chan/adb) in a page, over the phone-agent server's ADB bridge (a WebSocket that carries
// ADB bytes to a TCP adbd): the side-by-side of bench_page_adb.py. Bundled with esbuild for the bench
// only; never part of the project's page.
import { Adb, AdbDaemonTransport, AdbPacket, AdbPacketSerializeStream } from "@yume-chan/adb";
import AdbWebCredentialStore from "@yume-chan/adb-credential-web";
import { Consumable, PushReadableStream, StructDeserializeStream, pipeFrom } from "@yume-chan/stream-extra";

function openBridge(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    ws.onerror = () => reject(new Error(`bridge ${url} failed`));
    ws.onopen = () => {
      const bytes = new PushReadableStream((controller) => {
        ws.onmessage = (event) => { controller.enqueue(new Uint8Array(event.data)); };
        ws.onclose = () => controller.close();
      });
      const sink = new Consumable.WritableStream({
        write(chunk) { ws.send(chunk); },
        close() { ws.close(); },
      });
      resolve({
        readable: bytes.pipeThrough(new StructDeserializeStream(AdbPacket)),
        writable: pipeFrom(sink, new AdbPacketSerializeStream()),
      });
    };
  });
}

let adb = null;

window.tangoConnect = async (url) => {
  const connection = await openBridge(url);
  const transport = await AdbDaemonTransport.authenticate({
    serial: "bench",
    connection,
    credentialStore: new AdbWebCredentialStore("phone-agent-bench"),
  });
  adb = new Adb(transport);
  return { features: transport.banner.features, maxPayload: transport.maxPayloadSize };
};

window.tangoPull = async (path) => {
  const started = performance.now();
  const socket = await adb.createSocket(`exec:cat ${path}`);
  const reader = socket.readable.getReader();
  let bytes = 0;
  let firstByteMs = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!bytes) firstByteMs = performance.now() - started;
    bytes += value.length;
  }
  return { bytes, ms: performance.now() - started, firstByteMs };
};
