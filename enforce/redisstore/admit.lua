-- robotsguard: list a record with a new block in the zone's index of
-- blocks and return how many blocks the index holds, for the bound of the
-- zone's blocks (Options.MaxBlocks).
--
-- KEYS[1]  the index: a sorted set of record IDs scored by when their last
--          block ends (Unix milliseconds)
-- ARGV     now (Unix ms), the record's ID, its score, the TTL (ms)
--
-- Ended blocks are pruned first. The index expires the TTL and a minute
-- after its last block ends, as the records do, so that it is never a key
-- without a TTL.
local now = ARGV[1]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], string.format('%d', tonumber(last[2]) + tonumber(ARGV[4]) + 60000))
return redis.call('ZCARD', KEYS[1])
