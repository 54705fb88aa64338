-- Queue an outgoing delivery once: its body is stored under its id (the idempotency key) only
-- if the id is new, and only then is it scheduled at ARGV[3] (ms). A repeated enqueue of the
-- same id (a commit's hints written again) changes nothing.
-- KEYS: due (zset id -> next attempt ms), bodies (hash id -> body)
-- ARGV: id, body, at_ms
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[3]), ARGV[1])
  return 1
end
return 0
