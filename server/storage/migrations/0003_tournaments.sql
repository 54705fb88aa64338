-- Duplicate tournaments (protocol 1.4): every entry rolls the tournament's dice (protocol/duplicate.py).
-- Applied once by server/storage/migrate.py; never edited afterwards.

CREATE TABLE tournaments (
    id             text PRIMARY KEY,
    name           text NOT NULL,
    options        jsonb NOT NULL,              -- RoomOptions as the protocol writes them
    starts_at      timestamptz NOT NULL,
    ends_at        timestamptz NOT NULL,
    entry_limit    integer,                     -- null: no limit
    public         boolean NOT NULL,
    invite_hash    text,                        -- sha256 of the invite code (invite-only)
    attempts       integer NOT NULL DEFAULT 1,  -- entries one identity may play
    rated          boolean NOT NULL DEFAULT false,
    seed           text NOT NULL,               -- SECRET until ends_at: never served before
    commitment     text NOT NULL,               -- sha256 of the seed, public from the start
    created_by     text,                        -- identity id; null: the operator or the service
    -- the service's recurring daily tournament of that UTC day: one per day, whoever creates it
    daily_of       date UNIQUE,
    created_at     timestamptz NOT NULL DEFAULT now(),
    closed_at      timestamptz,                 -- results archived (after ends_at)
    optimal_score  integer,                     -- the optimal player's total on these dice
    CHECK (ends_at > starts_at),
    CHECK (attempts >= 1)
);
CREATE INDEX tournaments_ends_at ON tournaments (ends_at);

-- One entry: a solitaire room played on the tournament's dice. (tournament, identity, attempt)
-- is unique: two racing requests of one identity get one entry each attempt, never two.
CREATE TABLE tournament_entries (
    tournament_id  text NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    identity_id    text NOT NULL REFERENCES identities (id),
    attempt        integer NOT NULL,
    room_id        text NOT NULL UNIQUE,
    invite         text NOT NULL,               -- the room's invite code, shown after the close
    player_id      text NOT NULL,
    name           text NOT NULL,
    entered_at     timestamptz NOT NULL DEFAULT now(),
    -- the results, written at the close
    score          integer,
    finished       boolean,
    accuracy       double precision,            -- share of optimal decisions (null: not analysed)
    place          integer,
    PRIMARY KEY (tournament_id, identity_id, attempt)
);
