"""The relay's wire format, both halves: every frame the server and the page exchange is built and read here.

server → page  ``{id, tool, args}`` (a call; with ``transfer: {id, direction, size, path}`` when its
               file streams in chunks, see ``server.transfers``) and ``{id, type: "cancel"}``
page → server  ``{id, result}`` (result = CallToolResult, wire form) and
               ``{id, type: "progress", seq, message}`` (seq 1, 2, 3 … per id)

Secrets by name (tools.named_secrets): once paired, a server that holds secrets
(``PHONE_AGENT_SECRET_<NAME>``) sends ``{type: "secrets", names}``; when the page types one it asks
``{type: "secret", id, name}`` and the server answers ``{type: "secret", id, value}`` (value null when
it has none). Names travel freely; a value only in that one answer, on the paired socket.

Asking the caller (people in the loop): while a call's agent waits for a person (take over, a
confirmation), the page also asks the call's MCP client ``{id, type: "ask", ask, kind, message}`` (id: the
call's; ask: a fresh id; kind ``takeover`` or ``confirm``). The server answers ``{type: "answer", id: ask,
answer}`` (``done``/``cancel``, ``yes``/``no``) when the client's user answered; when the client cannot be
asked it never answers. The person at the page may answer first: the page then sends ``{id, type:
"withdraw", ask}`` and the server withdraws its question (a late reply is ignored).

Pairing comes first on every connection: the page's first frame is ``{type: "hello", secret}`` (the
secret from ``/api/config`` or remembered from an earlier pairing) or ``{type: "pair", code}`` (the code
the server's console shows). The server answers ``{type: "paired"}`` when the page is in (with
``secret`` after a code, for the page to remember); an unpaired page is closed with ``CLOSE_UNPAIRED``.
The close codes the server uses towards a page are here too, and where the page's relay client
connects (``relay_settings``) and how it retries.

Pure: text in, frames out, text to send. The page's WebSocket adapter (``browser.relay_client``), the
server's core (``relay.core``) and its asyncio front end (``server.relay``), the pairing gate and the
farm only move these strings; none of them builds or reads a frame itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_RELAY_URL = "ws://localhost:7788"
DEFAULT_RETRY_MS = 30_000
# WebSocket close codes the server uses towards a page (4000–4999 are free for applications).
# The close code the server sends to a page that a newer page replaced. That page stops retrying on its
# own (two open tabs would otherwise take the relay from each other every 30 s) until a person asks.
CLOSE_REPLACED = 4000
CLOSE_REPLACED_REASON = "replaced by a newer phone-agent page"
# The close code for a page that did not pair (no secret, a wrong one, a wrong code).
CLOSE_UNPAIRED = 4401
CLOSE_SHUTDOWN = 1001
CLOSE_SHUTDOWN_REASON = "phone-agent is shutting down"
# After a disconnect the page retries at once, then after 1 s, 2 s, 4 s … up to its retry interval.
FIRST_BACKOFF_MS = 1000


def retry_delay_ms(failures: int, max_ms: int) -> int:
    """How long the page waits before its next attempt after ``failures`` failed ones in a row (0 for
    the first retry after a connection was lost): 0, 1 s, 2 s, 4 s … never more than ``max_ms``."""
    if failures <= 0:
        return 0
    return min(max_ms, FIRST_BACKOFF_MS << min(failures - 1, 20))


@dataclass(frozen=True)
class BadFrame:
    """A frame its receiver cannot act on; ``id`` is set when the frame named one, so it can be answered."""

    reason: str
    id: str | None = None


# -- pairing ------------------------------------------------------------------------------------


def hello_frame(secret: str) -> str:
    """page → server, first: the pairing secret."""
    return json.dumps({"type": "hello", "secret": secret})


def pair_frame(code: str) -> str:
    """page → server, first: the pairing code the server's console shows."""
    return json.dumps({"type": "pair", "code": code})


def paired_frame(secret: str | None = None) -> str:
    """server → page: the page is in; ``secret`` (after a pairing code) is the one to remember."""
    return json.dumps({"type": "paired"} if secret is None else {"type": "paired", "secret": secret})


@dataclass(frozen=True)
class HelloFrame:
    """The page shows a pairing secret (None when the frame's is not a string)."""

    secret: str | None


@dataclass(frozen=True)
class PairFrame:
    """The page gives a pairing code (None when the frame's is not a string)."""

    code: str | None


