-- robotsguard: lift every block of one record and forget its strikes and
-- offences (enforce.MemoryStore.Unblock); returns how many blocks were in
-- force at now. KEYS[1] the record; ARGV[1] now (Unix nanoseconds).
local key = KEYS[1]
local raw = redis.call('HGETALL', key)
if #raw == 0 then return 0 end
local h = {}
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
-- later reports whether the decimal time a is after b.
local function later(a, b)
	if #a ~= #b then return #a > #b end
	return a > b
end
local lifted = 0
local function forgive(s)
	local f, i = {}, 1
	for v in string.gmatch(s, '[^,]+') do f[i] = v; i = i + 1 end
	if later(f[5], ARGV[1]) then lifted = lifted + 1 end
	-- ThrottleUntil, StrikeFrom, WindowStart, BlockedUntil, Remember,
	-- Strikes, Slips, Offenses, Why
	for _, j in ipairs({ 2, 3, 4, 5, 6, 9, 10, 11, 12 }) do f[j] = '0' end
	return table.concat(f, ',')
end
local args = { 'a', forgive(h.a), 'v', tostring(tonumber(h.v or '0') + 1) }
for i = 1, tonumber(h.n or '0') do
	args[#args + 1] = 't' .. i
	args[#args + 1] = forgive(h['t' .. i])
end
redis.call('HSET', key, unpack(args))
return lifted
