"""Every relative link of the protocol documents, the README and the benchmarks' documents
points to a file that exists and, with a ``#fragment``, to an anchor that file has: a heading
(GitHub's slug of it) or an ``<a id="...">``. Section numbers are cited everywhere, so a renamed
heading must not leave a dead link behind."""

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_DIR = ROOT / "protocol"
BENCH_DIR = ROOT / "clients" / "bench"

DOCUMENTS = (
    PROTOCOL_DIR / "SPEC.md",
    PROTOCOL_DIR / "SPEC-REFERENCE.md",
    PROTOCOL_DIR / "SPEC-APPENDIX.md",
    PROTOCOL_DIR / "CHANGELOG.md",
    ROOT / "README.md",
    BENCH_DIR / "BENCHMARKS.md",
    BENCH_DIR / "BENCHMARKS-METHOD.md",
    BENCH_DIR / "BENCHMARKS-HISTORY.md",
    ROOT / "server" / "RELIABILITY.md",
    ROOT / "server" / "RELIABILITY-HISTORY.md",
    ROOT / "clients" / "README.md",
)

_FENCE = re.compile(r"^```.*?^```", flags=re.M | re.S)
_CODE_SPAN = re.compile(r"(`+).*?\1", flags=re.S)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", flags=re.M)
_EXPLICIT = re.compile(r'<a id="([^"]+)"></a>')


def _prose(text: str) -> str:
    """The text without code blocks: a link shown as code is no link."""
    return _FENCE.sub("", text)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor of a Markdown file; repeated headings get -1, -2, ... as on GitHub."""
    text = _prose(path.read_text(encoding="utf-8"))
    found = set(_EXPLICIT.findall(text))
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(text):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(found)


def links(path: Path) -> list[str]:
    """The relative link targets of a Markdown file, outside code blocks and code spans."""
    text = _CODE_SPAN.sub("", _prose(path.read_text(encoding="utf-8")))
    return [target for target in _LINK.findall(text) if not re.match(r"^[a-z]+:", target)]


def test_the_slug_is_githubs() -> None:
    assert github_slug("6.1 `hello`") == "61-hello"
    assert github_slug("10. Order, seq, retries and resume") == "10-order-seq-retries-and-resume"
    assert github_slug("13.3 `GET /rooms/{id}`") == "133-get-roomsid"
    assert github_slug("13.18 Duplicate tournaments (v1.4)") == "1318-duplicate-tournaments-v14"


def test_links_are_found_outside_code_only() -> None:
    text = "[a](x.md) `[b](y.md)`\n```text\n[c](z.md)\n```\n"
    assert _LINK.findall(_CODE_SPAN.sub("", _prose(text))) == ["x.md"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_points_to_an_existing_file_and_anchor(document: Path) -> None:
    broken = []
    for target in links(document):
        file_part, _, fragment = target.partition("#")
        path = (document.parent / file_part).resolve() if file_part else document
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{target}: no such anchor")
    assert not broken, f"{document.name}: {broken}"


def test_the_documents_have_links_to_check() -> None:
    # A parser that found nothing would pass the test above on every document.
    assert len(links(PROTOCOL_DIR / "SPEC.md")) > 40
    assert any("#" in target for target in links(PROTOCOL_DIR / "SPEC-APPENDIX.md"))