def parse_first_frame(text: str | bytes | None) -> HelloFrame | PairFrame | None:
    """The page's first frame as the server reads it; None for no frame, or one neither hello nor pair."""
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if data.get("type") == "hello":
        return HelloFrame(_text(data.get("secret")))
    if data.get("type") == "pair":
        return PairFrame(_text(data.get("code")))
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


# -- server → page ------------------------------------------------------------------------------


def call_frame(call_id: str, tool: str, args: Any, transfer: dict[str, Any] | None = None) -> str:
    """server → page: one tool call; ``transfer`` (``{id, direction, size, path}``) when the call's file
    streams in chunks over HTTP on the relay's origin (``server.transfers``) instead of inline."""
    frame: dict[str, Any] = {"id": call_id, "tool": tool, "args": args}
    if transfer is not None:
        frame["transfer"] = transfer
    return json.dumps(frame, ensure_ascii=False)


def cancel_frame(call_id: str) -> str:
    """server → page: stop working on call ``call_id`` (nobody waits for its answer any more)."""
    return json.dumps({"id": call_id, "type": "cancel"})


def task_record_frame(record: dict[str, Any]) -> str:
    """server → page: an agent task's record as a page of this server last stored it (the server keeps
    them, so a page that replaces another answers the same record: one truth across tabs and browsers)."""
    return json.dumps({"type": "task", "record": record}, ensure_ascii=False)


@dataclass(frozen=True)
class CallFrame:
    id: str
    tool: str
    args: Any
    transfer: TransferRef | None = None


@dataclass(frozen=True)
class TransferRef:
    """A call's streamed transfer, as the page reads it from the call frame."""

    id: str
    direction: str  # "upload" (the page reads chunks) or "download" (the page posts them)
    size: int | None
    path: str


@dataclass(frozen=True)
class TaskRecordFrame:
    """A task record another page (or this one) stored; the page keeps it unless it knows newer."""

    record: dict[str, Any]


@dataclass(frozen=True)
class CancelFrame:
    id: str


@dataclass(frozen=True)
class PairedFrame:
    """The server accepted the page; ``secret`` (after a pairing code) is what it shows from now on."""

    secret: str | None = None


@dataclass(frozen=True)
class SecretNamesFrame:
    """The names of the secrets the server holds (never their values)."""

    names: list[str]


@dataclass(frozen=True)
class SecretValueFrame:
    """The server's answer to the page's secret request ``id``: the value, or None when it has none."""

    id: str
    value: str | None = field(default=None, repr=False)


def secret_names_frame(names: list[str]) -> str:
    """server → page, after pairing: the names of the server's secrets."""
    return json.dumps({"type": "secrets", "names": sorted(names)})


def policy_frame(confirm: str) -> str:
    """server → page, after pairing: ``--confirm always`` (the person allows this server's clients'
    sensitive calls too)."""
    return json.dumps({"type": "policy", "confirm": confirm})


@dataclass(frozen=True)
class PolicyFrame:
    """The server's policy for its clients' calls: ``confirm`` is "always" or "agent"."""

    confirm: str


def secret_request_frame(request_id: str, name: str) -> str:
    """page → server: the value of the secret ``name``, please (the page is typing it now)."""
    return json.dumps({"type": "secret", "id": request_id, "name": name})


def secret_value_frame(request_id: str, value: str | None) -> str:
    """server → page: the answer to a secret request."""
    return json.dumps({"type": "secret", "id": request_id, "value": value}, ensure_ascii=False)


@dataclass(frozen=True)
class SecretRequest:
    """The page asks for the value of the secret ``name``."""

    id: str
    name: str


