"""`screencap` (PNG or raw) and `uiautomator dump` (the node tree as XML)."""

from __future__ import annotations

from ....device.shell_result import ShellResult
from ..contract import AndroidPhone, FileStore
from ..ui import dump_xml
from .base import fail, ok, write_reason

SCREENCAP_USAGE = """usage: screencap [-hp] [-d display-id] [FILENAME]
   -h: this message
   -p: save the file as a png.
   -d: specify the physical display ID to capture (default: 4619827259835644672)
       see "dumpsys SurfaceFlinger --display-id" for valid display IDs.
If FILENAME ends with .png it will be saved as a png.
If FILENAME is not given, the results will be printed to stdout.
"""


def screencap(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    png, path, i = False, None, 0
    while i < len(args):
        arg = args[i]
        if arg in ("-p", "--png"):
            png = True
        elif arg in ("-a", "--hint-for-seamless"):
            pass  # one display: "all displays" is this one
        elif arg == "-d" and i + 1 < len(args):
            if not args[i + 1].isdigit():
                return fail("Invalid display ID: Out of range [0, 2^64).\n", 1)
            i += 1
        elif arg.startswith("-"):
            return fail(SCREENCAP_USAGE, 1)
        elif path is None:
            path = arg
        else:
            return fail(SCREENCAP_USAGE, 1)
        i += 1
    if path is not None and path.endswith(".png"):
        png = True
    data = phone.screenshot_png() if png else phone.screenshot_raw()
    if path is None:
        return ShellResult(stdout=data)
    reason = write_reason(fs, path, data)
    if reason:
        return fail(f"Error opening file: {path} ({reason})\nSaving image failed.\n", 1)
    return ok()


UIAUTOMATOR_USAGE = """Usage: uiautomator <subcommand> [options]

Available subcommands:

help: displays help message

runtest: executes UI automation tests
    runtest <class spec> [options]

dump: creates an XML dump of current UI hierarchy
    dump [--verbose][file]
      [--compressed]: dumps compressed layout information.
      [file]: the location where the dumped XML should be stored, default is
      /sdcard/window_dump.xml

events: prints out accessibility events until terminated
"""


def screen_dump(phone: AndroidPhone) -> str:
    """What ``uiautomator dump`` and the hierarchy server answer: the phone's windows, or the hostile
    tree a test set (``phone.hostile_tree``)."""
    return phone.hostile_tree if phone.hostile_tree is not None else dump_xml(phone.windows())


def uiautomator(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if not args or args[0] != "dump":
        return ok(UIAUTOMATOR_USAGE)
    paths = [a for a in args[1:] if not a.startswith("--")]
    path = paths[0] if paths else "/sdcard/window_dump.xml"
    xml = screen_dump(phone).encode()
    message = f"UI hierchary dumped to: {path}\n".encode()
    if path in ("/dev/tty", "/dev/stdout"):
        return ShellResult(stdout=xml + message)
    reason = write_reason(fs, path, xml)
    if reason:
        return fail(f"java.io.FileNotFoundException: {path}: open failed: {reason}\n", 1)
    return ShellResult(stdout=message)
