"""The web page in headless Chromium, on desktop (1200 x 1000) and phone (390 x 844) viewports.

Playwright drives Debian's Chromium (``/usr/bin/chromium``); no browser is ever downloaded. Without
Chromium the tests are skipped with the reason, unless ``YAHTZEE_REQUIRE_BROWSER=1`` (CI), where a
missing browser is a failure. One browser serves the whole module; the pages talk to the session's
real server process. Synchronisation is by Playwright's auto-waiting assertions and
``wait_for_function`` on the page's state, never by sleeping.

The accessibility check runs axe-core (npm, installed by ``python3 .ci/dev.py setup``) inside the
page: no serious or critical violation on the lobby, the table and game over (and on the protocol
1.2 views: a room's lobby with computer players, the advice, the analysis).

The computer-player tests run against a server of their own whose computers move at once
(``YAHTZEE_COMPUTER_DELAY_MS=0``, the ``computer_server`` fixture).

``YAHTZEE_SCREENSHOTS=1`` writes the README's screenshots to ``clients/web/screenshots/``;
otherwise they go to ``tests/artifacts/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from clients_live import LiveServer, spawn_server, stop_server
from procs import scaled

from clients.client import Client
from clients.strategy import decide

# Game over shows the analysis (GET /rooms/{id}/analysis), which needs the strategy table of the
# official rules: the session builds it once and the servers load it from the session's cache.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("official_table"),
]

CHROMIUM = os.environ.get("YAHTZEE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
SHOTS = ROOT / "clients" / "web" / "screenshots"
AXE = Path(__file__).resolve().parent / "web" / "node_modules" / "axe-core" / "axe.min.js"
TIMEOUT_MS = 20_000
DESKTOP = {"width": 1200, "height": 1000}
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


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


def js_fixed(x: float, digits: int) -> str:
    """``x.toFixed(digits)`` as the page shows it: JavaScript rounds the exact binary value and
    a tie away from zero (98.25 shows "98.3"), where Python's format rounds a tie to even
    ("98.2"); numbers the server rounds to 2 decimals end in .25 or .75 one time in 50."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _shot(name: str) -> str:
    folder = SHOTS if os.environ.get("YAHTZEE_SCREENSHOTS") == "1" else ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / name)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    _require_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        instance = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            await instance.close()


@pytest.fixture(scope="module")
def web_server(live_server: LiveServer) -> LiveServer:
    try:
        with urllib.request.urlopen(live_server.http + "/static/app.js", timeout=5) as response:
            serves = response.status == 200
    except OSError:
        serves = False
    if not serves:
        pytest.fail(
            "the server does not serve the web page: it must serve clients/web/index.html at / "
            "and the clients/web folder at /static/"
        )
    return live_server


