"""Login Demo (a third-party app): a sign-in form to try secrets and take over on.

A username field, a password field (``password="true"`` in the UI tree: it shows and reports one dot
a character, never what was typed), a **Sign in** button. ``mobium`` with ``hunter2`` opens a page that
says "Welcome, mobium"; anything else says "Incorrect username or password." under the form and
empties the password, as real apps do. Enter in the username field moves to the password field; Enter
in the password field signs in. What was typed lives in the phone's drafts (keyed by the field's
resource id) and the outcome in its ``app_state``; nothing here draws the password.
"""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..ui import Paint, SimulatedView
from .registry import field_enter, screen_action, screen_layout
from .widgets import PRIMARY, TEXT2, WHITE, app_window, back_button, label, text_field, view

LOGIN = apps.LOGIN
USERNAME_ID = f"{LOGIN}:id/username"
PASSWORD_ID = f"{LOGIN}:id/password"
SIGN_IN_ID = f"{LOGIN}:id/sign_in"
ERROR_ID = f"{LOGIN}:id/error"
DEMO_USER = "mobium"
DEMO_PASSWORD = "hunter2"
INCORRECT = "Incorrect username or password."
ERROR_KEY = "login.error"  # in the phone's app_state: the form's error line, "" when none
MASK = "•"  # what a password field shows (and uiautomator reports) for each character


@screen_layout("login/form", title="Login Demo")
def login_form(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(LOGIN)
    root.add(label((60, 150, 1020, 260), "Login Demo", size=64, rid=f"{LOGIN}:id/title"))
    root.add(label((60, 262, 1020, 318), "Sign in to continue", size=36, fg=TEXT2))
    root.add(label((60, 420, 1020, 470), "Username", size=36, fg=TEXT2))
    root.add(
        text_field(
            (40, 480, 1040, 620),
            USERNAME_ID,
            phone.drafts.get(USERNAME_ID, ""),
            "Username",
            focused=screen.focus == USERNAME_ID,
        )
    )
    root.add(label((60, 680, 1020, 730), "Password", size=36, fg=TEXT2))
    password = text_field(
        (40, 740, 1040, 880),
        PASSWORD_ID,
        MASK * len(phone.drafts.get(PASSWORD_ID, "")),
        "Password",
        focused=screen.focus == PASSWORD_ID,
    )
    if password is not None:
        password.password = True
        root.add(password)
    root.add(
        view(
            "android.widget.Button",
            (40, 960, 1040, 1100),
            paint=Paint(kind="button", bg=PRIMARY, fg=WHITE, size=44, radius=70, align="center"),
            text="Sign in",
            resource_id=SIGN_IN_ID,
            clickable=True,
            focusable=True,
            action="sign_in",
        )
    )
    error = phone.app_state.get(ERROR_KEY, "")
    if error:
        root.add(label((60, 1140, 1020, 1200), error, size=38, fg=(179, 38, 30), rid=ERROR_ID))
    return root


def welcome_title(screen: Screen) -> str:
    return f"Welcome, {screen.arg}"


@screen_layout("login/welcome", title=welcome_title)
def login_welcome(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(LOGIN)
    back_button(root)
    root.add(label((60, 290, 1020, 400), welcome_title(screen), size=64, rid=f"{LOGIN}:id/welcome"))
    root.add(label((60, 440, 1020, 500), "You are signed in.", size=40, fg=TEXT2))
    return root


@screen_action("sign_in")
def sign_in(phone: AndroidPhone, _arg: str) -> None:
    """Check the form: the welcome page for the demo's account, else the error line."""
    screen = phone.top_screen()
    if screen is None or screen.name != "login/form":
        return
    username = phone.drafts.get(USERNAME_ID, "").strip()
    correct = username == DEMO_USER and phone.drafts.get(PASSWORD_ID, "") == DEMO_PASSWORD
    phone.drafts[PASSWORD_ID] = ""
    screen.focus = None
    if correct:
        phone.drafts[USERNAME_ID] = ""
        phone.app_state[ERROR_KEY] = ""
        phone.push(Screen("login/welcome", username))
    else:
        phone.app_state[ERROR_KEY] = INCORRECT
        phone.push(screen)  # the same screen: a change (push of the top screen only redraws)


@screen_action("next_field")
def next_field(phone: AndroidPhone, arg: str) -> None:
    """Move the focus to the field ``arg`` (Enter in the username field)."""
    screen = phone.top_screen()
    if screen is not None:
        screen.focus = arg
        phone.push(screen)


field_enter(USERNAME_ID, f"next_field:{PASSWORD_ID}")
field_enter(PASSWORD_ID, "sign_in")
