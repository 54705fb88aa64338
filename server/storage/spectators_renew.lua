-- Renew the spectator leases of one or more rooms in one call. KEYS: the rooms' spectator
-- zsets (several only on a single Redis, where every key is on the one node). ARGV[1]: when the
-- leases expire; ARGV[2]: now (leases expired by then are pruned); ARGV[3]: how long each key
-- is kept (ms); then, for each key in turn, its number of connections and their ids.
-- Returns each room's count after the pruning, or the error its commands met: one room's
-- error (a key of the wrong type) does not keep the others from being renewed.
local expires, now, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local counts = {}
local at = 4
for k = 1, #KEYS do
  local n = tonumber(ARGV[at])
  local adds = {}
  for i = at + 1, at + n do
    adds[#adds + 1] = expires
    adds[#adds + 1] = ARGV[i]
  end
  at = at + n + 1
  local added = 0
  if n > 0 then
    added = redis.pcall('ZADD', KEYS[k], unpack(adds))
  end
  if type(added) == 'table' and added.err then
    counts[k] = added
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', now)
    counts[k] = redis.call('ZCARD', KEYS[k])
    redis.call('PEXPIRE', KEYS[k], keep)
  end
end
return counts
