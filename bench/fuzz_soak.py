"""Fuzz soak: every parser target of tests/fuzz/targets.py by the hundred thousand, reporting crashes
(target 0) and the slowest case of each.

    .venv/bin/python bench/fuzz_soak.py [--cases 100000] [--only SUBSTRING] [--seed N]

A crash is any case whose check fails: an exception other than the parser's documented errors, an
async parser still running after 5 s (a hang), or a round trip that does not give back what was
encoded. Crashing cases do not stop the run: they are counted, and the first of each kind is printed
with its input so it can become a test. Hypothesis generates the cases (generation only: no
shrinking, no example database), so the count can fall short of ``--cases`` when a target's input
space is exhausted first.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz.targets import TARGETS, Target  # noqa: E402


@dataclass
class SoakResult:
    cases: int = 0
    crashes: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    slowest_case: str = ""
    first_crashes: dict[str, str] = field(default_factory=dict)


def soak(target: Target, cases: int, seed_value: int) -> SoakResult:
    result = SoakResult()

    @seed(seed_value)
    @settings(
        max_examples=cases,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target.strategy)
    def run(args: tuple) -> None:
        start = time.perf_counter()
        try:
            target.check(*args)
        except Exception as exc:
            result.crashes += 1
            kind = f"{type(exc).__name__} at {traceback.extract_tb(exc.__traceback__)[-1].name}"
            if kind not in result.first_crashes:
                result.first_crashes[kind] = f"{exc!r:.300}\n      input: {args!r:.600}"
        elapsed = time.perf_counter() - start
        result.cases += 1
        if elapsed > result.slowest:
            result.slowest, result.slowest_case = elapsed, f"{args!r:.160}"

    start = time.perf_counter()
    run()
    result.seconds = time.perf_counter() - start
    return result


def main(args: argparse.Namespace) -> int:
    logging.disable(logging.CRITICAL)  # the simulated adbd logs every connection it drops
    total_crashes = 0
    print(f"{'target':34} {'cases':>7} {'crashes':>7} {'cases/s':>8} {'slowest':>9}", flush=True)
    for target in TARGETS:
        if args.only and args.only not in target.name:
            continue
        result = soak(target, args.cases, args.seed)
        total_crashes += result.crashes
        rate = result.cases / result.seconds if result.seconds else 0.0
        print(
            f"{target.name:34} {result.cases:7d} {result.crashes:7d} {rate:8.0f} "
            f"{result.slowest * 1000:7.1f} ms",
            flush=True,
        )
        if args.verbose:
            print(f"      slowest case: {result.slowest_case}")
        for kind, example in result.first_crashes.items():
            print(f"    CRASH {kind}: {example}")
    print(f"crashes in all: {total_crashes} (target 0)")
    return 1 if total_crashes else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000, help="cases per target")
    parser.add_argument("--only", default="", help="only targets whose name contains this")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed (runs are repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each target's slowest case")
    sys.exit(main(parser.parse_args()))
