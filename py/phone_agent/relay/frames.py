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
The close codes the server uses towards a page are here too; where the page's relay client connects
and how it retries is ``relay.settings``.

Each frame is one class (python-websockets' ``Frame`` is the model): its fields, ``to_wire`` (its text)
and ``from_wire`` (reading it back), side by side; the readers at the end find a frame's class by its
``type`` in small tables. Pure: text in, frames out, text to send. The page's WebSocket adapter
(``browser.relay_client``), the server's core (``relay.core``) and its asyncio front end
(``server.relay``), the pairing gate and the farm only move these strings; none of them builds or reads
a frame's JSON itself.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

# WebSocket close codes the server uses towards a page (4000–4999 are free for applications).
# The close code the server sends to a page that a newer page replaced. That page stops retrying on its
# own (two open tabs would otherwise take the relay from each other every 30 s) until a person asks.
CLOSE_REPLACED = 4000
CLOSE_REPLACED_REASON = "replaced by a newer phone-agent page"
# The close code for a page that did not pair (no secret, a wrong one, a wrong code).
CLOSE_UNPAIRED = 4401
CLOSE_SHUTDOWN = 1001
CLOSE_SHUTDOWN_REASON = "phone-agent is shutting down"


# -- what a frame is ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BadFrame:
    """A frame its receiver cannot act on; ``id`` is set when the frame named one, so it can be answered."""

    reason: str
    id: str | None = None


class RelayFrame(ABC):
    """One frame of the relay, as python-websockets' ``Frame`` is one WebSocket frame: ``to_wire`` writes
    it (the text that goes on the socket), the class's ``from_wire`` reads it back from the frame's JSON
    object (a ``BadFrame`` when a field is unusable). ``TYPE`` is the frame's ``type`` on the wire (None
    for the two frames that have none: a call and its result); the readers at the end find the class by it.
    """

    TYPE: ClassVar[str | None] = None
    # Frames that carry a person's or a model's text write it as it is; the others escape non-ASCII.
    ESCAPE_NON_ASCII: ClassVar[bool] = True

    @abstractmethod
    def wire(self) -> dict[str, Any]:
        """The frame's JSON object, its keys in wire order."""

    def to_wire(self) -> str:
        """The frame's text on the socket."""
        return json.dumps(self.wire(), ensure_ascii=self.ESCAPE_NON_ASCII)

    @classmethod
    @abstractmethod
    def from_wire(cls, data: dict[str, Any]) -> Self | BadFrame:
        """The frame read from its JSON object (whose ``type``, and ``id`` where it has one, the reader
        has checked already)."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _nonempty(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# -- pairing: page → server, first; and the server's answer ---------------------------------------


@dataclass(frozen=True)
class HelloFrame(RelayFrame):
    """page → server, first: the pairing secret (None when the frame's is not a string)."""

    TYPE = "hello"
    secret: str | None

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "secret": self.secret}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> HelloFrame:
        return cls(_text(data.get("secret")))


@dataclass(frozen=True)
class PairFrame(RelayFrame):
    """page → server, first: the pairing code the server's console shows (None when not a string)."""

    TYPE = "pair"
    code: str | None

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "code": self.code}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PairFrame:
        return cls(_text(data.get("code")))


@dataclass(frozen=True)
class PairedFrame(RelayFrame):
    """server → page: the page is in; ``secret`` (after a pairing code) is the one to remember."""

    TYPE = "paired"
    secret: str | None = None

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE} if self.secret is None else {"type": self.TYPE, "secret": self.secret}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PairedFrame:
        return cls(_nonempty(data.get("secret")))


# -- server → page ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransferRef:
    """A call's streamed transfer (``server.transfers``): its file moves in chunks over HTTP on the relay's
    origin instead of inline. Part of a call frame, not a frame itself."""

    id: str
    direction: str  # "upload" (the page reads chunks) or "download" (the page posts them)
    size: int | None
    path: str

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "direction": self.direction, "size": self.size, "path": self.path}

    @classmethod
    def from_wire(cls, value: Any) -> TransferRef | None:
        """The transfer a call names; None when it is unreadable (or its path leaves the relay's origin)."""
        if not isinstance(value, dict):
            return None
        ref_id, direction, size, path = (value.get(key) for key in ("id", "direction", "size", "path"))
        if not isinstance(ref_id, str) or not ref_id or direction not in ("upload", "download"):
            return None
        if not isinstance(path, str) or not path.startswith("/") or path.startswith("//"):
            return None
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            return None
        return cls(ref_id, direction, size, path)


