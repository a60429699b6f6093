"""The simulated phone's file system: an in-memory tree with Android's usual directories.

It backs ``sync:`` (push, pull, ls, stat), the shell's ``cat``/``ls``/``rm``/``mkdir`` and
redirections, and is the ``FileStore`` the virtual UI writes its files into (``uiautomator dump``,
``screencap FILE``). Thread-safe: the shell and the UI's commands run in worker threads.
"""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

DEFAULT_DIRS = (
    "/sdcard",
    "/sdcard/Download",
    "/sdcard/DCIM",
    "/sdcard/Pictures",
    "/sdcard/Music",
    "/sdcard/Movies",
    "/sdcard/Documents",
    "/sdcard/Android",
    "/storage",
    "/data",
    "/data/local",
    "/data/local/tmp",
    "/data/data",
    "/data/system",
    "/system",
    "/system/bin",
    "/dev",
    "/vendor",
    "/proc",
)
SYSTEM_BINARIES = (
    "sh", "toybox", "ls", "cat", "echo", "rm", "mkdir", "touch", "grep", "head", "tail", "wc", "id",
    "uname", "date", "sleep", "which", "logcat",
)  # fmt: skip


@dataclass
class VirtualNode:
    """A file or directory. ``children`` is None for files; ``data`` is empty for directories."""

    mode: int
    mtime: int
    data: bytes = b""
    children: dict[str, VirtualNode] | None = None
    ino: int = 0

    @property
    def is_dir(self) -> bool:
        return self.children is not None

    @property
    def size(self) -> int:
        return 4096 if self.children is not None else len(self.data)


@dataclass(frozen=True)
class FileStat:
    """What ``stat`` reports about a path."""

    mode: int
    size: int
    mtime: int
    ino: int
    nlink: int = 1
    uid: int = 0
    gid: int = 0

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


@dataclass
class VirtualFileSystem:
    """An in-memory POSIX-ish tree. Paths are absolute; ``..`` and ``.`` are resolved lexically."""

    root: VirtualNode = field(init=False)
    _lock: threading.RLock = field(init=False, default_factory=threading.RLock)
    _next_ino: int = field(init=False, default=2)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Back to the default tree (the directories above, a few binaries in /system/bin)."""
        with self._lock:
            self.root = self._node(stat.S_IFDIR | 0o755, directory=True)
            for path in DEFAULT_DIRS:
                self.mkdir(path, parents=True, mode=0o771 if path.startswith("/sdcard") else 0o755)
            for name in SYSTEM_BINARIES:
                self.write_file(f"/system/bin/{name}", b"\x7fELF", mode=0o755)
            self.write_file("/data/system/packages.xml", b"<packages />\n", mode=0o640)

    def _node(self, mode: int, *, directory: bool = False, data: bytes = b"") -> VirtualNode:
        self._next_ino += 1
        return VirtualNode(mode, int(time.time()), data, {} if directory else None, self._next_ino)

    @staticmethod
    def normalize(path: str, cwd: str = "/") -> str:
        """Absolute, normalized form of ``path`` relative to ``cwd``."""
        joined = posixpath.join(cwd, path) if path else cwd
        normalized = posixpath.normpath(joined)
        return "/" if normalized.startswith("//") else normalized

    def _split(self, path: str) -> list[str]:
        return [part for part in self.normalize(path).split("/") if part]

    def _lookup(self, path: str) -> VirtualNode | None:
        node = self.root
        for part in self._split(path):
            if node.children is None:
                raise NotADirectoryError(path)
            child = node.children.get(part)
            if child is None:
                return None
            node = child
        return node

    def _parent(self, path: str) -> tuple[VirtualNode, str]:
        parts = self._split(path)
        if not parts:
            raise IsADirectoryError(path)
        parent = self._lookup("/" + "/".join(parts[:-1]))
        if parent is None:
            raise FileNotFoundError(path)
        if parent.children is None:
            raise NotADirectoryError(path)
        return parent, parts[-1]

    def stat(self, path: str) -> FileStat:
        """The path's mode, size, mtime; FileNotFoundError when missing."""
        with self._lock:
            node = self._lookup(path)
            if node is None:
                raise FileNotFoundError(path)
            nlink = 2 + sum(1 for c in node.children.values() if c.is_dir) if node.children is not None else 1
            return FileStat(node.mode, node.size, node.mtime, node.ino, nlink)

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def is_dir(self, path: str) -> bool:
        try:
            return self.stat(path).is_dir
        except (FileNotFoundError, NotADirectoryError):
            return False

    def read_file(self, path: str) -> bytes:
        """The file's bytes; FileNotFoundError / IsADirectoryError."""
        with self._lock:
            node = self._lookup(path)
            if node is None:
                raise FileNotFoundError(path)
            if node.children is not None:
                raise IsADirectoryError(path)
            return node.data

    def write_file(
        self, path: str, data: bytes, *, mode: int = 0o644, append: bool = False, mtime: int | None = None
    ) -> None:
        """Create or replace (or append to) a file; FileNotFoundError when the parent is missing."""
        with self._lock:
            parent, name = self._parent(path)
            node = parent.children.get(name)  # type: ignore[union-attr]
            if node is not None and node.children is not None:
                raise IsADirectoryError(path)
            if node is None:
                node = self._node(stat.S_IFREG | (mode & 0o7777), data=bytes(data))
                parent.children[name] = node  # type: ignore[index]
            else:
                node.data = node.data + bytes(data) if append else bytes(data)
            node.mtime = int(time.time()) if mtime is None else mtime

    def mkdir(self, path: str, *, parents: bool = False, mode: int = 0o771) -> None:
        """Create a directory; FileExistsError unless ``parents`` and it already is one."""
        with self._lock:
            parts = self._split(path)
            node = self.root
            for i, part in enumerate(parts):
                assert node.children is not None
                child = node.children.get(part)
                last = i == len(parts) - 1
                if child is None:
                    if not last and not parents:
                        raise FileNotFoundError(path)
                    child = self._node(stat.S_IFDIR | mode, directory=True)
                    node.children[part] = child
                elif child.children is None:
                    raise FileExistsError(path) if last else NotADirectoryError(path)
                elif last and not parents:
                    raise FileExistsError(path)
                node = child

    def list_dir(self, path: str) -> list[tuple[str, FileStat]]:
        """Entries of a directory, sorted by name (without ``.`` and ``..``)."""
        with self._lock:
            node = self._lookup(path)
            if node is None:
                raise FileNotFoundError(path)
            if node.children is None:
                raise NotADirectoryError(path)
            base = self.normalize(path)
            return [(name, self.stat(posixpath.join(base, name))) for name in sorted(node.children)]

    def remove(self, path: str, *, recursive: bool = False) -> None:
        """Delete a file, or a directory (empty, or any with ``recursive``)."""
        with self._lock:
            parent, name = self._parent(path)
            node = parent.children.get(name)  # type: ignore[union-attr]
            if node is None:
                raise FileNotFoundError(path)
            if node.children is not None and node.children and not recursive:
                raise IsADirectoryError(path)
            del parent.children[name]  # type: ignore[union-attr]

    def walk(self, path: str = "/") -> Iterator[str]:
        """Every path under ``path`` (for tests and the control interface)."""
        for name, info in self.list_dir(path):
            child = posixpath.join(self.normalize(path), name)
            yield child
            if info.is_dir:
                yield from self.walk(child)
