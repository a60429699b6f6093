"""Where the page's memory goes, as the page itself can see it (bench/bench_page_memory.py asks for
it through ``window.phoneAgent.memoryReport()``): Pyodide's wasm linear memory and how much of it
Python's allocator holds, the modules imported (ours by package, the rest), the files the page's
Python reads from its in-memory file system, the JS heap, the canvases' pixels, the live view's
decoder and the lists the page keeps (activity rows, task records, the developer's log).

What no page can see (compiled wasm and JS code, Blink, the other Chromium processes) the bench
reads from /proc outside the browser.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

import js  # type: ignore[import-not-found]

MIB = 1024 * 1024


def wasm_linear_bytes() -> int:
    """The size of Pyodide's WebAssembly memory (it only ever grows)."""
    try:
        import pyodide_js  # type: ignore[import-not-found]

        return int(pyodide_js._module.HEAPU8.length)
    except Exception:
        return 0


def malloc_stats() -> dict[str, int]:
    """Pyodide's C allocator (dlmalloc) inside the wasm memory: what it took from the memory
    (``footprint``), what is in use and what is free in it (``mallinfo``)."""
    try:
        import pyodide_js  # type: ignore[import-not-found]

        module = pyodide_js._module
        info = int(module._malloc(40))  # struct mallinfo: ten 32-bit fields
        try:
            module._mallinfo(info)
            fields = [int(module.HEAPU32[info // 4 + index]) for index in range(10)]
        finally:
            module._free(info)
        return {"footprint": int(module._malloc_footprint()), "inUse": fields[7], "free": fields[8]}
    except Exception:
        return {}


def modules_by_package() -> dict[str, int]:
    """How many modules are imported: ours per subpackage (``phone_agent.agent`` …), the rest by
    top-level package."""
    counts: dict[str, int] = {}
    for name in list(sys.modules):
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "phone_agent" else parts[0]
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def file_bytes(root: str) -> int:
    """Bytes of the files under ``root`` in the page's in-memory file system (held by the JS heap)."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def canvas_bytes() -> int:
    """Pixels of every canvas in the document (4 bytes each): their backing stores."""
    total = 0
    for canvas in js.document.querySelectorAll("canvas"):
        total += int(canvas.width) * int(canvas.height) * 4
    return total


def js_heap() -> dict[str, int]:
    memory = getattr(js.performance, "memory", None)
    if memory is None:
        return {}
    return {"used": int(memory.usedJSHeapSize), "total": int(memory.totalJSHeapSize)}


def kept_lists(page: Any) -> dict[str, int]:
    """The lengths of the lists the page keeps (each has a bound; this shows where they stand)."""
    kept: dict[str, int] = {"domNodes": int(js.document.getElementsByTagName("*").length)}
    activity = getattr(page.ui, "_activity", None)
    if activity is not None:
        kept["activityRecords"] = len(activity)
    kept["activityRows"] = int(js.document.querySelectorAll("#activity li, #activity tr").length)
    kept["taskRecords"] = len(page.context.get_all_tasks())
    kept["chatItems"] = int(js.document.querySelectorAll(".chat-task").length)
    return kept


def live_view(page: Any) -> dict[str, Any]:
    """The live view's source and its decoder's queue (frames handed over, not yet drawn)."""
    phone = getattr(page, "phone", None)
    live = getattr(phone, "live", None)
    scrcpy = getattr(live, "_scrcpy", None)
    report: dict[str, Any] = {}
    if scrcpy is not None:
        report["framesTotal"] = int(getattr(scrcpy, "frames_total", 0))
        report["running"] = bool(getattr(scrcpy, "running", False))
    canvas = js.document.getElementById("screen")
    if canvas is not None and str(canvas.tagName).lower() == "canvas":
        report["canvas"] = [int(canvas.width), int(canvas.height)]
    return report


def memory_report(page: Any) -> dict[str, Any]:
    """The page's own view of its memory (see the module's docstring); sizes in bytes."""
    gc.collect()
    return {
        "wasmLinear": wasm_linear_bytes(),
        "malloc": malloc_stats(),
        "pythonBlocks": sys.getallocatedblocks(),
        "pythonObjects": len(gc.get_objects()),
        "modules": modules_by_package(),
        "moduleFiles": file_bytes(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        "jsHeap": js_heap(),
        "canvases": canvas_bytes(),
        "liveView": live_view(page),
        "kept": kept_lists(page),
    }
