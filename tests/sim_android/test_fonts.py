"""The simulated phone draws accented letters, Cyrillic, Chinese and emoji with real glyphs (a font per
glyph, from the Debian packages scripts/setup installs), and says on its screen when a font is missing."""

from __future__ import annotations

from PIL import Image, ImageChops, ImageDraw

from phone_agent.sim.android import fonts
from tests.sim_android.conftest import Harness


def drawn(text: str, size: int = 48, *, primary_only: bool = False) -> Image.Image:
    image = Image.new("RGB", (400, 100), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    if primary_only:  # what the phone drew before: one font, boxes for what it lacks
        draw.text((10, 50), text, font=fonts.font(size), fill=(0, 0, 0), anchor="lm")
    else:
        fonts.draw_text(draw, (10, 50), text, size, (0, 0, 0))
    return image


def test_the_font_packages_are_installed_and_cover_the_scripts() -> None:
    assert fonts.missing_fonts() == [], "run scripts/setup (it installs the sim's fonts)"
    for char in "éЖ你👋":
        face = next(face for face in fonts.faces() if face.has(char))
        assert face.path is not None  # not the ASCII-only primary font


def test_each_glyph_comes_from_a_font_that_has_it_not_a_box() -> None:
    box = drawn("\U0010fffd", primary_only=True)  # a code point no font has: the missing-glyph box
    for char in ("é", "Ж", "你", "好"):
        assert ImageChops.difference(drawn(char), box).getbbox() is not None, char
        assert ImageChops.difference(drawn(char), drawn(char, primary_only=True)).getbbox() is not None, char
    emoji = drawn("👋")
    colours = emoji.getcolors(maxcolors=1 << 16) or []
    assert any(abs(r - g) > 40 or abs(g - b) > 40 for _n, (r, g, b) in colours), "colour emoji"
    # widths add up run by run (layouts wrap and ellipsize with them)
    assert fonts.text_width("ab你好", 40) > fonts.text_width("ab", 40) + 60


def test_typed_unicode_shows_on_the_screen_and_in_the_dump(h: Harness) -> None:
    h.phone.launch("com.google.android.apps.messaging")
    h.tap(h.node(text="Zhang San"))
    field = next(node for node in h.nodes() if node["class"].endswith("EditText"))
    h.tap(field)
    before = h.image()
    assert h.phone.type_text("café 你好")
    after = h.image()
    assert "café 你好" in {node["text"] for node in h.nodes()}
    x1, y1, x2, y2 = field.bounds
    assert ImageChops.difference(before.crop((x1, y1, x2, y2)), after.crop((x1, y1, x2, y2))).getbbox()


def test_without_a_font_package_the_phone_says_so_on_its_screen(h: Harness, monkeypatch) -> None:
    assert not any(node["resource-id"].endswith("font_notice") for node in h.nodes())
    covers, package, _path, strike = fonts.FALLBACKS[2]
    gone = (covers, package, "/nonexistent/NotoColorEmoji.ttf", strike)
    monkeypatch.setattr(fonts, "FALLBACKS", (*fonts.FALLBACKS[:2], gone))
    fonts.faces.cache_clear()
    try:
        phone = Harness()
        notice = phone.node(resource_id="com.android.systemui:id/font_notice")
        assert notice["text"] == "Fonts missing: run scripts/setup"
        assert "emoji (fonts-noto-color-emoji)" in notice["content-desc"]
    finally:
        monkeypatch.undo()
        fonts.faces.cache_clear()