@pytest.fixture
def own_server(redis_server_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    """A server of its own (empty lobby), for quick play, which takes any open room."""
    process, server = spawn_server(redis_server_url, f"tq{secrets.token_hex(4)}:", tmp_path)
    try:
        yield server
    finally:
        stop_server(process)


class Pages:
    """Opens pages in fresh browser contexts; records page errors and requests; closes all."""

    def __init__(self, browser: Any, server: LiveServer) -> None:
        self.browser = browser
        self.server = server
        self.contexts: list[Any] = []
        self.errors: list[str] = []
        self.requests: list[str] = []

    async def context(
        self, *, phone: bool = False, viewport: dict[str, int] | None = None, **options: Any
    ) -> Any:
        context = await self.browser.new_context(
            viewport=viewport or (PHONE if phone else DESKTOP),
            is_mobile=phone,
            has_touch=phone,
            **options,
        )
        self.contexts.append(context)
        return context

    async def refusing(self, pattern: str, status: int, code: str, message: str) -> Any:
        """A context whose requests to ``pattern`` get an error answer from the server."""
        context = await self.context()
        body = json.dumps({"code": code, "message": message})
        await context.route(
            pattern,
            lambda route: route.fulfill(status=status, content_type="application/json", body=body),
        )
        return context

    async def open(self, path: str = "/", *, phone: bool = False, context: Any = None) -> Any:
        from playwright.async_api import expect

        context = context or await self.context(phone=phone)
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("request", lambda request: self.requests.append(request.url))
        await page.goto(self.server.http + path)
        await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        return page

    async def close(self) -> None:
        for context in self.contexts:
            await context.close()


@contextlib.asynccontextmanager
async def opened_pages(browser: Any, server: LiveServer) -> AsyncIterator[Pages]:
    """Pages on ``server``, closed at the end; no page may have had an error."""
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    opened = Pages(browser, server)
    try:
        yield opened
    finally:
        await opened.close()
    assert opened.errors == []
    # The icon is inline: no page ever asks for /favicon.ico (and gets a 404).
    assert not [url for url in opened.requests if url.endswith("/favicon.ico")]


@pytest_asyncio.fixture(loop_scope="module")
async def pages(browser: Any, web_server: LiveServer) -> AsyncIterator[Pages]:
    async with opened_pages(browser, web_server) as opened:
        yield opened


async def model(page: Any, expression: str) -> Any:
    return await page.evaluate(
        f"(() => {{ const m = window.yahtzee.model; return {expression}; }})()"
    )


async def axe_serious(page: Any) -> list[str]:
    """Serious and critical axe-core violations on the page, one line each."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.add_script_tag(path=str(AXE))
    found = await page.evaluate(
        """async () => {
            // An element fading in (the celebration pops in from opacity 0 over 1.2 s) has
            // too little contrast until it is opaque: check the page as it settles.
            await Promise.all(document.getAnimations()
              .filter((a) => a.effect && a.effect.getTiming().iterations !== Infinity)
              .map((a) => a.finished.catch(() => null)));
            const result = await axe.run(document, { resultTypes: ["violations"] });
            return result.violations
              .filter((v) => v.impact === "serious" || v.impact === "critical")
              .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3)
                .map((n) => n.target.join(" ")).join(", ")}`);
        }"""
    )
    return list(found)


async def play_solo_bot_game(server: LiveServer, name: str) -> tuple[str, int]:
    """A 1-seat public game played to the end by a Python client; its room and final total."""
    async with Client(server.ws) as bot:
        created = await bot.create_room(seats=1, first_player="seat_order")
        await bot.join(created.room, name)
        await bot.start()
        while True:
            state = await bot.wait_for(
                lambda m: m.status == "finished" or m.current_player == bot.player
            )
            if state.status == "finished":
                return created.room, state.players[0].upper + 0 + state.players[0].grand
            if state.phase == "awaiting_roll":
                await bot.roll()
                continue
            move = decide(state.dice, state.rolls_left, state.preview)
            if move.score:
                await bot.score(move.score)
            else:
                await bot.roll(keep=move.keep)


# ---------------------------------------------------------------------------------- tests


async def test_the_accessibility_check_sees_a_celebration_once_it_is_opaque(
    pages: Pages,
) -> None:
    # the celebration pops in from opacity 0: checked mid-animation, its text had too little
    # contrast (a CI run failed on it); the check waits for the page's animations to end
    page = await pages.open()
    await page.evaluate("document.getElementById('celebrate').hidden = false")
    assert await page.evaluate("document.getAnimations().length") > 0  # popping in now
    assert await axe_serious(page) == []
    assert await page.evaluate("document.getAnimations().length") == 0


async def test_two_players_and_a_spectator(pages: Pages) -> None:
    from playwright.async_api import Page, expect

    ann, bob, eve = await pages.open(), await pages.open(), await pages.open()
    await expect(ann.locator("#refresh")).to_have_count(0)  # the lobby is live

    # Ann creates a room (her name is markup on purpose: it must show as text).
    ann_name = "Ann <b>bold</b>"
    await ann.fill("#name", ann_name)
    await ann.click("#more summary")
    await ann.fill("#seats", "2")
    await ann.select_option("#first-player", "seat_order")
    await ann.click("#create-button")
    await expect(ann.locator("#table")).to_be_visible()
    room = (await ann.locator("#room-id").text_content()) or ""
    assert room
    await expect(ann.locator("#waiting")).to_contain_text("1/2 seated")

    # Bob sees it appear in the lobby without doing anything, and joins; Eve watches it.
    await bob.fill("#name", "Bob")
    await bob.locator(f'#rooms li[data-room="{room}"] button.join').click()
    await expect(bob.locator("#table")).to_be_visible()
    await eve.locator(f'#rooms li[data-room="{room}"] button.watch').click()
    await expect(eve.locator("#role")).to_have_text("spectating")
    await expect(ann.locator("#spectators")).to_have_text("1")
    await expect(ann.locator("#waiting")).to_contain_text("2/2 seated")
    await expect(bob.locator("#start")).to_be_hidden()
    # Each player's own column comes first.
    await expect(bob.locator("#scorecard thead th").nth(1)).to_contain_text("Bob (you)")

    await ann.click("#start")  # every seat is taken: no question asked
    await expect(eve.locator("#turn")).to_contain_text(ann_name)
    await expect(eve.locator("#roll")).to_be_hidden()
    await expect(eve.locator("#keys")).to_be_hidden()  # no key hints for spectators
    await expect(ann.locator("#keys")).to_be_visible()
    await expect(ann.locator("#scorecard thead th.current")).to_contain_text(ann_name)
    await expect(ann.locator("#turn-line")).to_have_class(re.compile(r"\bmine\b"))
    await expect(ann).to_have_title(re.compile("Your turn"))
    await expect(bob).not_to_have_title(re.compile("Your turn"))

    pages_by_player: dict[str, Page] = {
        await ann.evaluate("window.yahtzee.session.player"): ann,
        await bob.evaluate("window.yahtzee.session.player"): bob,
    }

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
        page = pages_by_player[current]

        if turn == 4 and not reloaded:
            # A reload keeps the game, and the move history is rebuilt from the room's log.
            await page.reload()
            await expect(page.locator("#turn")).to_have_text(
                "Your turn (round " + str((turn + 1) // 2) + ")"
            )
            await expect(page.locator("#log li", has_text="Bob sat down")).to_have_count(1)
            await expect(page.locator("#log li", has_text="scored")).to_have_count(3)
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
        if turn == 1:
            # The rolled dice tumble (all five: none was held); the roll is announced.
            await expect(page.locator("#dice .die.rolling")).to_have_count(5)
            animation = await page.evaluate(
                "getComputedStyle(document.querySelector('#dice .die')).animationName"
            )
            assert animation == "tumble"  # and "none" with reduced motion (the phone test)
            await expect(eve.locator("#announce")).to_contain_text(f"{ann_name} rolled")
            await expect(ann.locator("#announce")).to_contain_text("You rolled")
            await expect(page.locator("#dice .die").first).to_have_attribute(
                "aria-label", re.compile(r"^Die 1: [1-6]$")
            )

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
            await eve.screenshot(path=_shot("web-spectator.png"), full_page=True)
            await page.screenshot(path=_shot("web-game.png"), full_page=True)
        options = []
        for cell in await cells.all():
            points = int((await cell.text_content()) or "0")
            box = await cell.get_attribute("data-box")
            # Screen readers hear the box and its points, not a bare number.
            label = await cell.locator("button").get_attribute("aria-label")
            assert label is not None
            assert re.fullmatch(rf"[A-Za-z0-9 ]+: {points} points?", label), label
            options.append((points, box))
        best_points, best_box = max(options)
        zero = [box for points, box in options if points == 0]
        if not confirmed and zero and best_points > 0:
            # Choosing a 0 while another box scores more asks first; cancel it.
            await page.locator(f'#scorecard td.preview.mine[data-box="{zero[0]}"] button').click()
            await expect(page.locator("#confirm")).to_be_visible()
            await expect(page.locator("#confirm-text")).to_contain_text(str(best_points))
            await page.click("#confirm-no")
            await expect(page.locator("#confirm")).to_be_hidden()
            confirmed = True
        best_button = page.locator(f'#scorecard td.preview.mine[data-box="{best_box}"] button')
        if turn == 3:
            await best_button.focus()  # the boxes work from the keyboard too
            await page.keyboard.press("Enter")
        else:
            await best_button.click()
        filled = eve.locator(
            f'#scorecard td.filled[data-box="{best_box}"][data-player="{current}"]'
        )
        await expect(filled).to_have_text(str(best_points))
        await expect(eve.locator("#announce")).to_contain_text(f"scored {best_points} in")

    assert turn == 26
    assert (confirmed, dropped, reloaded, held) == (True, True, True, True)

    # Everyone sees the same final standings and the same winner; names are text, never markup.
    for page in (ann, bob, eve):
        await expect(page.locator("#game-over")).to_be_visible()
        await expect(page.locator("#standings-list li")).to_have_count(2)
        await expect(page.locator("#turn")).to_have_text("Game over")
        await expect(page.locator("#role")).to_have_text("game over")
        await expect(page.locator("#play-area")).to_be_hidden()
    standings = await eve.locator("#standings-list li").all_text_contents()
    assert standings == await ann.locator("#standings-list li").all_text_contents()
    assert standings == await bob.locator("#standings-list li").all_text_contents()
    assert any(line.startswith(ann_name + ": ") for line in standings)
    winner_line = standings[0]
    winner_total = int(winner_line.split(": ")[1].split(" ")[0])
    banner = (await eve.locator("#banner").text_content()) or ""
    assert f"{winner_total} points" in banner
    assert await eve.locator("#scorecard thead b").count() == 0
    assert ann_name in ((await eve.locator("#scorecard thead").text_content()) or "")
    totals_eve = sorted(await eve.locator("#scorecard td.total").all_text_contents())
    assert totals_eve == sorted(await ann.locator("#scorecard td.total").all_text_contents())
    upper = await eve.locator("#scorecard td.upper").all_text_contents()
    assert all(re.fullmatch(r"\d+/63", text) for text in upper), upper
    await expect(eve.locator("#rematch")).to_be_hidden()

    # The moves are numbered, newest first; numbers above 99 keep all their digits.
    numbers = await eve.locator("#log li .move-no").all_text_contents()
    assert [int(n.rstrip(".")) for n in numbers] == list(range(len(numbers), 0, -1))
    number = eve.locator("#log li .move-no").first
    for wide in ("123.", "1234."):
        fits = await number.evaluate(
            """(n, text) => { n.textContent = text; const li = n.parentElement;
                return n.scrollWidth <= n.clientWidth &&
                  n.getBoundingClientRect().left >= li.getBoundingClientRect().left; }""",
            wide,
        )
        assert fits, wide

    # A late spectator gets the table from a snapshot and the history from the log.
    late = await pages.open(f"/#room={room}&watch=1")
    await expect(late.locator("#game-over")).to_be_visible()
    cards = "window.yahtzee.model.players.map((p) => [p.name, p.scorecard, p.totals])"
    assert await late.evaluate(cards) == await ann.evaluate(cards)
    await expect(late.locator("#log li", has_text="sat down")).to_have_count(2)
    await expect(late.locator("#log li", has_text=" scored ")).to_have_count(26)
    await expect(late.locator("#log li").first).to_contain_text("Game over")

    # Rematch: a room with the same settings and seats; it starts once both are seated.
    await ann.click("#rematch")
    await expect(ann.locator("#waiting")).to_contain_text("1/2 seated")
    rematch_room = (await ann.locator("#room-id").text_content()) or ""
    assert rematch_room
    assert rematch_room != room
    await expect(ann.locator("#room-options")).to_contain_text("first player: seat order")


async def test_lobby_yatzy_confirmations_resume_and_leave(pages: Pages) -> None:
    from playwright.async_api import expect

    context = await pages.context()
    page = await pages.open(context=context)
    async with Client(pages.server.ws) as remote, Client(pages.server.ws) as friend:
        # A room made elsewhere shows up by itself: no Refresh button.
        elsewhere = await remote.create_room(seats=3)
        await remote.join(elsewhere.room, "Remote")
        listed = page.locator(f'#rooms li[data-room="{elsewhere.room}"]')
        await expect(listed).to_contain_text("Remote")
        await expect(listed).to_contain_text("1/3 seated")
        await remote.leave()
        # The forms are folded under "More options".
        await expect(page.locator("#create")).to_be_hidden()
        await page.click("#more summary")

        # A Yatzy room: the form and the table show only Yatzy's options.
        await page.fill("#name", "Pia")
        await page.select_option("#rules", "yatzy")
        await expect(page.locator("#joker")).to_be_hidden()
        await expect(page.locator("#extra-yahtzees")).to_be_hidden()
        await page.click("#create-button")
        await expect(page.locator("#table")).to_be_visible()
        room = (await page.locator("#room-id").text_content()) or ""
        options = page.locator("#room-options")
        await expect(options).to_contain_text("Yatzy")
        await expect(options).not_to_contain_text("Joker")
        await expect(options).not_to_contain_text("extra")
        await expect(page.locator("#scorecard tbody th", has_text="One Pair")).to_have_count(1)

        # The share link carries the room in the fragment.
        await page.click("#share")
        await expect(page.locator("#share-link")).to_have_value(
            f"{pages.server.http}/#/room/{room}"
        )

        # Starting with an empty seat asks first; cancelled, the room waits.
        await page.click("#start")
        await expect(page.locator("#confirm")).to_be_visible()
        await expect(page.locator("#confirm-text")).to_contain_text("1 of 2 seats are still empty")
        await page.click("#confirm-no")
        await expect(page.locator("#waiting")).to_contain_text("1/2 seated")

        await friend.join(room, "Friend")
        await expect(page.locator("#waiting")).to_contain_text("2/2 seated")
        await page.click("#start")
        await expect(page.locator("#confirm")).to_be_hidden()
        await expect(page.locator("#turn")).to_contain_text("round 1")
        player = await page.evaluate("window.yahtzee.session.player")

        # The tab is closed; a new tab of the same browser offers to resume the seat.
        await page.close()
        again = await pages.open(context=context)
        await expect(again.locator("#resume")).to_be_visible()
        await expect(again.locator("#resume-text")).to_contain_text(room)
        await again.click("#resume-button")
        await expect(again.locator("#table")).to_be_visible()
        await expect(again.locator("#room-id")).to_have_text(room)
        assert await again.evaluate("window.yahtzee.session.player") == player
        await expect(again.locator("#log li", has_text="The game started")).to_have_count(1)

        # Leaving mid-game asks first: cancel keeps the seat, confirm forfeits.
        await again.click("#leave")
        await expect(again.locator("#confirm-text")).to_contain_text("forfeit")
        await again.click("#confirm-no")
        await expect(again.locator("#table")).to_be_visible()
        await again.click("#leave")
        await again.click("#confirm-yes")
        await expect(again.locator("#lobby")).to_be_visible()
        await expect(again.locator("#resume")).to_be_hidden()
        async with asyncio.timeout(scaled(20)):
            await friend.wait_for(lambda m: any(p.forfeited for p in m.players))


async def test_private_room_by_shared_link(pages: Pages) -> None:
    from playwright.async_api import expect

    async with Client(pages.server.ws) as host:
        created = await host.create_room(seats=2, public=False)
        assert created.invite_code
        await host.join(created.room, "Hanna", created.invite_code)

        page = await pages.open()
        await expect(page.locator(f'#rooms li[data-room="{created.room}"]')).to_have_count(0)
        # Without the code the server refuses, and the page says why.
        await page.fill("#name", "Gus")
        await page.click("#more summary")
        await page.fill("#join-room", created.room)
        await page.click("#join-button")
        await expect(page.locator("#notice")).to_contain_text("private")
        await expect(page.locator("#lobby")).to_be_visible()

        # The host's link: room and invite code in the fragment, never in the query.
        link = f"/#room={created.room}&invite={created.invite_code}"
        guest = await pages.open(link)
        # The landing shows the room, its host and players, and one Join button.
        await expect(guest.locator("#invited")).to_be_visible()
        await expect(guest.locator("#hero")).to_be_hidden()
        await expect(guest.locator("#invited-title")).to_contain_text("Hanna invites you")
        await expect(guest.locator("#invited-text")).to_contain_text("1 of 2 seats taken")
        await expect(guest.locator("#invited-players li")).to_have_text(["Hanna (host) "])
        await expect(guest.locator("#invited button:visible")).to_have_count(1)
        assert await axe_serious(guest) == []  # the invitation
        await guest.fill("#invite-name", "Gus")
        await guest.click("#invited-join")
        await expect(guest.locator("#table")).to_be_visible()
        await expect(guest.locator("#waiting")).to_contain_text("Hanna starts the game")
        # Hanna sat down before Gus came: that line comes from the private room's log.
        await expect(guest.locator("#log li", has_text="Hanna sat down")).to_have_count(1)
        await guest.click("#share")
        shared = await guest.locator("#share-link").input_value()
        assert shared == f"{pages.server.http}/#/room/{created.room}?invite={created.invite_code}"

        assert urllib.parse.urlsplit(shared).query == ""  # all of it in the fragment
        async with asyncio.timeout(scaled(20)):
            await host.wait_for(lambda m: len(m.players) == 2)

        await guest.click("#leave")  # in the lobby: no forfeit, no question
        await expect(guest.locator("#lobby")).to_be_visible()
        async with asyncio.timeout(scaled(20)):
            await host.wait_for(lambda m: len(m.players) == 1)
        assert await guest.evaluate("localStorage.getItem('yahtzee.session')") is None

        watcher = await pages.open(link + "&watch=1")
        await expect(watcher.locator("#role")).to_have_text("spectating")
        await expect(watcher.locator("#scorecard thead")).to_contain_text("Hanna")
        # The old link form is rewritten to the new address.
        await watcher.wait_for_function(
            f"location.hash === '#/watch/{created.room}?invite={created.invite_code}'"
        )

        # Once the game has started, the friend's link offers to watch it.
        await host.start()
        late = await pages.open(link)
        await expect(late.locator("#invited-text")).to_contain_text("the game has started")
        await expect(late.locator("#invited-join")).to_be_hidden()
        await late.click("#invited-watch")
        await expect(late.locator("#role")).to_have_text("spectating")


async def test_phone_holds_eight_players(pages: Pages) -> None:
    from playwright.async_api import expect

    bots = [Client(pages.server.ws) for _ in range(7)]
    try:
        for bot in bots:
            await bot.connect()
        created = await bots[0].create_room(seats=8, first_player="seat_order")
        for number, bot in enumerate(bots):
            await bot.join(created.room, f"Player {number + 1} Longname")

        context = await pages.context(phone=True, reduced_motion="reduce")
        page = await pages.open(phone=True, context=context)
        # The lobby fits the phone: the Join button is on screen.
        join = page.locator(f'#rooms li[data-room="{created.room}"] button.join')
        await expect(join).to_be_visible()
        box = await join.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= PHONE["width"]
        await page.screenshot(path=_shot("web-phone-lobby.png"), full_page=False)
        await page.fill("#name", "Me")
        await join.click()
        await expect(page.locator("#waiting")).to_contain_text("8/8 seated")
        await bots[0].start()
        await expect(page.locator("#turn")).to_contain_text("round 1")

        # No sideways scrolling of the page; the scorecard scrolls inside its box, with the
        # box names pinned and my column first.
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"]
        await expect(page.locator("#scorecard thead th")).to_have_count(9)
        await expect(page.locator("#scorecard thead th").nth(1)).to_contain_text("Me (you)")
        sticky = await page.evaluate(
            "getComputedStyle(document.querySelector('#scorecard tbody th')).position"
        )
        assert sticky == "sticky"
        await expect(page.locator("#keys")).to_be_hidden()  # no key hints on a phone
        # Reduced motion: the dice do not tumble.
        animation = await page.evaluate(
            """(() => { const d = document.querySelector('#dice .die');
                d.classList.add('rolling'); return getComputedStyle(d).animationName; })()"""
        )
        assert animation == "none"
        await bots[0].roll()
        await expect(page.locator("#dice .die.blank")).to_have_count(0)
        await page.screenshot(path=_shot("web-phone.png"), full_page=False)
    finally:
        for bot in bots:
            await bot.close()


def _path(url: str) -> str:
    return urllib.parse.urlsplit(url).path


async def test_lobby_is_pushed_to_a_second_page_without_any_click(pages: Pages) -> None:
    from playwright.async_api import expect

    creator, watcher = await pages.open(), await pages.open()
    await watcher.wait_for_function("window.yahtzee.lobbyMode === 'stream'")
    # Another client (the first page) creates a room; the second page's lobby shows it.
    await creator.fill("#name", "Pushed Paula")
    await creator.click("#more summary")
    await creator.click("#create-button")
    await expect(creator.locator("#table")).to_be_visible()
    room = (await creator.locator("#room-id").text_content()) or ""
    listed = watcher.locator(f'#rooms li[data-room="{room}"]')
    await expect(listed).to_contain_text("Pushed Paula")
    # A stranger (the Python client) takes the second seat: the line follows.
    async with Client(pages.server.ws) as stranger:
        await stranger.join(room, "Stranger Sam")
        await expect(listed).to_contain_text("2/2 seated")
    # Pushed, not polled: the pages opened the stream and never asked GET /rooms.
    assert "/lobby" in {_path(url) for url in pages.requests}
    assert "/rooms" not in {_path(url) for url in pages.requests}


async def test_lobby_falls_back_to_polling_when_the_stream_is_refused(pages: Pages) -> None:
    from playwright.async_api import expect

    context = await pages.refusing(
        "**/lobby", 429, "rate_limited", "too many connections from this address"
    )
    page = await pages.open(context=context)
    await page.wait_for_function("window.yahtzee.lobbyMode === 'polling'")
    async with Client(pages.server.ws) as other:
        created = await other.create_room(seats=2)
        await other.join(created.room, "Polled Pete")
        await expect(page.locator(f'#rooms li[data-room="{created.room}"]')).to_contain_text(
            "Polled Pete"
        )
    assert "/rooms" in {_path(url) for url in pages.requests}


async def test_finished_games_replay(pages: Pages) -> None:
    from playwright.async_api import expect

    page = await pages.open()
    room, _ = await play_solo_bot_game(pages.server, "Replay Rita")
    snapshot = await page.evaluate(f"fetch('/rooms/{room}').then((r) => r.json())")
    final_total = snapshot["state"]["players"][0]["totals"]["grand"]

    # The finished game appears in its own list, by itself; it is not among the open rooms.
    finished = page.locator(f'#finished li[data-room="{room}"]')
    await expect(finished).to_contain_text("Replay Rita")
    await expect(page.locator(f'#rooms li[data-room="{room}"]')).to_have_count(0)
    await page.screenshot(path=_shot("web-lobby.png"), full_page=True)

    await finished.locator("button.replay").click()
    await expect(page.locator("#replay")).to_be_visible()
    await expect(page.locator("#replay-pos")).to_have_text(re.compile(r"^0 / \d+$"))
    steps = int(((await page.locator("#replay-pos").text_content()) or "").split(" / ")[1])
    await expect(page.locator("#replay-card thead th")).to_have_count(1)  # nobody seated yet
    await page.click("#replay-next")
    await expect(page.locator("#replay-event")).to_have_text("Replay Rita sat down")
    await expect(page.locator("#replay-card thead th")).to_have_count(2)
    await page.click("#replay-last")
    await expect(page.locator("#replay-pos")).to_have_text(f"{steps} / {steps}")
    await expect(page.locator("#replay-event")).to_contain_text("Game over")
    await expect(page.locator("#replay-card td.total")).to_have_text(str(final_total))
    await page.keyboard.press("ArrowLeft")
    await expect(page.locator("#replay-pos")).to_have_text(f"{steps - 1} / {steps}")
    await page.click("#replay-close")
    await expect(page.locator("#lobby")).to_be_visible()


async def test_accessibility_and_a_solo_game_to_the_end(pages: Pages) -> None:
    from playwright.async_api import expect

    if not AXE.exists():
        reason = "axe-core not installed: run `python3 .ci/dev.py setup` (needs npm)"
        if os.environ.get("YAHTZEE_REQUIRE_NODE") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    page = await pages.open()
    assert await axe_serious(page) == []  # the lobby

    # Sound is on by default, and the switch is in view.
    await expect(page.locator("#sound")).to_have_attribute("aria-pressed", "true")
    await page.click("#sound")
    await expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    await expect(page.locator("#sound")).to_have_text(re.compile("Sound off"))
    await page.fill("#name", "Solo")
    await page.click("#more summary")
    await page.fill("#seats", "1")
    await page.click("#create-button")
    await expect(page.locator("#start")).to_be_visible()
    await page.click("#start")  # no empty seat: no question
    for turn in range(13):
        await expect(page.locator("#roll")).to_have_text("Roll (3 left)")
        await page.click("#roll")
        buttons = page.locator("#scorecard td.mine button")
        await expect(buttons.first).to_be_visible()
        if turn == 0:
            assert await axe_serious(page) == []  # the table, with dice and score buttons
        await buttons.first.click()
        if await page.locator("#confirm").is_visible():
            await page.click("#confirm-yes")
        await expect(page.locator("#scorecard td.filled")).to_have_count(turn + 1)
    await expect(page.locator("#game-over")).to_be_visible()
    total = (await page.locator("#scorecard td.total").text_content()) or ""
    await expect(page.locator("#banner")).to_have_text(f"You win with {total} points!")
    await expect(page.locator("#rematch")).to_be_visible()
    await expect(page.locator("#analysis .analysis-player")).to_have_count(1)
    assert await axe_serious(page) == []  # game over, with the analysis
    await page.screenshot(path=_shot("web-game-over.png"), full_page=True)


async def test_quick_play_seats_two_strangers_and_starts(
    browser: Any, own_server: LiveServer
) -> None:
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    quick = Pages(browser, own_server)
    try:
        first = await quick.open()
        second = await quick.open()
        await first.fill("#name", "Quick One")
        await first.click("#more summary")
        await first.click("#quick-play")
        await expect(first.locator("#waiting")).to_contain_text("1/2 seated")
        room = (await first.locator("#room-id").text_content()) or ""
        await second.fill("#name", "Quick Two")
        await second.click("#more summary")
        await second.click("#quick-play")
        await expect(second.locator("#room-id")).to_have_text(room)
        # Full: the game starts by itself.
        for page in (first, second):
            await expect(page.locator("#turn")).to_contain_text("round 1")
    finally:
        await quick.close()
    assert quick.errors == []


# ------------------------------------------------------------ computer players, hints, analysis


@pytest_asyncio.fixture(loop_scope="module")
async def cpu_pages(browser: Any, computer_server: LiveServer) -> AsyncIterator[Pages]:
    """Pages on the server whose computers move at once (the official rules' table loaded)."""
    async with opened_pages(browser, computer_server) as opened:
        yield opened


MY_TURN_OR_OVER = (
    "(() => { const m = window.yahtzee.model, s = window.yahtzee.session;"
    " return m && (m.status === 'finished' ||"
    " (m.current === s.player && m.phase === 'awaiting_roll' && !m.turnOver)); })()"
)


async def score_first_open_box(page: Any) -> None:
    """Score the first box of my column (saying yes to a 0-point question)."""
    from playwright.async_api import expect

    filled = await page.locator("#scorecard td.filled[data-player]").count()
    await page.locator("#scorecard td.mine button").first.click()
    if await page.locator("#confirm").is_visible():
        await page.click("#confirm-yes")
    await expect(page.locator("#scorecard td.filled[data-player]")).not_to_have_count(filled)


async def test_play_vs_computer_with_hints_to_the_analysis(cpu_pages: Pages) -> None:
    from playwright.async_api import expect

    page = await cpu_pages.open()
    assert await axe_serious(page) == []  # the lobby with its computer controls
    await page.fill("#name", "Vera")
    await page.click("#more summary")
    await page.select_option("#play-computers", "1")
    await page.select_option("#play-level", "hard")
    await page.select_option("#play-speed", "instant")
    await page.click("#play-now")
    # One click: a room with the computer seated, joined and started.
    await expect(page.locator("#table")).to_be_visible()
    await expect(page.locator("#scorecard thead .cpu")).to_have_count(1)
    await expect(page.locator("#scorecard thead .cpu")).to_contain_text("CPU · hard")
    assert await page.evaluate("localStorage.getItem('yahtzee.computerLevel')") == "hard"
    cpu = await model(page, "m.players.find((p) => p.computer)")
    assert cpu["computer"] == "hard"
    room = (await page.locator("#room-id").text_content()) or ""
    await expect(page.locator("#room-options")).to_contain_text("hints on")

    turn = 0
    while True:
        await page.wait_for_function(MY_TURN_OR_OVER)
        if await model(page, "m.status") == "finished":
            break
        turn += 1
        await expect(page.locator("#turn")).to_contain_text("Your turn")
        await expect(page.locator("#ask-hint")).to_be_visible()
        if turn == 2:
            # The computer has played a turn by now: its moves are in the history and were
            # announced (a computer's moves say so).
            await expect(
                page.locator("#log li", has_text=f"{cpu['name']} scored")
            ).not_to_have_count(0)
            await expect(page.locator("#announce")).to_contain_text(f"{cpu['name']}, computer,")
        await page.click("#roll")
        await expect(page.locator("#dice .die.blank")).to_have_count(0)
        if turn == 1:
            # Hint after the first roll: three options with expected final scores; the dice to
            # keep (or the box) of the best one are marked.
            await page.keyboard.press("h")
            options = page.locator("#advice-list li")
            await expect(options).to_have_count(3)
            lines = await options.all_text_contents()
            assert all(
                re.fullmatch(
                    r"(Keep [1-6 ]+, roll again|Roll all five again|(Score|Put 0 in) [A-Za-z0-9 ]+)"
                    r" · \d+\.\d",
                    line,
                )
                for line in lines
            ), lines
            marked = await page.locator("#dice .die.advised").count()
            marked += await page.locator("#scorecard td.advised").count()
            assert marked > 0 or lines[0].startswith("Roll all five"), lines
            assert await axe_serious(page) == []  # the table with the advice
            # Two more rolls: now every option is a box, and the best one is marked on the table.
            await page.click("#roll")
            await expect(page.locator("#advice")).to_be_hidden()  # cleared: the table changed
            await expect(page.locator("#roll")).to_have_text("Roll (1 left)")
            await page.click("#roll")
            await expect(page.locator("#roll")).to_have_text("Roll (0 left)")
            await page.click("#ask-hint")
            await expect(options).to_have_count(3)
            for line in await options.all_text_contents():
                assert line.startswith(("Score ", "Put 0 in ")), line
            advised = page.locator("#scorecard td.advised.mine button")
            await expect(advised).to_have_count(1)
            await expect(advised).to_have_attribute("aria-label", re.compile(", advised$"))
            await page.screenshot(path=_shot("web-hint.png"), full_page=True)
            box = await page.locator("#scorecard td.advised").get_attribute("data-box")
            await advised.click()  # follow the advice
            # My column only: an instant computer may fill the same box in its own column.
            me = await model(page, "m.players.find((p) => !p.computer).player")
            filled = f'#scorecard td.filled[data-box="{box}"][data-player="{me}"]'
            await expect(page.locator(filled)).to_have_count(1)
            await expect(page.locator("#advice")).to_be_hidden()
            continue
        await score_first_open_box(page)
    assert turn == 13

    # Game over: the analysis of both players, worst decisions first.
    await expect(page.locator("#game-over")).to_be_visible()
    panel = page.locator("#analysis")
    await expect(panel).to_be_visible()
    await expect(panel.locator(".analysis-player")).to_have_count(2)
    await expect(panel.locator(".analysis-player .cpu")).to_have_count(1)
    await expect(panel.locator(".analysis-summary").first).to_contain_text("Expected points lost")
    analysis = await page.evaluate(f"fetch('/rooms/{room}/analysis').then((r) => r.json())")
    mine = next(p for p in analysis["players"] if not p["computer"])
    mine_panel = panel.locator(f'.analysis-player[data-player="{mine["player"]}"]')
    await expect(mine_panel.locator(".analysis-summary")).to_contain_text(
        f"{js_fixed(mine['total_loss'], 1)} in all"
    )
    costly = sorted((d["loss"] for d in mine["decisions"] if d["loss"] >= 0.05), reverse=True)
    shown = await mine_panel.locator(".analysis-list li").all_text_contents()
    assert len(shown) == min(10, len(costly))
    losses = [float(line.rsplit("\u2212", 1)[1]) for line in shown]
    assert losses == sorted(losses, reverse=True)  # worst first
    # (JavaScript's toFixed and Python's format may round a last digit apart.)
    assert all(abs(a - b) <= 0.051 for a, b in zip(losses, costly, strict=False)), losses
    assert await axe_serious(page) == []  # game over with the analysis
    await page.screenshot(path=_shot("web-analysis.png"), full_page=True)

    # Rematch with the same players: the computer comes back (same name and level) and the
    # room, full at once, starts by itself.
    await page.click("#rematch")
    await expect(page.locator("#room-id")).not_to_have_text(room)
    await expect(page.locator("#turn")).to_contain_text("round 1")
    again = await model(page, "m.players.find((p) => p.computer)")
    assert (again["name"], again["computer"]) == (cpu["name"], "hard")


async def test_analysis_not_ready_then_retry_and_in_the_replay(cpu_pages: Pages) -> None:
    from playwright.async_api import expect

    async with Client(cpu_pages.server.ws) as person:
        created = await person.create_room(
            seats=2, computers=["easy"], first_player="seat_order", public=True
        )
        await person.join(created.room, "Replayed Rex")
        await person.start()
        while True:
            state = await person.wait_for(
                lambda m: (
                    m.status.value == "finished"
                    or (m.current_player == person.player and not m.turn_over)
                )
            )
            if state.status.value == "finished":
                break
            if state.phase.value == "awaiting_roll":
                await person.roll()
            else:
                await person.score(next(e.box for e in state.preview if e.allowed))

    # The server's 503 (strategy table still loading) is shown with a retry.
    context = await cpu_pages.refusing(
        "**/analysis", 503, "unavailable", "loading the strategy table"
    )
    page = await cpu_pages.open(context=context)
    await page.locator(f'#finished li[data-room="{created.room}"] button.replay').click()
    await expect(page.locator("#replay")).to_be_visible()
    await page.click("#replay-analysis-button")
    panel = page.locator("#replay-analysis")
    await expect(panel.locator(".analysis-error")).to_contain_text("not ready")
    await context.unroute("**/analysis")
    await panel.locator("button.analysis-retry").click()
    await expect(panel.locator(".analysis-player")).to_have_count(2)
    await expect(panel.locator(".analysis-player").first).to_contain_text("CPU · easy")
    await expect(panel.locator(".analysis-summary").first).to_contain_text("Expected points lost")


async def test_room_form_lobby_computers_variants_and_the_bonus_button(cpu_pages: Pages) -> None:
    from playwright.async_api import expect

    page = await cpu_pages.open()
    await page.fill("#name", "Hosting Hal")
    await page.click("#more summary")
    await page.fill("#seats", "3")
    await page.fill("#computers", "5")
    await page.dispatch_event("#seats", "input")
    await expect(page.locator("#computers")).to_have_attribute("max", "2")
    await page.fill("#computers", "1")
    await page.select_option("#computers-level", "optimal")
    await page.click("#create-button")
    await expect(page.locator("#table")).to_be_visible()
    roster = page.locator("#roster li")
    await expect(roster).to_have_count(2)
    await expect(roster.first).to_contain_text("CPU · optimal")
    await expect(page.locator("#waiting")).to_contain_text("2/3 seated")
    # The host adds a computer (the room is then full) and removes one.
    await page.select_option("#add-computer-level", "easy")
    await page.click("#add-computer")
    await expect(page.locator("#waiting")).to_contain_text("3/3 seated")
    await expect(page.locator("#add-computer-row")).to_be_hidden()
    await expect(page.locator("#roster .cpu")).to_have_count(2)
    await expect(page.locator("#roster")).to_contain_text("CPU · easy")
    first_cpu = page.locator("#roster li .remove-computer").first
    await expect(first_cpu).to_have_attribute("aria-label", re.compile(r"^Remove "))
    await first_cpu.click()
    await expect(page.locator("#waiting")).to_contain_text("2/3 seated")
    await expect(page.locator("#roster .cpu")).to_have_count(1)
    await expect(page.locator("#add-computer-row")).to_be_visible()
    assert await axe_serious(page) == []  # the room's lobby with the roster
    await page.click("#leave")
    await expect(page.locator("#lobby")).to_be_visible()
    if not await page.locator("#create").is_visible():
        await page.click("#more summary")

    # The house variants and no hints (no computer: the server needs no table for this room).
    await page.fill("#seats", "1")
    await page.dispatch_event("#seats", "input")
    await expect(page.locator("#computers")).to_have_value("0")
    await page.check("#bonus-turn")
    await page.check("#upper-first")
    await page.uncheck("#hints")
    await page.click("#create-button")
    options = page.locator("#room-options")
    await expect(options).to_contain_text("upper boxes first")
    await expect(options).to_contain_text("bonus turn")
    await expect(options).not_to_contain_text("hints on")
    await page.click("#start")
    await page.click("#roll")
    await expect(page.locator("#dice .die.blank")).to_have_count(0)
    await expect(page.locator("#ask-hint")).to_be_hidden()  # a room without hints
    await expect(page.locator("#hint-key")).to_be_hidden()
    await expect(page.locator("#bonus-row")).to_be_hidden()
    # Five of a kind with 50 in the YAHTZEE box cannot be rolled on demand: the page is shown
    # such a roll (an event delivered to it as the client delivers events, same seq), and the
    # button appears; the server, which knows the real dice, refuses the take.
    await page.evaluate(
        """(() => {
            const m = window.yahtzee.model, me = window.yahtzee.session.player;
            m.players.find((p) => p.player === me).scorecard.yahtzee = 50;
            window.yahtzee.client._emit("event", { type: "rolled", room: m.room, seq: m.seq,
              player: me, dice: [6, 6, 6, 6, 6], roll_number: 2, rolls_left: 1, held: [],
              preview: m.preview, yahtzee_bonus_pending: true, joker: true });
        })()"""
    )
    await expect(page.locator("#bonus-row")).to_be_visible()
    await expect(page.locator("#take-bonus")).to_have_text("Take +100 bonus")
    await page.click("#take-bonus")
    await expect(page.locator("#notice")).to_be_visible()


async def test_phone_play_vs_computer_controls_fit(cpu_pages: Pages) -> None:
    from playwright.async_api import expect

    context = await cpu_pages.context(phone=True)
    page = await cpu_pages.open(phone=True, context=context)
    await page.click("#more summary")
    for control in ("#play-now", "#play-level", "#play-speed", "#play-computers"):
        await expect(page.locator(control)).to_be_visible()
        box = await page.locator(control).bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= PHONE["width"], control
    await page.fill("#name", "Phoebe")
    await page.select_option("#play-computers", "1")
    await page.select_option("#play-level", "easy")
    await page.select_option("#play-speed", "instant")
    await page.click("#play-now")
    await page.wait_for_function(MY_TURN_OR_OVER)
    await page.click("#roll")
    await expect(page.locator("#dice .die.blank")).to_have_count(0)
    await page.click("#ask-hint")
    await expect(page.locator("#advice-list li")).to_have_count(3)
    await expect(page.locator("#keys")).to_be_hidden()  # no key hints on a phone
    for control in ("#ask-hint", "#advice", "#scorecard thead .cpu"):
        box = await page.locator(control).bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= PHONE["width"], control
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await page.screenshot(path=_shot("web-phone-hint.png"), full_page=False)


# ------------------------------------------------------------ issue 26: the first minute and on


async def in_view(page: Any, selector: str, viewport: dict[str, int]) -> None:
    """The element is wholly inside the viewport, without scrolling."""
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0, (selector, box)
    assert box["y"] + box["height"] <= viewport["height"], (selector, box)
    assert box["x"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= viewport["width"], (selector, box)


async def small_targets(page: Any) -> list[str]:
    """Visible controls smaller than 44 x 44 CSS pixels (WCAG 2.5.5), one line each."""
    return list(
        await page.evaluate(
            """() => [...document.querySelectorAll(
                  "button, select, input:not([type=checkbox]), summary")]
                .filter((n) => n.checkVisibility({ visibilityProperty: true }))
                .map((n) => [n, n.getBoundingClientRect()])
                .filter(([, r]) => r.width < 44 || r.height < 44)
                .map(([n, r]) => `${n.id || n.className || n.tagName} ${r.width}x${r.height}`)"""
        )
    )


async def test_play_now_in_one_click_and_the_whole_table_on_one_screen(cpu_pages: Pages) -> None:
    from playwright.async_api import expect

    context = await cpu_pages.context(viewport=LAPTOP)
    page = await cpu_pages.open(context=context)
    # The first screen says what this is, shows dice and one primary button; forms are folded.
    await expect(page.locator("#lobby-title")).to_contain_text("Yahtzee")
    await expect(page.locator("#hero-dice .die")).to_have_count(5)
    await expect(page.locator("#play-now")).to_have_class(re.compile(r"\bprimary\b"))
    for other in ("#play-friend", "#watch-live"):
        await expect(page.locator(other)).to_be_visible()
    await expect(page.locator("#create")).to_be_hidden()
    await in_view(page, "#play-now", LAPTOP)
    default_name = await page.locator("#name").input_value()
    assert re.fullmatch(r"Player \d{3}", default_name), default_name

    # One click: seated against two named computers, no question asked, an address.
    await page.click("#play-now")
    await expect(page.locator("#table")).to_be_visible()
    await expect(page.locator("#scorecard thead .cpu")).to_have_count(2)
    await expect(page.locator("#notice")).to_be_hidden()
    room = (await page.locator("#room-id").text_content()) or ""
    await page.wait_for_function(f"location.hash === '#/room/{room}'")
    assert await page.evaluate("localStorage.getItem('yahtzee.name')") == default_name
    events = await page.evaluate(f"fetch('/rooms/{room}/events').then((r) => r.json())")
    me = await page.evaluate("window.yahtzee.session.player")
    joined = next(e for e in events["events"] if e["type"] == "player_joined" and e["player"] == me)
    assert joined["seed"].startswith("web-")  # this browser's seed goes into the dice
    await expect(page.locator("#fair")).to_contain_text("this browser's seed")

    dialog_checked = False
    for _turn in range(3):
        await page.wait_for_function(MY_TURN_OR_OVER)
        await page.click("#roll")
        await expect(page.locator("#dice .die.blank")).to_have_count(0)
        # The whole table on one screen: dice, Roll, YAHTZEE, Chance and the total.
        for selector in (
            "#dice",
            "#roll",
            '#scorecard tr[data-row="yahtzee"]',
            '#scorecard tr[data-row="chance"]',
            '#scorecard tr[data-row="total"]',
        ):
            await in_view(page, selector, LAPTOP)
        assert await page.evaluate("window.scrollY") == 0
        zero = page.locator("#scorecard td.mine.zero button")
        positive = await page.locator("#scorecard td.mine:not(.zero) button").count()
        if not dialog_checked and await zero.count() and positive:
            # The zero-score dialog holds the focus until it is answered.
            box = await zero.first.get_attribute("data-box")
            await zero.first.click()
            await expect(page.locator("#confirm")).to_be_visible()
            await expect(page.locator("#confirm-text")).to_contain_text("Put 0 in")
            await expect(page.locator("#confirm-no")).to_be_focused()
            for key in ("Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab"):
                await page.keyboard.press(key)
                inside = await page.evaluate("document.activeElement.closest('#confirm') !== null")
                assert inside, key
            assert await axe_serious(page) == []  # the dialog
            await page.keyboard.press("Escape")
            await expect(page.locator("#confirm")).to_be_hidden()
            await expect(
                page.locator(f'#scorecard td.mine button[data-box="{box}"]')
            ).to_be_focused()
            dialog_checked = True
        # After a score the focus is back on Roll, not on the page's body.
        await page.locator("#scorecard td.mine button").last.click()
        if await page.locator("#confirm").is_visible():
            await page.click("#confirm-yes")
        await expect(page.locator("#roll")).to_be_focused()
    assert dialog_checked

    # A reload comes back to the same address and table.
    await page.reload()
    await expect(page.locator("#room-id")).to_have_text(room)
    await page.wait_for_function(f"location.hash === '#/room/{room}'")
    # the room id shows before the snapshot arrives: wait for the table it brings
    await page.wait_for_function(
        "(() => { const m = window.yahtzee.model;"
        " return m !== null && m.players.some((q) => q.computer); })()"
    )

    # A Yahtzee is celebrated (animated when motion is welcome).
    await page.evaluate(
        """(() => {
            const m = window.yahtzee.model, p = m.players.find((q) => q.computer);
            window.yahtzee.client._emit("event", { type: "scored", room: m.room, seq: m.seq,
              player: p.player, box: "yahtzee", points: 50, joker: false,
              upper_bonus: p.totals.upper_bonus, yahtzee_bonus: 0, total: p.totals.grand + 50 });
        })()"""
    )
    await expect(page.locator("#celebrate")).to_be_visible()
    await expect(page.locator("#celebrate")).to_contain_text("YAHTZEE!")
    animation = await page.evaluate(
        "getComputedStyle(document.querySelector('#celebrate p')).animationName"
    )
    assert animation == "pop"
    await page.screenshot(path=_shot("web-laptop.png"), full_page=False)


async def test_phone_tap_targets_current_column_and_a_still_celebration(pages: Pages) -> None:
    from playwright.async_api import expect

    bots = [Client(pages.server.ws) for _ in range(7)]
    try:
        for bot in bots:
            await bot.connect()
        created = await bots[0].create_room(seats=8, first_player="seat_order")
        for number, bot in enumerate(bots):
            await bot.join(created.room, f"Player {number + 1} Longname")
        context = await pages.context(phone=True, reduced_motion="reduce")
        page = await pages.open(phone=True, context=context)
        assert await small_targets(page) == []  # the first screen
        await page.fill("#name", "Me")
        await page.locator(f'#rooms li[data-room="{created.room}"] button.join').click()
        await expect(page.locator("#waiting")).to_contain_text("8/8 seated")
        await bots[0].start()
        # Six players move; the seventh's column is scrolled into the scorecard's box.
        for bot in bots[:6]:
            async with asyncio.timeout(scaled(20)):
                await bot.wait_for(
                    lambda m, b=bot: m.current_player == b.player and m.phase == "awaiting_roll"
                )
            await bot.roll()
            await bot.score("chance")
        seventh = bots[6].player
        header = page.locator(f'#scorecard thead th[data-player="{seventh}"]')
        await expect(header).to_have_class(re.compile(r"\bcurrent\b"))
        await page.wait_for_function(
            """(player) => {
                const box = document.querySelector('#card-scroll').getBoundingClientRect();
                const th = document.querySelector(`#scorecard thead th[data-player="${player}"]`)
                  .getBoundingClientRect();
                return th.left >= box.left && th.right <= box.right + 1;
            }""",
            arg=seventh,
        )
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        card = await page.locator("#card-scroll").bounding_box()
        assert card is not None
        assert card["x"] + card["width"] <= PHONE["width"]
        assert await small_targets(page) == []  # the table
        assert await axe_serious(page) == []  # the table on a phone, 8 players
        # A Yahtzee with reduced motion: the banner, standing still.
        await page.evaluate(
            """(player) => {
                const m = window.yahtzee.model, p = m.players.find((q) => q.player === player);
                window.yahtzee.client._emit("event", { type: "scored", room: m.room, seq: m.seq,
                  player, box: "yahtzee", points: 50, joker: false, upper_bonus: 0,
                  yahtzee_bonus: 0, total: p.totals.grand + 50 });
            }""",
            seventh,
        )
        await expect(page.locator("#celebrate")).to_be_visible()
        animation = await page.evaluate(
            "getComputedStyle(document.querySelector('#celebrate p')).animationName"
        )
        assert animation == "none"
        await expect(page.locator("#sound")).to_be_visible()
    finally:
        for bot in bots:
            await bot.close()


async def test_friendly_words_for_every_error_code(pages: Pages) -> None:
    from protocol.errors import ErrorCode

    page = await pages.open()
    for code in ErrorCode:
        text = await page.evaluate(
            "(code) => window.yahtzee.friendlyError(code, 'in phase awaiting_roll')", str(code)
        )
        assert text[:1].isupper(), (code, text)
        assert text.endswith((".", "…")), (code, text)
        assert "_" not in text, (code, text)
    # A code of a newer server: its message, without identifiers.
    text = await page.evaluate(
        "window.yahtzee.friendlyError('brand_new', 'not in phase awaiting_roll')"
    )
    assert "_" not in text


async def test_addresses_replay_by_turn_analysis_links_and_verified_dice(pages: Pages) -> None:
    from playwright.async_api import expect

    # A solo game whose first turn puts 0 in a box.
    async with Client(pages.server.ws) as bot:
        created = await bot.create_room(seats=1, first_player="seat_order")
        await bot.join(created.room, "Linked Lia")
        await bot.start()
        zero_box = None
        while True:
            state = await bot.wait_for(
                lambda m: m.status == "finished" or m.current_player == bot.player
            )
            if state.status == "finished":
                break
            if state.phase == "awaiting_roll":
                await bot.roll()
                continue
            zeros = [e.box for e in state.preview if e.allowed and e.points == 0]
            if zero_box is None and zeros:
                zero_box = str(zeros[0])
                await bot.score(zeros[0])
                continue
            if zero_box is None and state.rolls_left:
                await bot.roll()
                continue
            move = decide(state.dice, state.rolls_left, state.preview)
            if move.score:
                await bot.score(move.score)
            else:
                await bot.roll(keep=move.keep)
        player = bot.player
    assert zero_box is not None
    room = created.room

    # The analysis as the server would give it: eleven costly decisions, the worst a 0.
    decisions = [
        {
            "player": player,
            "turn": 1,
            "roll": 1,
            "kind": "box",
            "chosen_keep": None,
            "best_keep": None,
            "chosen_box": zero_box,
            "best_box": "chance",
            "chosen_expected": 150.0,
            "best_expected": 170.0,
            "loss": 20.0,
        }
    ] + [
        {
            "player": player,
            "turn": t,
            "roll": 1,
            "kind": "keep",
            "chosen_keep": [5],
            "best_keep": [5, 5],
            "chosen_expected": 150.0,
            "best_expected": 150.0 + t,
            "loss": float(t),
        }
        for t in range(2, 12)
    ]
    fake = {
        "room": room,
        "seq": 1,
        "options": {"rules": "yahtzee"},
        "players": [
            {
                "player": player,
                "name": "Linked Lia",
                "computer": None,
                "decisions": decisions,
                "total_loss": 85.0,
                "mean_loss": 7.7,
            }
        ],
    }
    context = await pages.context()
    await context.route(
        "**/analysis",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(fake)
        ),
    )
    # A replay at a turn has an address of its own.
    page = await pages.open(f"/#/replay/{room}?turn=3", context=context)
    await expect(page.locator("#replay")).to_be_visible()
    await expect(page.locator("#replay-turn")).to_have_value("3")
    await expect(page.locator("#replay-event")).to_contain_text("Round 3")
    await page.click("#replay-next-turn")
    await expect(page.locator("#replay-turn")).to_have_value("4")
    await page.wait_for_function(f"location.hash === '#/replay/{room}?turn=4'")
    await page.click("#replay-prev-turn")
    await expect(page.locator("#replay-turn")).to_have_value("3")
    await page.select_option("#replay-turn", "7")
    await expect(page.locator("#replay-event")).to_contain_text("Round 7")

    # The analysis: worst first, "put 0 in", "and 1 smaller one", links to positions.
    await page.click("#replay-analysis-button")
    items = page.locator("#replay-analysis .analysis-list li")
    await expect(items).to_have_count(10)
    label = await page.evaluate(
        f"import('/static/room-model.js').then((m) => m.LABELS['{zero_box}'])"
    )
    await expect(items.first).to_contain_text(f"put 0 in {label}")
    await expect(page.locator("#replay-analysis")).to_contain_text("and 1 smaller one")
    link = items.first.locator("a.analysis-link")
    await expect(link).to_have_attribute("href", f"#/replay/{room}?turn=1&roll=1")
    await link.click()
    await expect(page.locator("#replay-turn")).to_have_value("1")
    await expect(page.locator("#replay-event")).to_contain_text("rolled")
    assert await axe_serious(page) == []  # the replay with the analysis

    # Watching has an address too; the finished game's dice check out in the page.
    watcher = await pages.open(f"/#/watch/{room}")
    await expect(watcher.locator("#role")).to_have_text("game over")
    await watcher.click("#verify-dice")
    await expect(watcher.locator("#verify-result")).to_contain_text("✓ Fair")
    await expect(watcher.locator("#verify-result")).to_contain_text("dice")


async def test_dark_mode_room_before_the_start_and_back(pages: Pages) -> None:
    from playwright.async_api import expect

    context = await pages.context(color_scheme="dark")
    page = await pages.open(context=context)
    background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 24, 28)", background
    assert await axe_serious(page) == []  # the lobby, dark
    await page.click("#play-friend")
    await expect(page.locator("#invite-friend")).to_be_visible()
    room = (await page.locator("#room-id").text_content()) or ""
    link = await page.locator("#invite-link").input_value()
    assert link.startswith(f"{pages.server.http}/#/room/{room}?invite=")
    assert await axe_serious(page) == []  # a room before the start, dark
    await page.click("#start")
    await expect(page.locator("#confirm")).to_be_visible()
    assert await axe_serious(page) == []  # a dialog, dark
    await page.click("#confirm-no")
    # The browser's Back button leaves the room (nobody plays yet: no question).
    await page.go_back()
    await expect(page.locator("#lobby")).to_be_visible()
    await expect(page.locator("#hero")).to_be_visible()


# ------------------------------------------------------------ remembered players (protocol 1.3)


@pytest_asyncio.fixture(loop_scope="module")
async def db_pages(browser: Any, db_server: LiveServer) -> AsyncIterator[Pages]:
    """Pages on the server with a real PostgreSQL: it remembers players, archives games."""
    async with opened_pages(browser, db_server) as opened:
        yield opened


async def play_solo_on_the_page(page: Any, name: str) -> tuple[str, int]:
    """A 1-seat room made with the form and played to its end on the page; room and total."""
    from playwright.async_api import expect

    await page.fill("#name", name)
    await page.click("#more summary")
    await page.fill("#seats", "1")
    await page.click("#create-button")
    await expect(page.locator("#start")).to_be_visible()
    room = (await page.locator("#room-id").text_content()) or ""
    await page.click("#start")
    for turn in range(13):
        await expect(page.locator("#roll")).to_have_text("Roll (3 left)")
        await page.click("#roll")
        buttons = page.locator("#scorecard td.mine button")
        await expect(buttons.first).to_be_visible()
        await buttons.first.click()
        if await page.locator("#confirm").is_visible():
            await page.click("#confirm-yes")
        await expect(page.locator("#scorecard td.filled")).to_have_count(turn + 1)
    await expect(page.locator("#game-over")).to_be_visible()
    total = int((await page.locator("#scorecard td.total").text_content()) or "0")
    return room, total


async def forget_room(server: LiveServer, room: str) -> None:
    """What the room's expiry does: every key of the room gone from Redis."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(server.redis_url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{server.redis_prefix}{{room:{room}}}*")]
        assert keys
        await client.delete(*keys)
    finally:
        await client.aclose()


