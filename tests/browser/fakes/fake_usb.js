// A fake navigator.usb for browser tests: one "phone" whose bulk endpoints carry the page's transfers
// to the simulated phone through phone-agent's ADB bridge, so the page's WebUSB adapter runs for real
// against a real adbd. Everything the adapter does is recorded on window.__fakeUsb for the test.
// Parameters (replaced by the test): __BRIDGE_URL__, __ALLOWED__ (already allowed at load),
// __CLAIM_FAILS__ (claimInterface rejects, as when an adb server holds the phone).
(() => {
  const BRIDGE_URL = "__BRIDGE_URL__";
  const PACKET_SIZE = 64; // full-speed bulk: a 256-byte AUTH signature then needs a zero-length packet
  const state = {
    outTransfers: [], // {endpoint, length, head: number[]}
    inRequests: [], // requested lengths
    calls: [], // method names in order
    claimFails: __CLAIM_FAILS__,
    opened: false,
  };
  const listeners = { connect: [], disconnect: [] };
  let socket = null;
  let incoming = new Uint8Array(0);
  let waiting = null; // resolve function of a pending transferIn
  let unplugged = false;

  const endpoint = (endpointNumber, direction) => ({ endpointNumber, direction, type: "bulk", packetSize: PACKET_SIZE });
  const alternate = (alternateSetting, interfaceClass, interfaceSubclass, interfaceProtocol, endpoints) =>
    ({ alternateSetting, interfaceClass, interfaceSubclass, interfaceProtocol, endpoints });
  // Configuration 1 has only MTP; configuration 2 has mass storage, then the ADB interface on its
  // second alternate setting: the adapter must search every configuration and alternate.
  const configurations = [
    { configurationValue: 1, interfaces: [
      { interfaceNumber: 0, alternates: [alternate(0, 6, 1, 1, [endpoint(1, "in"), endpoint(1, "out")])] },
    ] },
    { configurationValue: 2, interfaces: [
      { interfaceNumber: 0, alternates: [alternate(0, 8, 6, 80, [endpoint(1, "in"), endpoint(2, "out")])] },
      { interfaceNumber: 1, alternates: [
        alternate(0, 0xff, 0x42, 0x01, []),
        alternate(1, 0xff, 0x42, 0x01, [endpoint(3, "in"), endpoint(4, "out")]),
      ] },
    ] },
  ];

  function settleWaiting(error) {
    if (waiting) { const w = waiting; waiting = null; w(error); }
  }

  const device = {
    productName: "Pixel 7", manufacturerName: "Google", serialNumber: "FAKEUSB0001",
    vendorId: 0x18d1, productId: 0x4ee7, configurations, configuration: configurations[0], opened: false,
    async open() {
      state.calls.push("open");
      if (unplugged) throw new DOMException("The device was disconnected.", "NotFoundError");
      this.opened = true;
    },
    async close() { state.calls.push("close"); this.opened = false; if (socket) socket.close(); },
    async selectConfiguration(value) {
      state.calls.push(`selectConfiguration(${value})`);
      this.configuration = configurations.find((c) => c.configurationValue === value);
    },
    async claimInterface(number) {
      state.calls.push(`claimInterface(${number})`);
      if (state.claimFails) throw new DOMException("Unable to claim interface.", "NetworkError");
      await new Promise((resolve, reject) => {
        socket = new WebSocket(BRIDGE_URL);
        socket.binaryType = "arraybuffer";
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new DOMException("bridge failed", "NetworkError"));
        socket.onmessage = (event) => {
          const chunk = new Uint8Array(event.data);
          const merged = new Uint8Array(incoming.length + chunk.length);
          merged.set(incoming); merged.set(chunk, incoming.length);
          incoming = merged;
          settleWaiting();
        };
        socket.onclose = () => settleWaiting();
      });
    },
    async releaseInterface(number) { state.calls.push(`releaseInterface(${number})`); },
    async selectAlternateInterface(number, setting) { state.calls.push(`selectAlternateInterface(${number},${setting})`); },
    async transferOut(endpointNumber, data) {
      if (unplugged) throw new DOMException("The device was disconnected.", "NetworkError");
      if (endpointNumber !== 4) throw new DOMException(`wrong OUT endpoint ${endpointNumber}`, "NotFoundError");
      const bytes = new Uint8Array(data.buffer ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : data);
      state.outTransfers.push({ endpoint: endpointNumber, length: bytes.length, head: Array.from(bytes.slice(0, 24)) });
      if (bytes.length) socket.send(bytes);
      return { status: "ok", bytesWritten: bytes.length };
    },
    async transferIn(endpointNumber, length) {
      if (endpointNumber !== 3) throw new DOMException(`wrong IN endpoint ${endpointNumber}`, "NotFoundError");
      state.inRequests.push(length);
      while (incoming.length === 0) {
        if (unplugged || !socket || socket.readyState > 1) {
          throw new DOMException("The device was disconnected.", "NetworkError");
        }
        const error = await new Promise((resolve) => { waiting = resolve; });
        if (error) throw error;
      }
      const take = incoming.slice(0, length);
      incoming = incoming.slice(take.length);
      return { status: "ok", data: new DataView(take.buffer) };
    },
  };

  let allowed = __ALLOWED__ ? [device] : [];
  const usb = {
    async getDevices() { return unplugged ? [] : allowed.slice(); },
    async requestDevice(options) {
      state.calls.push("requestDevice");
      const filters = (options && options.filters) || [];
      const wanted = filters.some((f) => f.classCode === 0xff && f.subclassCode === 0x42 && f.protocolCode === 1);
      if (!wanted) throw new DOMException("No device selected.", "NotFoundError");
      allowed = [device];
      return device;
    },
    addEventListener(type, fn) { (listeners[type] = listeners[type] || []).push(fn); },
    removeEventListener(type, fn) { listeners[type] = (listeners[type] || []).filter((f) => f !== fn); },
  };
  state.unplug = () => {
    unplugged = true;
    if (socket) socket.close();
    settleWaiting(new DOMException("The device was disconnected.", "NetworkError"));
    for (const fn of listeners.disconnect || []) fn({ type: "disconnect", device });
  };
  state.replug = () => {  // the same phone plugged in again: the browser fires `connect`
    unplugged = false;
    incoming = new Uint8Array(0);
    device.opened = false;
    device.configuration = configurations[0];
    for (const fn of listeners.connect || []) fn({ type: "connect", device });
  };
  Object.defineProperty(Navigator.prototype, "usb", { get() { return usb; }, configurable: true });
  window.__fakeUsb = state;
})();
