-- Renew this process's tickets of one quick-play queue and collect their news.
-- KEYS: queue, alive, matched
-- ARGV: now ms, ticket...
-- Returns {queue size, news...}: per ticket its match JSON (taken: delivered once),
-- "q<position>" while queued, "p" while its match is being made, "" when it is gone.
local out = {redis.call('ZCARD', KEYS[1])}
for i = 2, #ARGV do
  local ticket = ARGV[i]
  local match = redis.call('HGET', KEYS[3], ticket)
  if match and match ~= 'pending' then
    redis.call('HDEL', KEYS[3], ticket)
    out[#out + 1] = match
  elseif redis.call('ZSCORE', KEYS[1], ticket) then
    redis.call('ZADD', KEYS[2], 'XX', tonumber(ARGV[1]), ticket)
    out[#out + 1] = 'q' .. (redis.call('ZRANK', KEYS[1], ticket) + 1)
  elseif match then
    out[#out + 1] = 'p'
  else
    out[#out + 1] = ''
  end
end
return out