async def test_the_page_remembers_the_player_profile_history_and_archived_replay(
    db_pages: Pages,
) -> None:
    from playwright.async_api import expect

    from clients.players import PlayersError, fetch_game

    context = await db_pages.context()
    page = await db_pages.open(context=context)
    await expect(page.locator("#profile-link")).to_be_hidden()  # nobody yet
    name = f"Pia Profile {secrets.randbelow(10**5)}"
    room, total = await play_solo_on_the_page(page, name)

    # The first seat made a guest under the name played; its token is in localStorage only.
    who = await page.evaluate("window.yahtzee.identity")
    assert who is not None
    assert who["name"] == name
    stored = json.loads(await page.evaluate("localStorage.getItem('yahtzee.identity')"))
    token = stored["token"]
    assert token.startswith("ypt_")
    assert "token" not in who  # not even the page's debugging handle shows it

    # The game is archived under the player.
    async with asyncio.timeout(scaled(60)):
        while True:
            try:
                game = await asyncio.to_thread(fetch_game, db_pages.server.http, room)
                break
            except PlayersError as exc:
                if exc.code != "game_not_found":
                    raise
            await asyncio.sleep(0.1)  # polling interval of a bounded wait
    assert game["players"][0]["identity"] == who["player"]

    # The profile: the header's link, #/player/ID, the statistics and the last games.
    await page.click("#back")
    await expect(page.locator("#profile-link")).to_be_visible()
    await page.click("#profile-link")
    await expect(page.locator("#profile")).to_be_visible()
    await page.wait_for_function(f"location.hash === '#/player/{who['player']}'")
    await expect(page.locator("#profile-name")).to_have_text(f"{name} (you)")
    await expect(page.locator('#profile-stats [data-stat="games"] dd')).to_have_text("1")
    await expect(page.locator('#profile-stats [data-stat="best"] dd')).to_have_text(str(total))
    await expect(page.locator('#profile-stats [data-stat="wins"] dd')).to_have_text("1")
    for stat in ("average", "yahtzee-rate", "bonus-rate", "accuracy"):
        await expect(page.locator(f'#profile-stats [data-stat="{stat}"] dd')).not_to_be_empty()
    row = page.locator(f'#profile-games li[data-room="{room}"]')
    await expect(row).to_contain_text(f"{total} points")
    await expect(row).to_contain_text("place 1 of 1")
    assert await axe_serious(page) == []  # the profile
    await page.screenshot(path=_shot("web-profile.png"), full_page=True)

    # The room leaves the server (its retention ran out): the replay comes from the archive.
    await forget_room(db_pages.server, room)
    await row.locator("a.replay-link").click()
    await expect(page.locator("#replay")).to_be_visible()
    await expect(page.locator("#replay-room")).to_have_text(f"{room} (archived)")
    await page.click("#replay-last")
    await expect(page.locator("#replay-card td.total")).to_have_text(str(total))

    # A new tab of the same browser is the same player, presented on its connection.
    again = await db_pages.open(context=context)
    await expect(again.locator("#profile-link")).to_be_visible()
    await again.wait_for_function("window.yahtzee.client.remembered !== null")
    assert await again.evaluate("window.yahtzee.client.remembered.player") == who["player"]
    # The token never went into an address.
    assert not [url for url in db_pages.requests if token in url]


