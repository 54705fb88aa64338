-- Drop a spectator connection (ARGV[1]; "" drops none: a recount), prune the expired ones (up
-- to ARGV[2], now), count them; one key, atomic. (A script rather than MULTI: redis-py's
-- asyncio Cluster runs a transaction's commands on a thread of their own, blocking the event
-- loop.) Adding and renewing is spectators_renew.lua.
if ARGV[1] ~= '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]))
return redis.call('ZCARD', KEYS[1])
