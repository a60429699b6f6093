// What the page's flow-script Worker takes from npm's quickjs-emscripten (MIT): the QuickJS module
// loader, its deadline interrupt handler, and the release-sync variant (QuickJS as a separate .wasm).
// scripts/setup bundles this with esbuild into static/vendor/quickjs/quickjs.mjs, the .wasm beside it.
export { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline } from "quickjs-emscripten-core";
export { default as variant } from "@jitl/quickjs-wasmfile-release-sync";
