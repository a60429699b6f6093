"""Benchmark: ``adb pull`` of 64 MiB from the simulated phone over loopback, in MB/s.

Runs the sim as its own process (``python -m phone_agent.sim``) and Debian's adb with an isolated
server (its own port and HOME, so its own key), pushes a random file once, then times several
pulls and reports the median and best. ``--profile`` runs the sim under cProfile instead and
prints where its time goes.

    .venv/bin/python bench/bench_sim_pull.py [--size-mib 64] [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ADB = shutil.which("adb") or "/usr/bin/adb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port} after {timeout} s")


PROFILED_SIM = """
import asyncio, cProfile, pstats, signal, sys
from phone_agent.sim.server import SimulatedPhoneServer

async def main(port):
    sim = SimulatedPhoneServer("127.0.0.1", port)
    await sim.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await sim.close()

profile = cProfile.Profile()
profile.enable()
asyncio.run(main(int(sys.argv[1])))
profile.disable()
pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(18)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="run the sim under cProfile and print its top")
    args = parser.parse_args()

    sim_port, adb_port = free_port(), free_port()
    home = Path(tempfile.mkdtemp(prefix="bench-adb-home-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
    env["HOME"] = str(home)
    sim_cmd = (
        [sys.executable, "-c", PROFILED_SIM, str(sim_port)]
        if args.profile
        else [sys.executable, "-m", "phone_agent.sim", "--port", str(sim_port)]
    )
    sim = subprocess.Popen(sim_cmd, stderr=subprocess.PIPE if args.profile else subprocess.DEVNULL)
    server = subprocess.Popen(
        [ADB, "-P", str(adb_port), "nodaemon", "server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def adb(*argv: str, timeout: float = 120.0) -> str:
        done = subprocess.run(
            [ADB, "-P", str(adb_port), *argv], env=env, capture_output=True, timeout=timeout, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"adb {' '.join(argv)} failed: {done.stdout}{done.stderr}")
        return done.stdout

    try:
        wait_listening(sim_port)
        wait_listening(adb_port)
        serial = f"127.0.0.1:{sim_port}"
        adb("connect", serial)
        deadline = time.monotonic() + 15
        while f"{serial}\tdevice" not in adb("devices"):
            if time.monotonic() > deadline:
                raise SystemExit("the sim never became 'device'")
            time.sleep(0.1)
        size = args.size_mib * 1024 * 1024
        local = home / "in.bin"
        local.write_bytes(os.urandom(size))
        started = time.perf_counter()
        adb("-s", serial, "push", str(local), "/sdcard/Download/bench.bin")
        push_s = time.perf_counter() - started
        rates, reported = [], []
        for run in range(args.runs):
            out = home / f"out{run}.bin"
            started = time.perf_counter()
            said = adb("-s", serial, "pull", "/sdcard/Download/bench.bin", str(out))
            elapsed = time.perf_counter() - started
            # adb's own figure ("… 1130.2 MB/s (67108864 bytes in 0.057s)") leaves out process start.
            if match := re.search(r"\((\d+) bytes in ([\d.]+)s\)", said):
                reported.append(int(match[1]) / float(match[2]) / 1e6)
            if out.stat().st_size != size or (run == 0 and out.read_bytes() != local.read_bytes()):
                raise SystemExit("the pulled file differs from the pushed one")
            rates.append(size / elapsed / 1e6)
            out.unlink()
        print(f"push {args.size_mib} MiB: {size / push_s / 1e6:.0f} MB/s (once, untimed setup)")
        print(
            f"pull {args.size_mib} MiB x{args.runs} (wall clock of `adb pull`): median "
            f"{statistics.median(rates):.0f} MB/s, best {max(rates):.0f} MB/s, worst {min(rates):.0f} MB/s"
        )
        if reported:
            print(f"pull as adb reports it (transfer only): median {statistics.median(reported):.0f} MB/s")
        adb("disconnect", serial)
    finally:
        subprocess.run([ADB, "-P", str(adb_port), "kill-server"], env=env, capture_output=True, timeout=10)
        server.wait(timeout=10)
        sim.send_signal(signal.SIGTERM)
        try:
            _, err = sim.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            sim.kill()
            err = b""
        if args.profile and err:
            print(err.decode(errors="replace"))
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
