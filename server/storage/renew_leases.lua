-- Renew many player leases of one bucket at once: ARGV[1] the new expiry (ms), ARGV[2..] the
-- lease members. Returns the members that were not there (new, or swept by another process
-- meanwhile): each ZADD is atomic, so a lease is never both claimed by a sweeper and renewed
-- as if it had not been.
local missing = {}
for i = 2, #ARGV do
  if redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i]) == 1 then
    missing[#missing + 1] = ARGV[i]
  end
end
return missing