async def test_without_a_database_the_page_plays_anonymously_and_silently(pages: Pages) -> None:
    from playwright.async_api import expect

    page = await pages.open()
    await page.fill("#name", "Anon Ann")
    await page.click("#more summary")
    await page.click("#create-button")
    await expect(page.locator("#waiting")).to_contain_text("1/2 seated")
    assert await page.evaluate("window.yahtzee.identity") is None
    assert await page.evaluate("localStorage.getItem('yahtzee.identity')") is None
    assert "/players" in {_path(url) for url in pages.requests}  # it asked, was told 503
    await expect(page.locator("#notice")).to_be_hidden()
    await expect(page.locator("#profile-link")).to_be_hidden()


async def test_rematch_offered_accepted_and_followed_by_the_spectator(pages: Pages) -> None:
    from playwright.async_api import expect

    ann, bob, eve = await pages.open(), await pages.open(), await pages.open()
    await ann.fill("#name", "Ann Again")
    await ann.click("#more summary")
    await ann.fill("#seats", "2")
    await ann.select_option("#first-player", "seat_order")
    await ann.click("#create-button")
    await expect(ann.locator("#waiting")).to_contain_text("1/2 seated")
    room = (await ann.locator("#room-id").text_content()) or ""
    await bob.fill("#name", "Bob Again")
    await bob.locator(f'#rooms li[data-room="{room}"] button.join').click()
    await eve.locator(f'#rooms li[data-room="{room}"] button.watch').click()
    await expect(eve.locator("#role")).to_have_text("spectating")
    await expect(ann.locator("#waiting")).to_contain_text("2/2 seated")
    await ann.click("#start")
    players = {
        await ann.evaluate("window.yahtzee.session.player"): ann,
        await bob.evaluate("window.yahtzee.session.player"): bob,
    }
    for turn in range(1, 27):
        await eve.wait_for_function(
            "(() => { const m = window.yahtzee.model;"
            " return m && m.phase === 'awaiting_roll' && !m.turnOver; })()"
        )
        page = players[await model(eve, "m.current")]
        await expect(page.locator("#roll")).to_have_text("Roll (3 left)")
        await page.click("#roll")
        await score_first_open_box(page)
        await expect(eve.locator("#scorecard td.filled")).to_have_count(turn)
    for page in (ann, bob, eve):
        await expect(page.locator("#game-over")).to_be_visible()
    await expect(ann.locator("#rematch")).to_have_text("Rematch")
    await expect(eve.locator("#rematch")).to_be_hidden()

    # Ann offers: she moves to the rematch room at once (same settings), waiting for Bob.
    await ann.click("#rematch")
    await expect(ann.locator("#room-id")).not_to_have_text(room)
    rematch_room = (await ann.locator("#room-id").text_content()) or ""
    await expect(ann.locator("#waiting")).to_contain_text("1/2 seated")
    await expect(ann.locator("#room-options")).to_contain_text("first player: seat order")

    # Bob is asked; the spectator follows the players to the new table.
    await expect(bob.locator("#rematch-offer-text")).to_have_text("Ann Again offers a rematch")
    await expect(bob.locator("#notice")).to_contain_text("Ann Again offers a rematch")
    await expect(bob.locator("#rematch")).to_have_text("Accept")
    await expect(eve.locator("#room-id")).to_have_text(rematch_room)
    await expect(eve.locator("#role")).to_have_text("spectating")
    await bob.screenshot(path=_shot("web-rematch-offer.png"), full_page=True)

    # Bob accepts: the same room; the last seat taken starts the game by itself.
    await bob.click("#rematch")
    await expect(bob.locator("#room-id")).to_have_text(rematch_room)
    for page in (ann, bob, eve):
        await expect(page.locator("#turn")).to_contain_text("round 1")
    await expect(ann.locator("#turn")).to_have_text("Your turn (round 1)")
    await expect(eve.locator("#scorecard thead")).to_contain_text("Bob Again")
    assert await model(eve, "m.autoStart") is True

    # A late spectator of the finished room sees the offer and may watch the rematch.
    late = await pages.open(f"/#/watch/{room}")
    await expect(late.locator("#rematch-offer-text")).to_have_text("A rematch was offered")
    await late.click("#watch-rematch")
    await expect(late.locator("#room-id")).to_have_text(rematch_room)


