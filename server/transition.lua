-- One atomic room transition (compare-and-set + append + publish).
--
-- KEYS[1] room hash     fields: version, seq, record (JSON)
-- KEYS[2] event log     a Stream; entry ids are 0-<seq>, field "e" holds the event (JSON)
-- KEYS[3] seats hash    seat metadata (token hashes, names, ...)
-- KEYS[4] results hash  command-id -> "<seq>|<result>" for idempotent retries
-- KEYS[5] results list  the order results were cached in, to cap the hash
-- All five share the room's hash tag, so this runs unchanged on Redis Cluster.
--
-- ARGV[1] expected version ("0": the room must not exist yet)
-- ARGV[2] the new record (JSON)
-- ARGV[3] TTL in seconds applied to all five keys (idle or retention period)
-- ARGV[4] pub/sub channel for the wake-up
-- ARGV[5] result cache field ("" for none)
-- ARGV[6] result cache value
-- ARGV[7] result cache capacity
-- ARGV[8] number of seat fields to set (n), then n field/value pairs (an empty value deletes
--         the field: that is how a seat token is revoked)
-- then the number of events (m), then m events (JSON)
--
-- Returns {1, new_version, first_seq, last_seq} on success (first_seq > last_seq when no events)
-- or {0, current_version, current_seq} when the version moved (nothing written).

local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if current ~= tonumber(ARGV[1]) then
  return {0, current, seq}
end

local ttl = tonumber(ARGV[3])
local idx = 8
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

local version = current + 1
redis.call('HSET', KEYS[1], 'version', version, 'seq', seq, 'record', ARGV[2])

if ARGV[5] ~= '' then
  if redis.call('HSETNX', KEYS[4], ARGV[5], seq .. '|' .. ARGV[6]) == 1 then
    redis.call('RPUSH', KEYS[5], ARGV[5])
    local cap = tonumber(ARGV[7])
    while redis.call('LLEN', KEYS[5]) > cap do
      redis.call('HDEL', KEYS[4], redis.call('LPOP', KEYS[5]))
    end
  end
end

for i = 1, 5 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('EXPIRE', KEYS[i], ttl)
  end
end

if nevents > 0 then
  redis.call('PUBLISH', ARGV[4], seq)
end
return {1, version, first, seq}
