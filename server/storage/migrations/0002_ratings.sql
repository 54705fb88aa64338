-- Ratings that separate skill from luck (server/domain/rating.py, README "Ratings").
-- Written in the SAME transaction as the game's archive row (server/storage/archive.py), so a
-- game is rated exactly once: a second archive write of the same game writes nothing at all.

-- Whether the room was rated (create_room.rated, protocol 1.4): only those move result ratings.
ALTER TABLE games ADD COLUMN rated boolean NOT NULL DEFAULT false;

-- A player's result rating per rule family: Weng-Lin (OpenSkill Plackett-Luce) mu and sigma.
CREATE TABLE ratings (
    identity_id  text NOT NULL REFERENCES identities (id),
    family       text NOT NULL,                 -- 'yahtzee' | 'yatzy' (options.rules)
    mu           double precision NOT NULL,
    sigma        double precision NOT NULL,
    games        integer NOT NULL,              -- rated games counted
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (identity_id, family)
);

-- A player's decision rating per family: the decaying weighted mean of the game performances,
-- kept as its weighted sum and weight (one more game: sum = 0.9 sum + p, weight = 0.9 w + 1).
CREATE TABLE decision_ratings (
    identity_id   text NOT NULL REFERENCES identities (id),
    family        text NOT NULL,
    weighted_sum  double precision NOT NULL,
    weight        double precision NOT NULL,
    games         integer NOT NULL,             -- analysed games counted
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (identity_id, family)
);

-- Skill and luck of every analysed seat of an archived game (computers included, for the
-- reference levels), and what the game did to the player's ratings. A rated seat that was not
-- analysed (a forfeit, or no strategy table loaded) has null skill columns.
CREATE TABLE game_skill (
    game_id          text NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seat             integer NOT NULL,
    identity_id      text REFERENCES identities (id),
    computer         text,
    family           text NOT NULL,
    decisions        integer,
    total_loss       double precision,  -- expected points lost by the decisions
    expected_start   double precision,  -- V0: optimal expectation of a new card
    final            integer NOT NULL,
    luck             double precision,  -- final - V0 + total_loss
    accuracy         double precision,  -- 100 * (1 - total_loss / V0)
    performance      double precision,  -- decision performance of this game
    decision_after   double precision,           -- decision rating after it (identities only)
    decision_games   integer,
    rating_before    double precision,           -- result rating mu before/after (rated only)
    rating_after     double precision,
    sigma_after      double precision,
    finished_at      timestamptz NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_skill_identity ON game_skill (identity_id, family, finished_at DESC)
    WHERE identity_id IS NOT NULL;
CREATE INDEX game_skill_finished ON game_skill (family, finished_at);
