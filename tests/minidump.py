"""What a crashpad minidump of Chromium says: the signal, the faulting instruction, the samplers on.

Chromium's crash handler writes a minidump of every process that dies (Linux x86-64 here) under
``$XDG_CONFIG_HOME/chromium/Crash Reports/pending``. Debian ships Chromium without symbols, so the
faulting instruction is told as ``module+offset`` (``chromium+0x9c6674d``): the same offset in two
dumps of one Chromium version is the same place in its code. The allocation samplers that issue 25
found behind the renderer crashes leave marks in the dump's annotations: the renderer's
``--subproc-heap-profiling`` switch (Chromium's heap profiler) and the ``gwp-asan-*`` crash keys.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_THREAD_LIST, _MODULE_LIST, _EXCEPTION = 3, 4, 6
SAMPLER_MARKS = ("--subproc-heap-profiling", "gwp-asan-malloc", "gwp-asan-partitionalloc")


@dataclass(frozen=True)
class Minidump:
    name: str
    signal: int
    code: int
    fault_address: int
    instruction: str  # module+offset, or the bare address outside every module (JIT code)
    stack_pointer: int
    stack_end: int  # the end of the crashed thread's stack as the dump holds it
    samplers: tuple[str, ...]

    def __str__(self) -> str:
        past_end = " (the first byte past its thread's stack)" if self.fault_address == self.stack_end else ""
        return (
            f"{self.name}: signal {self.signal} (code {self.code}) at {self.fault_address:#x}{past_end}, "
            f"instruction {self.instruction}, stack pointer {self.stack_pointer:#x}; "
            f"samplers on: {', '.join(self.samplers) or 'none'}"
        )


def read_minidump(path: Path) -> Minidump:
    data = path.read_bytes()
    if data[:4] != b"MDMP":
        raise ValueError(f"{path} is not a minidump")
    count, directory = struct.unpack_from("<II", data, 8)
    streams: dict[int, int] = {}
    for index in range(count):
        kind, _size, rva = struct.unpack_from("<III", data, directory + 12 * index)
        streams.setdefault(kind, rva)
    modules = []
    rva = streams[_MODULE_LIST]
    for index in range(struct.unpack_from("<I", data, rva)[0]):
        entry = rva + 4 + 108 * index  # MINIDUMP_MODULE
        base, size = struct.unpack_from("<QI", data, entry)
        name_rva = struct.unpack_from("<I", data, entry + 20)[0]
        length = struct.unpack_from("<I", data, name_rva)[0]
        name = data[name_rva + 4 : name_rva + 4 + length].decode("utf-16-le").rsplit("/", 1)[-1]
        modules.append((base, base + size, name))
    rva = streams[_EXCEPTION]  # MINIDUMP_EXCEPTION_STREAM: thread id, then the record, then the context
    thread_id = struct.unpack_from("<I", data, rva)[0]
    signal, code, _record, address = struct.unpack_from("<IIQQ", data, rva + 8)
    context = struct.unpack_from("<I", data, rva + 164)[0]  # CONTEXT_AMD64: rsp at 152, rip at 248
    (stack_pointer,) = struct.unpack_from("<Q", data, context + 152)
    (rip,) = struct.unpack_from("<Q", data, context + 248)
    inside = (f"{name}+{rip - base:#x}" for base, end, name in modules if base <= rip < end)
    instruction = next(inside, f"{rip:#x}")
    stack_end = 0
    rva = streams[_THREAD_LIST]
    for index in range(struct.unpack_from("<I", data, rva)[0]):
        entry = rva + 4 + 48 * index  # MINIDUMP_THREAD: id, ..., stack memory at 24
        if struct.unpack_from("<I", data, entry)[0] == thread_id:
            start, size = struct.unpack_from("<QI", data, entry + 24)
            stack_end = start + size
    samplers = tuple(mark for mark in SAMPLER_MARKS if mark.encode() in data)
    return Minidump(path.name, signal, code, address, instruction, stack_pointer, stack_end, samplers)


def minidumps(directory: Path, since: float = 0.0) -> list[Minidump]:
    """The readable minidumps in ``directory`` written at or after ``since`` (time.time()), oldest first."""
    found = []
    for path in directory.glob("*.dmp"):
        try:
            if path.stat().st_mtime >= since:
                found.append((path.stat().st_mtime, read_minidump(path)))
        except (OSError, ValueError, KeyError, struct.error):
            continue  # being written, or not one crashpad wrote
    return [dump for _mtime, dump in sorted(found, key=lambda pair: pair[0])]
