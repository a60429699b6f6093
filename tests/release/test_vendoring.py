"""The vendoring table (scripts/vendoring.py) and the build that uses it fail loudly: a wheel built
where npm cannot vendor the page fails with the reason, never a wheel without its page."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support import ROOT


def _vendoring():
    spec = importlib.util.spec_from_file_location("vendoring", ROOT / "scripts" / "vendoring.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vendoring"] = module
    spec.loader.exec_module(module)
    return module


def test_every_part_of_the_table_is_vendored_with_its_license_in_the_checkout():
    vendoring = _vendoring()
    vendor = ROOT / "static" / "vendor"
    assert vendoring.missing(vendor) == []
    # The stamp says: vendored by this table from this npm lock.
    assert vendoring.up_to_date(vendor), "static/vendor is older than its table or lock: run scripts/setup"
    for part in vendoring.PARTS:
        assert (vendor / part.name / "LICENSE").stat().st_size > 500, part.name
    assert vendoring.missing(Path("/nonexistent")) != []


def test_without_npm_vendoring_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    vendoring = _vendoring()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(vendoring.VendoringError, match="npm is not installed"):
        vendoring.ensure_vendored(tmp_path / "static" / "vendor", tmp_path, say=lambda _line: None)


def test_a_wheel_built_where_npm_cannot_vendor_the_page_fails_with_the_reason(tmp_path: Path):
    sdist_dir = tmp_path / "sdist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(sdist_dir), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (sdist,) = sdist_dir.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    (source,) = (tmp_path / "src").iterdir()
    assert not (source / "static" / "vendor").exists()  # the sdist carries no vendored file
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # no npm on it
    out = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    said = built.stdout + built.stderr
    assert built.returncode != 0, said[-3000:]
    assert "cannot build the wheel" in said and "npm is not installed" in said, said[-3000:]
    assert not list(out.glob("*.whl")) if out.exists() else True
