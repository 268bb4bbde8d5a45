-- Players: accounts, their Glicko-2 ratings and each rated game's change, and the games each
-- account sat in (store/postgres_accounts.py; docs/operations.md, "Players").

-- ``name_key`` is the name as names are compared (names.name_key: case-folded); ``name`` as
-- the player typed it. The rating is Glicko-2's (ratings/glicko2.py) on Glicko's scale.
CREATE TABLE accounts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text NOT NULL,
    name_key       text COLLATE "C" NOT NULL UNIQUE,
    password_hash  text NOT NULL,
    created_ms     bigint NOT NULL,
    rating         double precision NOT NULL,
    deviation      double precision NOT NULL,
    volatility     double precision NOT NULL,
    rated_games    integer NOT NULL DEFAULT 0,
    rated_ms       bigint
);
CREATE INDEX accounts_by_rating ON accounts (rating DESC, id) WHERE rated_games > 0;

-- One row per rated game once its ratings changed: the room's id is the key, so a game is
-- rated once however often its update is tried (server/rater.py).
CREATE TABLE rated_games (
    room_id   text COLLATE "C" PRIMARY KEY,
    result    text NOT NULL,
    rated_ms  bigint NOT NULL
);

-- Each player's change of a rated game: before and after, for the profile's graph.
CREATE TABLE rating_changes (
    room_id            text COLLATE "C" NOT NULL REFERENCES rated_games (room_id),
    account_id         bigint NOT NULL REFERENCES accounts (id),
    seat               text NOT NULL,
    score              double precision NOT NULL,
    rating_before      double precision NOT NULL,
    deviation_before   double precision NOT NULL,
    rating_after       double precision NOT NULL,
    deviation_after    double precision NOT NULL,
    volatility_after   double precision NOT NULL,
    rated_ms           bigint NOT NULL,
    PRIMARY KEY (room_id, account_id)
);
CREATE INDEX rating_changes_by_account ON rating_changes (account_id, rated_ms DESC);

-- The seats each account took, live or finished: "Your games" on any device.
CREATE TABLE account_games (
    account_id  bigint NOT NULL REFERENCES accounts (id),
    room_id     text COLLATE "C" NOT NULL,
    seat        text NOT NULL,
    created_ms  bigint NOT NULL,
    PRIMARY KEY (account_id, room_id)
);
CREATE INDEX account_games_by_time ON account_games (account_id, created_ms DESC, room_id);
