"""``$((…))``: the shell's integer arithmetic, as mksh evaluates it.

Decimal, hex (``0x1F``) and ``base#digits`` numbers; variables by name (``i`` or ``$i``; unset or empty
is 0); ``+ - * / %`` (division truncates toward zero), comparisons, ``== !=``, ``&& ||``, ``!``,
``~``, unary ``-``/``+``, parentheses, ``?:``, and assignments (``=``, ``+=``, ``-=``, ``*=``, ``/=``,
``%=``). 64-bit wrap-around as on the phone. An error raises ``ArithmeticProblem`` with mksh's words.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+#[0-9a-zA-Z]+|\d+)|(?P<name>\$?[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\+=|-=|\*=|/=|%=|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%()<>!~?:=&|^]))"
)
_BINARY: list[tuple[str, ...]] = [
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
]


class ArithmeticProblem(ValueError):
    """An expression mksh refuses."""


def _wrap(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _number(text: str) -> int:
    if text.lower().startswith("0x"):
        return int(text, 16)
    if "#" in text:
        base, _, digits = text.partition("#")
        return int(digits, int(base))
    return int(text)


class _Evaluator:
    def __init__(self, text: str, variables: MutableMapping[str, str]) -> None:
        self.text = text
        self.variables = variables
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                raise ArithmeticProblem(f"{text}: unexpected '{text[pos:].strip()[:1]}'")
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind)))
            pos = match.end()
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ArithmeticProblem(f"{self.text}: unexpected end of expression")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def value_of(self, name: str) -> int:
        raw = self.variables.get(name.lstrip("$"), "").strip()
        if not raw:
            return 0
        try:
            return _number(raw)
        except ValueError:
            return _Evaluator(raw, self.variables).run()

    def run(self) -> int:
        if not self.tokens:
            return 0
        value = self.assignment()
        if self.pos != len(self.tokens):
            raise ArithmeticProblem(f"{self.text}: unexpected '{self.peek()}'")
        return value

    def assignment(self) -> int:
        if (
            self.pos + 1 < len(self.tokens)
            and self.tokens[self.pos][0] == "name"
            and self.tokens[self.pos + 1][1] in ("=", "+=", "-=", "*=", "/=", "%=")
        ):
            name = self.take()[1].lstrip("$")
            op = self.take()[1]
            right = self.assignment()
            value = right if op == "=" else self.apply(op[0], self.value_of(name), right)
            self.variables[name] = str(value)
            return value
        return self.conditional()

    def conditional(self) -> int:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.take()
        yes = self.assignment()
        if self.take()[1] != ":":
            raise ArithmeticProblem(f"{self.text}: missing ':'")
        no = self.assignment()
        return yes if condition else no

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = self.apply(op, left, right)
        return left

    def apply(self, op: str, left: int, right: int) -> int:
        if op in ("/", "%"):
            if right == 0:
                raise ArithmeticProblem(f"{self.text}: zero divisor")
            quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
            return _wrap(quotient if op == "/" else left - quotient * right)
        results = {
            "+": lambda: left + right,
            "-": lambda: left - right,
            "*": lambda: left * right,
            "<<": lambda: left << (right & 63),
            ">>": lambda: left >> (right & 63),
            "<": lambda: int(left < right),
            "<=": lambda: int(left <= right),
            ">": lambda: int(left > right),
            ">=": lambda: int(left >= right),
            "==": lambda: int(left == right),
            "!=": lambda: int(left != right),
            "&": lambda: left & right,
            "|": lambda: left | right,
            "^": lambda: left ^ right,
            "&&": lambda: int(bool(left) and bool(right)),
            "||": lambda: int(bool(left) or bool(right)),
        }
        return _wrap(results[op]())

    def unary(self) -> int:
        kind, text = self.take()
        if kind == "num":
            try:
                return _wrap(_number(text))
            except ValueError:
                raise ArithmeticProblem(f"{self.text}: bad number '{text}'") from None
        if kind == "name":
            return self.value_of(text)
        if text == "(":
            value = self.assignment()
            if self.take()[1] != ")":
                raise ArithmeticProblem(f"{self.text}: missing ')'")
            return value
        if text in ("-", "+", "!", "~"):
            operand = self.unary()
            return {"-": -operand, "+": operand, "!": int(not operand), "~": ~operand}[text]
        raise ArithmeticProblem(f"{self.text}: unexpected '{text}'")


def evaluate(text: str, variables: MutableMapping[str, str]) -> int:
    """The value of ``text``; assignments in it change ``variables``."""
    return _Evaluator(text, variables).run()
