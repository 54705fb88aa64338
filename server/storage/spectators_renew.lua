-- Renew the leases of many spectator connections of one room (ARGV[4..]) to expire at ARGV[1],
-- prune the expired ones (up to ARGV[2], now), keep the key ARGV[3] ms, return the count:
-- one call a room however many watch it, instead of one a connection.
local adds = {}
for i = 4, #ARGV do
  adds[#adds + 1] = tonumber(ARGV[1])
  adds[#adds + 1] = ARGV[i]
end
if #adds > 0 then
  redis.call('ZADD', KEYS[1], unpack(adds))
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return n
