"""Messages: the conversation list and a conversation (bubbles and the compose field)."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..fonts import ellipsize, line_height, text_width, wrap
from ..ui import Paint, Rect, SimulatedView
from .registry import screen_layout
from .widgets import (
    BUBBLE_THEM,
    DIVIDER,
    PRIMARY,
    TEXT,
    TEXT2,
    WHITE,
    W,
    app_window,
    back_button,
    label,
    page_title,
    text_field,
    view,
)

MSG = apps.MESSAGES
COMPOSE_ID = "com.google.android.apps.messaging:id/compose_message_text"


def avatar(box: Rect, name: str) -> SimulatedView | None:
    hue = sum(map(ord, name)) % 5
    colors = [(26, 115, 232), (30, 142, 62), (217, 48, 37), (161, 66, 244), (230, 124, 35)]
    return view(
        "android.widget.ImageView",
        box,
        paint=Paint(kind="circle", bg=colors[hue], fg=WHITE, size=52, label=name[:1]),
        resource_id=f"{MSG}:id/conversation_icon",
    )


@screen_layout("messages/list", title="Messages")
def messages_list(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(MSG)
    page_title(root, "Messages", sub_page=False)
    for i, name in enumerate(phone.conversation_order):
        top = 340 + i * 220
        last = phone.conversations[name][-1] if phone.conversations[name] else None
        snippet = "" if last is None else ("You: " if last["from"] == "me" else "") + last["text"]
        row = view(
            "android.widget.LinearLayout",
            (0, top, W, top + 220),
            resource_id=f"{MSG}:id/swipeableContainer",
            clickable=True,
            focusable=True,
            long_clickable=True,
            action=f"conversation:{name}",
        )
        assert row is not None
        root.add(row)
        row.add(avatar((50, top + 50, 170, top + 170), name))
        row.add(
            label(
                (210, top + 45, 1020, top + 110), name, size=46, bold=True, rid=f"{MSG}:id/conversation_name"
            )
        )
        row.add(
            label(
                (210, top + 118, 1020, top + 172),
                ellipsize(snippet, 38, 810),
                size=38,
                fg=TEXT2,
                rid=f"{MSG}:id/conversation_snippet",
            )
        )
    return root


def thread_title(screen: Screen) -> str:
    return screen.arg


@screen_layout("messages/thread", title=thread_title)
def messages_thread(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(MSG)
    back_button(root)
    name = screen.arg
    lift = phone.keyboard_height()  # adjustResize: the compose bar rides above the keyboard
    root.add(avatar((170, 145, 270, 245), name))
    root.add(label((300, 140, 1020, 250), name, size=52, rid=f"{MSG}:id/conversation_title"))
    area = view(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 290, W, 2080 - lift),
        resource_id=f"{MSG}:id/messages_list",
        paint=Paint(kind="divider_top", fg=DIVIDER),
    )
    assert area is not None
    root.add(area)
    bottom = 2060 - lift
    bubbles: list[SimulatedView] = []
    for message in reversed(phone.conversations.get(name, [])):
        lines = wrap(message["text"], 42, 700)
        width = max(text_width(line, 42) for line in lines) + 64
        height = len(lines) * line_height(42) + 44
        top = bottom - height
        if top < 310:
            break
        mine = message["from"] == "me"
        x1 = W - 40 - width if mine else 40
        node = view(
            "android.widget.TextView",
            (x1, top, x1 + width, bottom),
            paint=Paint(
                kind="bubble",
                bg=PRIMARY if mine else BUBBLE_THEM,
                fg=WHITE if mine else TEXT,
                size=42,
                radius=44,
                pad=32,
            ),
            text=message["text"],
            resource_id=f"{MSG}:id/message_text",
            long_clickable=True,
        )
        assert node is not None
        bubbles.append(node)
        bottom = top - 20
    for node in reversed(bubbles):
        area.add(node)
    draft = phone.drafts.get(name, "")
    root.add(
        text_field(
            (40, 2100 - lift, 880, 2240 - lift),
            COMPOSE_ID,
            draft,
            "Text message",
            focused=screen.focus == COMPOSE_ID,
        )
    )
    root.add(
        view(
            "android.widget.ImageButton",
            (900, 2100 - lift, 1040, 2240 - lift),
            paint=Paint(kind="send", bg=PRIMARY if draft else (190, 196, 205), fg=WHITE),
            resource_id=f"{MSG}:id/send_message_button_icon",
            content_desc="Send SMS",
            clickable=True,
            enabled=bool(draft),
            focusable=True,
            action="send",
        )
    )
    return root
