"""``GET /api/config`` hands the model's API key to the user's page only — the same check as the pairing
secret (the page cookie, on a same-origin fetch) — tried as a local process and a hostile page would:
no cookie, a browser's headers forged, a cookie made up, the real cookie on another site's fetch. Each
learns that a key is set (``apiKeyWithheld``), never the key; the server's log never shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.server.harness import ServeProcess, free_port, page_cookie, serve_process
from tests.server.test_pairing import BROWSER_HEADERS, http

KEY = "sk-test-Zebra-Quartz-9911"


@pytest.fixture(scope="module")
def keyed_server(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> ServeProcess:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    args += ["--model-base-url", "http://127.0.0.1:9/v1", "--model", "some-model"]
    log = tmp_path_factory.mktemp("config-key") / "serve.txt"
    with serve_process(args, log, env={"PHONE_AGENT_MODEL_API_KEY": KEY}) as process:
        yield process


def config_of(port: int, headers: dict[str, str]) -> tuple[dict, bytes]:
    status, _, body = http(port, "/api/config", headers)
    assert status == 200
    return json.loads(body), body


def test_the_users_page_gets_the_key(keyed_server: ServeProcess) -> None:
    port = keyed_server.port
    config, _ = config_of(port, {**BROWSER_HEADERS, "Cookie": page_cookie(port)})
    assert config["pageKey"] is True and config["pairing"]
    assert config["model"]["apiKey"] == KEY and config["model"]["model"] == "some-model"


@pytest.mark.parametrize(
    "who",
    ["a local process", "forged browser headers", "a made-up cookie", "the cookie on a cross-site fetch"],
)
def test_no_one_else_learns_the_key(keyed_server: ServeProcess, who: str) -> None:
    port = keyed_server.port
    own = f"http://127.0.0.1:{port}"
    headers = {
        "a local process": {},
        "forged browser headers": {**BROWSER_HEADERS, "Origin": own, "Referer": own + "/"},
        "a made-up cookie": {**BROWSER_HEADERS, "Cookie": f"phone-agent-page-{port}=" + "0" * 64},
        "the cookie on a cross-site fetch": {
            **BROWSER_HEADERS,
            "Sec-Fetch-Site": "cross-site",
            "Cookie": page_cookie(port),
        },
    }[who]
    config, body = config_of(port, headers)
    assert KEY.encode() not in body and "sk-" not in body.decode()
    assert "apiKey" not in config["model"] and config["model"]["apiKeyWithheld"] is True
    assert config["model"]["baseUrl"] == "http://127.0.0.1:9/v1"  # the rest of the defaults are shared
    assert "pairing" not in config


def test_the_server_never_logs_the_key(keyed_server: ServeProcess) -> None:
    config_of(keyed_server.port, {})
    assert KEY not in keyed_server.stderr_path.read_text(errors="replace")
