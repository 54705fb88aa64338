-- Settle an attempted delivery in one step (every outbox key shares the hash tag {outbox}).
-- KEYS: due (zset), bodies (hash), tries (hash), dead (list)
-- ARGV: id, outcome, at_ms, dead_letters
--   outcome "done":  forget it (accepted, or no longer wanted)
--   outcome "retry": count the failure and schedule it again at at_ms (if still queued)
--   outcome "dead":  keep its body among the newest dead_letters, then forget it
local id, outcome = ARGV[1], ARGV[2]
if outcome == 'retry' then
  redis.call('HINCRBY', KEYS[3], id, 1)
  redis.call('ZADD', KEYS[1], 'XX', tonumber(ARGV[3]), id)
  return 1
end
if outcome == 'dead' then
  local body = redis.call('HGET', KEYS[2], id)
  if body then
    redis.call('LPUSH', KEYS[4], body)
    redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[4]) - 1)
  end
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
return 1
