-- One atomic room transition: idempotency check, compare-and-set, append, publish.
--
-- KEYS[1] room hash     fields: version, seq, record
-- KEYS[2] event log     a Stream; entry ids are 0-<seq>, field "e" holds the encoded event
-- KEYS[3] seats hash    seat metadata (token hashes, names, ...)
-- KEYS[4] results hash  command key -> "<seq>|<result>" for idempotent retries
-- KEYS[5] results list  the order results were cached in, to cap the hash
-- KEYS[6] listeners set  the processes with a subscriber of the room (their listener ids)
-- KEYS[7] (single Redis only) the deadline schedule's bucket of the room
-- The first six share the room's hash tag, so this runs unchanged on Redis Cluster (without
-- KEYS[7], which lies in another slot: there the caller writes the deadline after the commit).
--
-- ARGV[1] expected version ("0": the room must not exist yet); versions are random strings of
--         digits drawn by the caller, never a counter: a master promoted after a failover that
--         lost writes must not reach, by counting, a version a stale cache still holds
-- ARGV[2] the new record
-- ARGV[3] TTL in seconds applied to all five keys (idle or retention period)
-- ARGV[4] sharded pub/sub channel of the room
-- ARGV[5] result cache field ("" for none)
-- ARGV[6] result cache value
-- ARGV[7] result cache capacity
-- ARGV[8] the message to publish ("" for none): the events themselves
-- ARGV[9] the new version
-- ARGV[10] the committing process's listener id
-- ARGV[11] number of seat fields to set (n), then n field/value pairs (an empty value deletes
--         the field: that is how a seat token is revoked)
-- then the number of events (m), then m encoded events, numbered from the current seq + 1
-- then, only with KEYS[7]: the room's id and its new deadline in Unix ms ("-": none, the room
--         leaves the schedule); written with the commit, so the schedule never misses a
--         commit whose reply was lost
--
-- Returns one of
--   {1, new_version, first_seq, last_seq}   committed (first_seq > last_seq when no events)
--   {0, version, seq, record}               the version moved: nothing written; the fresh
--                                           record comes back so the caller needs no reload
--   {2, cached}                             this command already ran: its "<seq>|<result>"
--                                           (the entry is written again, see above)

if ARGV[5] ~= '' then
  local cached = redis.call('HGET', KEYS[4], ARGV[5])
  if cached then
    -- written again: a WAIT after this script then covers the first execution's writes too
    redis.call('HSET', KEYS[4], ARGV[5], cached)
    return {2, cached}
  end
end

local room = redis.call('HMGET', KEYS[1], 'version', 'seq', 'record')
local current = room[1] or '0'
local seq = tonumber(room[2] or '0')
if current ~= ARGV[1] then
  return {0, current, seq, room[3] or ''}
end

local ttl = tonumber(ARGV[3])
local idx = 11
local nseats = tonumber(ARGV[idx])
for i = 1, nseats do
  local value = ARGV[idx + 2 * i]
  if value == '' then
    redis.call('HDEL', KEYS[3], ARGV[idx + 2 * i - 1])
  else
    redis.call('HSET', KEYS[3], ARGV[idx + 2 * i - 1], value)
  end
end
idx = idx + 2 * nseats + 1
local nevents = tonumber(ARGV[idx])
local first = seq + 1
for i = 1, nevents do
  seq = seq + 1
  redis.call('XADD', KEYS[2], '0-' .. seq, 'e', ARGV[idx + i])
end

if KEYS[7] then
  local at = ARGV[idx + nevents + 2]
  if at == '-' then
    redis.call('ZREM', KEYS[7], ARGV[idx + nevents + 1])
  else
    redis.call('ZADD', KEYS[7], at, ARGV[idx + nevents + 1])
  end
end

local version = ARGV[9]
redis.call('HSET', KEYS[1], 'version', version, 'seq', seq, 'record', ARGV[2])

if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[5], seq .. '|' .. ARGV[6])
  redis.call('RPUSH', KEYS[5], ARGV[5])
  local cap = tonumber(ARGV[7])
  while redis.call('LLEN', KEYS[5]) > cap do
    redis.call('HDEL', KEYS[4], redis.call('LPOP', KEYS[5]))
  end
end

for i = 1, 6 do
  redis.call('EXPIRE', KEYS[i], ttl)
end

-- Published only when someone else may listen. A process of this version listening to the room
-- is in the listeners set (it joins before it reads the log, so it misses nothing); one that
-- does not join (an earlier version, during a rolling upgrade) shows in the channel's count,
-- which includes the committer's own subscription when it is a listener. The committer hands
-- its events to its own subscribers itself: its echo would only be dropped.
if ARGV[8] ~= '' then
  local mine = redis.call('SISMEMBER', KEYS[6], ARGV[10])
  if redis.call('SCARD', KEYS[6]) > mine
    or redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[4])[2] > mine then
    redis.call('SPUBLISH', ARGV[4], ARGV[8])
  end
end
return {1, version, first, seq}