async def test_waits_between_my_turns_against_three_computers_at_the_default_speed(
    cpu_pages: Pages,
) -> None:
    """A whole Play now game against 3 computers at the page's default speed ("fast": the
    room's computer_delay_ms is 150): how long the player waits from scoring to their next
    turn, measured in the page (from their `scored` event to their `turn_changed`). The
    figures are printed, not asserted: timing depends on the machine (the aim is under 5 s)."""
    import statistics

    from playwright.async_api import expect

    page = await cpu_pages.open()
    await page.evaluate("localStorage.removeItem('yahtzee.computerSpeed')")  # the default
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await page.fill("#name", "Wendy Wait")
    await page.click("#more summary")
    await expect(page.locator("#play-speed")).to_have_value("fast")
    await page.select_option("#play-computers", "3")
    await page.evaluate(
        """() => {
            window.__waits = [];
            let scoredAt = null;
            window.yahtzee.client.on("event", (ev) => {
              const s = window.yahtzee.session;
              const me = s && s.player;
              if (!me) return;
              if (ev.type === "scored" && ev.player === me) scoredAt = performance.now();
              if (ev.type === "turn_changed" && ev.player === me && scoredAt !== null) {
                window.__waits.push(performance.now() - scoredAt);
                scoredAt = null;
              }
            });
        }"""
    )
    await page.click("#play-now")
    await expect(page.locator("#scorecard thead .cpu")).to_have_count(3)
    assert await model(page, "m.computerDelayMs") == 150
    turns = 0
    while True:
        await page.wait_for_function(MY_TURN_OR_OVER, timeout=120_000)
        if await model(page, "m.status") == "finished":
            break
        turns += 1
        await page.click("#roll")
        await expect(page.locator("#dice .die.blank")).to_have_count(0)
        await score_first_open_box(page)
    assert turns == 13
    waits = [w / 1000 for w in await page.evaluate("window.__waits")]
    assert len(waits) == 12
    print(
        f"\nwaits between my turns against 3 computers at 'fast' (150 ms a move), "
        f"{len(waits)} waits: max {max(waits):.2f} s, median {statistics.median(waits):.2f} s, "
        f"all: {', '.join(f'{w:.2f}' for w in waits)}"
        f" (load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)"
    )