# The ``_meta`` key of a tools/call that says who made it, and the callers it may name (an MCP App
# view's calls are shown as the app's on the page; any other value is ignored).
CALLER_META = "phone-agent/caller"
META_CALLERS = frozenset({"app"})


@dataclass(frozen=True)
class CallFrame(RelayFrame):
    """server → page: one tool call (``transfer`` when its file streams in chunks; ``caller`` when the
    MCP request said who made it in its ``_meta``, ``CALLER_META``: an MCP App view's "app")."""

    ESCAPE_NON_ASCII = False
    id: str
    tool: str
    args: Any
    transfer: TransferRef | None = None
    caller: str | None = None

    def wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {"id": self.id, "tool": self.tool, "args": self.args}
        if self.transfer is not None:
            frame["transfer"] = self.transfer.wire()
        if self.caller is not None:
            frame["caller"] = self.caller
        return frame

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CallFrame | BadFrame:
        frame_id, tool, transfer = data["id"], data.get("tool"), data.get("transfer")
        caller = data.get("caller") if data.get("caller") in META_CALLERS else None
        if not isinstance(tool, str):
            return BadFrame("no tool name", frame_id)
        if transfer is None:
            return cls(frame_id, tool, data.get("args"), caller=caller)
        ref = TransferRef.from_wire(transfer)
        if ref is None:
            return BadFrame("a call with an unreadable transfer", frame_id)
        return cls(frame_id, tool, data.get("args"), ref, caller)


@dataclass(frozen=True)
class CancelFrame(RelayFrame):
    """server → page: stop working on call ``id`` (nobody waits for its answer any more)."""

    TYPE = "cancel"
    id: str

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.TYPE}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CancelFrame:
        return cls(data["id"])


@dataclass(frozen=True)
class TaskRecordFrame(RelayFrame):
    """server → page: an agent task's record as a page of this server last stored it (the server keeps
    them, so a page that replaces another answers the same record: one truth across tabs and browsers);
    the page keeps it unless it knows newer."""

    TYPE = "task"
    ESCAPE_NON_ASCII = False
    record: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "record": self.record}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> TaskRecordFrame | BadFrame:
        record = data.get("record")
        if not isinstance(record, dict) or not isinstance(record.get("taskId"), str):
            return BadFrame("a task frame without a record")
        return cls(record)


@dataclass(frozen=True)
class PolicyFrame(RelayFrame):
    """server → page, after pairing: ``confirm`` "always" (``--confirm always``: the person allows this
    server's clients' sensitive calls too) or "agent"."""

    TYPE = "policy"
    confirm: str

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "confirm": self.confirm}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PolicyFrame:
        return cls("always" if data.get("confirm") == "always" else "agent")


@dataclass(frozen=True)
class SecretNamesFrame(RelayFrame):
    """server → page, after pairing: the names of the server's secrets (never their values)."""

    TYPE = "secrets"
    names: list[str]

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "names": sorted(self.names)}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SecretNamesFrame:
        names = data.get("names")
        return cls([n for n in names if isinstance(n, str)] if isinstance(names, list) else [])


@dataclass(frozen=True)
class SecretValueFrame(RelayFrame):
    """server → page: the answer to the page's secret request ``id``: the value, or None when it has none."""

    TYPE = "secret"
    ESCAPE_NON_ASCII = False
    id: str
    value: str | None = field(default=None, repr=False)

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "id": self.id, "value": self.value}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SecretValueFrame:
        return cls(data["id"], _nonempty(data.get("value")))


# What a caller may answer the page's question: a take over's done/cancel, a confirmation's yes/no.
ANSWERS = ("done", "cancel", "yes", "no")
# What the page may ask a caller: a take over (done/cancel) or a confirmation (yes/no).
QUESTION_KINDS = ("takeover", "confirm")


