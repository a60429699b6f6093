"""The ``phone-agent`` command line: options, defaults, the port from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from phone_agent.cli import build_parser, options_from_args
from phone_agent.server.options import ServerOptions


def options(*argv: str) -> ServerOptions:
    return options_from_args(build_parser().parse_args(list(argv)))


def test_defaults_are_loopback_7788_and_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PHONE_AGENT_WS_PORT", raising=False)
    opts = options("serve")
    assert (opts.host, opts.port) == ("127.0.0.1", 7788)
    assert (opts.root / "pyproject.toml").exists() and (opts.root / "py" / "phone_agent").is_dir()
    assert opts.self_check_delay_s == 3.0 and dict(opts.tool_timeouts) == {} and opts.allow_origins == ()


def test_the_port_comes_from_the_option_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PHONE_AGENT_WS_PORT", "9123")
    assert options("mcp").port == 9123
    assert options("mcp", "--port", "9200").port == 9200
    monkeypatch.setenv("PHONE_AGENT_WS_PORT", "99999")
    with pytest.raises(SystemExit, match="PHONE_AGENT_WS_PORT"):
        options("mcp")


def test_server_options_parse(tmp_path: Path) -> None:
    opts = options(
        "mcp",
        "--host",
        "::1",
        "--allow-origin",
        "https://Phone.Example.test/",
        "--allow-origin",
        "http://x.test:8080",
        "--root",
        str(tmp_path),
        "--tool-timeout",
        "take_screenshot=500",
        "--tool-timeout",
        "run_agent_task=2000",
        "--self-check-delay",
        "0",
    )
    assert opts.host == "::1" and opts.root == tmp_path.resolve()
    assert opts.allow_origins == ("https://phone.example.test", "http://x.test:8080")
    assert dict(opts.tool_timeouts) == {"take_screenshot": 500, "run_agent_task": 2000}
    assert opts.self_check_delay_s == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--port", "70000"],
        ["serve", "--allow-origin", "example.test"],
        ["mcp", "--tool-timeout", "nap=100"],
        ["mcp", "--tool-timeout", "take_screenshot=-1"],
        ["mcp", "--tool-timeout", "take_screenshot"],
        ["dance"],
    ],
)
def test_bad_command_lines_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert "phone-agent" in capsys.readouterr().err


def test_hidden_options_stay_out_of_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["mcp", "--help"])
    shown = capsys.readouterr().out
    assert "--allow-origin" in shown and "--tool-timeout" not in shown and "--self-check-delay" not in shown


def _help(*argv: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_each_command_help_says_what_that_command_is(capsys: pytest.CaptureFixture[str]) -> None:
    mcp, serve = _help("mcp", capsys=capsys), _help("serve", capsys=capsys)
    assert mcp.split("options:")[0] != serve.split("options:")[0]  # not serve's words, word for word
    assert "The command an MCP client" in mcp and "stdio" in mcp and "background" in mcp
    assert "in the foreground" in serve
    for command in ("stop", "token", "sim"):
        usage, _, _options = _help(command, capsys=capsys).partition("options:")
        assert len(usage.split()) > 12, (command, usage)  # a sentence after the usage line


def test_phone_agent_alone_prints_the_help_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    from phone_agent.cli import main

    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: phone-agent") and "serve" in out and "mcp" in out and err == ""
    done = subprocess.run(
        [sys.executable, "-m", "phone_agent.cli"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and "COMMAND" in done.stdout and "error" not in done.stderr
