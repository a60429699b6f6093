"""The booted page is usable by everyone: axe-core (npm, injected by the test, never served by the page)
finds no WCAG 2.1 A/AA or best-practice violation, and every control is reachable by keyboard."""

from __future__ import annotations

import json

import pytest

from tests.support import ROOT, open_page

pytestmark = pytest.mark.browser
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def _axe_source() -> str:
    if not AXE.exists():
        pytest.fail("npm's axe-core is not installed: run scripts/setup --test")
    return AXE.read_text()


async def _violations(page) -> list[dict]:
    await page.add_script_tag(content=_axe_source())  # inline: no request, and the page never serves it
    result = await page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        TAGS,
    )
    return [
        {"id": v["id"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result["violations"]
    ]


async def test_axe_finds_no_violation_on_the_booted_page(browser, served):
    async with open_page(browser, f"{served.base}/") as (page, _watch):
        await page.wait_for_selector("#relay-badge.mcp-badge--ready", timeout=30_000)
        violations = await _violations(page)
        assert violations == [], json.dumps(violations, indent=1)


async def test_the_unpaired_page_with_its_banner_has_no_violation_either(browser, served):
    async with open_page(
        browser,
        f"{served.base}/?relayRetryMs=300",
        link=False,
        allowed_console=(r"WebSocket connection to .* failed",),
    ) as (page, _watch):
        await page.wait_for_selector("#pair-banner", state="visible", timeout=15_000)
        violations = await _violations(page)
        assert violations == [], json.dumps(violations, indent=1)


async def test_every_control_is_reachable_by_keyboard_and_installing_an_apk_is_a_real_button(browser, served):
    async with open_page(browser, f"{served.base}/") as (page, _watch):
        install = page.get_by_role("button", name="Install an APK…")
        assert await install.count() == 1
        # Tab through the page: every visible, enabled control is reached.
        wanted = set(
            await page.evaluate(
                """() => [...document.querySelectorAll('button, input, select, textarea, a[href], summary')]
                    .filter(e => e.offsetParent !== null && !e.disabled && e.tabIndex >= 0)
                    .filter(e => e.type !== 'file')
                    .map(e => e.id || e.textContent.trim())"""
            )
        )
        reached = set()
        await page.focus("body")
        for _ in range(len(wanted) * 2 + 20):
            await page.keyboard.press("Tab")
            reached.add(
                await page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()")
            )
        assert "apk-install" in reached
        assert wanted - reached == set(), sorted(wanted - reached)


async def test_the_developer_cards_live_tail_and_the_row_under_the_live_view_lay_out_whole(browser, served):
    async with open_page(browser, f"{served.base}/") as (page, _watch):
        # "Live tail": the box by its words (not a 10rem wide box pushing them away).
        box = await page.locator("#logs-tail").bounding_box()
        label = await page.locator("label:has(#logs-tail)").bounding_box()
        assert box is not None and label is not None and box["width"] < 30 and label["width"] < 150
        # The app field shows its whole placeholder.
        fits = await page.evaluate(
            """() => {
                const input = document.getElementById('logs-app');
                const style = getComputedStyle(input);
                const context = document.createElement('canvas').getContext('2d');
                context.font = `${style.fontSize} ${style.fontFamily}`;
                const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
                return context.measureText(input.placeholder).width + padding <= input.clientWidth + 1;
            }"""
        )
        assert fits
        # After a recording: the download link and a long status wrap as whole items, not word by word.
        await page.evaluate(
            """() => {
                document.documentElement.dataset.phone = 'connected';  // the live view's frame shows
                document.getElementById('record-download').hidden = false;
                document.getElementById('record-status').textContent =
                    'Recorded 12.3 s (4.1 MB) through scrcpy; download it below the live view';
            }"""
        )
        for selector in ("#record-button", "#record-download"):
            height = (await page.locator(selector).bounding_box())["height"]
            assert height < 40, (selector, height)  # one line
        status = await page.locator("#record-status").bounding_box()
        line = await page.evaluate(
            "parseFloat(getComputedStyle(document.getElementById('record-status')).lineHeight) || 20"
        )
        assert status["height"] <= 2 * line + 2, status  # at most two lines, not a word a line
