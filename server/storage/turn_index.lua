-- One player's place in one correspondence room, in one step (both keys share the player's
-- hash tag): the room among the player's running games, and on their turn list with the
-- turn's deadline when it is their turn.
-- KEYS: games (zset room -> first indexed ms), turns (zset room -> deadline ms)
-- ARGV: room, running ("1"/"0"), deadline_ms ("" when not their turn), now_ms
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], 'NX', tonumber(ARGV[4]), ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
if ARGV[2] == '1' and ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
