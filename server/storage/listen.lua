-- A process listens to a room: it joins the room's listeners set, which then lives as long as
-- the room's keys (every commit sets their TTL again, the set's included).
--
-- KEYS[1] the room's listeners set
-- KEYS[2] the room's hash (its TTL is copied; a room not written yet: one day)
-- ARGV[1] the process's listener id
redis.call('SADD', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
elseif ttl == -2 then
  redis.call('EXPIRE', KEYS[1], 86400)
else
  redis.call('PERSIST', KEYS[1])
end
return 1