async def test_a_whole_turn_in_five_keys_in_dark_mode(cpu_pages: Pages) -> None:
    """Roll, hold a die, roll again, go to the scorecard, score: r, 1, r, s, Enter; the focus is
    back on Roll after the score. The table of a turn in dark mode has no serious violation."""
    from playwright.async_api import expect

    context = await cpu_pages.context(viewport=LAPTOP, color_scheme="dark")
    page = await cpu_pages.open(context=context)
    await page.click("#play-now")
    await expect(page.locator("#table")).to_be_visible()
    await page.wait_for_function(MY_TURN_OR_OVER)
    await page.keyboard.press("r")  # the keys work wherever the focus is (not in a text field)
    await expect(page.locator("#dice .die.blank")).to_have_count(0)
    assert await axe_serious(page) == []  # a turn, dark
    await page.keyboard.press("1")
    await expect(page.locator("#dice .die.held")).to_have_count(1)
    await page.keyboard.press("r")
    await page.wait_for_function("window.yahtzee.model.rollNumber === 2")
    await page.keyboard.press("s")
    focused = page.locator("#scorecard td.mine button:focus")
    await expect(focused).to_have_count(1)
    await page.keyboard.press("Enter")
    me = await page.evaluate("window.yahtzee.session.player")
    await expect(page.locator(f'#scorecard td.filled[data-player="{me}"]')).to_have_count(1)
    await expect(page.locator("#roll")).to_be_focused()


