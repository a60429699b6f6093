"""The MCP bundle's manifest.json and the MCP registry's server.json stay true: their generated parts
equal what scripts/tool_docs.py writes from the catalog (tests/layout/test_page_files.py runs it with
--check), the official mcpb CLI validates the manifest, and both name the package of pyproject.toml."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from phone_agent import __version__
from phone_agent.tools.catalog import tools_for_profile

ROOT = Path(__file__).resolve().parents[2]
MCPB = ROOT / "node_modules" / ".bin" / "mcpb"


def _dist_name() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]


def test_the_manifest_runs_the_indexed_package_and_lists_every_tool_of_the_catalog():
    manifest = json.loads((ROOT / "manifest.json").read_text())
    assert [tool["name"] for tool in manifest["tools"]] == [spec.name for spec in tools_for_profile()]
    assert manifest["version"] == __version__
    config = manifest["server"]["mcp_config"]
    assert config["command"] == "uvx"
    assert config["args"] == ["--from", f"{_dist_name()}=={__version__}", "phone-agent", "mcp"]
    assert set(manifest["user_config"]) == {"port", "model_base_url", "model"}
    assert config["env"]["PHONE_AGENT_WS_PORT"] == "${user_config.port}"


def test_the_official_mcpb_cli_validates_the_manifest():
    if not MCPB.exists():
        if os.environ.get("CI"):
            pytest.fail("npm's @anthropic-ai/mcpb is not installed: run scripts/setup")
        pytest.skip("npm's @anthropic-ai/mcpb is not installed: run scripts/setup")
    done = subprocess.run(
        [str(MCPB), "validate", "manifest.json"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "validation passes" in done.stdout, done.stdout + done.stderr


def test_server_json_names_the_pypi_package_and_the_readme_claims_its_name():
    entry = json.loads((ROOT / "server.json").read_text())
    assert entry["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert entry["version"] == __version__
    (package,) = entry["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == _dist_name()
    assert package["version"] == __version__ and package["transport"] == {"type": "stdio"}
    # The registry checks ownership of a PyPI package by this line in its description (the README).
    claimed = re.findall(r"mcp-name: (\S+)", (ROOT / "README.md").read_text())
    assert claimed == [entry["name"]]
