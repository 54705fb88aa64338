-- One quick-play queue as matching reads it, after dropping the tickets nobody renewed.
-- KEYS: queue, tickets, alive, who
-- ARGV: now ms, ttl ms, most entries returned
-- Returns {ticket, entry JSON, ...}, longest waiting first.
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
for _, ticket in ipairs(dead) do
  if redis.call('ZSCORE', KEYS[1], ticket) then
    local entry = redis.call('HGET', KEYS[2], ticket)
    if entry then
      local identity = cjson.decode(entry)['identity']
      if redis.call('HGET', KEYS[4], identity) == ticket then
        redis.call('HDEL', KEYS[4], identity)
      end
    end
    redis.call('ZREM', KEYS[1], ticket)
    redis.call('HDEL', KEYS[2], ticket)
    redis.call('ZREM', KEYS[3], ticket)
  end
end
local out = {}
for _, ticket in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)) do
  local entry = redis.call('HGET', KEYS[2], ticket)
  if entry then
    out[#out + 1] = ticket
    out[#out + 1] = entry
  end
end
return out
