"""``phone-agent serve`` over HTTP: the page's files, ``/api/config``, Host and Origin checks, the self-check.

One ``serve`` subprocess (port from ``PHONE_AGENT_WS_PORT``, one ``--allow-origin``, the default 3 s
self-check) serves the module.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.harness import (
    PAGE_FILES,
    Peer,
    ServeProcess,
    free_port,
    origin_of,
    page_token,
    serve_process,
)

ALLOWED = "https://phone.example.test"


@pytest.fixture(scope="module")
def serve_proc(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    port = free_port()
    stderr = tmp_path_factory.mktemp("serve") / "stderr.txt"
    args = ["--root", str(page_root), "--allow-origin", ALLOWED]
    with serve_process(args, stderr, env={"PHONE_AGENT_WS_PORT": str(port)}) as process:
        yield process


def request(
    port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None, host: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def handshake_status(port: int, host: str, origin: str | None, path: str = "/relay") -> int:
    """The HTTP status a raw WebSocket handshake gets (101 = accepted)."""
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_the_server_says_how_to_open_the_page_and_keeps_the_token_out_of_a_log(
    serve_proc: ServeProcess,
) -> None:
    log = serve_proc.wait_stderr("in Chrome")
    # Its stderr is a file here, not a terminal: the command that prints the link, never the token.
    assert (
        f"phone-agent: no page is paired yet: `phone-agent url --port {serve_proc.port}` prints the page's "
        "link to open in Chrome"
    ) in log
    assert page_token() not in log and "?token=" not in log
    assert serve_proc.process.stdout is not None


def test_api_config_says_it_is_phone_agent(serve_proc: ServeProcess) -> None:
    status, headers, body = request(serve_proc.port, "/api/config")
    assert status == 200 and headers["content-type"].startswith("application/json")
    config = json.loads(body)
    assert config["server"] == "phone-agent" and config["relay"] == "/relay" and config["version"]


@pytest.mark.parametrize(
    ("path", "file", "mime"),
    [
        ("/", "index.html", "text/html; charset=utf-8"),
        ("/index.html", "index.html", "text/html; charset=utf-8"),
        ("/pyscript.toml", "pyscript.toml", "text/plain; charset=utf-8"),
        ("/py/main.py", "py/main.py", "text/plain; charset=utf-8"),
        ("/static/app.css", "static/app.css", "text/css; charset=utf-8"),
        ("/static/app.js", "static/app.js", "text/javascript; charset=utf-8"),
        ("/static/icon.svg", "static/icon.svg", "image/svg+xml"),
        ("/static/icon.png", "static/icon.png", "image/png"),
        (
            "/static/vendor/pyodide/pyodide.asm.wasm",
            "static/vendor/pyodide/pyodide.asm.wasm",
            "application/wasm",
        ),
        (
            "/static/vendor/pyodide/pyodide.mjs",
            "static/vendor/pyodide/pyodide.mjs",
            "text/javascript; charset=utf-8",
        ),
        (
            "/static/vendor/pyodide/pyodide-lock.json",
            "static/vendor/pyodide/pyodide-lock.json",
            "application/json",
        ),
        (
            "/static/vendor/pyodide/python_stdlib.zip",
            "static/vendor/pyodide/python_stdlib.zip",
            "application/zip",
        ),
    ],
)
def test_page_files_are_served_with_their_mime_type(
    serve_proc: ServeProcess, path: str, file: str, mime: str
) -> None:
    status, headers, body = request(serve_proc.port, path)
    assert status == 200
    assert headers["content-type"] == mime
    assert body == PAGE_FILES[file]
    assert headers["etag"] and headers["last-modified"]


def test_vendored_runtime_is_cached_and_the_rest_revalidated(serve_proc: ServeProcess) -> None:
    _, wasm, _ = request(serve_proc.port, "/static/vendor/pyodide/pyodide.asm.wasm")
    assert wasm["cache-control"] == "public, max-age=86400"
    for path in ("/", "/pyscript.toml", "/py/main.py", "/static/app.js"):
        _, headers, _ = request(serve_proc.port, path)
        assert headers["cache-control"] == "no-cache", path


@pytest.mark.parametrize("path", ["/", "/py/main.py", "/static/vendor/pyodide/pyodide.asm.wasm"])
def test_a_reload_revalidates_with_304(serve_proc: ServeProcess, path: str) -> None:
    _, first, _ = request(serve_proc.port, path)
    status, headers, body = request(serve_proc.port, path, headers={"If-None-Match": first["etag"]})
    assert status == 304 and body == b"" and headers["etag"] == first["etag"]
    status, _, body = request(serve_proc.port, path, headers={"If-Modified-Since": first["last-modified"]})
    assert status == 304 and body == b""
    status, _, body = request(serve_proc.port, path, headers={"If-None-Match": '"something-else"'})
    assert status == 200 and body


def test_head_answers_headers_without_a_body(serve_proc: ServeProcess) -> None:
    status, headers, body = request(serve_proc.port, "/static/vendor/pyodide/pyodide.asm.wasm", method="HEAD")
    assert status == 200 and body == b""
    assert headers["content-length"] == str(len(PAGE_FILES["static/vendor/pyodide/pyodide.asm.wasm"]))
    assert headers["content-type"] == "application/wasm"


@pytest.mark.parametrize(
    "path",
    [
        "/README.md",
        "/.env",
        "/static/.hidden",
        "/static/",
        "/static",
        "/py/",
        "/py/phone_agent/__pycache__/x.cpython-311.pyc",
        "/static/../.env",
        "/static/%2e%2e/.env",
        "/static/..%2f.env",
        "/py/../../etc/passwd",
        "//etc/passwd",
        "/static/vendor/../../README.md",
        "/nothing-here",
    ],
)
def test_nothing_else_is_served(serve_proc: ServeProcess, path: str) -> None:
    status, _, body = request(serve_proc.port, path)
    assert status == 404, (path, body)
    assert b"SECRET" not in body and b"secret" not in body


def test_other_methods_are_refused(serve_proc: ServeProcess) -> None:
    status, _, _ = request(serve_proc.port, "/index.html", method="POST")
    assert status == 405


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "192.168.1.2:{port}"])
def test_a_foreign_host_header_is_refused(serve_proc: ServeProcess, host: str) -> None:
    status, _, _ = request(serve_proc.port, "/", host=host.format(port=serve_proc.port))
    assert status in (403, 421)
    status, _, _ = request(serve_proc.port, "/api/config", host=host.format(port=serve_proc.port))
    assert status in (403, 421)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"])
def test_loopback_host_headers_are_accepted(serve_proc: ServeProcess, host: str) -> None:
    status, _, _ = request(serve_proc.port, "/", host=host.format(port=serve_proc.port))
    assert status == 200


def test_handshakes_from_the_servers_own_origins_and_allowed_ones_are_accepted(
    serve_proc: ServeProcess,
) -> None:
    port = serve_proc.port
    for origin in (origin_of(port), origin_of(port, "localhost"), origin_of(port, "[::1]"), ALLOWED):
        assert handshake_status(port, f"127.0.0.1:{port}", origin) == 101, origin
    assert handshake_status(port, f"localhost:{port}", origin_of(port, "localhost"), path="/") == 101


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:{port}", "https://evil.example"),
        ("127.0.0.1:{port}", "http://127.0.0.1:1"),
        ("127.0.0.1:{port}", "null"),
        ("127.0.0.1:{port}", None),
        ("evil.example:{port}", "http://127.0.0.1:{port}"),
        ("evil.example:{port}", "http://evil.example:{port}"),
    ],
)
def test_handshakes_with_a_foreign_or_missing_origin_or_host_are_refused(
    serve_proc: ServeProcess, host: str, origin: str | None
) -> None:
    port = serve_proc.port
    status = handshake_status(port, host.format(port=port), origin and origin.format(port=port))
    assert status == 403


async def test_the_self_check_asks_a_new_page_for_its_device_status(serve_proc: ServeProcess) -> None:
    connected = time.monotonic()
    peer = await Peer.connect(serve_proc.port)
    try:
        request_frame = await peer.next_request("get_device_status", timeout=15)
        assert time.monotonic() - connected > 2.5  # it waits ~3 s before checking
        assert request_frame["args"] == {}
        await peer.answer(request_frame, {"content": [{"type": "text", "text": '{"connected":false}'}]})
        log = await asyncio.to_thread(serve_proc.wait_stderr, "device status")
        assert 'phone-agent: page connected; device status: {"connected":false}' in log
    finally:
        await peer.close()


def test_no_other_site_may_frame_the_page_and_bad_dates_are_ignored(serve_proc: ServeProcess) -> None:
    for path in ("/", "/api/config"):
        _, headers, _ = request(serve_proc.port, path)
        assert headers["x-frame-options"] == "DENY", path
        assert headers["content-security-policy"] == "frame-ancestors 'none'", path
    bad = "Mon, 01 Jan 99999999999999999999 00:00:00 GMT"
    status, _, body = request(serve_proc.port, "/py/main.py", headers={"If-Modified-Since": bad})
    assert status == 200 and body
