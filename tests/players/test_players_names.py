"""Display names of remembered players: what is accepted, what is refused, what is the same."""

from __future__ import annotations

import pytest

from server.service.identities import IdentityError, name_key, validate_name


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("Ann", "Ann"),
        ("  Ann Lee  ", "Ann Lee"),  # trimmed
        ("Zoë", "Zoë"),
        ("Zoe\u0308", "Zoë"),  # NFC: e + combining diaeresis is stored as one ë
        ("José María 2", "José María 2"),
        ("李小龍", "李小龍"),
        ("Ζωή", "Ζωή"),
        ("हिन्दी", "हिन्दी"),  # combining marks after letters
        ("٣٤ عمر", "٣٤ عمر"),  # other scripts' digits
        ("ab", "ab"),
        ("x" * 24, "x" * 24),
    ],
)
def test_names_that_are_accepted(raw: str, stored: str) -> None:
    assert validate_name(raw) == stored


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "a",
        "x" * 25,
        "two  spaces",
        "tab\there",
        "new\nline",
        "nul\x00",
        "bell\x07",
        "\u202eright-to-left override",
        "zero\u200bwidth",
        "emoji 🎲",
        "dot.name",
        "under_score",
        "\u0301accent first",
        "no\u00a0break",  # only the plain space separates words
    ],
)
def test_names_that_are_refused(raw: str) -> None:
    with pytest.raises(IdentityError) as refused:
        validate_name(raw)
    assert refused.value.code == "invalid_name"


def test_names_are_the_same_whatever_their_case_and_form() -> None:
    assert name_key("Zoë") == name_key("ZOË") == name_key("Zoe\u0308".upper())
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("ﬁsh") == name_key("FISH")  # NFKC: the ligature is f + i
    assert name_key("Ann") != name_key("Anne")


def test_the_archive_settings_are_read_by_type_and_checked() -> None:
    from server.ops.database_settings import ArchiveSettings

    settings = ArchiveSettings.from_env(
        {
            "DATABASE_URL": "postgresql://u@h/db",
            "YAHTZEE_DATABASE": "OFF",
            "YAHTZEE_ARCHIVE_POLL_SECONDS": "0.5",
            "YAHTZEE_PLAYERS_PER_HOUR": "7",
            "YAHTZEE_JWT_ALGORITHMS": "RS256,ES256",
        }
    )
    assert (settings.database_url, settings.database) == ("postgresql://u@h/db", "off")
    assert (settings.poll_seconds, settings.players_per_hour) == (0.5, 7)
    assert settings.jwt_algorithms == ("RS256", "ES256")
    assert ArchiveSettings.from_env({}) == ArchiveSettings()
    with pytest.raises(ValueError, match="YAHTZEE_PLAYERS_PER_HOUR"):
        ArchiveSettings.from_env({"YAHTZEE_PLAYERS_PER_HOUR": "many"})
    with pytest.raises(ValueError, match="YAHTZEE_DATABASE"):
        ArchiveSettings.from_env({"YAHTZEE_DATABASE": "sqlite"})
