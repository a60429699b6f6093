"""Actions written as text by models that do not use function calling: UI-TARS, AutoGLM, plain JSON.

``parse_text_action`` finds the action in a model's answer and returns it as the agent's own tool
call. UI-TARS (``click(start_box='(x,y)')``, ``type(content='…')``, ``scroll(…)``, ``finished(…)``)
and AutoGLM (``do(action="Tap", element=[x,y])``, ``finish(message="…")``) give coordinates in
0–1000 of the image, so their calls are marked ``normalized``; a call written with the agent's own
tool names (``tap(x=…, y=…)`` or ``{"name": "tap", "arguments": {…}}``) uses image pixels.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from .model import ToolCall

NORMALIZED_MAX = 1000
SCROLL_SPAN = 300  # of 1000: how far a UI-TARS scroll moves the finger

_OWN_TOOLS = {
    "tap",
    "long_press",
    "swipe",
    "type_text",
    "press_key",
    "open_app",
    "wait",
    "extract_scrolling_content",
    "finish_step",
    "fail_step",
    "finish_task",
    "submit_plan",
}
_UI_TARS = {
    "click",
    "left_single",
    "left_double",
    "right_single",
    "long_press",
    "drag",
    "select",
    "scroll",
    "type",
    "hotkey",
    "press",
    "press_home",
    "press_back",
    "open_app",
    "wait",
    "finished",
    "call_user",
}
_AUTOGLM = {"do", "finish"}
_CALL_START = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_text_action(text: str) -> ToolCall | None:
    """The action in a model's text answer, or None when it holds none."""
    call = _json_call(text)
    if call is not None:
        return call
    for match in _CALL_START.finditer(text):
        name = match.group(1)
        if name not in _OWN_TOOLS and name not in _UI_TARS and name not in _AUTOGLM:
            continue
        source = _balanced_call(text, match.start(), match.end() - 1)
        if source is None:
            continue
        parsed = _python_call(source)
        if parsed is None:
            continue
        func, positional, keywords = parsed
        if func in _AUTOGLM:
            result = _autoglm(func, keywords)
        elif func in _OWN_TOOLS and (keywords or func in ("wait",)) and not _looks_ui_tars(keywords):
            result = _own(func, positional, keywords)
        else:
            result = _ui_tars(func, positional, keywords)
        if result is not None:
            return result
    return None


def _looks_ui_tars(keywords: dict[str, Any]) -> bool:
    return any(key in keywords for key in ("start_box", "point", "start_point", "content", "app_name"))


def _json_call(text: str) -> ToolCall | None:
    start = text.find("{")
    while start >= 0:
        depth, in_string, escape = 0, False, False
        for end in range(start, len(text)):
            char = text[end]
            if in_string:
                if escape:
                    escape = False
                elif char == "\\":
                    escape = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    try:
                        value = json.loads(text[start : end + 1])
                    except ValueError:
                        break
                    call = _json_value_call(value)
                    if call is not None:
                        return call
                    break
        start = text.find("{", start + 1)
    return None


def _json_value_call(value: Any) -> ToolCall | None:
    if not isinstance(value, dict):
        return None
    name = value.get("name") or value.get("tool") or value.get("action")
    args = value.get("arguments", value.get("parameters", value.get("args")))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if isinstance(name, str) and name in _OWN_TOOLS and isinstance(args, dict):
        return ToolCall(name, args, raw_arguments=json.dumps(args, ensure_ascii=False))
    return None


def _balanced_call(text: str, start: int, open_paren: int) -> str | None:
    depth, quote = 0, ""
    index = open_paren
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
        index += 1
    return None


def _python_call(source: str) -> tuple[str, list[Any], dict[str, Any]] | None:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    try:
        positional = [ast.literal_eval(arg) for arg in node.args]
        keywords = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (ValueError, SyntaxError, TypeError):
        return None
    return node.func.id, positional, keywords


def _point(value: Any) -> tuple[int, int] | None:
    """A point from '(x,y)', '[x1,y1,x2,y2]' (its centre), '<point>x y</point>', or a list."""
    if isinstance(value, (list, tuple)):
        numbers = [float(v) for v in value if isinstance(v, (int, float))]
    elif isinstance(value, str):
        numbers = [float(v) for v in _NUMBER.findall(value)]
    else:
        return None
    if len(numbers) >= 4:
        return round((numbers[0] + numbers[2]) / 2), round((numbers[1] + numbers[3]) / 2)
    if len(numbers) >= 2:
        return round(numbers[0]), round(numbers[1])
    return None


