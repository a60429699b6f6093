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
    tokens: list[Word | Operator] = []
    word: list[str] = []
    pattern: list[str] = []
    globbing = False
    in_word = False

    def literal(text: str) -> None:
        word.append(text)
        pattern.append(glob_escape(text))

    i, n = 0, len(line)

    def expand(at: int, quoted: bool = False) -> tuple[str, int]:
        mark = "" if quoted else UNQUOTED
        if line.startswith("$((", at):
            end = _closing(line, at + 1)
            if line[end - 1] == ")" and end - 1 > at + 2:
                return f"{mark}{ARITH_START}{line[at + 3 : end - 1]}{ARITH_END}", end + 1
            return f"{mark}{CMD_START}{line[at + 2 : end]}{CMD_END}", end + 1
        if line.startswith("$(", at):
            end = _closing(line, at + 1)
            return f"{mark}{CMD_START}{line[at + 2 : end]}{CMD_END}", end + 1
        if at + 1 < n and line[at + 1] in "?#":
            return f"{mark}{VAR_START}{line[at + 1]}{VAR_END}", at + 2
        match = re.match(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)", line[at + 1 :])
        if match:
            return f"{mark}{VAR_START}{match.group(1) or match.group(2)}{VAR_END}", at + 1 + match.end()
        return "$", at + 1

    def backquote(at: int, quoted: bool = False) -> tuple[str, int]:
        end = line.find("`", at + 1)
        if end < 0:
            raise ShellSyntaxError("unterminated `")
        return f"{'' if quoted else UNQUOTED}{CMD_START}{line[at + 1 : end]}{CMD_END}", end + 1

    def finish() -> None:
        nonlocal in_word, globbing
        if in_word:
            tokens.append(Word("".join(word), "".join(pattern) if globbing else None))
            word.clear()
            pattern.clear()
            in_word = False
            globbing = False

    while i < n:
        c = line[i]
        if c in " \t":
            finish()
            i += 1
        elif c == "#" and not in_word:
            while i < n and line[i] != "\n":
                i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated '")
            literal(line[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            in_word = True
            while True:
                if i >= n:
                    raise ShellSyntaxError('unterminated "')
                c = line[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    literal(line[i + 1])
                    i += 2
                elif c == "$":
                    text, i = expand(i, quoted=True)
                    literal(text)
                elif c == "`":
                    text, i = backquote(i, quoted=True)
                    literal(text)
                else:
                    literal(c)
                    i += 1
        elif c == "\\":
            if i + 1 < n and line[i + 1] != "\n":
                literal(line[i + 1])
                in_word = True
            i += 2
        elif c == "$":
            text, i = expand(i)
            literal(text)
            in_word = True
        elif c == "`":
            text, i = backquote(i)
            literal(text)
            in_word = True
        else:
            # A digit glued to > or < is a file descriptor number (2>file, 2>&1).
            if c.isdigit() and not in_word and i + 1 < n and line[i + 1] in "<>":
                if line.startswith(">&", i + 1):
                    m = re.match(r"(\d)>&(\d)", line[i:])
                    if m:
                        tokens.append(Operator(f"{m.group(1)}>&{m.group(2)}"))
                        i += m.end()
                        continue
                op = ">>" if line.startswith(">>", i + 1) else line[i + 1]
                tokens.append(Operator(c + op))
                i += 1 + len(op)
                continue
            for op in OPERATORS:
                if line.startswith(op, i) and op != "2>&1":
                    finish()
                    if op == ">" and line.startswith(">&", i):
                        m = re.match(r">&(\d)", line[i:])
                        if m:
                            tokens.append(Operator(f"1>&{m.group(1)}"))
                            i += m.end()
                            break
                    tokens.append(Operator(op))
                    i += len(op)
                    break
            else:
                word.append(c)
                pattern.append(c)
                globbing = globbing or c in "*?["
                in_word = True
                i += 1
    finish()
    return tokens


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
