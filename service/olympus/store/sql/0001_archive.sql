-- The archive of finished games (store/postgres_archive.py; docs/operations.md).

-- One row per game. ``log`` is the whole log, packed and compressed (store/archived.py):
-- already zstd, so PostgreSQL keeps it out of line without compressing it again.
CREATE TABLE games (
    room_id      text COLLATE "C" PRIMARY KEY,
    epoch        bigint NOT NULL,
    options      jsonb NOT NULL,
    players      jsonb NOT NULL,
    result       text,
    reason       text NOT NULL,
    started_ms   bigint NOT NULL,
    ended_ms     bigint NOT NULL,
    event_count  integer NOT NULL CHECK (event_count > 0),
    chain_head   text NOT NULL,
    meta         bytea NOT NULL,
    seats        jsonb NOT NULL,
    log          bytea NOT NULL,
    archived_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE games ALTER COLUMN log SET STORAGE EXTERNAL;
CREATE INDEX games_by_end ON games (ended_ms DESC, room_id DESC);

-- Who sat in each game, for a player's list of games (a profile's pages, newest first).
-- ``name_key`` is the name as names are compared (lower case); accounts join here later.
CREATE TABLE game_players (
    room_id   text COLLATE "C" NOT NULL REFERENCES games (room_id) ON DELETE CASCADE,
    seat      text NOT NULL,
    name      text NOT NULL,
    name_key  text NOT NULL,
    ended_ms  bigint NOT NULL,
    PRIMARY KEY (room_id, seat)
);
CREATE INDEX game_players_by_name ON game_players (name_key, ended_ms DESC, room_id DESC);
