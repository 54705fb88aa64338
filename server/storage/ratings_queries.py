"""The SQL of :mod:`server.storage.ratings`, apart from the code that runs it: the rows a
game's skill and ratings are stored in, and the leaderboards' queries (each board's value per
player over a period, and what one game adds to each board)."""

from __future__ import annotations

from typing import Literal

from server.domain.rating import DECISION_PROVISIONAL_GAMES, PROVISIONAL_SIGMA

__all__ = ["BOARDS", "BOARD_QUERIES", "GAME_BOARD_QUERY", "INSERT_SKILL", "Board"]

Board = Literal["result", "decision", "best_score"]
"""A leaderboard: the result rating, the decision rating, the best score."""
BOARDS: tuple[Board, ...] = ("result", "decision", "best_score")

GAME_BOARD_QUERY = f"""
SELECT 'result' AS board, s.identity_id, i.display_name AS name, s.rating_after AS value,
       s.sigma_after > {PROVISIONAL_SIGMA} AS provisional
  FROM game_skill s JOIN identities i ON i.id = s.identity_id
 WHERE s.game_id = %(game)s AND s.rating_after IS NOT NULL
UNION ALL
SELECT 'decision', s.identity_id, i.display_name, s.decision_after,
       s.decision_games < {DECISION_PROVISIONAL_GAMES}
  FROM game_skill s JOIN identities i ON i.id = s.identity_id
 WHERE s.game_id = %(game)s AND s.decision_after IS NOT NULL
UNION ALL
SELECT 'best_score', gp.identity_id, i.display_name, gp.total, false
  FROM game_players gp JOIN games g ON g.id = gp.game_id
  JOIN identities i ON i.id = gp.identity_id
 WHERE gp.game_id = %(game)s AND g.outcome = 'finished' AND g.public AND NOT gp.forfeited
"""

INSERT_SKILL = """
INSERT INTO game_skill (game_id, seat, identity_id, computer, family, decisions, total_loss,
                        expected_start, final, luck, accuracy, performance, decision_after,
                        decision_games, rating_before, rating_after, sigma_after, finished_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""

BOARD_QUERIES: dict[Board, str] = {
    "result": f"""
        SELECT DISTINCT ON (s.identity_id) s.identity_id, i.display_name AS name,
               s.rating_after AS value, s.sigma_after > {PROVISIONAL_SIGMA} AS provisional
          FROM game_skill s JOIN identities i ON i.id = s.identity_id
          JOIN games g ON g.id = s.game_id
         WHERE s.family = %(family)s AND s.finished_at >= %(since)s
           AND s.rating_after IS NOT NULL
         ORDER BY s.identity_id, g.archived_at DESC, s.game_id DESC
    """,
    "decision": f"""
        SELECT DISTINCT ON (s.identity_id) s.identity_id, i.display_name AS name,
               s.decision_after AS value,
               s.decision_games < {DECISION_PROVISIONAL_GAMES} AS provisional
          FROM game_skill s JOIN identities i ON i.id = s.identity_id
          JOIN games g ON g.id = s.game_id
         WHERE s.family = %(family)s AND s.finished_at >= %(since)s
           AND s.decision_after IS NOT NULL
         ORDER BY s.identity_id, g.archived_at DESC, s.game_id DESC
    """,
    "best_score": """
        SELECT gp.identity_id, i.display_name AS name, max(gp.total) AS value,
               false AS provisional
          FROM game_players gp JOIN games g ON g.id = gp.game_id
          JOIN identities i ON i.id = gp.identity_id
         WHERE g.options ->> 'rules' = %(family)s AND gp.finished_at >= %(since)s
           AND g.outcome = 'finished' AND g.public AND NOT gp.forfeited
         GROUP BY gp.identity_id, i.display_name
    """,
}
