"""The page's layout at common window widths: no control is clipped (the provider menu showed
"OpenAI-compatible serv" at 1400 px)."""

from __future__ import annotations

import pytest

from tests.browser.rigs import PhoneRig

pytestmark = pytest.mark.browser

# Each option's text against the room the menu gives it (its width less padding and the arrow).
FITS = """() => {
  const select = document.getElementById('settings-provider');
  const style = getComputedStyle(select);
  const probe = document.createElement('span');
  probe.style.font = style.font;
  probe.style.position = 'absolute';
  probe.style.whiteSpace = 'pre';
  document.body.append(probe);
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
  const clipped = [];
  for (const option of select.options) {
    probe.textContent = option.textContent;
    if (probe.offsetWidth > room) clipped.push(`${option.textContent} (${probe.offsetWidth} > ${room})`);
  }
  probe.remove();
  return clipped;
}"""


async def test_the_provider_menu_shows_every_choice_whole_at_common_widths(fresh: PhoneRig):
    page = fresh.page  # the page the phone tools' modules use: no boot of its own
    try:
        for width in (1920, 1400, 1280, 1024, 800, 420):
            await page.set_viewport_size({"width": width, "height": 900})
            assert await page.evaluate(FITS) == [], width
    finally:
        await page.set_viewport_size({"width": 1280, "height": 720})  # Playwright's default
