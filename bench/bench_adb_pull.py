"""Benchmark: pull 32 MiB from the simulated phone over loopback TCP with Debian's adb and with the
project's ADB client in CPython, in one run; prints MB/s for each and our share of adb's.

The sim runs as its own process (``python -m phone_agent.sim``); Debian's adb uses an isolated
server (own port and HOME). A random file is pushed once (with our sync client), then each round
runs, alternating so drift hits both alike:

- ``exec:cat FILE``: ``adb exec-out cat FILE`` (stdout to /dev/null) against ``exec_into`` with a
  sink that drops the bytes (the same work), and ``exec_out`` collecting them into one ``bytes``;
- sync pull: ``adb pull FILE OUT`` against ``SyncClient.pull_into`` writing the same kind of file
  as the data arrives.

Each figure is the median of ``--runs`` rounds. ``--profile`` prints where our client's time goes.

    .venv/bin/python bench/bench_adb_pull.py [--size-mib 32] [--runs 7] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from phone_agent.adb.device import AdbDevice
from phone_agent.adb.host import HOST_FEATURES
from phone_agent.adb.keys import generate_private_key
from phone_agent.adb.services import SyncClient, exec_into, exec_out
from phone_agent.server.adb_tcp import adb_server_client, connect_adbd

ADB = shutil.which("adb") or "/usr/bin/adb"
REMOTE = "/data/local/tmp/bench.bin"


def drop(chunk: bytes) -> None:
    """A sink like adb exec-out's /dev/null."""


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


