-- A room's lobby entry: its expiry in the bucket's index, its summary beside it (one slot).
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
