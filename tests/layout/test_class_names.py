"""No two classes in ``py/phone_agent`` share a name: a name says which thing it is, wherever it is read."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "py" / "phone_agent"


def class_names() -> dict[str, list[str]]:
    """Every class defined in the package (nested ones too), by name, with where each is defined."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_every_class_name_is_defined_once():
    clashes = {name: places for name, places in class_names().items() if len(places) > 1}
    assert clashes == {}


def test_the_scan_reaches_every_subpackage():
    files = {place.split(":")[0] for places in class_names().values() for place in places}
    wanted = {"errors.py", "adb/client.py", "sim/connection.py", "sim/android/ui.py", "server/runtime.py"}
    assert wanted <= files
