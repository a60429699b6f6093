"""The release as a user meets it: ``python -m build`` makes the sdist, then the wheel from the sdist;
the wheel is named for the package index, carries the page (every vendored file, every license, the
project's LICENSE) within 40 MiB, installs with pip alone into a fresh venv outside the checkout, and
from there, with a fresh HOME, ``phone-agent mcp --sim`` serves a page that boots, pairs and answers a
tool through the official MCP SDK's stdio client.

The wheel is built once per session; ``PHONE_AGENT_WHEEL`` (a built wheel's path, as .ci/run passes it)
skips the build.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import CHROMIUM, ROOT, eventually, free_port, open_page, require

DIST_NAME = "phone-agent-mcp"
MAX_WHEEL_BYTES = 40 * 1024 * 1024
PAGE = "phone_agent/page/"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("PHONE_AGENT_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == 1 and len(sorted(out.glob("*.tar.gz"))) == 1, sorted(out.iterdir())
    return wheels[0]


def _vendored_files() -> list[str]:
    vendor = ROOT / "static" / "vendor"
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in vendor.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    )


def test_the_wheel_is_named_for_the_index_and_carries_the_page_and_every_license(wheel: Path):
    assert wheel.name.startswith("phone_agent_mcp-") and wheel.name.endswith("-py3-none-any.whl")
    assert wheel.stat().st_size <= MAX_WHEEL_BYTES
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = archive.read(metadata).decode()
        entry_points = archive.read(metadata.replace("METADATA", "entry_points.txt")).decode()
    assert f"Name: {DIST_NAME}\n" in meta
    assert "License-Expression: Apache-2.0" in meta
    assert "phone-agent = phone_agent.cli:main" in entry_points  # the command stays phone-agent
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    for name in ("index.html", "pyscript.toml", "py/main.py", "static/app.css", "static/boot.js"):
        assert PAGE + name in names, name
    vendored = _vendored_files()
    assert vendored, "the checkout has no static/vendor: run scripts/setup"
    missing = [path for path in vendored if PAGE + path not in names]
    assert not missing, missing
    parts = sorted({path.split("/")[2] for path in vendored})
    assert parts and all(f"{PAGE}static/vendor/{part}/LICENSE" in names for part in parts), parts
    # The page's Python modules come from the package itself.
    config = (ROOT / "pyscript.toml").read_text()
    for module in ("phone_agent/__init__.py", "phone_agent/browser/app.py", "phone_agent/tools/catalog.py"):
        assert f'"./py/{module}"' in config and module in names


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh venv outside the checkout with the wheel installed by pip alone, and a fresh HOME."""
    place = tmp_path_factory.mktemp("installed")
    venv = place / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    home = place / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PHONE_AGENT_", "XDG_", "VIRTUAL_ENV", "PYTHON"))
    }
    env["HOME"] = str(home)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, env


def _run(venv: Path, env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "phone-agent"), *args], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=60,
    )  # fmt: skip


@pytest.mark.browser
async def test_the_installed_wheel_serves_a_page_that_boots_pairs_and_answers_through_its_mcp(
    browser, installed, tmp_path
):
    require(CHROMIUM, "Debian's chromium")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    venv, env = installed
    version = _run(venv, env, "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("phone-agent ")
    port, sim_port = free_port(), free_port()
    params = StdioServerParameters(
        command=str(venv / "bin" / "phone-agent"),
        args=["mcp", "--port", str(port), "--sim", "--sim-port", str(sim_port), "--self-check-delay", "0"],
        cwd=str(tmp_path),  # any folder: the page comes from the package
        env=env,
    )
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            link = _run(venv, env, "url", "--port", str(port), cwd=tmp_path).stdout.strip()
            assert "?token=" in link
            async with open_page(browser, link, link=False) as (page, _watch):
                await page.wait_for_selector("#relay-badge.mcp-badge--ready", timeout=30_000)

                async def connected():
                    result = await session.call_tool("get_device_status", {})
                    status = json.loads(result.content[0].text) if not result.is_error else {}
                    return status if status.get("connected") else None

                status = await eventually(connected, timeout_s=60, interval_s=0.5)
                assert status["connected"] is True
                listed = await session.call_tool("list_elements", {})
                assert not listed.is_error, listed.content[0].text
    finally:
        await asyncio.to_thread(_run, venv, env, "stop", "--port", str(port), cwd=tmp_path)
