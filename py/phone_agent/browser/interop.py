"""Conversions between Python values and JavaScript values that keep JSON's meaning exactly.

``pyodide.ffi.to_js`` turns ``None`` into ``undefined`` (which JSON.stringify drops) and needs a
dict converter for plain objects; going through JSON keeps ``null``s, nesting and numbers as they are.
"""

from __future__ import annotations

import json
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import jsnull  # type: ignore[import-not-found]


def to_js_json(value: Any) -> Any:
    """A plain JavaScript value (objects, arrays, null) equal to the JSON of ``value``."""
    return js.JSON.parse(json.dumps(value, ensure_ascii=False))


def is_nullish(value: Any) -> bool:
    """True for JavaScript ``undefined`` (None in Python) and ``null`` (``jsnull`` in Pyodide ≥ 0.28)."""
    return value is None or value is jsnull


def from_js(value: Any) -> Any:
    """A Python value for a JavaScript one; ``undefined``/``null`` become ``None``."""
    if is_nullish(value):
        return None
    if hasattr(value, "to_py"):
        return value.to_py()
    return value


def console_log(*parts: Any) -> None:
    js.console.log(*parts)


def console_warn(*parts: Any) -> None:
    js.console.warn(*parts)
