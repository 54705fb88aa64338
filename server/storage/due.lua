-- The members of every bucket of one schedule (KEYS: its zsets) scored up to ARGV[1], at most
-- ARGV[2] a bucket, in one call: the timer loop polls both schedules four times a second in
-- every process, and eight ZRANGEBYSCOREs a poll through the client were most of an idle
-- process's work. Single Redis only: on a Cluster the buckets live in other slots.
local found = {}
for _, key in ipairs(KEYS) do
  local due = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
  for _, member in ipairs(due) do
    found[#found + 1] = member
  end
end
return found
