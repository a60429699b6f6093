"""The page gets exactly the pure and browser modules; no module it imports touches sockets or js wrongly."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "py" / "phone_agent"


def test_pyscript_toml_lists_every_page_module():
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "page_files.py"), "--check"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr


def test_pyscript_toml_loads_nothing_from_outside():
    config = tomllib.loads((ROOT / "pyscript.toml").read_text())
    assert config["interpreter"] == "./static/vendor/pyodide/pyodide.mjs"
    assert "packages" not in config  # any packages entry makes PyScript fetch micropip
    assert config["experimental_create_proxy"] == "auto"
    for source, target in config["files"].items():
        if source.startswith("./static/vendor/"):  # a vendored pure-Python wheel, unpacked on sys.path
            assert source.endswith("-py3-none-any.whl") and target == "./*"
            continue
        assert source.startswith("./py/phone_agent/") and target.startswith("./phone_agent/")


BROWSER_ONLY = ("js", "pyodide", "pyscript")
# Whole modules, and the single functions of otherwise pure modules, that open sockets or threads.
SOCKET_LIKE = (
    "socket",
    "asyncio.streams",
    "asyncio.open_connection",
    "asyncio.start_server",
    "asyncio.open_unix_connection",
    "asyncio.start_unix_server",
    "websockets",
    "uvicorn",
    "starlette",
    "http",
    "threading",
)
# Methods that open sockets whatever object they hang on (``loop.create_connection``).
SOCKET_METHODS = {"create_connection", "create_server", "create_unix_connection", "create_unix_server"}


def _used_names(source: str) -> set[str]:
    """Every dotted name ``source`` imports or reaches through an imported name, in full.

    ``import asyncio`` then ``asyncio.open_connection(…)`` gives ``asyncio`` and
    ``asyncio.open_connection``; ``from asyncio import start_server`` gives ``asyncio.start_server``;
    ``loop.create_server(…)`` gives ``.create_server`` (a socket method on any object).
    """
    tree = ast.parse(source)
    names: set[str] = set()
    bound: dict[str, str] = {}  # local name -> the dotted name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name)
                if alias.asname:  # import a.b as c: c is a.b
                    bound[alias.asname] = alias.name
                else:  # import a.b: a is a
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            for alias in node.names:
                names.add(f"{node.module}.{alias.name}")
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in SOCKET_METHODS:
                names.add(f".{node.attr}")
            parts = []
            value: ast.expr = node
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                names.add(".".join([bound[value.id], *reversed(parts)]))
    return names


def _matches(names: set[str], forbidden: tuple[str, ...] | set[str]) -> set[str]:
    return {name for name in names for f in forbidden if name == f or name.startswith(f + ".")}


def _socket_uses(source: str) -> set[str]:
    names = _used_names(source)
    return _matches(names, SOCKET_LIKE) | {name for name in names if name.lstrip(".") in SOCKET_METHODS}


def test_only_browser_modules_import_js_and_only_server_and_sim_open_sockets():
    for path in PACKAGE.rglob("*.py"):
        part = path.relative_to(PACKAGE).parts[0]
        source = path.read_text()
        if part != "browser":
            found = _matches(_used_names(source), BROWSER_ONLY)
            assert not found, f"{path.name} uses {found}"
        if part not in ("server", "sim") and path.name != "cli.py":
            found = _socket_uses(source)
            assert not found, f"{path.name} uses {found}"


def test_the_socket_guard_catches_single_functions_of_pure_modules():
    planted = {
        "import asyncio\nasync def f():\n    await asyncio.open_connection('h', 1)\n": (
            "asyncio.open_connection"
        ),
        "import asyncio\nasync def f(cb):\n    await asyncio.start_server(cb, 'h', 1)\n": (
            "asyncio.start_server"
        ),
        "from asyncio import open_connection\n": "asyncio.open_connection",
        "from asyncio import start_server as listen\nlisten\n": "asyncio.start_server",
        "import asyncio as aio\naio.open_connection\n": "asyncio.open_connection",
        "from asyncio.streams import StreamReader\n": "asyncio.streams",
        "import http.client\n": "http.client",
        "async def f(loop):\n    await loop.create_connection(None, 'h', 1)\n": ".create_connection",
    }
    for source, name in planted.items():
        assert name in _socket_uses(source), source
    # asyncio itself (events, futures, timeouts) stays allowed in pure modules.
    assert not _socket_uses("import asyncio\nasyncio.Event()\nasyncio.timeout(1)\n")
    assert _matches(_used_names("import js\n"), BROWSER_ONLY) == {"js"}


def test_the_tool_reference_is_generated_from_the_catalog():
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tool_docs.py"), "--check"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
