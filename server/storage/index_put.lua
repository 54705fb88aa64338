-- A room's lobby entry: its expiry in the bucket's index, its summary beside it, and the
-- write's number in the bucket's changes (lobby_index.py reads only the rooms changed since
-- the last number it read). KEYS: rooms, rooms:info, rooms:changes, rooms:changed (one slot).
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local change = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[4], change, ARGV[1])
