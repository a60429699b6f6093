"""The shell's parser: tokens into and-or lists of pipelines, and a pipeline into simple commands.

The list is parsed lazily, one pipeline at a time, because a command line runs as it is read: in
``echo a; && b`` the ``echo`` runs before the misplaced ``&&`` is reported. Words are expanded when
their pipeline is parsed (just before it runs), by the functions the interpreter passes in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .lexer import FIELD_SEP, UNQUOTED, Operator, ShellSyntaxError, Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# What ends a pipeline: ; & and newlines end an and-or list, && and || join pipelines inside one.
LIST_OPERATORS = (";", "&", "\n", "&&", "||")


@dataclass(frozen=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: str


@dataclass
class SimpleCommand:
    argv: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


def pipelines(tokens: list[Word | Operator]) -> Iterator[tuple[list[Word | Operator], str]]:
    """Each pipeline's tokens (empty between two ``;``) with the list operator after it."""
    pending: list[Word | Operator] = []
    for token in [*tokens, Operator(";")]:
        if isinstance(token, Operator) and token.text in LIST_OPERATORS:
            if not pending and token.text in ("&&", "||"):
                raise ShellSyntaxError(f"'{token.text}' unexpected")
            yield pending, token.text
            pending = []
        else:
            pending.append(token)


def parse_pipeline(
    tokens: list[Word | Operator], expand: Callable[[str], str], glob: Callable[[str], list[str]]
) -> list[SimpleCommand]:
    """The commands of one pipeline, words expanded (``expand``) and globbed (``glob``)."""
    commands = [SimpleCommand()]
    it = iter(tokens)
    for token in it:
        if isinstance(token, Word):
            text = expand(token.text)
            matches = glob(expand(token.pattern).replace(FIELD_SEP, " ")) if token.pattern else []
            assigning = all(_ASSIGNMENT.match(word) for word in commands[-1].argv)
            if matches:
                commands[-1].argv.extend(matches)
            elif UNQUOTED in token.text and not (assigning and _ASSIGNMENT.match(token.text)):
                # An unquoted expansion splits into fields; one that gives nothing gives no word.
                commands[-1].argv.extend(field for field in text.split(FIELD_SEP) if field)
            else:
                commands[-1].argv.append(text.replace(FIELD_SEP, " "))  # no match: the word stays
        elif token.text == "|":
            if not commands[-1].argv:
                raise ShellSyntaxError("'|' unexpected")
            commands.append(SimpleCommand())
        elif re.fullmatch(r"\d>&\d", token.text):
            commands[-1].redirects.append(Redirect(int(token.text[0]), ">&", token.text[-1]))
        elif token.text.lstrip("0123456789") in (">", ">>", "<"):
            op = token.text.lstrip("0123456789")
            fd = int(token.text[: len(token.text) - len(op)] or (0 if op == "<" else 1))
            target = next(it, None)
            if not isinstance(target, Word):
                raise ShellSyntaxError(f"'{token.text}' needs a file")
            commands[-1].redirects.append(Redirect(fd, op, expand(target.text)))
        else:
            raise ShellSyntaxError(f"'{token.text}' unexpected")
    if not commands[-1].argv and not commands[-1].redirects:
        raise ShellSyntaxError("empty command")
    return commands