async def test_game_over_says_how_accurately_i_played_and_how_kind_the_dice_were(
    db_pages: Pages,
) -> None:
    """v1.4: at game over, my accuracy and my luck from the archived game (GET /games/{id})."""
    from playwright.async_api import expect

    from clients.players import fetch_game

    page = await db_pages.open()
    room, _ = await play_solo_on_the_page(page, f"Lu Kee {secrets.randbelow(10**5)}")
    line = page.locator("#skill-line")
    await expect(line).to_be_visible(timeout=45_000)  # once the archive has the game
    text = (await line.text_content()) or ""
    found = re.fullmatch(
        r"You played (\d+\.\d) % accurately; the dice were (\d+) points"
        r" (kinder|less kind) than average\.",
        text,
    )
    assert found is not None, text
    token = json.loads(await page.evaluate("localStorage.getItem('yahtzee.identity')"))["token"]
    game = await asyncio.to_thread(lambda: fetch_game(db_pages.server.http, room, token=token))
    [seat] = game["players"]
    skill = seat["skill"]
    assert found.group(1) == js_fixed(skill["accuracy"], 1)
    assert found.group(2) == js_fixed(abs(skill["luck"]), 0)
    assert found.group(3) == ("kinder" if skill["luck"] >= 0 else "less kind")


