"""The issue's figures side by side, in one run: memory per phone, what a call costs, and the task
beside mobile-mcp on the default and the realistic phone; then the README's performance table.

    .venv/bin/python bench/bench_all.py [--json FIGURES.json] [--readme] [--quick]

Runs bench_page_memory.py (1, 4 and 8 pages, driven bare and by Playwright), bench_call_cost.py and
bench_vs_mobile_mcp.py (both phones) one after another, each printing its own report, and writes
their figures into one JSON file (with when and where they were taken). ``--readme`` then rewrites
README.md's table from it with scripts/perf_table.py. ``--quick`` is a short run of each (one page,
a few calls, one round): it only shows that the benches still run (tests/browser/test_benches.py),
its figures mean little. ``--skip NAME`` leaves a bench out (memory, calls, mobile).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

SCRIPTS = {
    "memory": "bench_page_memory.py",
    "calls": "bench_call_cost.py",
    "mobile": "bench_vs_mobile_mcp.py",
}
FULL = {
    "memory": ["--pages", "1,4,8"],
    "calls": [],
    "mobile": ["--phone", "both"],
}
QUICK = {
    "memory": ["--pages", "1", "--settle", "1", "--cpu-window", "1", "--calls", "1", "--driver", "bare"],
    "calls": ["--calls", "5", "--rounds", "1", "--taps", "2"],
    "mobile": ["--phone", "default", "--rounds", "1", "--calls", "1"],
}


def run_bench(name: str, extra: list[str], out: Path) -> dict:
    """One bench in a process of its own (each sets up its own servers, homes and Chromium)."""
    script = ROOT / "bench" / SCRIPTS[name]
    subprocess.run([sys.executable, str(script), *extra, "--json", str(out)], check=True, cwd=ROOT)
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="where the figures go (default: a temporary file)")
    parser.add_argument("--readme", action="store_true", help="rewrite README.md's performance table")
    parser.add_argument("--quick", action="store_true", help="a short run: the benches still work")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(FULL))
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    figures: dict = {
        "when": time.strftime("%d %b %Y", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, load average "
        f"{os.getloadavg()[0]:.1f} at the start",
    }
    out = args.json or Path(tempfile.mkstemp(prefix="bench-all-", suffix=".json")[1])
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-all-") as tmp:
        for name, extra in plan.items():
            if name in args.skip:
                continue
            try:
                figures.update(run_bench(name, extra, Path(tmp) / f"{name}.json"))
            except subprocess.CalledProcessError:  # said on its stderr; the others still run
                failed.append(name)
            out.write_text(json.dumps(figures, indent=1))  # what there is so far, kept
    if failed:
        print(f"\nthese benches failed: {', '.join(failed)}", file=sys.stderr)
    print(f"\nfigures: {out}")
    import perf_table

    print()
    perf_table.main([str(out), *(["--readme"] if args.readme else [])])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
