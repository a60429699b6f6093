"""The server's pure pieces: the access policy, the page's path rules and the MCP edge conversions."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import mcp.types as types
import pytest

from phone_agent.server.access import AccessPolicy, normalize_origin
from phone_agent.server.mcp_bridge import level_allows, mcp_tool, to_call_tool_result
from phone_agent.server.static_files import cache_control, mime_type, page_relative_path, resolve_page_file
from phone_agent.tools.catalog import TOOLS_BY_NAME


def test_the_policy_accepts_loopback_names_on_the_servers_port_only() -> None:
    policy = AccessPolicy.for_server("127.0.0.1", 7788)
    for host in ("127.0.0.1:7788", "localhost:7788", "[::1]:7788", "LocalHost:7788"):
        assert policy.host_allowed(host), host
    for host in (None, "", "127.0.0.1", "127.0.0.1:7789", "evil.example:7788", "127.0.0.1.evil.example:7788"):
        assert not policy.host_allowed(host), host


def test_a_specific_bind_address_is_accepted_as_host_and_origin() -> None:
    policy = AccessPolicy.for_server("192.168.1.20", 7788)
    assert policy.host_allowed("192.168.1.20:7788")
    assert policy.origin_allowed("http://192.168.1.20:7788")
    wildcard = AccessPolicy.for_server("0.0.0.0", 7788)
    assert not wildcard.host_allowed("0.0.0.0:7788")


def test_the_policy_accepts_its_own_origins_and_allowed_ones() -> None:
    policy = AccessPolicy.for_server(
        "127.0.0.1", 7788, ["https://Phone.Example.test/", "http://dev.test:8080"]
    )
    for origin in (
        "http://127.0.0.1:7788",
        "http://localhost:7788",
        "http://[::1]:7788",
        "https://phone.example.test",
        "https://phone.example.test:443",
        "http://dev.test:8080",
    ):
        assert policy.origin_allowed(origin), origin
    for origin in (
        None,
        "",
        "null",
        "http://127.0.0.1:7789",
        "https://127.0.0.1:7788",
        "http://dev.test",
        "x",
    ):
        assert not policy.origin_allowed(origin), origin


def test_only_the_servers_own_origins_are_its_own() -> None:
    policy = AccessPolicy.for_server("127.0.0.1", 7788, ["https://phone.example.test"])
    assert policy.own_origin("http://localhost:7788") and policy.own_origin("http://127.0.0.1:7788/")
    assert policy.origin_allowed("https://phone.example.test")
    for origin in (None, "", "null", "https://phone.example.test", "http://127.0.0.1:7789", "x"):
        assert not policy.own_origin(origin), origin


@pytest.mark.parametrize(
    "bad", ["phone.example.test", "ftp://x.test", "https://x.test/path", "https://x.test/?q=1"]
)
def test_an_allow_origin_must_be_an_origin(bad: str) -> None:
    with pytest.raises(ValueError):
        normalize_origin(bad)


@pytest.mark.parametrize(
    ("url_path", "relative"),
    [
        ("/", "index.html"),
        ("/index.html", "index.html"),
        ("/pyscript.toml", "pyscript.toml"),
        ("/py/phone_agent/tools.py", "py/phone_agent/tools.py"),
        ("/static/vendor/pyodide/pyodide.asm.wasm", "static/vendor/pyodide/pyodide.asm.wasm"),
        ("/README.md", None),
        ("/pyproject.toml", None),
        ("/.git/config", None),
        ("/static/.stamp", None),
        ("/static/../pyproject.toml", None),
        ("/static/./app.css", None),
        ("/static//app.css", None),
        ("/static/", None),
        ("/py", None),
        ("/py/phone_agent/__pycache__/tools.cpython-311.pyc", None),
        ("/py/phone_agent.egg-info/PKG-INFO", None),
        ("/static\\..\\x", None),
        ("/tests/server/conftest.py", None),
    ],
)
def test_only_the_pages_files_have_a_path(url_path: str, relative: str | None) -> None:
    expected = PurePosixPath(relative) if relative else None
    assert page_relative_path(url_path) == expected


def test_a_symlink_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "static").mkdir(parents=True)
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (root / "static" / "leak.txt").symlink_to(outside)
    (root / "static" / "fine.txt").write_text("fine")
    assert resolve_page_file(root, "/static/leak.txt") is None
    assert resolve_page_file(root, "/static/fine.txt") is not None


def test_cache_and_mime_rules() -> None:
    assert cache_control(PurePosixPath("static/vendor/pyodide/pyodide.asm.wasm")) == "public, max-age=86400"
    assert cache_control(PurePosixPath("static/vendor.css")) == "no-cache"
    assert cache_control(PurePosixPath("index.html")) == "no-cache"
    assert mime_type(PurePosixPath("a.wasm")) == "application/wasm"
    assert mime_type(PurePosixPath("a.MJS")) == "text/javascript; charset=utf-8"
    assert mime_type(PurePosixPath("a.unknown-thing")) == "application/octet-stream"


def test_catalog_tools_become_mcp_tools_with_their_annotations() -> None:
    tool = mcp_tool(TOOLS_BY_NAME["run_agent_task"])
    wire = tool.model_dump(by_alias=True, exclude_none=True)
    assert wire["inputSchema"]["additionalProperties"] is False
    assert wire["annotations"] == TOOLS_BY_NAME["run_agent_task"].mcp_annotations()


def test_the_pages_wire_result_becomes_a_call_tool_result() -> None:
    result = to_call_tool_result(
        "get_device_status",
        {
            "content": [
                {"type": "text", "text": "{}"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
            "structuredContent": {"connected": False},
            "isError": False,
        },
    )
    assert isinstance(result.content[0], types.TextContent) and isinstance(
        result.content[1], types.ImageContent
    )
    assert result.structured_content == {"connected": False} and result.is_error is False


@pytest.mark.parametrize(
    "wire",
    [{}, {"content": "text"}, {"content": [{"type": "video"}]}, {"content": [], "isError": "very"}],
)
def test_a_malformed_wire_result_becomes_an_internal_error(wire: dict) -> None:
    result = to_call_tool_result("take_screenshot", wire)
    assert result.is_error
    assert result.structured_content["code"] == "internal_error"
    assert 'Tool "take_screenshot" failed unexpectedly' in result.content[0].text


def test_log_levels_compare_by_severity() -> None:
    assert level_allows(None, "info")
    assert level_allows("debug", "info") and level_allows("info", "info")
    assert not level_allows("notice", "info") and not level_allows("error", "info")
