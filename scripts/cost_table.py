"""Write README's "What a real phone costs" table from the realistic profile's declared costs.

``py/phone_agent/sim/realistic.py``'s ``COSTS`` is the one source: run this after changing a cost
(`--check` only reports; a unit test keeps README's copy equal to the table).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.sim.realistic import cost_table_markdown  # noqa: E402

README = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- costs: [^>]*-->\n)(.*?)(\n<!-- /costs -->)", re.DOTALL)


def rewritten(text: str) -> str:
    """``text`` (README) with its cost table written from ``COSTS``."""
    if BLOCK.search(text) is None:
        raise SystemExit("README.md has no <!-- costs: … --> block")
    return BLOCK.sub(lambda m: m.group(1) + cost_table_markdown() + m.group(3), text, count=1)


def main() -> int:
    text = README.read_text()
    new = rewritten(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print("README.md's cost table is out of date: run scripts/cost_table.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print("cost_table: README.md's table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
