"""``phone-agent site DIR``: the page as static files that boot from any static host (GitHub Pages, a CDN,
``python -m http.server``) with no server of ours.

It writes what the page loads: ``index.html``, ``pyscript.toml``, ``py/main.py``, the page's Python
modules that pyscript.toml lists, and ``static/`` with the vendored runtime and each part's license,
taken from where ``phone-agent serve`` takes them (a checkout's working tree, or the page the installed
package carries). Such a page has no ``/api/config``: WebMCP and WebUSB work there, and it pairs with a
local ``phone-agent`` only when the person asks (``--allow-origin`` for its origin, and the pairing code).
``.nojekyll`` keeps GitHub Pages from hiding ``__init__.py`` files; ``api/config`` tells the page it is
static.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from .page_source import missing_page, missing_runtime, modules_dir

TOP_FILES = ("index.html", "pyscript.toml", "py/main.py")
MODULE_PREFIX = "./py/phone_agent/"


class SiteError(Exception):
    """The site cannot be written; the message is the one line to print."""


@dataclass(frozen=True)
class SiteReport:
    folder: Path
    files: int
    size: int


def page_modules(root: Path) -> list[str]:
    """The page's Python modules (relative to py/phone_agent), as pyscript.toml's [files] lists them."""
    config = tomllib.loads((root / "pyscript.toml").read_text())
    return sorted(
        source[len(MODULE_PREFIX) :] for source in config.get("files", {}) if source.startswith(MODULE_PREFIX)
    )


def site_files(root: Path) -> dict[str, Path]:
    """Every file of the site: its path in the site -> where it comes from."""
    files = {name: root / name for name in TOP_FILES}
    modules = modules_dir(root)
    for module in page_modules(root):
        files[f"py/phone_agent/{module}"] = modules / module
    static = root / "static"
    for path in sorted(static.rglob("*")):
        relative = path.relative_to(root)
        hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
        if path.is_file() and not hidden:
            files[relative.as_posix()] = path
    return files


def write_site(folder: Path, root: Path, force: bool = False) -> SiteReport:
    """Write the page under ``root`` into ``folder`` as static files; SiteError says why it cannot."""
    problem = missing_page(root) or missing_runtime(root)
    if problem:
        raise SiteError(problem)
    if folder.exists() and not folder.is_dir():
        raise SiteError(f"{folder} is a file, not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise SiteError(f"{folder} is not empty: choose an empty folder, or pass --force to write over it")
    files = site_files(root)
    missing = sorted(name for name, source in files.items() if not source.is_file())
    if missing:
        raise SiteError(f"the page lacks {', '.join(missing[:5])}")
    size = 0
    for name, source in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        size += target.stat().st_size
    (folder / ".nojekyll").write_text("")
    # What the page asks first (``/api/config``): here a file that says no phone-agent serves this page,
    # so the page knows it is static without a 404 in its console.
    (folder / "api").mkdir(exist_ok=True)
    (folder / "api" / "config").write_text(json.dumps({"server": "static", "version": __version__}) + "\n")
    return SiteReport(folder, len(files), size)
