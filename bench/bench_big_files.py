"""Benchmark: a 256 MiB file (push_file's limit) pulled and pushed through the real page, streamed in
chunks by ``phone-agent mcp`` (stdio, the official mcp SDK as client), on the simulated phone; each
result checked by md5 with Debian's adb. It runs the browser test ``tests/browser/test_big_files.py``
at that size (the CI runs it at 80 MiB) and prints its figures:

    .venv/bin/python bench/bench_big_files.py [--mib 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="the file's size in MiB (default 256)")
    options = parser.parse_args()
    test = ROOT / "tests" / "browser" / "test_big_files.py"
    command = [sys.executable, "-m", "pytest", "-q", "-s", str(test)]
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "BIG_MIB": str(options.mib)}, text=True,
                          capture_output=True)  # fmt: skip
    for line in done.stdout.splitlines():
        if "MiB through the page" in line or " passed" in line or " failed" in line:
            print(line.strip())
    if done.returncode != 0:
        print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
