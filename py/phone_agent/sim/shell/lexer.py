"""The shell's lexer: a command line into words and operators, with POSIX quoting applied.

Quotes are removed as the words are built; a word with unquoted ``*`` ``?`` ``[`` also carries itself
as a glob pattern (the quoted parts escaped). Variables (``$?``, ``$NAME``, ``${NAME}``), command
substitutions (``$(…)``, backquotes) and arithmetic (``$((…))``) are not expanded here: they are expanded
when their command runs, after the earlier commands of the list (``false; echo $?``, ``export X=1; echo
$X``), so the lexer leaves a marker around the name or the source text; an expansion outside double
quotes is marked ``UNQUOTED`` too (its result is split into fields).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VAR_START, VAR_END = "\ue000", "\ue001"
CMD_START, CMD_END = "\ue002", "\ue003"
ARITH_START, ARITH_END = "\ue004", "\ue005"
UNQUOTED = "\ue006"  # before an expansion outside double quotes: its result is split into fields
FIELD_SEP = "\ue007"  # where an unquoted expansion's result splits
OPERATORS = ("&&", "||", ";;", ">>", "2>&1", ";", "|", "&", ">", "<", "\n")


class ShellSyntaxError(Exception):
    """An unterminated quote or a misplaced operator."""


@dataclass(frozen=True)
class Word:
    text: str
    pattern: str | None = None  # the word as a glob pattern (quoted parts escaped) if it has * ? [


@dataclass(frozen=True)
class Operator:
    text: str


def tokenize(line: str) -> list[Word | Operator]:
    """Split a command line into words and operators, applying quotes; variables are left marked."""
    return _Lexer(line).run()


class _Lexer:
    """One pass over a line: each character's step (``_STEPS``) moves ``at`` on and builds the word."""

    def __init__(self, line: str) -> None:
        self.line, self.n, self.at = line, len(line), 0
        self.tokens: list[Word | Operator] = []
        self.word: list[str] = []
        self.pattern: list[str] = []
        self.globbing = self.in_word = False

    def run(self) -> list[Word | Operator]:
        while self.at < self.n:
            c = self.line[self.at]
            _STEPS.get(c, _Lexer._plain)(self, c)
        self.finish()
        return self.tokens

    def literal(self, text: str) -> None:
        self.word.append(text)
        self.pattern.append(glob_escape(text))

    def finish(self) -> None:
        if self.in_word:
            pattern = "".join(self.pattern) if self.globbing else None
            self.tokens.append(Word("".join(self.word), pattern))
            self.word.clear()
            self.pattern.clear()
            self.in_word = self.globbing = False

    # -- expansions, left marked ------------------------------------------------------------------

    def expand(self, at: int, quoted: bool = False) -> tuple[str, int]:
        line, mark = self.line, "" if quoted else UNQUOTED
        if line.startswith("$((", at):
            end = _closing(line, at + 1)
            if line[end - 1] == ")" and end - 1 > at + 2:
                return f"{mark}{ARITH_START}{line[at + 3 : end - 1]}{ARITH_END}", end + 1
            return f"{mark}{CMD_START}{line[at + 2 : end]}{CMD_END}", end + 1
        if line.startswith("$(", at):
            end = _closing(line, at + 1)
            return f"{mark}{CMD_START}{line[at + 2 : end]}{CMD_END}", end + 1
        if at + 1 < self.n and line[at + 1] in "?#":
            return f"{mark}{VAR_START}{line[at + 1]}{VAR_END}", at + 2
        match = re.match(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)", line[at + 1 :])
        if match:
            return f"{mark}{VAR_START}{match.group(1) or match.group(2)}{VAR_END}", at + 1 + match.end()
        return "$", at + 1

    def backquoted(self, at: int, quoted: bool = False) -> tuple[str, int]:
        end = self.line.find("`", at + 1)
        if end < 0:
            raise ShellSyntaxError("unterminated `")
        return f"{'' if quoted else UNQUOTED}{CMD_START}{self.line[at + 1 : end]}{CMD_END}", end + 1

    # -- the steps, one per kind of character -----------------------------------------------------

    def _blank(self, _c: str) -> None:
        self.finish()
        self.at += 1

    def _comment(self, c: str) -> None:
        if self.in_word:
            self._plain(c)
            return
        while self.at < self.n and self.line[self.at] != "\n":
            self.at += 1

    def _single_quoted(self, _c: str) -> None:
        end = self.line.find("'", self.at + 1)
        if end < 0:
            raise ShellSyntaxError("unterminated '")
        self.literal(self.line[self.at + 1 : end])
        self.in_word = True
        self.at = end + 1

    def _double_quoted(self, _c: str) -> None:
        line, n = self.line, self.n
        self.at += 1
        self.in_word = True
        while True:
            if self.at >= n:
                raise ShellSyntaxError('unterminated "')
            c = line[self.at]
            if c == '"':
                self.at += 1
                return
            if c == "\\" and self.at + 1 < n and line[self.at + 1] in '$`"\\\n':
                self.literal(line[self.at + 1])
                self.at += 2
            elif c == "$":
                text, self.at = self.expand(self.at, quoted=True)
                self.literal(text)
            elif c == "`":
                text, self.at = self.backquoted(self.at, quoted=True)
                self.literal(text)
            else:
                self.literal(c)
                self.at += 1

    def _backslash(self, _c: str) -> None:
        if self.at + 1 < self.n and self.line[self.at + 1] != "\n":
            self.literal(self.line[self.at + 1])
            self.in_word = True
        self.at += 2

    def _dollar(self, _c: str) -> None:
        text, self.at = self.expand(self.at)
        self.literal(text)
        self.in_word = True

    def _backquote(self, _c: str) -> None:
        text, self.at = self.backquoted(self.at)
        self.literal(text)
        self.in_word = True

    def _plain(self, c: str) -> None:
        if self._descriptor_redirection(c) or self._operator():
            return
        self.word.append(c)
        self.pattern.append(c)
        self.globbing = self.globbing or c in "*?["
        self.in_word = True
        self.at += 1

    def _descriptor_redirection(self, c: str) -> bool:
        """A digit glued to > or < is a file descriptor number (2>file, 2>&1)."""
        line, at = self.line, self.at
        if not (c.isdigit() and not self.in_word and at + 1 < self.n and line[at + 1] in "<>"):
            return False
        if line.startswith(">&", at + 1):
            m = re.match(r"(\d)>&(\d)", line[at:])
            if m:
                self.tokens.append(Operator(f"{m.group(1)}>&{m.group(2)}"))
                self.at += m.end()
                return True
        op = ">>" if line.startswith(">>", at + 1) else line[at + 1]
        self.tokens.append(Operator(c + op))
        self.at += 1 + len(op)
        return True

    def _operator(self) -> bool:
        line, at = self.line, self.at
        op = next((op for op in OPERATORS if line.startswith(op, at) and op != "2>&1"), None)
        if op is None:
            return False
        self.finish()
        if op == ">" and line.startswith(">&", at):
            m = re.match(r">&(\d)", line[at:])
            if m:
                self.tokens.append(Operator(f"1>&{m.group(1)}"))
                self.at += m.end()
                return True
        self.tokens.append(Operator(op))
        self.at += len(op)
        return True


