-- Add (ARGV[2] = lease expiry) or drop (ARGV[2] = "") a spectator connection, prune expired
-- ones, count them; one key, atomic. (A script rather than MULTI: redis-py's asyncio Cluster
-- runs a transaction's commands on a thread of their own, blocking the event loop.)
if ARGV[1] ~= '' then
  if ARGV[2] ~= '' then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
  else
    redis.call('ZREM', KEYS[1], ARGV[1])
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[3]))
local n = redis.call('ZCARD', KEYS[1])
if tonumber(ARGV[4]) > 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
end
return n
