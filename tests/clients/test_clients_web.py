"""The web page in headless Chromium: two players play a whole game while a third page watches.

Playwright drives Debian's Chromium (``/usr/bin/chromium``); no browser is ever downloaded. Without
Chromium the test is skipped with the reason, unless ``YAHTZEE_REQUIRE_BROWSER=1`` (CI), where a
missing browser is a failure. Synchronisation is by Playwright's auto-waiting assertions and
``wait_for_function`` on the page's state, never by sleeping.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from clients_live import LiveServer

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TIMEOUT_MS = 20_000


def _require_browser() -> None:
    found = Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None
    if found:
        return
    reason = (
        f"Chromium not found at {CHROMIUM}: install it (Debian/Ubuntu: apt-get install chromium) "
        "or set YAHTZEE_CHROMIUM to run the browser tests"
    )
    if os.environ.get("YAHTZEE_REQUIRE_BROWSER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    _require_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        instance = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            await instance.close()


def _serves_the_page(server: LiveServer) -> bool:
    try:
        with urllib.request.urlopen(server.http + "/static/app.js", timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


async def test_two_players_and_a_spectator(live_server: LiveServer, browser: object) -> None:
    from playwright.async_api import Browser, Page, expect

    assert isinstance(browser, Browser)
    if not _serves_the_page(live_server):
        pytest.fail(
            "the server does not serve the web page: it must serve clients/web/index.html at / "
            "and the clients/web folder at /static/"
        )
    expect.set_options(timeout=TIMEOUT_MS)

    async def open_page() -> Page:
        context = await browser.new_context(viewport={"width": 1200, "height": 1000})
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.errors = errors  # type: ignore[attr-defined]
        await page.goto(live_server.http + "/")
        await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        return page

    ann, bob, eve = await open_page(), await open_page(), await open_page()

    # Ann creates a room (her name is markup on purpose: it must show as text).
    ann_name = "Ann <b>bold</b>"
    await ann.fill("#name", ann_name)
    await ann.fill("#seats", "2")
    await ann.select_option("#first-player", "seat_order")
    await ann.click("#create-button")
    await expect(ann.locator("#table")).to_be_visible()
    room = (await ann.locator("#room-id").text_content()) or ""
    assert room
    await expect(ann.locator("#waiting")).to_contain_text("1/2 seated")

    # Bob finds it in the list and joins; Eve watches it.
    await bob.fill("#name", "Bob")
    await bob.click("#refresh")
    await bob.locator(f'#rooms tr[data-room="{room}"] button.join').click()
    await expect(bob.locator("#table")).to_be_visible()
    await eve.click("#refresh")
    await eve.locator(f'#rooms tr[data-room="{room}"] button.watch').click()
    await expect(eve.locator("#role")).to_have_text("spectating")
    await expect(ann.locator("#spectators")).to_have_text("1")
    await expect(ann.locator("#waiting")).to_contain_text("2/2 seated")
    await expect(bob.locator("#start")).to_be_hidden()

    await ann.click("#start")
    await expect(eve.locator("#turn")).to_contain_text(ann_name)
    await expect(eve.locator("#roll")).to_be_hidden()

    pages = {
        await ann.evaluate("window.yahtzee.session.player"): ann,
        await bob.evaluate("window.yahtzee.session.player"): bob,
    }

    async def model(page: Page, expression: str) -> object:
        return await page.evaluate(
            f"(() => {{ const m = window.yahtzee.model; return {expression}; }})()"
        )

    turn = 0
    confirmed = dropped = reloaded = held = False
    while True:
        await eve.wait_for_function(
            "(() => { const m = window.yahtzee.model;"
            " return m && (m.status === 'finished' || m.phase === 'awaiting_roll'); })()"
        )
        if await model(eve, "m.status") == "finished":
            break
        turn += 1
        current = await model(eve, "m.current")
        page = pages[current]

        if turn == 4 and not reloaded:
            # A reload keeps the game: the seat token lives in sessionStorage.
            await page.reload()
            await expect(page.locator("#turn")).to_have_text(
                "Your turn (round " + str((turn + 1) // 2) + ")"
            )
            reloaded = True
        if turn == 7 and not dropped:
            # The network drops; the page reconnects by itself and keeps playing.
            await page.evaluate("window.yahtzee.dropConnection()")
            dropped = True

        await expect(page.locator("#turn")).to_contain_text("Your turn")
        roll = page.locator("#roll")
        await expect(roll).to_have_text("Roll (3 left)")
        if turn == 2:
            await page.keyboard.press("r")  # the keyboard works too
        else:
            await roll.click()
        await expect(page.locator("#dice .die.blank")).to_have_count(0)
        await expect(roll).to_have_text("Roll (2 left)")

        if not held:
            # Hold two dice, roll again: they stay, the others are re-rolled.
            faces = [
                await d.get_attribute("data-face") for d in await page.locator("#dice .die").all()
            ]
            await page.locator('#dice .die[data-index="0"]').click()
            await page.locator('#dice .die[data-index="1"]').click()
            await expect(page.locator("#dice .die.held")).to_have_count(2)
            await expect(eve.locator("#dice .die.held")).to_have_count(2)
            await roll.click()
            await expect(roll).to_have_text("Roll (1 left)")
            new_faces = [
                await d.get_attribute("data-face") for d in await page.locator("#dice .die").all()
            ]
            assert new_faces[:2] == faces[:2]
            held = True

        cells = page.locator("#scorecard td.preview.mine")
        await expect(cells.first).to_be_visible()
        if turn == 9:
            await expect(eve.locator("#dice .die.blank")).to_have_count(0)
            ARTIFACTS.mkdir(exist_ok=True)
            await eve.screenshot(path=str(ARTIFACTS / "web-table-spectator.png"), full_page=True)
            await page.screenshot(path=str(ARTIFACTS / "web-table-player.png"), full_page=True)
        options = []
        for cell in await cells.all():
            options.append(
                (int((await cell.text_content()) or "0"), await cell.get_attribute("data-box"))
            )
        best_points, best_box = max(options)
        zero = [box for points, box in options if points == 0]
        if not confirmed and zero and best_points > 0:
            # Choosing a 0 while another box scores more asks first; cancel it.
            await page.locator(f'#scorecard td.preview.mine[data-box="{zero[0]}"]').click()
            await expect(page.locator("#confirm")).to_be_visible()
            await expect(page.locator("#confirm-text")).to_contain_text(str(best_points))
            await page.click("#confirm-no")
            await expect(page.locator("#confirm")).to_be_hidden()
            confirmed = True
        best_cell = page.locator(f'#scorecard td.preview.mine[data-box="{best_box}"]')
        if turn == 3:
            await best_cell.focus()  # the boxes work from the keyboard too
            await page.keyboard.press("Enter")
        else:
            await best_cell.click()
        filled = eve.locator(
            f'#scorecard td.filled[data-box="{best_box}"][data-player="{current}"]'
        )
        await expect(filled).to_have_text(str(best_points))

    assert turn == 26
    assert (confirmed, dropped, reloaded, held) == (True, True, True, True)

    # Everyone sees the same final standings; names are text, never markup.
    for page in (ann, bob, eve):
        await expect(page.locator("#standings")).to_be_visible()
        await expect(page.locator("#standings-list li")).to_have_count(2)
        await expect(page.locator("#turn")).to_have_text("Game over")
    standings = await eve.locator("#standings-list li").all_text_contents()
    assert standings == await ann.locator("#standings-list li").all_text_contents()
    assert standings == await bob.locator("#standings-list li").all_text_contents()
    assert any(line.startswith(ann_name + ": ") for line in standings)
    assert await eve.locator("#scorecard thead b").count() == 0
    assert ann_name in ((await eve.locator("#scorecard thead").text_content()) or "")
    totals_eve = await eve.locator("#scorecard td.total").all_text_contents()
    assert totals_eve == await ann.locator("#scorecard td.total").all_text_contents()
    ARTIFACTS.mkdir(exist_ok=True)
    await ann.screenshot(path=str(ARTIFACTS / "web-table.png"), full_page=True)

    # The page that followed events agrees with a page built from a fresh snapshot.
    late = await open_page()
    await late.goto(live_server.http + f"/?room={room}&watch=1")
    await expect(late.locator("#standings")).to_be_visible()
    cards = "window.yahtzee.model.players.map((p) => [p.name, p.scorecard, p.totals])"
    assert await late.evaluate(cards) == await ann.evaluate(cards)
    for page in (ann, bob, eve):
        assert page.errors == []  # type: ignore[attr-defined]


async def test_private_room_and_leaving(live_server: LiveServer, browser: object) -> None:
    from playwright.async_api import Browser, expect

    from clients.client import Client

    assert isinstance(browser, Browser)
    if not _serves_the_page(live_server):
        pytest.fail("the server does not serve the web page")
    expect.set_options(timeout=TIMEOUT_MS)
    async with Client(live_server.ws) as host:
        created = await host.create_room(seats=2, public=False)
        assert created.invite_code
        await host.join(created.room, "Hanna", created.invite_code)

        page = await (await browser.new_context()).new_page()
        page.set_default_timeout(TIMEOUT_MS)
        await page.goto(live_server.http + "/")
        await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        await expect(page.locator(f'#rooms tr[data-room="{created.room}"]')).to_have_count(0)

        # Without the code the server refuses, and the page says why.
        await page.fill("#name", "Gus")
        await page.fill("#join-room", created.room)
        await page.click("#join-button")
        await expect(page.locator("#notice")).to_contain_text("private")
        await expect(page.locator("#lobby")).to_be_visible()

        await page.fill("#join-invite", created.invite_code)
        await page.click("#join-button")
        await expect(page.locator("#table")).to_be_visible()
        await expect(page.locator("#invite")).to_contain_text(created.invite_code)
        await expect(page.locator("#waiting")).to_contain_text("2/2 seated")
        await expect(page.locator("#waiting")).to_contain_text("Hanna starts the game")
        async with asyncio.timeout(20):
            await host.wait_for(lambda m: len(m.players) == 2)

        await page.click("#leave")
        await expect(page.locator("#lobby")).to_be_visible()
        async with asyncio.timeout(20):
            await host.wait_for(lambda m: len(m.players) == 1)
        assert await page.evaluate("sessionStorage.getItem('yahtzee.session')") is None

        # A shared watch link opens the spectator view directly.
        link = f"/?room={created.room}&invite={created.invite_code}&watch=1"
        watcher = await (await browser.new_context()).new_page()
        await watcher.goto(live_server.http + link)
        await expect(watcher.locator("#role")).to_have_text("spectating")
        await expect(watcher.locator("#scorecard thead")).to_contain_text("Hanna")
