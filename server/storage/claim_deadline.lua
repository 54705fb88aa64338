-- Claim a due deadline: push it `lease` ms into the future, so that one process works on it
-- while a crashed claimer's entry comes back after the lease. The room's compare-and-set makes
-- the firing itself exactly-once.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
  return 1
end
return 0
