"""The shell's grammar above simple commands, as Android's mksh reads it: and-or lists of pipelines
(``time`` and ``!`` before one), and the compound commands ``for``, ``while``, ``until``, ``if`` and
``{ …; }``.

``Parser.next_item`` reads one and-or list at a time, so a command line runs as it is read (in
``echo a; && b`` the ``echo`` runs before the misplaced ``&&`` is reported, as mksh does); a compound
command is read whole first. Reserved words are recognised where a command starts only (``echo done``
prints "done"). A simple command is kept as its tokens, expanded each time it runs (a loop's body sees
the loop variable), by ``parser.parse_pipeline``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lexer import Operator, ShellSyntaxError, Word

SEPARATORS = (";", "&", "\n")
CLOSERS = ("then", "elif", "else", "fi", "do", "done", "}")  # reserved words that end a part
_ENDS_COMMAND = (*SEPARATORS, "&&", "||", "|")


@dataclass
class Simple:
    """A simple command: its words and redirections, unexpanded."""

    tokens: list[Word | Operator]


@dataclass
class ForLoop:
    name: str
    words: list[Word] | None  # None: "$@" (no words here)
    body: list[AndOr]
    redirects: list[Word | Operator] = field(default_factory=list)  # after ``done``, as tokens


@dataclass
class WhileLoop:
    condition: list[AndOr]
    body: list[AndOr]
    until: bool = False
    redirects: list[Word | Operator] = field(default_factory=list)


@dataclass
class IfClause:
    branches: list[tuple[list[AndOr], list[AndOr]]]
    otherwise: list[AndOr] | None = None
    redirects: list[Word | Operator] = field(default_factory=list)


@dataclass
class Group:
    body: list[AndOr]
    redirects: list[Word | Operator] = field(default_factory=list)


Command = Simple | ForLoop | WhileLoop | IfClause | Group


@dataclass
class Pipeline:
    commands: list[Command]
    timed: bool = False
    negated: bool = False


@dataclass
class AndOr:
    """Pipelines joined by ``&&`` and ``||``: ``rest`` holds (operator, pipeline) after the first."""

    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)


def _word(token: Word | Operator | None, text: str) -> bool:
    return isinstance(token, Word) and token.pattern is None and token.text == text


class Parser:
    """Reads tokens into and-or lists, one at a time."""

    def __init__(self, tokens: list[Word | Operator]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> Word | Operator | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Word | Operator | None:
        token = self.peek()
        self.pos += 1
        return token

    def _skip_separators(self, newlines_only: bool = False) -> None:
        wanted = ("\n",) if newlines_only else SEPARATORS
        while isinstance(token := self.peek(), Operator) and token.text in wanted:
            self.pos += 1

    def next_item(self) -> AndOr | None:
        """The next and-or list of the top level, or None at the end."""
        self._skip_separators()
        if self.peek() is None:
            return None
        token = self.peek()
        if _word(token, token.text) and token.text in CLOSERS:
            raise ShellSyntaxError(f"'{token.text}' unexpected")
        item = self._and_or()
        self._end_of_item()
        return item

    def _end_of_item(self) -> None:
        token = self.peek()
        if token is not None and not (isinstance(token, Operator) and token.text in SEPARATORS):
            raise ShellSyntaxError(f"'{token.text}' unexpected")

    def _list(self, opener: str, terminators: tuple[str, ...]) -> list[AndOr]:
        """And-or lists up to (not including) one of ``terminators`` at a command's start."""
        items: list[AndOr] = []
        while True:
            self._skip_separators()
            token = self.peek()
            if token is None:
                raise ShellSyntaxError(f"'{opener}' unmatched")
            if _word(token, token.text) and token.text in CLOSERS:
                if not items or token.text not in terminators:
                    raise ShellSyntaxError(f"'{token.text}' unexpected")
                return items
            items.append(self._and_or())
            self._end_of_item()

    def _and_or(self) -> AndOr:
        item = AndOr(self._pipeline())
        while isinstance(token := self.peek(), Operator) and token.text in ("&&", "||"):
            self.pos += 1
            self._skip_separators(newlines_only=True)
            item.rest.append((token.text, self._pipeline()))
        return item

    def _pipeline(self) -> Pipeline:
        pipeline = Pipeline([])
        if _word(self.peek(), "time"):
            self.pos += 1
            pipeline.timed = True
        if _word(self.peek(), "!"):
            self.pos += 1
            pipeline.negated = True
        pipeline.commands.append(self._command())
        while isinstance(token := self.peek(), Operator) and token.text == "|":
            self.pos += 1
            self._skip_separators(newlines_only=True)
            pipeline.commands.append(self._command())
        return pipeline

    def _command(self) -> Command:
        token = self.peek()
        if isinstance(token, Word) and token.pattern is None:
            compound = {
                "for": self._for,
                "while": self._while,
                "until": self._while,
                "if": self._if,
                "{": self._group,
            }.get(token.text)
            if compound is not None:
                command = compound()
                command.redirects = self._redirects()
                return command
        tokens: list[Word | Operator] = []
        while (token := self.peek()) is not None and not (
            isinstance(token, Operator) and token.text in _ENDS_COMMAND
        ):
            tokens.append(token)
            self.pos += 1
        if not tokens:
            raise ShellSyntaxError(f"'{token.text}' unexpected" if token is not None else "unexpected EOF")
        return Simple(tokens)

    def _redirects(self) -> list[Word | Operator]:
        """The redirections after a compound command (``done > file``, ``} 2>&1``), as tokens."""
        tokens: list[Word | Operator] = []
        while isinstance(token := self.peek(), Operator) and token.text.lstrip("0123456789")[:1] in "<>":
            self.pos += 1
            tokens.append(token)
            if not token.text.endswith(("&1", "&2", "&0")) and isinstance(target := self.peek(), Word):
                self.pos += 1
                tokens.append(target)
        return tokens

    def _expect(self, word: str, opener: str) -> None:
        self._skip_separators()
        token = self.take()
        if not _word(token, word):
            if token is None:
                raise ShellSyntaxError(f"'{opener}' unmatched")
            raise ShellSyntaxError(f"'{token.text}' unexpected")

    def _for(self) -> ForLoop:
        self.pos += 1  # for
        name = self.take()
        if not isinstance(name, Word) or not name.text.isidentifier():
            raise ShellSyntaxError(f"for: bad identifier {getattr(name, 'text', '')!r}".replace("'", ""))
        words: list[Word] | None = None
        self._skip_separators(newlines_only=True)
        if _word(self.peek(), "in"):
            self.pos += 1
            words = []
            while isinstance(token := self.peek(), Word):
                words.append(token)
                self.pos += 1
        self._expect("do", "for")
        body = self._list("for", ("done",))
        self.pos += 1  # done
        return ForLoop(name.text, words, body)

    def _while(self) -> WhileLoop:
        keyword = self.take()
        assert isinstance(keyword, Word)
        condition = self._list(keyword.text, ("do",))
        self.pos += 1  # do
        body = self._list(keyword.text, ("done",))
        self.pos += 1  # done
        return WhileLoop(condition, body, until=keyword.text == "until")

    def _if(self) -> IfClause:
        self.pos += 1  # if
        clause = IfClause([])
        while True:
            condition = self._list("if", ("then",))
            self.pos += 1  # then
            body = self._list("if", ("elif", "else", "fi"))
            clause.branches.append((condition, body))
            ending = self.take()
            assert isinstance(ending, Word)
            if ending.text == "elif":
                continue
            if ending.text == "else":
                clause.otherwise = self._list("if", ("fi",))
                self.pos += 1  # fi
            return clause

    def _group(self) -> Group:
        self.pos += 1  # {
        body = self._list("{", ("}",))
        self.pos += 1  # }
        return Group(body)
