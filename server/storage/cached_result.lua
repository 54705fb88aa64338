-- The idempotency cache's entry for ARGV[1], written again when present: the write makes the
-- WAIT that follows on the same connection cover the first execution's writes too.
local cached = redis.call('HGET', KEYS[1], ARGV[1])
if cached then
  redis.call('HSET', KEYS[1], ARGV[1], cached)
end
return cached
