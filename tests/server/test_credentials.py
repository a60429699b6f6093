"""``credentials``: where the config and state directories are, the token and pairing secret (made
once, kept, private files in a private directory), rotation, the constant-time comparison and the
records of running servers (removed only by the process that wrote them)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from phone_agent.server import credentials


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh PHONE_AGENT_HOME for this test alone, with no token in the environment."""
    monkeypatch.setenv(credentials.HOME_ENV, str(tmp_path))
    monkeypatch.delenv(credentials.TOKEN_ENV, raising=False)
    return tmp_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_phone_agent_home_holds_both_directories(home: Path) -> None:
    assert credentials.config_dir() == home / "config"
    assert credentials.state_dir() == home / "state"


def test_without_phone_agent_home_the_xdg_directories_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(credentials.HOME_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st"))
    assert credentials.config_dir() == tmp_path / "cfg" / "phone-agent"
    assert credentials.state_dir() == tmp_path / "st" / "phone-agent"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert credentials.config_dir() == tmp_path / "user" / ".config" / "phone-agent"


def test_the_token_is_made_once_kept_private_and_read_back(home: Path) -> None:
    token = credentials.load_token()
    assert len(token) >= 43  # 32 bytes of token_urlsafe
    path = home / "config" / credentials.TOKEN_FILE
    assert path.read_text() == token + "\n"
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert credentials.load_token() == token


def test_the_environment_token_wins_and_writes_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(credentials.TOKEN_ENV, "  from-env  ")
    assert credentials.load_token() == "from-env"
    assert not (home / "config" / credentials.TOKEN_FILE).exists()


def test_an_empty_token_file_is_replaced(home: Path) -> None:
    credentials.private_dir(home / "config")
    (home / "config" / credentials.TOKEN_FILE).write_text("\n")
    token = credentials.load_token()
    assert token and (home / "config" / credentials.TOKEN_FILE).read_text().strip() == token


def test_rotating_replaces_the_token_and_the_pairing_secret_is_another_secret(home: Path) -> None:
    old = credentials.load_token()
    new = credentials.rotate_token()
    assert new != old and credentials.load_token() == new
    assert mode(home / "config" / credentials.TOKEN_FILE) == 0o600
    secret = credentials.load_pairing_secret()
    assert secret not in (old, new) and credentials.load_pairing_secret() == secret
    assert [p.name for p in (home / "config").iterdir() if p.name.startswith(".")] == []  # no temporaries


def test_same_secret_compares_exactly() -> None:
    assert credentials.same_secret("abc", "abc")
    assert not credentials.same_secret("abd", "abc")
    assert not credentials.same_secret("", "abc")
    assert not credentials.same_secret(None, "abc")
    assert not credentials.same_secret("\udcff", "abc")  # not UTF-8: still an answer, not an error


def test_a_server_record_is_removed_only_by_its_own_process(home: Path) -> None:
    path = credentials.write_server_record(7788, {"pid": os.getpid(), "port": 7788})
    assert path == home / "state" / "server-7788.json" and mode(path) == 0o600
    assert credentials.read_server_record(7788) == {"pid": os.getpid(), "port": 7788}
    credentials.remove_server_record(7788, os.getpid() + 1)  # another process's: kept
    assert path.exists()
    credentials.remove_server_record(7788, os.getpid())
    assert credentials.read_server_record(7788) is None
    credentials.remove_server_record(7788, os.getpid())  # already gone: nothing happens


def test_an_unreadable_record_reads_as_none(home: Path) -> None:
    credentials.private_dir(home / "state")
    credentials.server_record_path(1).write_text("not json")
    credentials.server_record_path(2).write_text("[1, 2]")
    assert credentials.read_server_record(1) is None
    assert credentials.read_server_record(2) is None
    assert credentials.read_server_record(3) is None
