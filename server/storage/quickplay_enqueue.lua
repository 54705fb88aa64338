-- Queue one quick-play ticket, unless its player is queued already (in any queue).
-- KEYS: queue (zset ticket -> enqueued ms), tickets (hash ticket -> entry JSON),
--       alive (zset ticket -> last renewal ms), who (hash identity -> ticket)
-- ARGV: ticket, identity, entry JSON, enqueued ms, now ms, ttl ms
-- Returns {1, position} when queued, {0, ticket} when the player holds a live ticket already
-- (a ticket its process stopped renewing does not count: the snapshot drops it later).
local held = redis.call('HGET', KEYS[4], ARGV[2])
if held and redis.call('HEXISTS', KEYS[2], held) == 1 then
  local seen = redis.call('ZSCORE', KEYS[3], held)
  if seen and tonumber(seen) > tonumber(ARGV[5]) - tonumber(ARGV[6]) then
    return {0, held}
  end
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[1])
redis.call('HSET', KEYS[4], ARGV[2], ARGV[1])
return {1, redis.call('ZRANK', KEYS[1], ARGV[1]) + 1}
