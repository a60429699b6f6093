"""What the interpreter and the builtins share: toybox's text for a failed file operation."""

from __future__ import annotations

import errno

import pytest

from phone_agent.sim.shell.session import reason


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (FileNotFoundError("/x"), "No such file or directory"),
        (IsADirectoryError("/x"), "Is a directory"),
        (NotADirectoryError("/x"), "Not a directory"),
        (FileExistsError("/x"), "File exists"),
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
        (OSError("read-only"), "read-only"),
    ],
)
def test_a_failed_file_operation_reads_as_toybox_says_it(error, text):
    assert reason(error) == text