def parse_secret_request(text: str | bytes) -> SecretRequest | None:
    """A page frame that asks for a secret, as the server reads it; None for any other frame."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("type") != "secret":
        return None
    request_id, name = data.get("id"), data.get("name")
    if isinstance(request_id, str) and request_id and isinstance(name, str) and name:
        return SecretRequest(request_id, name)
    return None


def answer_frame(ask_id: str, answer: str) -> str:
    """server → page: the MCP client's user answered the page's question ``ask_id``."""
    return json.dumps({"type": "answer", "id": ask_id, "answer": answer})


@dataclass(frozen=True)
class AnswerFrame:
    """The caller's answer to the page's question ``id``: done, cancel, yes or no."""

    id: str
    answer: str


# What the page may ask a caller: a take over (done/cancel) or a confirmation (yes/no).
QUESTION_KINDS = ("takeover", "confirm")


ServerFrame = (
    AnswerFrame
    | CallFrame
    | CancelFrame
    | PairedFrame
    | TaskRecordFrame
    | SecretNamesFrame
    | SecretValueFrame
    | PolicyFrame
    | BadFrame
)


def parse_server_frame(text: str) -> ServerFrame:
    """A frame from the server as the page reads it; never raises."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError) as exc:
        return BadFrame(f"not JSON: {exc}")
    if not isinstance(data, dict):
        return BadFrame("not a JSON object")
    if data.get("type") == "paired" and "id" not in data:
        secret = data.get("secret")
        return PairedFrame(secret if isinstance(secret, str) and secret else None)
    if data.get("type") == "task" and "id" not in data:
        record = data.get("record")
        if not isinstance(record, dict) or not isinstance(record.get("taskId"), str):
            return BadFrame("a task frame without a record")
        return TaskRecordFrame(record)
    if data.get("type") == "policy" and "id" not in data:
        return PolicyFrame("always" if data.get("confirm") == "always" else "agent")
    if data.get("type") == "secrets" and "id" not in data:
        names = data.get("names")
        return SecretNamesFrame([n for n in names if isinstance(n, str)] if isinstance(names, list) else [])
    frame_id = data.get("id")
    if not isinstance(frame_id, str) or not frame_id:
        return BadFrame("no string id")
    if data.get("type") == "cancel":
        return CancelFrame(frame_id)
    if data.get("type") == "answer":
        answer = data.get("answer")
        if answer not in ("done", "cancel", "yes", "no"):
            return BadFrame(f"an answer frame with answer {answer!r}")
        return AnswerFrame(frame_id, answer)
    if data.get("type") == "secret":
        value = data.get("value")
        return SecretValueFrame(frame_id, value if isinstance(value, str) and value else None)
    if "type" in data:
        return BadFrame(f"unknown frame type {data['type']!r}", frame_id)
    tool = data.get("tool")
    if not isinstance(tool, str):
        return BadFrame("no tool name", frame_id)
    transfer = data.get("transfer")
    if transfer is None:
        return CallFrame(frame_id, tool, data.get("args"))
    ref = _transfer_ref(transfer)
    if ref is None:
        return BadFrame("a call with an unreadable transfer", frame_id)
    return CallFrame(frame_id, tool, data.get("args"), ref)


def _transfer_ref(value: Any) -> TransferRef | None:
    if not isinstance(value, dict):
        return None
    ref_id, direction, size, path = (value.get(key) for key in ("id", "direction", "size", "path"))
    if not isinstance(ref_id, str) or not ref_id or direction not in ("upload", "download"):
        return None
    if not isinstance(path, str) or not path.startswith("/") or path.startswith("//"):
        return None
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        return None
    return TransferRef(ref_id, direction, size, path)


# -- page → server ------------------------------------------------------------------------------


def result_frame(frame_id: str, result: dict[str, Any]) -> str:
    """page → server: call ``frame_id``'s answer."""
    return json.dumps({"id": frame_id, "result": result}, ensure_ascii=False)


def ask_frame(call_id: str, ask_id: str, kind: str, message: str) -> str:
    """page → server: ask call ``call_id``'s MCP client too (``kind`` takeover or confirm)."""
    return json.dumps(
        {"id": call_id, "type": "ask", "ask": ask_id, "kind": kind, "message": message}, ensure_ascii=False
    )


def withdraw_frame(call_id: str, ask_id: str) -> str:
    """page → server: question ``ask_id`` is answered (or over); stop asking the client."""
    return json.dumps({"id": call_id, "type": "withdraw", "ask": ask_id})


