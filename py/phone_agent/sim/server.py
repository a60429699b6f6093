"""The simulated phone as a TCP adbd: accepts connections, keeps the trusted keys, owns the phone.

``SimulatedPhoneServer`` is what ``phone-agent sim`` (and ``serve --sim``) runs: a listening socket
whose connections each get an ``AdbdConnection``, one ``VirtualFileSystem`` and one virtual phone
shared by all of them, the set of RSA keys it trusts, and the keys waiting for approval
(``--auth prompt``). The control interface (``control.py``) reads and drives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from phone_agent.adb.connection import ConnectionState, Side, make_banner
from phone_agent.adb.keys import AdbPublicKey
from phone_agent.sim.connection import AdbdConnection, ServiceHandler
from phone_agent.sim.hierarchy_server import SimHierarchy
from phone_agent.sim.hostile import hostile_modes, hostile_tree
from phone_agent.sim.scrcpy_server.process import SimScrcpy
from phone_agent.sim.vfs import VirtualFileSystem

log = logging.getLogger("phone_agent.sim")

AuthMode = Literal["accept", "prompt", "none"]
T = TypeVar("T")
# Only what this adbd implements; the host uses a feature only when both sides list it.
FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "delayed_ack")
BANNER_PROPS = ("ro.product.name", "ro.product.model", "ro.product.device")


def local_adb_keys(environ: Mapping[str, str] | None = None) -> list[AdbPublicKey]:
    """The public keys of this computer's user's adb, from ``adbkey.pub`` where adb keeps it
    ($ANDROID_USER_HOME, $ANDROID_SDK_HOME/.android, $HOME/.android); unreadable ones are skipped."""
    env = os.environ if environ is None else environ
    places = [
        Path(env["ANDROID_USER_HOME"]) if env.get("ANDROID_USER_HOME") else None,
        Path(env["ANDROID_SDK_HOME"]) / ".android" if env.get("ANDROID_SDK_HOME") else None,
        Path(env["HOME"]) / ".android" if env.get("HOME") else None,
    ]
    keys: list[AdbPublicKey] = []
    for place in places:
        if place is None:
            continue
        try:
            keys.append(AdbPublicKey.decode((place / "adbkey.pub").read_bytes()))
        except (OSError, ValueError):  # AdbKeyError is one
            continue
    return keys


@dataclass
class PendingKey:
    """A public key a host offered, waiting for "Allow USB debugging?"."""

    key: AdbPublicKey
    connections: list[AdbdConnection] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        return {
            "fingerprint": self.key.fingerprint,
            "comment": self.key.comment,
            "connections": [c.number for c in self.connections],
        }


class SimulatedPhoneServer:
    """A network adbd for the virtual phone. ``await start()``, then ``port`` is the bound port."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 5555,
        serial: str | None = None,
        auth: AuthMode = "accept",
        control_port: int | None = None,
        *,
        phone: Any = None,
        fs: VirtualFileSystem | None = None,
        delayed_ack: bool = True,
        scrcpy: bool = False,
        hierarchy: bool | None = None,
        realistic: Any = None,
        hostile: Iterable[str] = (),
    ) -> None:
        if auth not in ("accept", "prompt", "none"):
            raise ValueError(f"auth must be accept, prompt or none, not {auth!r}")
        if phone is None:
            from phone_agent.sim.android.phone import VirtualPhone

            # realistic: a RealisticProfile (sim/realistic.py), the costs and behaviours of a real phone.
            phone = VirtualPhone(serial=serial or "PHAGSIM0001", realistic=realistic)
        self.host = host
        self.auth: AuthMode = auth
        # What a broken or malicious phone would send (sim/hostile.py): off unless asked by name.
        self.hostile: frozenset[str] = hostile_modes(hostile)
        self.phone = phone
        self.phone.hostile_tree = hostile_tree(self.hostile)
        self.fs = fs or VirtualFileSystem()
        self.trusted_keys: dict[str, AdbPublicKey] = {}
        self.pending: dict[str, PendingKey] = {}
        self._requested_port = port
        self._requested_control_port = control_port
        self._server: asyncio.Server | None = None
        self._control: Any = None
        self._connections: dict[int, AdbdConnection] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._count = 0
        self._features = FEATURES if delayed_ack else tuple(f for f in FEATURES if f != "delayed_ack")
        # Shell command lines run in worker threads (a PNG screencap takes tens of ms; `cat` may
        # wait for stdin): a pool of our own, so a few waiting shells never starve the others.
        self._executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="sim-shell")
        # scrcpy 2.5 under app_process: on for `phone-agent sim` and `serve --sim` (their --no-scrcpy
        # turns it off); off by default here, so a test phone is a screencap-only phone unless asked.
        self.scrcpy = SimScrcpy(self, enabled=scrcpy)
        # u2.jar's hierarchy server under app_process: where app_process runs (scrcpy on) unless told.
        self.hierarchy = SimHierarchy(self, enabled=scrcpy if hierarchy is None else hierarchy)

    @property
    def serial(self) -> str:
        return str(getattr(self.phone, "serial", "") or self.phone.props.get("ro.serialno", ""))

    @property
    def port(self) -> int:
        """The bound TCP port (after ``start``)."""
        if self._server is None or not self._server.sockets:
            return self._requested_port
        return self._server.sockets[0].getsockname()[1]

    @property
    def control_port(self) -> int | None:
        """The control endpoint's port, or None when it is off."""
        return self._control.port if self._control is not None else None

    async def start(self) -> None:
        """Listen for adb hosts (and start the control endpoint when a control port was given)."""
        self._server = await asyncio.start_server(self._accept, self.host, self._requested_port)
        if self._requested_control_port is not None:
            from phone_agent.sim.state_http import StateServer

            self._control = StateServer(self, port=self._requested_control_port)
            await self._control.start()
        log.debug(
            "simulated phone %s listening on %s:%d (auth %s)", self.serial, self.host, self.port, self.auth
        )

    async def close(self) -> None:
        """Stop listening and drop every connection."""
        if self._control is not None:
            await self._control.close()
            self._control = None
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections.values()):
            connection.abort("server closing")
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5.0)
            self._server = None
        self._executor.shutdown(wait=False, cancel_futures=True)
        motion = getattr(self.phone, "motion", None)
        if motion is not None:
            motion.close()

    async def run_blocking(self, function: Callable[..., T], *args: Any) -> T:
        """Run ``function(*args)`` in the sim's worker threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(function, *args))

    async def __aenter__(self) -> SimulatedPhoneServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._count += 1
        connection = AdbdConnection(self, reader, writer, self._count)
        self._connections[connection.number] = connection
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await connection.serve()
        except Exception:
            log.exception("connection %d crashed", connection.number)
        finally:
            self._connections.pop(connection.number, None)
            if task is not None:
                self._tasks.discard(task)

    def forget(self, connection: AdbdConnection) -> None:
        self._connections.pop(connection.number, None)
        for fingerprint, pending in list(self.pending.items()):
            if connection in pending.connections:
                pending.connections.remove(connection)
            if not pending.connections:
                del self.pending[fingerprint]

    # ----- what connections ask of the server

    @property
    def features(self) -> tuple[str, ...]:
        """The features this adbd lists in its banner."""
        return self._features

    def banner(self) -> str:
        """The CNXN banner: ``device::ro.product.name=…;ro.product.model=…;…;features=…``."""
        props = {key: self.phone.props.get(key, "") for key in BANNER_PROPS}
        return make_banner(Side.DEVICE, self._features, props)

    def service_for(self, name: str, connection: AdbdConnection) -> ServiceHandler | None:
        from phone_agent.sim.services import find_service

        return find_service(self, name)

    def verify_key(self, token: bytes, signature: bytes) -> AdbPublicKey | None:
        for key in self.trusted_keys.values():
            if key.verify(token, signature):
                return key
        if self.auth == "accept":
            # Like a phone already paired with this computer: the local user's adb key is known, so
            # the first ``adb connect`` says "connected to" (any other key is trusted once offered).
            for key in local_adb_keys():
                if key.verify(token, signature):
                    log.info("trusting this computer's adb key %s", key.fingerprint)
                    self.trust_key(key)
                    return key
        return None

    def offer_key(self, key: AdbPublicKey, connection: AdbdConnection) -> bool:
        """A host sent its public key: True to go online now, False to wait for approval."""
        if key.fingerprint in self.trusted_keys:
            return True
        if self.auth == "accept":
            self.trust_key(key)
            return True
        pending = self.pending.setdefault(key.fingerprint, PendingKey(key))
        if connection not in pending.connections:
            pending.connections.append(connection)
        where = (
            f": curl -X POST http://127.0.0.1:{self.control_port}/auth/approve"
            if self.control_port is not None
            else " (approve() in Python, or start with --control-port)"
        )
        log.info("key %s (%s) waits for approval%s", key.fingerprint, key.comment, where)
        return False

    # ----- control API

    def trust_key(self, key: AdbPublicKey) -> None:
        """Add ``key`` to the trusted keys (as if it were in /data/misc/adb/adb_keys)."""
        self.trusted_keys[key.fingerprint] = key

    def approve(self, fingerprint: str | None = None) -> list[str]:
        """Allow the pending key (or all of them): trust it and bring its connections online."""
        approved = []
        for fp in [fingerprint] if fingerprint else list(self.pending):
            pending = self.pending.pop(fp, None) if fp else None
            if pending is None:
                continue
            self.trust_key(pending.key)
            for connection in pending.connections:
                connection.authorize()
            approved.append(fp)
        return approved

    def deny(self, fingerprint: str | None = None) -> list[str]:
        """Refuse the pending key (or all): its connections stay unauthorized, as on a phone."""
        denied = []
        for fp in [fingerprint] if fingerprint else list(self.pending):
            if fp and self.pending.pop(fp, None) is not None:
                denied.append(fp)
        return denied

    def pending_keys(self) -> list[dict[str, Any]]:
        return [pending.describe() for pending in self.pending.values()]

    def connections(self) -> list[dict[str, Any]]:
        return [c.describe() for c in self._connections.values()]

    def online_connections(self) -> int:
        return sum(1 for c in self._connections.values() if c.state is ConnectionState.ONLINE)

    def set_hostile(self, modes: Iterable[str]) -> list[str]:
        """Answer as a hostile phone in these ways from now on (``[]``: a good phone again)."""
        self.hostile = hostile_modes(modes)
        self.phone.hostile_tree = hostile_tree(self.hostile)
        return sorted(self.hostile)

    def state(self) -> dict[str, Any]:
        """Everything the control interface shows: the phone's own state plus the adbd's."""
        return {
            "serial": self.serial,
            "port": self.port,
            "auth": self.auth,
            "features": list(self._features),
            "connections": self.connections(),
            "pending_keys": self.pending_keys(),
            "trusted_keys": [
                {"fingerprint": k.fingerprint, "comment": k.comment} for k in self.trusted_keys.values()
            ],
            "phone": self.phone.state(),
            "realistic": self.realistic_profile(),
            "hostile": sorted(self.hostile),
        }

    def realistic_profile(self) -> dict[str, Any] | None:
        """The --realistic profile (its seed and costs), or None for the instant phone."""
        motion = getattr(self.phone, "motion", None)
        return None if motion is None else motion.profile.describe()

    def reset(self) -> None:
        """Put the phone and its files back to the initial state (connections and keys stay)."""
        self.phone.reset()
        self.fs.reset()