# Each character that starts something of its own; any other is ``_Lexer._plain``.
_STEPS = {
    " ": _Lexer._blank,
    "\t": _Lexer._blank,
    "#": _Lexer._comment,
    "'": _Lexer._single_quoted,
    '"': _Lexer._double_quoted,
    "\\": _Lexer._backslash,
    "$": _Lexer._dollar,
    "`": _Lexer._backquote,
}


def _closing(line: str, at: int) -> int:
    """The index of the ``)`` closing the ``(`` at ``at`` (nested parentheses and quotes skipped)."""
    depth, i, n = 0, at, len(line)
    while i < n:
        c = line[i]
        if c in "'\"":
            end = line.find(c, i + 1)
            if end < 0:
                raise ShellSyntaxError(f"unterminated {c}")
            i = end
        elif c == "\\":
            i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellSyntaxError("unexpected EOF (missing ')')")


def glob_escape(text: str) -> str:
    """Quoted text inside a glob pattern: its ``*`` ``?`` ``[`` match themselves."""
    return re.sub(r"([*?[])", r"[\1]", text)


def glob_unescape(text: str) -> str:
    """A pattern component with no wildcard left, back to the name it matches."""
    return re.sub(r"\[([*?[])\]", r"\1", text)


def has_glob_magic(part: str) -> bool:
    """Whether a pattern component has an unquoted wildcard."""
    return any(c in "*?[" for c in re.sub(r"\[[*?[]\]", "", part))
