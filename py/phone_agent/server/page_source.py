"""Where the page's files are: a checkout's working tree, or the page a wheel carries.

A checkout (the package imported from ``py/`` beside ``index.html``) serves its working tree, as in
development. An installed package serves ``phone_agent/page/`` (index.html, pyscript.toml, py/main.py,
static/ with the vendored runtime: setup.py puts it there) and the page's Python modules from the
package itself (``/py/phone_agent/…``), so a wheel holds each module once. ``--root DIR`` serves DIR,
e.g. a folder ``phone-agent site`` wrote.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

PACKAGE_DIR = Path(__file__).resolve().parents[1]
INSTALLED_PAGE = PACKAGE_DIR / "page"
MODULES_PREFIX = ("py", "phone_agent")


def checkout_root() -> Path | None:
    """The repository root when this package runs from a checkout (``py/phone_agent``), else None."""
    root = PACKAGE_DIR.parents[1]
    if PACKAGE_DIR.parent.name == "py" and (root / "index.html").is_file():
        return root
    return None


def default_page_root() -> Path:
    """The checkout's working tree, else the page inside the installed package."""
    return checkout_root() or INSTALLED_PAGE


def modules_dir(root: Path) -> Path:
    """Where ``/py/phone_agent/…`` comes from: the root's own copy, else this package."""
    own = root.joinpath(*MODULES_PREFIX)
    return own if own.is_dir() else PACKAGE_DIR


def mount_for(root: Path, relative: PurePosixPath) -> tuple[Path, PurePosixPath]:
    """The directory a page path lives under and the path inside it."""
    if relative.parts[: len(MODULES_PREFIX)] == MODULES_PREFIX:
        base = modules_dir(root)
        if base != root.joinpath(*MODULES_PREFIX):
            return base, PurePosixPath(*relative.parts[len(MODULES_PREFIX) :])
    return root, relative


def missing_page(root: Path) -> str | None:
    """Why there is no page under ``root`` to serve (the server then refuses to start), or None."""
    if (root / "index.html").is_file():
        return None
    if root == INSTALLED_PAGE:
        return (
            "this phone-agent install has no page (phone_agent/page/index.html is missing: a package built "
            "without its page); reinstall phone-agent-mcp from the package index"
        )
    return f"{root} has no index.html: there is no page to serve there (wrong --root?)"


def missing_runtime(root: Path) -> str | None:
    """Why the page under ``root`` would not boot (no vendored Pyodide), or None."""
    if (root / "static" / "vendor" / "pyodide" / "pyodide.asm.wasm").is_file():
        return None
    return f"{root} has no static/vendor/pyodide: run scripts/setup to vendor the runtime"
