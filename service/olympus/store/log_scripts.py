"""The event log's Lua scripts on Redis (event_store.py), each one atomic step.

Every multi-step operation of a room is one script: Redis runs a script whole, so "check the
expected version, then write" cannot interleave with another writer. A script error does not
roll back what it wrote before, so each script validates everything before its first write.
Each script's comment says its keys (all of one room, so one cluster slot), its arguments and
its replies.
"""

from __future__ import annotations

# Version of a stream key, from entry ids only. XREVRANGE COUNT 1 is O(1); when every entry was
# trimmed the stream still remembers its last id (XINFO STREAM last-generated-id), and XADD
# would refuse a smaller id anyway.
LUA_VERSION = """
local function stream_version(key)
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  local id = nil
  if #last > 0 then
    id = last[1][1]
  elseif redis.call('EXISTS', key) == 1 then
    local info = redis.call('XINFO', 'STREAM', key)
    for i = 1, #info, 2 do
      if info[i] == 'last-generated-id' then id = info[i + 1] end
    end
  end
  if not id then return 0 end
  return tonumber(string.match(id, '^(%d+)-'))
end
"""

# KEYS: meta, events, cmds.  ARGV: expected_version, command_id ('' = none), hint channel,
# the caller's chain at expected_version ('' = unchecked), the command's digest ('' = none),
# the events' time in ms ('' = none; kept in each entry's field "t"), then per event: data,
# its chain ('' = none).  Returns {code, a, b}: 0 ok {version, first};
# 1 duplicate {version, first}; 2 conflict {actual}; 3 room not found; 4 diverged {actual}: the
# version is the expected one, the chain of the last event is not; 5 the command id was applied
# to another command (its digest differs) {version, first}. The commands hash records
# "first:last:digest" per id ("first:last" before digests were kept: taken as the same).
# ``publish`` (PUBLISH or SPUBLISH) is defined before it, and the duplicate's line
# ``-- confirm`` replaced by ``REWRITE_RECORD`` under ``Replicated``: ``append_script``.
LUA_APPEND = (
    LUA_VERSION
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return {3, 0, 0} end
local cmd = ARGV[2]
if cmd ~= '' then
  local seen = redis.call('HGET', KEYS[3], cmd)
  if seen then
    local first, last, digest = string.match(seen, '^(%d+):(%d+):?(%w*)$')
    if digest ~= '' and ARGV[5] ~= '' and digest ~= ARGV[5] then
      return {5, tonumber(last), tonumber(first)}
    end
    -- confirm
    return {1, tonumber(last), tonumber(first)}
  end
end
local cur = stream_version(KEYS[2])
if cur ~= tonumber(ARGV[1]) then return {2, cur, 0} end
if ARGV[4] ~= '' and cur > 0 then
  local at = string.format('%d-0', cur)
  local last = redis.call('XRANGE', KEYS[2], at, at)
  if #last > 0 then
    local fields = last[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'h' and fields[i + 1] ~= ARGV[4] then return {4, cur, 0} end
    end
  end
end
local v = cur
for i = 7, #ARGV, 2 do
  v = v + 1
  local entry = {'e', ARGV[i]}
  if ARGV[i + 1] ~= '' then
    entry[#entry + 1] = 'h'
    entry[#entry + 1] = ARGV[i + 1]
  end
  if ARGV[6] ~= '' then
    entry[#entry + 1] = 't'
    entry[#entry + 1] = ARGV[6]
  end
  redis.call('XADD', KEYS[2], string.format('%d-0', v), unpack(entry))
end
if cmd ~= '' then
  redis.call('HSET', KEYS[3], cmd, string.format('%d:%d:%s', cur + 1, v, ARGV[5]))
end
redis.call(publish, ARGV[3], string.format('%d', v))
return {0, v, cur + 1}
"""
)


# The write that makes a duplicate's confirmation mean something (``EventStore.append``,
# ``confirm``): the command id's record set again to the value it holds (``seen``, read by the
# same script). Nothing changes in the data, but it is a write: Redis propagates it to the
# replicas, in the master's replication stream after the original append (whose record it
# read), and it is this connection's newest write, so a WAIT behind it counts only replicas
# that have both. Rather than a mark per command id that a replica confirmed it: that mark
# would be one more write after the WAIT of every first append, and itself unconfirmed; this
# costs a write only where a duplicate is answered under ``Replicated``.
REWRITE_RECORD = "redis.call('HSET', KEYS[3], cmd, seen)"


def append_script(sharded: bool, confirm: bool = False) -> str:
    """The append script, its hint sent by SPUBLISH on a cluster, by PUBLISH on one Redis;
    ``confirm`` (under ``Replicated``): its duplicate rewrites the command id's record
    (``REWRITE_RECORD``) before it answers. Without it, the script is the same text but for
    a comment: nothing changes on any path."""
    script = f"local publish = '{'SPUBLISH' if sharded else 'PUBLISH'}'\n" + LUA_APPEND
    return script.replace("-- confirm", REWRITE_RECORD) if confirm else script


# KEYS: cmds.  ARGV: command id.  Returns the id's record (``LUA_APPEND``), set again to the
# value it holds (``REWRITE_RECORD``: what a duplicate append does under ``Replicated``), or
# nil if the id was not applied (nothing written). ``EventStore.confirm``.
LUA_CONFIRM = """
local seen = redis.call('HGET', KEYS[1], ARGV[1])
if seen then redis.call('HSET', KEYS[1], ARGV[1], seen) end
return seen
"""


# KEYS: meta, events, snap.  ARGV: after_version, count (0 = all), use_snapshot ('1'/'0').
# Returns nil if the room does not exist, else {epoch, version, {snap_v, snap_data} | nil,
# entries}. One script so the snapshot and its tail are read from the same instant.
LUA_READ = (
    LUA_VERSION
    + """
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then return false end
local cur = stream_version(KEYS[2])
local after = tonumber(ARGV[1])
local snap = false
if ARGV[3] == '1' then
  local s = redis.call('HMGET', KEYS[3], 'v', 'd')
  if s[1] then
    snap = {tonumber(s[1]), s[2]}
    after = tonumber(s[1])
  else
    after = 0
  end
end
local entries = {}
if after < cur then
  local start = string.format('%d-0', after + 1)
  if ARGV[2] == '0' then
    entries = redis.call('XRANGE', KEYS[2], start, '+')
  else
    entries = redis.call('XRANGE', KEYS[2], start, '+', 'COUNT', ARGV[2])
  end
end
return {epoch, cur, snap, entries}
"""
)

# KEYS: meta, events, snap.  ARGV: version, data.  Returns {code, x}: 0 stored; 1 kept the
# existing newer-or-equal snapshot {its version}; 2 ahead of the stream {stream version};
# 3 room not found.
LUA_SAVE_SNAPSHOT = (
    LUA_VERSION
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return {3, 0} end
local v = tonumber(ARGV[1])
local cur = stream_version(KEYS[2])
if v > cur then return {2, cur} end
local old = redis.call('HGET', KEYS[3], 'v')
if old and tonumber(old) >= v then return {1, tonumber(old)} end
redis.call('HSET', KEYS[3], 'v', ARGV[1], 'd', ARGV[2])
return {0, v}
"""
)

# KEYS: events, snap.  Returns 1 if the snapshot was ahead of the stream, and dropped; else 0.
# Its fields go, not the hash (which must exist: LUA_CREATE).
LUA_DROP_SNAPSHOT_AHEAD = (
    LUA_VERSION
    + """
local v = redis.call('HGET', KEYS[2], 'v')
if v and tonumber(v) > stream_version(KEYS[1]) then
  redis.call('HDEL', KEYS[2], 'v', 'd')
  return 1
end
return 0
"""
)

# KEYS: meta, events, snap.  ARGV: keep_after_version.  Returns {code, x}: 0 trimmed {removed};
# 1 beyond the snapshot {snapshot version}; 3 room not found.
LUA_TRIM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {3, 0} end
local keep = tonumber(ARGV[1])
local snap = tonumber(redis.call('HGET', KEYS[3], 'v') or '0')
if keep > snap then return {1, snap} end
return {0, redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', keep + 1))}
"""

# KEYS: meta, events, cmds, snap.  ARGV: epoch, meta.  Returns 1 created, 0 exists. Leftover
# keys of a meta-less room are dropped so that a new room always starts at version 0. The
# snapshot hash is created with the room (a placeholder field, 'exists'), because every read
# names it and a script whose keys do not all exist is refused while the room's slot migrates
# (cluster_calls.py): a room without a snapshot could not be read until the whole slot moved.
LUA_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'meta', ARGV[2])
redis.call('HSET', KEYS[4], 'exists', '1')
return 1
"""

# KEYS: status hash (room -> status), by-status sorted set (members "status\\0room", score 0,
# so ZRANGEBYLEX lists one status in room-id order).  ARGV: room, status ('' = remove).
LUA_SET_STATUS = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then redis.call('ZREM', KEYS[2], old .. '\\0' .. ARGV[1]) end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[2], 0, ARGV[2] .. '\\0' .. ARGV[1])
end
return old
"""
