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
        assert source.startswith("./py/phone_agent/") and target.startswith("./phone_agent/")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_browser_modules_import_js_and_only_server_and_sim_open_sockets():
    browser_only = {"js", "pyodide", "pyscript"}
    socket_like = {"socket", "asyncio.streams", "websockets", "uvicorn", "starlette", "http", "threading"}
    for path in PACKAGE.rglob("*.py"):
        part = path.relative_to(PACKAGE).parts[0]
        imports = _imports(path)
        if part != "browser":
            assert not imports & browser_only, f"{path.name} imports {imports & browser_only}"
        if part not in ("server", "sim") and path.name != "cli.py":
            assert not imports & socket_like, f"{path.name} imports {imports & socket_like}"


def test_the_tool_reference_is_generated_from_the_catalog():
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tool_docs.py"), "--check"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
