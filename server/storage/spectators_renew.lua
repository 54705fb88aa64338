-- Renew the spectator leases of one or more rooms in one call. KEYS: the rooms' spectator
-- zsets (several only on a single Redis, where every key is on the one node). ARGV[1]: when the
-- leases expire; ARGV[2]: now (leases expired by then are pruned); ARGV[3]: how long each key
-- is kept (ms); then, for each key in turn, its number of connections and their ids.
-- Returns each room's count after the pruning, or an error for a room whose key is not a
-- sorted set: one room's error does not keep the others from being renewed.
local expires, now, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local CHUNK = 1000 -- members a ZADD: unpack() has a limit (some 8,000 values)
local counts = {}
local at = 4
for k = 1, #KEYS do
  local key = KEYS[k]
  local n = tonumber(ARGV[at])
  local first, last = at + 1, at + n
  at = last + 1
  local kind = redis.call('TYPE', key)['ok']
  if kind ~= 'zset' and kind ~= 'none' then
    counts[k] = redis.error_reply('WRONGTYPE the spectators key of a room holds a ' .. kind)
  else
    for start = first, last, CHUNK do
      local adds = {}
      for i = start, math.min(start + CHUNK - 1, last) do
        adds[#adds + 1] = expires
        adds[#adds + 1] = ARGV[i]
      end
      redis.call('ZADD', key, unpack(adds))
    end
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    counts[k] = redis.call('ZCARD', key)
    redis.call('PEXPIRE', key, keep)
  end
end
return counts
