"""The web page's tournaments (protocol 1.4, SPEC 13.18-13.22) in headless Chromium.

The list (#/tournaments), one tournament (#/tournaments/ID), entering it with the remembered
player, playing the entry at the table to game over, the way back to the standings (the own row
marked), and the final standings once the end time has passed: "the dice allowed N; you scored
M", each entry's accuracy and its verify hint. An unknown id says so; a phone shows the list and a
tournament without sideways scrolling; the create form appears only where players may create.

The server is one of this module's own: a real PostgreSQL (its own schema), the operator's admin
token, remembered players allowed to create, ended tournaments closed every 0.2 s. The end time
passes by moving ``ends_at`` in the database (what waiting until then would do); the page polls
the standings by itself. Synchronisation is by Playwright's auto-waiting assertions, never by
sleeping.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from clients_live import LiveServer, spawn_server, stop_server
from test_clients_web import (  # noqa: F401  (fixtures: pytest finds them by name)
    PHONE,
    Pages,
    _shot,
    axe_serious,
    browser,
    opened_pages,
    small_targets,
)

from clients.players import create_guest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("official_table"),
]

ADMIN = "admin-secret-for-the-web-tests"
# A test waits for the page's own 10 s poll and for the close: generous on a busy machine.
FINAL_TIMEOUT_MS = 90_000


@pytest.fixture(scope="module")
def tournament_database_url(clients_database_url: str) -> Iterator[str]:
    """The client tests' PostgreSQL in a schema of this module's own: another server's close
    loop (which reads the entries' rooms from its own Redis prefix) never closes these."""
    import psycopg

    parts = urllib.parse.urlsplit(clients_database_url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "options"]
    base = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    schema = f"w{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    query.append(("options", f"-c search_path={schema}"))
    try:
        yield urllib.parse.urlunsplit(
            parts._replace(query=urllib.parse.urlencode(query, quote_via=urllib.parse.quote))
        )
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _tournament_server(
    redis_server_url: str, workdir: Path, database_url: str, open_to: str
) -> Iterator[LiveServer]:
    """A server of this module's own; ``open_to``: who may create tournaments there."""
    process, server = spawn_server(
        redis_server_url,
        f"tw{secrets.token_hex(4)}:",
        workdir,
        env={
            "DATABASE_URL": database_url,
            "YAHTZEE_ADMIN_TOKEN": ADMIN,
            "YAHTZEE_TOURNAMENTS_OPEN_TO": open_to,
            "YAHTZEE_DAILY_TOURNAMENT": "0",
            "YAHTZEE_TOURNAMENT_POLL_SECONDS": "0.2",
            "YAHTZEE_ARCHIVE_POLL_SECONDS": "0.1",
            "YAHTZEE_PLAYERS_PER_HOUR": "100000",
        },
    )
    try:
        yield server
    finally:
        stop_server(process)


@pytest.fixture(scope="module")
def tournament_server(
    redis_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    tournament_database_url: str,
    official_table: object,
) -> Iterator[LiveServer]:
    """Players may create tournaments here."""
    yield from _tournament_server(
        redis_server_url,
        tmp_path_factory.mktemp("tournament-server"),
        tournament_database_url,
        "identities",
    )


@pytest.fixture(scope="module")
def operator_only_server(
    redis_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    tournament_database_url: str,
    official_table: object,
) -> Iterator[LiveServer]:
    """Only the operator creates tournaments here (the default)."""
    yield from _tournament_server(
        redis_server_url,
        tmp_path_factory.mktemp("operator-only-server"),
        tournament_database_url,
        "admin",
    )


@pytest_asyncio.fixture(loop_scope="module")
async def operator_only_pages(
    browser: Any,  # noqa: F811
    operator_only_server: LiveServer,
) -> AsyncIterator[Pages]:
    async with opened_pages(browser, operator_only_server) as opened:
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def cup_pages(browser: Any, tournament_server: LiveServer) -> AsyncIterator[Pages]:  # noqa: F811
    async with opened_pages(browser, tournament_server) as opened:
        yield opened


async def create_as_operator(server: LiveServer, name: str, **spec: Any) -> dict[str, Any]:
    """A tournament made with the admin token (open now, ending in an hour unless told)."""
    body = {"name": name, "ends_ms": int(time.time() * 1000) + 3_600_000, **spec}
    async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
        answer = await http.post(
            "/tournaments", json=body, headers={"Authorization": f"Bearer {ADMIN}"}
        )
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def end_now(database_url: str, tournament: str) -> None:
    """What reaching the end time does: ``ends_at`` is now (the close loop archives it)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        await conn.execute(
            "UPDATE tournaments SET starts_at = LEAST(starts_at, now() - interval '1 minute'),"
            " ends_at = now() WHERE id = %s",
            (tournament,),
        )


async def final_standings(server: LiveServer, tournament: str) -> dict[str, Any]:
    """The archived standings (bounded wait for the close)."""
    async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
        async with asyncio.timeout(FINAL_TIMEOUT_MS / 1000):
            while True:
                board: dict[str, Any] = (
                    await http.get(f"/tournaments/{tournament}/standings")
                ).json()
                if board["final"]:
                    return board
                await asyncio.sleep(0.2)  # polling interval of a bounded wait


async def play_entry_on_the_page(page: Any) -> int:
    """The entry's 13 turns at the table (roll once, score the first open box); its total."""
    from playwright.async_api import expect

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
    return int((await page.locator("#scorecard td.total").text_content()) or "0")


async def no_sideways_scroll(page: Any) -> None:
    wide = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert wide <= 0, f"the page scrolls sideways by {wide} px"


async def remembered(context: Any, server: LiveServer, name: str) -> str:
    """A guest made over HTTP and kept in the context's localStorage, as the page keeps its
    own remembered player; its id."""
    guest = await asyncio.to_thread(create_guest, server.http, name)
    kept = json.dumps({"player": guest.player, "name": guest.name, "token": guest.token})
    await context.add_init_script(f"localStorage.setItem('yahtzee.identity', {json.dumps(kept)})")
    return guest.player


# ---------------------------------------------------------------------------------- tests


async def test_a_player_enters_plays_and_sees_the_standings_then_the_final_results(
    cup_pages: Pages, tournament_database_url: str
) -> None:
    from playwright.async_api import expect

    server = cup_pages.server
    title = f"Web cup {secrets.randbelow(10**5)}"
    cup = await create_as_operator(server, title)
    tid = cup["tournament"]
    name = f"Tia Cup {secrets.randbelow(10**5)}"

    page = await cup_pages.open()
    await page.evaluate("(n) => localStorage.setItem('yahtzee.name', n)", name)

    # The list: the header's link, the tournament's line.
    await page.click("#tournaments-link")
    await expect(page.locator("#tournaments")).to_be_visible()
    await page.wait_for_function("location.hash === '#/tournaments'")
    row = page.locator(f'#tournament-list li[data-tournament="{tid}"]')
    await expect(row).to_contain_text(title)
    await expect(row).to_contain_text("open · ends in ")
    await expect(row).to_contain_text("0 entries")
    await expect(row).to_contain_text("unrated")
    await expect(row).to_contain_text(f"dice {cup['dice_commitment'][:12]}…")
    assert await axe_serious(page) == []  # the list

    # One tournament: its rules, times, commitment; no seed yet.
    await row.locator("a").click()
    await expect(page.locator("#tournament")).to_be_visible()
    await page.wait_for_function(f"location.hash === '#/tournaments/{tid}'")
    await expect(page.locator("#tournament-name")).to_have_text(title)
    facts = page.locator("#tournament-facts")
    await expect(facts.locator('[data-fact="rules"] dd')).to_contain_text("Yahtzee")
    await expect(facts.locator('[data-fact="commitment"] dd')).to_have_text(cup["dice_commitment"])
    await expect(facts.locator('[data-fact="seed"] dd')).to_have_text("revealed after the end")
    await expect(page.locator("#no-standings")).to_be_visible()
    assert await axe_serious(page) == []

    # Enter: the remembered player is made, the entry's room played at the table (no hints).
    await page.click("#tournament-enter")
    await expect(page.locator("#table")).to_be_visible()
    room = (await page.locator("#room-id").text_content()) or ""
    assert room
    await expect(page.locator("#ask-hint")).to_be_hidden()
    who = await page.evaluate("window.yahtzee.identity")
    assert who is not None
    assert who["name"] == name
    total = await play_entry_on_the_page(page)
    await expect(page.locator("#banner")).to_have_text(f"Your tournament entry: {total} points")
    await expect(page.locator("#rematch")).to_be_hidden()
    await expect(page.locator("#analysis")).to_be_hidden()

    # Back to the tournament: the live standings with the own row marked; no attempt left.
    await page.click("#back-to-tournament")
    await expect(page.locator("#tournament")).to_be_visible()
    await page.wait_for_function(f"location.hash === '#/tournaments/{tid}'")
    mine = page.locator("#standings-rows tr.me")
    await expect(mine).to_contain_text(name)
    await expect(mine.locator("td").nth(2)).to_have_text(str(total))
    await expect(page.locator("#standings-note")).to_contain_text("live")
    await expect(page.locator("#tournament-attempts")).to_have_text("You have 0 of 1 attempt left.")
    await expect(page.locator("#tournament-enter")).to_be_hidden()
    await expect(page.locator("#standings-reference")).to_be_hidden()

    # The end time passes: the page's own poll brings the final standings.
    await end_now(tournament_database_url, tid)
    board = await final_standings(server, tid)
    allowed = board["optimal_score"]
    assert isinstance(allowed, int)
    await expect(page.locator("#standings-reference")).to_have_text(
        f"The dice allowed {allowed}; you scored {total}.", timeout=FINAL_TIMEOUT_MS
    )
    await expect(page.locator("#standings-note")).to_have_text("(final)")
    entry = next(e for e in board["entries"] if e["player"] == who["player"])
    assert entry["room"] == room
    await expect(mine.locator("td").nth(3)).to_have_text(re.compile(r"^\d+%$"))
    await expect(mine.locator(".verify-hint code")).to_have_text(
        f"yahtzee verify {room} --tournament {tid} --invite-code={entry['invite_code']}"
    )
    seed = (await page.evaluate("window.yahtzee.tournament.data.seed")) or ""
    assert len(seed) == 64
    await expect(facts.locator('[data-fact="seed"] dd')).to_have_text(seed)
    await expect(page.locator("#tournament-enter")).to_be_hidden()
    assert await axe_serious(page) == []
    await page.screenshot(path=_shot("web-tournament.png"), full_page=True)
    # The token of the entry's seat went into no address.
    assert not [url for url in cup_pages.requests if "ypt_" in url]

    # On a phone the final standings (the long verify hints) fit without sideways scrolling.
    phone = await cup_pages.open(f"/#/tournaments/{tid}", phone=True)
    await expect(phone.locator("#standings-reference")).to_have_text(f"The dice allowed {allowed}.")
    await expect(phone.locator("#standings-rows .verify-hint code")).to_contain_text(room)
    await no_sideways_scroll(phone)


async def test_an_unknown_tournament_says_so(cup_pages: Pages) -> None:
    from playwright.async_api import expect

    page = await cup_pages.open("/#/tournaments/tnothere")
    await expect(page.locator("#tournament")).to_be_visible()
    await expect(page.locator("#tournament-status")).to_have_text(
        "There is no tournament at this address (an invite-only one needs its link)."
    )
    await expect(page.locator("#tournament-body")).to_be_hidden()
    await page.click("#tournament-all")
    await expect(page.locator("#tournaments")).to_be_visible()
    await page.wait_for_function("location.hash === '#/tournaments'")


async def test_a_phone_lists_tournaments_and_creates_one_without_sideways_scrolling(
    cup_pages: Pages,
) -> None:
    from playwright.async_api import expect

    server = cup_pages.server
    cup = await create_as_operator(
        server, f"Phone cup with a long name {secrets.randbelow(10**4)}", attempts=3
    )
    context = await cup_pages.context(phone=True)
    await remembered(context, server, f"Pho Cup {secrets.randbelow(10**5)}")
    page = await cup_pages.open("/#/tournaments", context=context)
    assert page.viewport_size == PHONE
    await expect(
        page.locator(f'#tournament-list li[data-tournament="{cup["tournament"]}"]')
    ).to_be_visible()
    await no_sideways_scroll(page)

    # This server lets remembered players create: the form, then the new tournament's view.
    form = page.locator("#tournament-create")
    await expect(form).to_be_visible()
    assert await small_targets(page) == []
    assert await axe_serious(page) == []  # the list with the create form
    made_name = f"Made on a phone {secrets.randbelow(10**5)}"
    await page.fill("#tournament-create-name", made_name)
    await page.fill("#tournament-create-attempts", "2")
    await page.click("#tournament-create-button")
    await expect(page.locator("#tournament")).to_be_visible()
    await expect(page.locator("#tournament-name")).to_have_text(made_name)
    await expect(page.locator('#tournament-facts [data-fact="attempts"] dd')).to_have_text("2")
    await expect(page.locator("#tournament-attempts")).to_have_text(
        "You have 2 of 2 attempts left."
    )
    await expect(page.locator("#tournament-enter")).to_be_visible()
    await no_sideways_scroll(page)
    assert await small_targets(page) == []
    await page.screenshot(path=_shot("web-phone-tournament.png"), full_page=True)
    made = await page.evaluate("window.yahtzee.tournament.id")
    async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
        listed = (await http.get(f"/tournaments/{made}")).json()
    assert listed["name"] == made_name
    assert listed["attempts"] == 2


async def test_another_tab_resumes_the_unfinished_entry(cup_pages: Pages) -> None:
    """An entrant may stop and come back until the end: the tournament's view in another tab of
    the same browser offers the unfinished entry, and takes its seat back where it was."""
    from playwright.async_api import expect

    cup = await create_as_operator(cup_pages.server, f"Resume cup {secrets.randbelow(10**5)}")
    tid = cup["tournament"]
    context = await cup_pages.context()
    page = await cup_pages.open(f"/#/tournaments/{tid}", context=context)
    await expect(page.locator("#tournament-resume")).to_be_hidden()
    await page.click("#tournament-enter")
    await expect(page.locator("#table")).to_be_visible()
    room = (await page.locator("#room-id").text_content()) or ""
    await page.click("#roll")
    await page.locator("#scorecard td.mine button").first.click()
    if await page.locator("#confirm").is_visible():
        await page.click("#confirm-yes")
    await expect(page.locator("#scorecard td.filled")).to_have_count(1)

    other = await cup_pages.open(f"/#/tournaments/{tid}", context=context)
    await expect(other.locator("#tournament-resume")).to_be_visible()
    await expect(other.locator("#tournament-enter")).to_be_hidden()  # its one attempt is used
    await other.click("#tournament-resume")
    await expect(other.locator("#table")).to_be_visible()
    await expect(other.locator("#room-id")).to_have_text(room)
    await expect(other.locator("#scorecard td.filled")).to_have_count(1)
    await expect(other.locator("#roll")).to_have_text("Roll (3 left)")


async def test_the_create_form_stays_hidden_where_only_the_operator_creates(
    operator_only_pages: Pages,
) -> None:
    from playwright.async_api import expect

    pages = operator_only_pages
    context = await pages.context()
    await remembered(context, pages.server, f"Op Only {secrets.randbelow(10**5)}")
    page = await pages.open("/#/tournaments", context=context)
    await expect(page.locator("#tournaments")).to_be_visible()
    # The page asked the server (the answer: not for players), then left the form hidden.
    await page.wait_for_function("window.yahtzee.mayCreateTournaments === false")
    await expect(page.locator("#tournament-create")).to_be_hidden()
