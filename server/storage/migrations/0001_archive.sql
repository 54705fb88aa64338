-- The game archive and the players' identities (server/archive).
-- Applied once, in one transaction, by server/migrate.py; never edited afterwards:
-- a change of the schema is a new file with the next number.

-- A remembered player: a guest (a long-lived player token, stored only as its sha256) or a
-- subject of the operator's identity provider (a JWT's issuer and subject), or both once a
-- guest linked a JWT.
CREATE TABLE identities (
    id            text PRIMARY KEY,
    display_name  text NOT NULL,
    -- casefolded NFC form of display_name: names are unique case-insensitively
    name_key      text NOT NULL UNIQUE,
    token_hash    text UNIQUE,
    jwt_issuer    text,
    jwt_subject   text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    UNIQUE (jwt_issuer, jwt_subject)
);

-- One finished (or abandoned) game, written exactly once: (room_id, game_no) is its key.
CREATE TABLE games (
    id               text PRIMARY KEY,          -- '<room_id>.<game_no>'
    room_id          text NOT NULL,
    game_no          integer NOT NULL,
    outcome          text NOT NULL,             -- 'finished' | 'abandoned'
    public           boolean NOT NULL,
    room_name        text NOT NULL DEFAULT '',
    options          jsonb NOT NULL,            -- RoomOptions as the protocol writes them
    seats            integer NOT NULL,
    turn_seconds     integer NOT NULL,
    hints            boolean NOT NULL,
    created_at       timestamptz NOT NULL,      -- the room's creation
    finished_at      timestamptz NOT NULL,
    archived_at      timestamptz NOT NULL DEFAULT now(),
    dice_commitment  text NOT NULL,             -- sha256 commitment shown before any roll
    server_seed      text,                      -- revealed at game over (null: abandoned)
    player_seeds     jsonb NOT NULL,            -- player id -> seed (fair dice)
    final_state      jsonb NOT NULL,            -- the engine's state dict at the end
    event_count      integer NOT NULL,
    UNIQUE (room_id, game_no)
);
CREATE INDEX games_finished_at ON games (finished_at, id);

-- The seats of an archived game, with their final cards and the identity that sat there.
CREATE TABLE game_players (
    game_id        text NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seat           integer NOT NULL,
    player_id      text NOT NULL,
    name           text NOT NULL,
    computer       text,                        -- the level of a computer seat
    identity_id    text REFERENCES identities (id),
    place          integer NOT NULL,
    total          integer NOT NULL,
    forfeited      boolean NOT NULL,
    scores         jsonb NOT NULL,              -- the 13 boxes (null: empty)
    yahtzee_bonuses integer NOT NULL,
    upper_bonus    boolean NOT NULL,
    yahtzees       integer NOT NULL,            -- a 50 in the Yahtzee box plus the bonuses
    accuracy       double precision,            -- share of optimal decisions (null: not analysed)
    finished_at    timestamptz NOT NULL,        -- copied from games: a player's page is by it
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_players_identity ON game_players (identity_id, finished_at DESC, game_id)
    WHERE identity_id IS NOT NULL;

-- The full event log of a game as the protocol writes it (JSON), one array a game
-- (compressed by TOAST).
CREATE TABLE game_logs (
    game_id  text PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    events   jsonb NOT NULL
);