@dataclass(frozen=True)
class AnswerFrame(RelayFrame):
    """server → page: the MCP client's user answered the page's question ``id``: done, cancel, yes or no."""

    TYPE = "answer"
    id: str
    answer: str

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "id": self.id, "answer": self.answer}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> AnswerFrame | BadFrame:
        answer = data.get("answer")
        if answer not in ANSWERS:
            return BadFrame(f"an answer frame with answer {answer!r}")
        return cls(data["id"], answer)


# -- page → server ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultFrame(RelayFrame):
    """page → server: call ``id``'s answer (a CallToolResult, wire form)."""

    ESCAPE_NON_ASCII = False
    id: str
    result: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "result": self.result}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ResultFrame | BadFrame:
        call_id = data["id"]
        if "result" not in data:
            return BadFrame(f"frame for {call_id!r} has neither result nor type", call_id)
        result = data["result"]
        if not isinstance(result, dict):
            return BadFrame(f"result for {call_id!r} is not an object but {type(result).__name__}", call_id)
        return cls(call_id, result)


@dataclass(frozen=True)
class ProgressFrame(RelayFrame):
    """page → server: progress on call ``id``; ``seq`` is positive (its order is the core's to judge)."""

    TYPE = "progress"
    ESCAPE_NON_ASCII = False
    id: str
    seq: int
    message: str

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.TYPE, "seq": self.seq, "message": self.message}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ProgressFrame | BadFrame:
        call_id, seq, message = data["id"], data.get("seq"), data.get("message")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            return BadFrame(f"progress for {call_id!r} without a positive integer seq", call_id)
        if not isinstance(message, str):
            return BadFrame(f"progress for {call_id!r} without a string message", call_id)
        return cls(call_id, seq, message)


class ProgressSequence:
    """Numbers progress frames per request id, from 1."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def frame(self, frame_id: str, message: str) -> str:
        seq = self._next.get(frame_id, 1)
        self._next[frame_id] = seq + 1
        return ProgressFrame(frame_id, seq, message).to_wire()

    def forget(self, frame_id: str) -> None:
        self._next.pop(frame_id, None)


MAX_ASK_CHARS = 2000


@dataclass(frozen=True)
class AskFrame(RelayFrame):
    """page → server: ask call ``id``'s MCP client too: question ``ask`` of ``kind`` (takeover, confirm)."""

    TYPE = "ask"
    ESCAPE_NON_ASCII = False
    id: str
    ask: str
    kind: str
    message: str

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.TYPE, "ask": self.ask, "kind": self.kind, "message": self.message}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> AskFrame | BadFrame:
        call_id, ask_id = data["id"], _ask_id(data)
        if ask_id is None:
            return BadFrame(f"ask for {call_id!r} without a string ask id", call_id)
        kind, message = data.get("kind"), data.get("message")
        if kind not in QUESTION_KINDS or not isinstance(message, str) or not message:
            return BadFrame(f"ask for {call_id!r} needs kind {QUESTION_KINDS} and a message", call_id)
        return cls(call_id, ask_id, kind, message[:MAX_ASK_CHARS])


@dataclass(frozen=True)
class WithdrawFrame(RelayFrame):
    """page → server: question ``ask`` of call ``id`` is answered (or over); stop asking the client."""

    TYPE = "withdraw"
    id: str
    ask: str

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.TYPE, "ask": self.ask}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> WithdrawFrame | BadFrame:
        call_id, ask_id = data["id"], _ask_id(data)
        if ask_id is None:
            return BadFrame(f"withdraw for {call_id!r} without a string ask id", call_id)
        return cls(call_id, ask_id)


def _ask_id(data: dict[str, Any]) -> str | None:
    return _nonempty(data.get("ask"))


@dataclass(frozen=True)
class SecretRequestFrame(RelayFrame):
    """page → server: the value of the secret ``name``, please (the page is typing it now)."""

    TYPE = "secret"
    id: str
    name: str

    def wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "id": self.id, "name": self.name}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SecretRequestFrame | BadFrame:
        request_id, name = _nonempty(data.get("id")), _nonempty(data.get("name"))
        if request_id is None or name is None:
            return BadFrame("a secret request needs an id and a name")
        return cls(request_id, name)


