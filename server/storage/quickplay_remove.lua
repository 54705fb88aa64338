-- Take tickets out of one quick-play queue: all of them or none.
-- KEYS: queue, tickets, alive, who, matched (hash ticket -> match JSON, or "pending")
-- ARGV: mark ("pending": a match is being made for them; "": a plain removal), ticket...
-- Returns 1 when every ticket was queued (and now is not), else 0 (nothing changed): a claim
-- by two matchers of the same player succeeds once.
for i = 2, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    return 0
  end
end
for i = 2, #ARGV do
  local ticket = ARGV[i]
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
  if ARGV[1] ~= '' then
    redis.call('HSET', KEYS[5], ticket, ARGV[1])
  end
end
if ARGV[1] ~= '' then
  redis.call('PEXPIRE', KEYS[5], 120000)
end
return 1
