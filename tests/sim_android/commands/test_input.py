"""`input`: Android's argument errors."""

from __future__ import annotations

from tests.sim_android.conftest import Harness


def test_input_errors_like_android(h: Harness) -> None:
    bad = h.run("input", "tap", "x", "5")
    assert bad.exit_code == 255
    assert b"java.lang.IllegalArgumentException: Error: Invalid arguments for command: tap" in bad.stderr
    short = h.run("input", "swipe", "1", "2")
    assert short.exit_code == 255 and b"Argument expected" in short.stderr
    assert h.out("input", "bogus") == "Unknown command: bogus\n"
    assert h.out("input").startswith("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    non_ascii = h.run("input", "text", "caf\u00e9")
    assert non_ascii.exit_code == 255 and b"NullPointerException" in non_ascii.stderr
