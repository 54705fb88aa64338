-- Watching live tournament entries with a delay (SPEC.md 13.18, 13.23).
-- Applied once by server/storage/migrate.py; never edited afterwards.

-- Seconds an entry's events wait before anyone may watch them while the tournament is open;
-- null: nobody watches an entry before the end time (strict duplicate fairness).
ALTER TABLE tournaments ADD COLUMN watch_delay_seconds integer
    CHECK (watch_delay_seconds BETWEEN 60 AND 86400);
