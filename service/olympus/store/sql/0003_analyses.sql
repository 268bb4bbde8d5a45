-- Each archived game's analysis by the coach (bot/analysis.py; docs/bots.md, "The coach"):
-- written once, the first kept wins; packed by the service (JSON, compressed).
CREATE TABLE analyses (
    room_id     text COLLATE "C" PRIMARY KEY REFERENCES games (room_id) ON DELETE CASCADE,
    data        bytea NOT NULL,
    analysed_at timestamptz NOT NULL DEFAULT now()
);