async def test_the_form_creates_a_rated_room_for_people_only(db_pages: Pages) -> None:
    """v1.4: "Rated" in the form makes a rated room (said in its options); with computers the
    server refuses it and the page says why."""
    from playwright.async_api import expect

    server = db_pages.server
    page = await db_pages.open()
    await page.fill("#name", f"Rae Ted {secrets.randbelow(10**5)}")
    await page.click("#more summary")
    await page.fill("#seats", "2")
    await page.fill("#computers", "1")
    await page.check("#rated")
    await page.click("#create-button")
    await expect(page.locator("#notice-text")).to_have_text(
        "A rated room is for people only: set Computer players to 0."
    )
    await page.fill("#computers", "0")
    await page.click("#create-button")
    await expect(page.locator("#start")).to_be_visible()
    await expect(page.locator("#room-options")).to_contain_text("rated")
    mine = (await page.locator("#room-id").text_content()) or ""
    async with httpx.AsyncClient(timeout=30) as http:
        room = (await http.get(f"{server.http}/rooms/{mine}")).json()["state"]
    assert room["rated"] is True
    assert await axe_serious(page) == []


async def test_a_phone_creates_a_correspondence_room_and_lists_the_player_s_turns(
    db_pages: Pages,
) -> None:
    """Protocol 1.4: the form's correspondence clock, and "Your correspondence games" on the
    player's own profile (GET /players/{id}/turns), on a 390 x 844 phone."""
    from playwright.async_api import expect

    from clients.client import Client
    from clients.players import create_guest

    server = db_pages.server
    context = await db_pages.context(phone=True)
    page = await db_pages.open(context=context)
    name = f"Cora Post {secrets.randbelow(10**5)}"
    await page.fill("#name", name)
    await page.click("#more summary")
    await page.fill("#seats", "2")
    await page.select_option("#first-player", "seat_order")
    await page.select_option("#correspondence", "86400")
    await page.click("#create-button")
    await expect(page.locator("#start")).to_be_visible()
    mine = (await page.locator("#room-id").text_content()) or ""
    async with httpx.AsyncClient(timeout=30) as http:
        room = (await http.get(f"{server.http}/rooms/{mine}")).json()["state"]
    assert room["correspondence"] == {"seconds_per_move": 86_400}
    assert room["turn_seconds"] == 0
    who = await page.evaluate("window.yahtzee.identity")
    token = json.loads(await page.evaluate("localStorage.getItem('yahtzee.identity')"))["token"]

    dion = await asyncio.to_thread(create_guest, server.http, f"Dion {secrets.randbelow(10**5)}")
    async with (
        Client(server.ws, player_token=dion.token) as dion_here,
        Client(server.ws, player_token=dion.token) as dion_home,
        Client(server.ws, player_token=token) as cora_there,
    ):
        await dion_here.join(mine, "Dion")
        await page.click("#start")  # every seat taken: the game starts, Cora first
        await expect(page.locator("#roll")).to_be_visible()
        theirs = await dion_home.create_room(
            2, first_player="seat_order", correspondence_seconds=3 * 86_400
        )
        await dion_home.join(theirs.room, "Dion")
        await cora_there.join(theirs.room, "Cora")
        await dion_home.start()

        # another tab of the same browser: the same player, their profile
        profile = await db_pages.open(f"/#/player/{who['player']}", context=context)
        turns = profile.locator("#turns-list li")
        await expect(turns).to_have_count(2)
        first = turns.nth(0)
        await expect(first).to_have_attribute("data-room", mine)
        await expect(first).to_contain_text("Your turn")
        await expect(first).to_contain_text("23 h")  # a day per move, just begun
        second = turns.nth(1)
        await expect(second).to_have_attribute("data-room", theirs.room)
        await expect(second).to_contain_text("Waiting for Dion")
        await expect(second).to_contain_text("2 d 23 h")
        await expect(profile.locator("#no-turns")).to_be_hidden()
        await in_view(profile, "#profile-turns h3", PHONE)
        box = await profile.locator("#profile-turns").bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]  # no sideways scrolling
        assert await axe_serious(profile) == []
        await profile.screenshot(path=_shot("web-correspondence-phone.png"), full_page=True)


async def test_quick_play_looks_for_players_then_says_computers_filled_the_seat(
    db_pages: Pages,
) -> None:
    from playwright.async_api import expect

    page = await db_pages.open()
    await page.fill("#name", f"Quinn Quick {secrets.randbelow(10**5)}")
    await page.click("#rated-play")
    status = page.locator("#rated-status")
    await expect(status).to_contain_text("Looking for players")
    await expect(status).to_contain_text("widen")
    await expect(page.locator("#rated-cancel")).to_be_visible()
    # nobody else queues: after the server's wait (2 s here) a computer takes the other seat
    notice = page.locator("#notice-text")
    await expect(notice).to_contain_text("computers filled the open seats", timeout=30_000)
    await expect(page.locator("#scorecard")).to_be_visible()
    await expect(status).to_be_hidden()
    who = await page.evaluate("window.yahtzee.identity")
    assert who is not None  # quick play made the remembered player it needs


async def test_the_page_shows_the_leaderboards_with_the_player_on_them(db_pages: Pages) -> None:
    """v1.4: the header's Leaderboards link, the board and period choices, the player's own row
    (best score of a finished public game) linking to their profile."""
    from playwright.async_api import expect

    from clients.players import PlayersError, fetch_game

    page = await db_pages.open()
    name = f"Lea Board {secrets.randbelow(10**5)}"
    room, total = await play_solo_on_the_page(page, name)
    who = await page.evaluate("window.yahtzee.identity")
    async with asyncio.timeout(scaled(60)):
        while True:
            try:
                await asyncio.to_thread(fetch_game, db_pages.server.http, room)
                break
            except PlayersError as exc:
                if exc.code != "game_not_found":
                    raise
            await asyncio.sleep(0.1)  # polling interval of a bounded wait
    await page.click("#back")
    await page.click("#boards-link")
    await expect(page.locator("#leaderboards")).to_be_visible()
    await page.wait_for_function("location.hash === '#/leaderboards/result'")
    await page.click('#board-choice button[data-board="best_score"]')
    mine = page.locator(f'#boards-rows tr[data-player="{who["player"]}"]')
    await expect(mine).to_contain_text(name)
    await expect(mine).to_contain_text(str(total))
    await expect(mine).to_have_class("me")
    await page.click('#period-choice button[data-period="today"]')
    await expect(page.locator('#period-choice button[data-period="today"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    await expect(mine).to_contain_text(str(total))
    assert await axe_serious(page) == []
    await mine.locator("a").click()
    await expect(page.locator("#profile")).to_be_visible()
    await expect(page.locator("#profile-name")).to_have_text(f"{name} (you)")