async def run(
    args: argparse.Namespace, sim_port: int, adb_port: int, env: dict[str, str], home: Path
) -> None:
    def adb(*argv: str, stdout=subprocess.PIPE) -> float:
        started = time.perf_counter()
        done = subprocess.run(
            [ADB, "-P", str(adb_port), *argv], env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=120
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"adb {' '.join(argv)} failed: {done.stderr!r}")
        return elapsed

    serial = f"127.0.0.1:{sim_port}"
    adb("connect", serial)
    deadline = time.monotonic() + 15
    while (
        f"{serial}\tdevice"
        not in subprocess.run(
            [ADB, "-P", str(adb_port), "devices"], env=env, capture_output=True, text=True, timeout=10
        ).stdout
    ):
        if time.monotonic() > deadline:
            raise SystemExit("the sim never became 'device' for adb")
        time.sleep(0.1)

    started = time.perf_counter()
    key = generate_private_key()
    keygen_s = time.perf_counter() - started
    client = await connect_adbd("127.0.0.1", sim_port, key)
    # adb 29 has no delayed ack: measure ours without it too, for a like-for-like figure.
    plain = await connect_adbd(
        "127.0.0.1", sim_port, key, features=tuple(f for f in HOST_FEATURES if f != "delayed_ack")
    )
    delayed = "delayed_ack" in client.features
    # The same path adb takes: through the adb server (smart sockets), one more hop than direct TCP.
    via_server = await adb_server_client(port=adb_port).device(serial)
    size = args.size_mib * 1024 * 1024
    data = os.urandom(size)
    started = time.perf_counter()
    async with await SyncClient.open(client) as sync:
        await sync.push(data, REMOTE)
    push_s = time.perf_counter() - started

    profile = cProfile.Profile() if args.profile else None
    rates: dict[str, list[float]] = {
        "adb exec-out": [],
        "ours exec": [],
        "ours exec, no delayed ack": [],
        "ours exec into bytes": [],
        "ours exec via adb server": [],
        "adb pull": [],
        "ours pull": [],
        "ours pull, no delayed ack": [],
        "ours pull via adb server": [],
    }
    out = home / "out.bin"
    for round_number in range(args.runs):
        rates["adb exec-out"].append(
            size / adb("-s", serial, "exec-out", "cat", REMOTE, stdout=subprocess.DEVNULL)
        )

        if profile:
            profile.enable()
        started = time.perf_counter()
        await exec_into(client, f"cat {REMOTE}", drop, timeout=120)
        rates["ours exec"].append(size / (time.perf_counter() - started))
        started = time.perf_counter()
        got = await exec_out(client, f"cat {REMOTE}", timeout=120)
        rates["ours exec into bytes"].append(size / (time.perf_counter() - started))
        if profile:
            profile.disable()
        if round_number == 0 and got != data:
            raise SystemExit("exec:cat returned other bytes than were pushed")
        del got

        started = time.perf_counter()
        await exec_into(plain, f"cat {REMOTE}", drop, timeout=120)
        rates["ours exec, no delayed ack"].append(size / (time.perf_counter() - started))
        started = time.perf_counter()
        await exec_into(via_server, f"cat {REMOTE}", drop, timeout=120)
        rates["ours exec via adb server"].append(size / (time.perf_counter() - started))

        rates["adb pull"].append(size / adb("-s", serial, "pull", REMOTE, str(out)))
        out.unlink()

        if profile:
            profile.enable()
        started = time.perf_counter()
        with out.open("wb") as file:  # written as it arrives, as adb pull does
            async with await SyncClient.open(client, timeout=120) as sync:
                await sync.pull_into(REMOTE, file.write)
        rates["ours pull"].append(size / (time.perf_counter() - started))
        got = out.read_bytes() if round_number == 0 else data
        if profile:
            profile.disable()
        if round_number == 0 and got != data:
            raise SystemExit("sync pull returned other bytes than were pushed")
        out.unlink()
        del got

        started = time.perf_counter()
        with out.open("wb") as file:
            async with await SyncClient.open(plain, timeout=120) as sync:
                await sync.pull_into(REMOTE, file.write)
        rates["ours pull, no delayed ack"].append(size / (time.perf_counter() - started))
        out.unlink()

        started = time.perf_counter()
        with out.open("wb") as file:
            async with await SyncClient.open(via_server, timeout=120) as sync:
                await sync.pull_into(REMOTE, file.write)
        rates["ours pull via adb server"].append(size / (time.perf_counter() - started))
        out.unlink()
    # take_screenshot's path: `adb exec-out screencap -p` against AdbDevice.screenshot_png().
    device = AdbDevice(client, transport="tcp")
    shots: dict[str, list[float]] = {"adb exec-out screencap -p": [], "AdbDevice.screenshot_png": []}
    for _ in range(args.runs):
        shots["adb exec-out screencap -p"].append(
            adb("-s", serial, "exec-out", "screencap", "-p", stdout=subprocess.DEVNULL)
        )
        started = time.perf_counter()
        png = await device.screenshot_png()
        shots["AdbDevice.screenshot_png"].append(time.perf_counter() - started)
    await client.close()
    await plain.close()
    adb("disconnect", serial)

    median = {name: statistics.median(values) / 1e6 for name, values in rates.items()}
    print(f"{args.size_mib} MiB over loopback TCP, median of {args.runs} rounds (MB/s = 10^6 bytes/s):")
    for name, values in rates.items():
        print(
            f"  {name:26s} {median[name]:5.0f} MB/s"
            f"   (best {max(values) / 1e6:.0f}, worst {min(values) / 1e6:.0f})"
        )
    print(f"  (the sim offers delayed_ack: {delayed}; Debian's adb 29 does not use it)")
    for kind, theirs in (("exec", "adb exec-out"), ("pull", "adb pull")):
        ours, plain_ours = median[f"ours {kind}"], median[f"ours {kind}, no delayed ack"]
        served = median[f"ours {kind} via adb server"]
        print(
            f"  ours / adb, {kind}: {ours / median[theirs]:.0%} direct "
            f"(without delayed ack {plain_ours / median[theirs]:.0%}; "
            f"through the same adb server {served / median[theirs]:.0%})"
        )
    shot = {name: statistics.median(values) * 1000 for name, values in shots.items()}
    for name, value in shot.items():
        print(f"  {name:26s} {value:5.1f} ms median ({len(png)} bytes)")
    ratio = shot["AdbDevice.screenshot_png"] / shot["adb exec-out screencap -p"]
    print(f"  screenshot: ours takes {ratio:.0%} of adb's time")
    print(
        f"  (setup: our sync push {size / push_s / 1e6:.0f} MB/s; RSA-2048 key generation {keygen_s:.2f} s)"
    )
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="profile our client's transfers")
    args = parser.parse_args()

    sim_port, adb_port = free_port(), free_port()
    home = Path(tempfile.mkdtemp(prefix="bench-adb-pull-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
    env["HOME"] = str(home)
    sim = subprocess.Popen(
        [sys.executable, "-m", "phone_agent.sim", "--port", str(sim_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = subprocess.Popen(
        [ADB, "-P", str(adb_port), "nodaemon", "server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(sim_port)
        wait_listening(adb_port)
        asyncio.run(run(args, sim_port, adb_port, env, home))
    finally:
        subprocess.run([ADB, "-P", str(adb_port), "kill-server"], env=env, capture_output=True, timeout=10)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        sim.send_signal(signal.SIGTERM)
        try:
            sim.wait(timeout=20)
        except subprocess.TimeoutExpired:
            sim.kill()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
