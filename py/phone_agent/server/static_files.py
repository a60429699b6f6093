"""Serving the page: a fixed set of the page's files (``page_source`` says where they are), the right MIME
types and cache headers.

Only ``index.html``, ``pyscript.toml`` and the trees ``py/`` and ``static/`` are served — no directory
listings, no dotfiles, no ``__pycache__``, nothing outside the root. ``static/vendor/`` (Pyodide,
PyScript; versioned by the npm lock) is cached for a day so a reload does not fetch the 9.6 MB wasm
again; everything else is revalidated on each load (``no-cache`` + ETag → 304).
"""

from __future__ import annotations

import mimetypes
import os
import stat
from datetime import UTC
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path, PurePosixPath

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from .page_source import mount_for

TOP_LEVEL_FILES = frozenset({"index.html", "pyscript.toml"})
TOP_LEVEL_DIRS = frozenset({"py", "static"})
LONG_CACHE_PREFIX = ("static", "vendor")
LONG_CACHE = "public, max-age=86400"
REVALIDATE = "no-cache"

# Explicit because the system's mimetypes tables differ between machines (.mjs, .wasm, .toml).
MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".toml": "text/plain; charset=utf-8",
    ".py": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".tar": "application/x-tar",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}


def mime_type(path: PurePosixPath | Path) -> str:
    suffix = path.suffix.lower()
    if suffix in MIME_TYPES:
        return MIME_TYPES[suffix]
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def page_relative_path(url_path: str) -> PurePosixPath | None:
    """The repository-relative path a URL path may name, or None when it names nothing servable."""
    if url_path in ("", "/"):
        return PurePosixPath("index.html")
    if not url_path.startswith("/") or "\\" in url_path or "\x00" in url_path:
        return None
    segments = url_path[1:].split("/")
    for segment in segments:
        # Empty segments (//, a trailing /) would name directories; dot segments walk or hide.
        if (
            not segment
            or segment.startswith(".")
            or segment == "__pycache__"
            or segment.endswith(".egg-info")
        ):
            return None
    if len(segments) == 1:
        return PurePosixPath(segments[0]) if segments[0] in TOP_LEVEL_FILES else None
    if segments[0] not in TOP_LEVEL_DIRS:
        return None
    return PurePosixPath(*segments)


def resolve_page_file(root: Path, url_path: str) -> tuple[PurePosixPath, Path, os.stat_result] | None:
    """The file behind ``url_path`` under ``root``: its relative path, real path and stat; or None."""
    relative = page_relative_path(url_path)
    if relative is None:
        return None
    base, inside = mount_for(root, relative)
    real_root = base.resolve()
    candidate = real_root.joinpath(*inside.parts)
    try:
        real = candidate.resolve(strict=True)
        info = real.stat()
    except (OSError, RuntimeError):
        return None
    # A symlink must not lead out of the root.
    if not real.is_relative_to(real_root) or not stat.S_ISREG(info.st_mode):
        return None
    return relative, real, info


def cache_control(relative: PurePosixPath) -> str:
    return LONG_CACHE if relative.parts[: len(LONG_CACHE_PREFIX)] == LONG_CACHE_PREFIX else REVALIDATE


def etag(info: os.stat_result) -> str:
    return f'"{info.st_mtime_ns:x}-{info.st_size:x}"'


def _not_modified(request: Request, tag: str, info: os.stat_result) -> bool:
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return tag in tags or "*" in tags
    if_modified_since = request.headers.get("if-modified-since")
    if if_modified_since:
        try:
            when = parsedate_to_datetime(if_modified_since)
            if when.tzinfo is None:  # "-0000": HTTP dates are UTC
                when = when.replace(tzinfo=UTC)
            since = when.timestamp()
        except (TypeError, ValueError, OverflowError, IndexError):
            return False
        return int(info.st_mtime) <= since
    return False


# The page offers the phone to whoever drives it: no other site may frame it (clickjacking), nothing
# is sniffed into another type.
NO_FRAMING = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
}


def not_found() -> Response:
    return PlainTextResponse("Not found\n", status_code=404, headers={"Cache-Control": REVALIDATE})


class PageFiles:
    """The page's files under ``root``; ``handle`` is the Starlette endpoint."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def handle(self, request: Request) -> Response:
        found = resolve_page_file(self.root, request.url.path)
        if found is None:
            return not_found()
        relative, real, info = found
        tag = etag(info)
        headers = {
            "Cache-Control": cache_control(relative),
            "ETag": tag,
            "Last-Modified": formatdate(info.st_mtime, usegmt=True),
            **NO_FRAMING,
        }
        if _not_modified(request, tag, info):
            return Response(status_code=304, headers=headers)
        return FileResponse(real, headers=headers, media_type=mime_type(relative), stat_result=info)
