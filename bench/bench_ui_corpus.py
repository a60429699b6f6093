"""Benchmark: the UI dump corpus read as list_elements reads it — what is listed, how well, how fast.

Over the corpus of tests/ui_corpus (or every ``*.xml`` under ``--dumps DIR``, e.g. dumps of your own
phones): elements listed, labelled clickable coverage (labelled clickable nodes on screen that are
listed), centres inside their element, own-locator uniqueness (each element's ``locator`` finds exactly
it), the flows' selector made of it finding its node first, and the time to read a dump and list it
(p50/p95/max), interleaved round by round with the stdlib's ``ElementTree.fromstring`` of the same XML as
the reference (the ratio says what the bounded, recursion-free reader and the element list cost over a
bare parse). Then the hostile trees: 50,000 nodes wide, 100,000 deep, 100,000 wide.

    .venv/bin/python bench/bench_ui_corpus.py [--rounds 5] [--dumps DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "py")]

from phone_agent.adb.ui_dump import read_ui_dump  # noqa: E402
from phone_agent.tools.locators import ScreenSnapshot  # noqa: E402
from tests.ui_corpus.checks import Figures, check  # noqa: E402
from tests.ui_corpus.screens import DUMPS, deep, wide  # noqa: E402
from tests.ui_corpus.shapes import Dump  # noqa: E402


def load(folder: Path) -> list[Dump]:
    dumps = []
    for path in sorted(folder.rglob("*.xml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "<hierarchy" in text:
            dumps.append(Dump(path.name, text, 0, 0))
    return dumps


def quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return (time.perf_counter() - started) * 1000


def ours(xml: str) -> None:
    ScreenSnapshot.from_nodes(read_ui_dump(xml).nodes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dumps", type=Path, help="read every *.xml under this folder instead")
    args = parser.parse_args()
    dumps = load(args.dumps) if args.dumps else DUMPS
    total = Figures()
    crashes: list[str] = []
    for dump in dumps:
        try:
            figures, _ = check(dump)
        except Exception as exc:  # the bench reports a crash, it does not stop at it
            crashes.append(f"{dump.name}: {exc!r}")
            continue
        if args.dumps:
            figures.sizes_wrong = []  # a folder's dumps do not say their size
        total.add(figures)
    ours_ms: list[float] = []
    reference_ms: list[float] = []
    for _ in range(args.rounds):  # interleaved: both see the same machine load
        for dump in dumps:
            body = dump.xml[dump.xml.find("<hierarchy") :].encode()
            reference_ms.append(timed(ElementTree.fromstring, body))
            ours_ms.append(timed(ours, dump.xml))
    source = f"--dumps {args.dumps}" if args.dumps else "tests/ui_corpus"
    print(f"dumps: {len(dumps)} ({source}), crashes: {len(crashes)}")
    for crash in crashes[:10]:
        print("  crash:", crash)
    print(f"elements listed: {total.elements}")
    coverage = total.covered / total.labelled_clickable if total.labelled_clickable else 1.0
    print(f"labelled clickable coverage: {total.covered}/{total.labelled_clickable} = {coverage:.2%}")
    print(f"centres inside their element: {total.elements - len(total.centres_wrong)}/{total.elements}")
    unique = total.locators_exact / total.elements if total.elements else 1.0
    print(f"own locator finds exactly it: {total.locators_exact}/{total.elements} = {unique:.2%}")
    for other in total.locators_other[:5]:
        print("  not exact:", other)
    flows = total.selectors_exact / total.selectors if total.selectors else 1.0
    print(
        f"as a flow's selector, finds its node first: {total.selectors_exact}/{total.selectors} = {flows:.2%}"
    )
    if total.sizes_wrong:
        print("screen size wrong:", total.sizes_wrong[:5])
    ratio = statistics.median(ours_ms) / max(statistics.median(reference_ms), 1e-6)
    print(
        f"read + list, ms: p50 {quantile(ours_ms, 0.5):.2f}, p95 {quantile(ours_ms, 0.95):.2f}, "
        f"max {max(ours_ms):.2f} (ElementTree.fromstring alone: p50 {quantile(reference_ms, 0.5):.2f}, "
        f"p95 {quantile(reference_ms, 0.95):.2f}; median ratio {ratio:.1f}x)"
    )
    for dump in [wide(50_000), deep(100_000), wide(100_000)]:
        times = [timed(ours, dump.xml) for _ in range(max(1, args.rounds // 2))]
        note = read_ui_dump(dump.xml).note
        print(
            f"hostile {dump.name}: read + list median {statistics.median(times):.0f} ms "
            f"(spread {min(times):.0f}-{max(times):.0f}); note: {note[:100]}"
        )


if __name__ == "__main__":
    main()
