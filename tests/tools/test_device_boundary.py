"""The tools reach the phone only through the ``Device`` interface: nothing under
``phone_agent.tools`` imports ``phone_agent.adb`` (its commands and their quoting belong to AdbDevice)."""

from __future__ import annotations

import ast
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "py" / "phone_agent" / "tools"


def imported_modules(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` (a module of ``phone_agent.tools``) imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ["phone_agent", "tools"][: 3 - node.level] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_no_tool_module_imports_the_adb_package():
    offenders = {
        path.name: sorted(
            m for m in imported_modules(path) if m == "phone_agent.adb" or m.startswith("phone_agent.adb.")
        )
        for path in sorted(TOOLS.glob("*.py"))
    }
    assert not {name: found for name, found in offenders.items() if found}