class ProgressSequence:
    """Numbers progress frames per request id, from 1."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def frame(self, frame_id: str, message: str) -> str:
        seq = self._next.get(frame_id, 1)
        self._next[frame_id] = seq + 1
        return json.dumps(
            {"id": frame_id, "type": "progress", "seq": seq, "message": message}, ensure_ascii=False
        )

    def forget(self, frame_id: str) -> None:
        self._next.pop(frame_id, None)


@dataclass(frozen=True)
class ResultFrame:
    """The page answered call ``id``."""

    id: str
    result: dict[str, Any]


@dataclass(frozen=True)
class ProgressFrame:
    """The page reports progress on call ``id``; ``seq`` is positive (its order is the core's to judge)."""

    id: str
    seq: int
    message: str


@dataclass(frozen=True)
class AskFrame:
    """The page asks call ``id``'s client: question ``ask`` of ``kind`` (takeover, confirm)."""

    id: str
    ask: str
    kind: str
    message: str


@dataclass(frozen=True)
class WithdrawFrame:
    """The page no longer needs an answer to question ``ask`` of call ``id``."""

    id: str
    ask: str


MAX_ASK_CHARS = 2000

PageFrame = ResultFrame | ProgressFrame | AskFrame | WithdrawFrame | BadFrame


def parse_page_frame(text: str | bytes) -> PageFrame:
    """A frame from the page as the server reads it; never raises. A bad frame keeps its id when it had a
    string one: the server first asks whether that id is still pending, then why the frame is bad."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
        return BadFrame("not JSON")
    if not isinstance(data, dict):
        return BadFrame(f"not a JSON object but {type(data).__name__}")
    call_id = data.get("id")
    if not isinstance(call_id, str):
        return BadFrame("no string id")
    kind = data.get("type")
    if kind == "progress":
        seq = data.get("seq")
        message = data.get("message")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            return BadFrame(f"progress for {call_id!r} without a positive integer seq", call_id)
        if not isinstance(message, str):
            return BadFrame(f"progress for {call_id!r} without a string message", call_id)
        return ProgressFrame(call_id, seq, message)
    if kind in ("ask", "withdraw"):
        ask_id = data.get("ask")
        if not isinstance(ask_id, str) or not ask_id:
            return BadFrame(f"{kind} for {call_id!r} without a string ask id", call_id)
        if kind == "withdraw":
            return WithdrawFrame(call_id, ask_id)
        ask_kind, message = data.get("kind"), data.get("message")
        if ask_kind not in QUESTION_KINDS or not isinstance(message, str) or not message:
            return BadFrame(f"ask for {call_id!r} needs kind {QUESTION_KINDS} and a message", call_id)
        return AskFrame(call_id, ask_id, ask_kind, message[:MAX_ASK_CHARS])
    if kind is not None:
        return BadFrame(f"unknown frame type {kind!r} for {call_id!r}", call_id)
    if "result" not in data:
        return BadFrame(f"frame for {call_id!r} has neither result nor type", call_id)
    result = data["result"]
    if not isinstance(result, dict):
        return BadFrame(f"result for {call_id!r} is not an object but {type(result).__name__}", call_id)
    return ResultFrame(call_id, result)


# -- where the page connects --------------------------------------------------------------------


@dataclass(frozen=True)
class RelaySettings:
    url: str
    retry_ms: int
    # Why a ``?relay=`` was not used, for the page's console; empty when it was, or when none was given.
    refused: str = ""
    # Whether the page's URL named its relay (``?relay=``, used): it then connects at load even when it
    # is a static page.
    named: bool = False


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def loopback_relay(url: str) -> bool:
    """Whether ``url`` is a ws:// or wss:// URL on this machine. The relay sends the page tool calls
    (screenshots, agent goals): a link in a web page must not be able to point it elsewhere."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("ws", "wss") and (parts.hostname or "") in LOOPBACK_HOSTS and parts.port != 0
    except ValueError:
        return False


def relay_settings(page_url: str, server_config: dict[str, Any] | None) -> RelaySettings:
    """Where the page's relay client connects, and how often it retries.

    ``?relay=ws://…`` on this machine wins (any other is refused and said so); a page served by
    phone-agent (``server_config`` from ``/api/config``) uses its own origin; any other page uses
    ws://localhost:7788 (a static page connects to it only when asked: ``named`` says whether the URL
    named a relay). ``?relayRetryMs=`` shortens the
    30 s retry (tests).
    """
    parts = urlsplit(page_url)
    query = parse_qs(parts.query)
    url = DEFAULT_RELAY_URL
    refused = ""
    named = False
    if server_config and server_config.get("server") == "phone-agent":
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{server_config.get('relay', '/relay')}"
    if query.get("relay"):
        wanted = query["relay"][0]
        if loopback_relay(wanted):
            url = wanted
            named = True
        else:
            refused = (
                f"?relay={wanted} is ignored: the relay must be a ws:// URL on this machine "
                "(127.0.0.1, localhost or [::1]), because it receives this page's screenshots and tasks"
            )
    retry_ms = DEFAULT_RETRY_MS
    if query.get("relayRetryMs"):
        try:
            retry_ms = max(100, int(query["relayRetryMs"][0]))
        except ValueError:
            pass
    return RelaySettings(url=url, retry_ms=retry_ms, refused=refused, named=named)