def _normalized(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name, args, raw_arguments=json.dumps(args, ensure_ascii=False), normalized=True)


def _plain(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name, args, raw_arguments=json.dumps(args, ensure_ascii=False))


def _first(keywords: dict[str, Any], positional: list[Any], *names: str) -> Any:
    for name in names:
        if name in keywords:
            return keywords[name]
    return positional[0] if positional else None


def _ui_tars(func: str, positional: list[Any], keywords: dict[str, Any]) -> ToolCall | None:
    if func in ("click", "left_single", "left_double", "right_single", "long_press"):
        point = _point(_first(keywords, positional, "start_box", "point", "start_point", "box"))
        if point is None:
            return None
        name = "long_press" if func == "long_press" else "tap"
        return _normalized(name, {"x": point[0], "y": point[1]})
    if func in ("drag", "select"):
        start = _point(keywords.get("start_box") or keywords.get("start_point"))
        end = _point(keywords.get("end_box") or keywords.get("end_point"))
        if start is None or end is None:
            return None
        return _normalized("swipe", {"startX": start[0], "startY": start[1], "endX": end[0], "endY": end[1]})
    if func == "scroll":
        point = _point(keywords.get("start_box") or keywords.get("point")) or (500, 500)
        direction = str(keywords.get("direction", positional[0] if positional else "down")).lower()
        x, y = point
        dx, dy = {"down": (0, -1), "up": (0, 1), "left": (1, 0), "right": (-1, 0)}.get(direction, (0, -1))
        half = SCROLL_SPAN // 2
        start = (_clamp(x - dx * half), _clamp(y - dy * half))
        end = (_clamp(x + dx * half), _clamp(y + dy * half))
        return _normalized("swipe", {"startX": start[0], "startY": start[1], "endX": end[0], "endY": end[1]})
    if func == "type":
        content = str(_first(keywords, positional, "content", "text") or "")
        submit = content.endswith("\n")
        return _plain("type_text", {"text": content.rstrip("\n"), "submit": submit})
    if func in ("hotkey", "press"):
        key = str(_first(keywords, positional, "key", "keys") or "").strip().lower()
        return _plain("press_key", {"key": {"return": "enter", "esc": "back"}.get(key, key)})
    if func == "press_home":
        return _plain("press_key", {"key": "home"})
    if func == "press_back":
        return _plain("press_key", {"key": "back"})
    if func == "open_app":
        return _plain("open_app", {"packageName": str(_first(keywords, positional, "app_name", "app"))})
    if func == "wait":
        return _plain("wait", {"ms": 1000})
    if func == "finished":
        return _plain("finish_step", {"summary": str(_first(keywords, positional, "content") or "done")})
    if func == "call_user":
        return _plain("fail_step", {"reason": "The model asked for a person's help."})
    return None


def _clamp(value: int) -> int:
    return max(0, min(NORMALIZED_MAX, value))


def _autoglm(func: str, keywords: dict[str, Any]) -> ToolCall | None:
    if func == "finish":
        return _plain("finish_step", {"summary": str(keywords.get("message", "done"))})
    action = str(keywords.get("action", "")).strip().lower().replace("_", " ")
    if action in ("tap", "double tap", "long press"):
        point = _point(keywords.get("element"))
        if point is None:
            return None
        name = "long_press" if action == "long press" else "tap"
        return _normalized(name, {"x": point[0], "y": point[1]})
    if action == "swipe":
        start, end = _point(keywords.get("start")), _point(keywords.get("end"))
        if start is None or end is None:
            return None
        return _normalized("swipe", {"startX": start[0], "startY": start[1], "endX": end[0], "endY": end[1]})
    if action in ("type", "type name"):
        return _plain("type_text", {"text": str(keywords.get("text", ""))})
    if action == "launch":
        return _plain("open_app", {"packageName": str(keywords.get("app", ""))})
    if action in ("back", "home"):
        return _plain("press_key", {"key": action})
    if action == "wait":
        seconds = _NUMBER.findall(str(keywords.get("duration", "1")))
        return _plain("wait", {"ms": int(float(seconds[0]) * 1000) if seconds else 1000})
    if action in ("take over", "interact"):
        return _plain("fail_step", {"reason": str(keywords.get("message", "The model asked for help."))})
    return None


def _own(func: str, positional: list[Any], keywords: dict[str, Any]) -> ToolCall:
    return _plain(func, dict(keywords))