# -- reading: which class a frame is, by its ``type`` ---------------------------------------------


def _by_type(*classes: type[RelayFrame]) -> dict[str, type[RelayFrame]]:
    return {cls.TYPE: cls for cls in classes if cls.TYPE is not None}


# The page's first frame.
FIRST_FRAMES = _by_type(HelloFrame, PairFrame)
# server → page: the notices that name no call (read only without an ``id``) …
SERVER_NOTICES = _by_type(PairedFrame, TaskRecordFrame, PolicyFrame, SecretNamesFrame)
# … and the frames about a call or a question (an ``id`` first); a frame without a ``type`` is a call.
SERVER_FRAMES = _by_type(CancelFrame, AnswerFrame, SecretValueFrame)
# page → server, each about a call (an ``id`` first); a frame without a ``type`` is a result.
PAGE_FRAMES = _by_type(ProgressFrame, AskFrame, WithdrawFrame)


def _frame_class(table: dict[str, type[RelayFrame]], kind: object) -> type[RelayFrame] | None:
    return table.get(kind) if isinstance(kind, str) else None


def _load(text: str | bytes | None) -> tuple[Any, str]:
    """The JSON in ``text``, or why there is none (RecursionError: absurdly nested JSON)."""
    try:
        return json.loads(text), ""  # type: ignore[arg-type]
    except (ValueError, TypeError, RecursionError) as exc:
        return None, str(exc) or type(exc).__name__


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
PageFrame = ResultFrame | ProgressFrame | AskFrame | WithdrawFrame | BadFrame


def parse_first_frame(text: str | bytes | None) -> HelloFrame | PairFrame | None:
    """The page's first frame as the server reads it; None for no frame, or one neither hello nor pair."""
    data, _ = _load(text) if text is not None else (None, "")
    frame_class = _frame_class(FIRST_FRAMES, data.get("type")) if isinstance(data, dict) else None
    return frame_class.from_wire(data) if frame_class is not None else None  # type: ignore[return-value]


def parse_server_frame(text: str | bytes) -> ServerFrame:
    """A frame from the server as the page reads it; never raises."""
    data, error = _load(text)
    if error:
        return BadFrame(f"not JSON: {error}")
    if not isinstance(data, dict):
        return BadFrame("not a JSON object")
    notice = _frame_class(SERVER_NOTICES, data.get("type")) if "id" not in data else None
    if notice is not None:
        return notice.from_wire(data)  # type: ignore[return-value]
    frame_id = data.get("id")
    if not isinstance(frame_id, str) or not frame_id:
        return BadFrame("no string id")
    if "type" not in data:
        return CallFrame.from_wire(data)
    frame_class = _frame_class(SERVER_FRAMES, data["type"])
    if frame_class is None:
        return BadFrame(f"unknown frame type {data['type']!r}", frame_id)
    return frame_class.from_wire(data)  # type: ignore[return-value]


def parse_page_frame(text: str | bytes) -> PageFrame:
    """A frame from the page as the server reads it; never raises. A bad frame keeps its id when it had a
    string one: the server first asks whether that id is still pending, then why the frame is bad."""
    data, error = _load(text)
    if error:
        return BadFrame("not JSON")
    if not isinstance(data, dict):
        return BadFrame(f"not a JSON object but {type(data).__name__}")
    call_id, kind = data.get("id"), data.get("type")
    if not isinstance(call_id, str):
        return BadFrame("no string id")
    if kind is None:
        return ResultFrame.from_wire(data)
    frame_class = _frame_class(PAGE_FRAMES, kind)
    if frame_class is None:
        return BadFrame(f"unknown frame type {kind!r} for {call_id!r}", call_id)
    return frame_class.from_wire(data)  # type: ignore[return-value]


def parse_secret_request(text: str | bytes) -> SecretRequestFrame | None:
    """A page frame that asks for a secret, as the server reads it (before the relay's core, which knows
    only calls); None for any other frame."""
    data, _ = _load(text)
    if not isinstance(data, dict) or data.get("type") != SecretRequestFrame.TYPE:
        return None
    frame = SecretRequestFrame.from_wire(data)
    return frame if isinstance(frame, SecretRequestFrame) else None
