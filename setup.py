"""The wheel carries the page: ``build_py`` copies the page's files (index.html, pyscript.toml, py/main.py,
static/) into the package as ``phone_agent/page/``, with the browser runtime that scripts/vendoring.py
declares (fetched from npm and PyPI at build time, checked, each part's license beside it). A build that
cannot vendor fails with the reason: there is never a wheel without its page.

An editable install (scripts/setup) copies nothing: a checkout serves its working tree. Everything else
is in pyproject.toml.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PAGE_FILES = ("index.html", "pyscript.toml", "py/main.py")
PAGE_TREES = ("static",)
SKIPPED = shutil.ignore_patterns("vendor", "__pycache__", ".*")


class BuildPyWithPage(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        sys.path.insert(0, str(HERE / "scripts"))
        try:
            import vendoring
        finally:
            sys.path.pop(0)
        page = Path(self.build_lib) / "phone_agent" / "page"
        if page.exists():
            shutil.rmtree(page)
        for name in PAGE_FILES:
            (page / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(HERE / name, page / name)
        for tree in PAGE_TREES:
            shutil.copytree(HERE / tree, page / tree, ignore=SKIPPED)
        checkout_vendor = HERE / "static" / "vendor"

        def say(line: str) -> None:
            print(f"phone-agent: {line}")

        try:
            vendoring.ensure_vendored(checkout_vendor, HERE, say=say)
        except vendoring.VendoringError as exc:
            raise SystemExit(
                "phone-agent: cannot build the wheel: the page's browser runtime could not be vendored:\n"
                f"  {exc}"
            ) from None
        shutil.copytree(checkout_vendor, page / "static" / "vendor", ignore=shutil.ignore_patterns(".*"))
        gone = vendoring.missing(page / "static" / "vendor")
        if gone:
            raise SystemExit(f"phone-agent: cannot build the wheel: the page lacks {', '.join(gone)}")


setup(cmdclass={"build_py": BuildPyWithPage})
