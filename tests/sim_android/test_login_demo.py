"""Login Demo on the simulated phone, through `input`, `am` and `uiautomator` only: the form, the
password field that never shows what was typed, the right and the wrong account."""

from __future__ import annotations

from phone_agent.sim.android.apps import APPS, HOME_APPS, LOGIN

from .conftest import Harness

USERNAME = "com.phoneagent.login:id/username"
PASSWORD = "com.phoneagent.login:id/password"


def open_login(h: Harness) -> None:
    h.out("input", "keyevent", "KEYCODE_HOME")
    h.tap(h.node(text="Login Demo"))
    assert h.phone.state()["screen"] == "login/form"


def sign_in(h: Harness, username: str, password: str, *, enter: bool = False) -> None:
    h.tap(h.node(resource_id=USERNAME))
    h.out("input", "text", username)
    h.tap(h.node(resource_id=PASSWORD))
    h.out("input", "text", password)
    if enter:
        h.out("input", "keyevent", "KEYCODE_ENTER")
    else:
        h.tap(h.node(text="Sign in"))


def test_the_launcher_shows_login_demo_and_am_starts_it(h: Harness) -> None:
    assert APPS[LOGIN].label == "Login Demo" and LOGIN in HOME_APPS
    assert "package:com.phoneagent.login" in h.out("pm", "list", "packages", "-3")
    h.out("am", "start", "-n", "com.phoneagent.login/.MainActivity")
    assert h.phone.state()["package"] == LOGIN and h.phone.state()["screen"] == "login/form"


def test_the_form_has_a_username_a_password_field_and_sign_in(h: Harness) -> None:
    open_login(h)
    user, password = h.node(resource_id=USERNAME), h.node(resource_id=PASSWORD)
    assert user["class"] == password["class"] == "android.widget.EditText"
    assert (user["password"], password["password"]) == ("false", "true")
    assert (user["text"], password["text"]) == ("Username", "Password")  # hints while empty
    assert h.node(text="Sign in")["clickable"] == "true"


def test_the_demo_account_signs_in_and_the_password_is_never_shown(h: Harness) -> None:
    open_login(h)
    h.tap(h.node(resource_id=USERNAME))
    h.out("input", "text", "mobium")
    h.tap(h.node(resource_id=PASSWORD))
    h.out("input", "text", "hunter2")
    assert h.node(resource_id=PASSWORD)["text"] == "•" * 7
    dump = h.fs.files["/sdcard/window_dump.xml"].decode()
    assert "hunter2" not in dump
    h.tap(h.node(text="Sign in"))
    assert h.phone.state()["screen"] == "login/welcome"
    assert h.node(text="Welcome, mobium")
    assert "hunter2" not in h.fs.files["/sdcard/window_dump.xml"].decode()


def test_enter_moves_to_the_password_and_then_signs_in(h: Harness) -> None:
    open_login(h)
    h.tap(h.node(resource_id=USERNAME))
    h.out("input", "text", "mobium")
    h.out("input", "keyevent", "KEYCODE_ENTER")
    assert h.phone.state()["focused_field"] == PASSWORD
    h.out("input", "text", "hunter2")
    h.out("input", "keyevent", "KEYCODE_ENTER")
    assert h.node(text="Welcome, mobium")


def test_anything_else_is_incorrect_and_empties_the_password(h: Harness) -> None:
    for username, password in (("mobium", "hunter3"), ("someone", "hunter2")):
        h.phone.reset()
        open_login(h)
        sign_in(h, username, password, enter=True)
        assert h.phone.state()["screen"] == "login/form"
        assert h.node(text="Incorrect username or password.")
        assert h.node(resource_id=PASSWORD)["text"] == "Password"
    assert "Welcome, mobium" not in [n["text"] for n in h.nodes()]


def test_the_password_is_never_drawn(h: Harness) -> None:
    open_login(h)
    sign_in(h, "mobium", "x", enter=False)
    h.tap(h.node(resource_id=PASSWORD))
    empty = h.image()
    h.out("input", "text", "WWWW")
    typed = h.image()
    assert empty != typed  # the dots are drawn …
    h.out("input", "keyevent", "KEYCODE_DEL", "KEYCODE_DEL", "KEYCODE_DEL", "KEYCODE_DEL")
    h.out("input", "text", "iiii")
    assert h.image() == typed  # … the same for any four characters: not the characters themselves
