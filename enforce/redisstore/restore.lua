-- robotsguard: write back one record's blocks (Store.writeBack): into a
-- Redis that lost them, or under a record's new ID (migrate.go).
--
-- KEYS[1]  the record
-- ARGV     now (Unix ns), ttl (ns), the record's version as the instance
--          holds it, its name (m: a crawler's), its own state (a), then
--          token name and state pairs
--
-- A state given with a block in force at now is written where the stored
-- state has none, or an earlier end: its block fields (BlockedUntil,
-- Remember, Offenses, Why); a record Redis does not have is written
-- whole. The record's version becomes more than both, and its TTL at least
-- the block's end and the TTL, as apply.lua sets it. Returns how many
-- blocks were written.
local now, ttl, version, name = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

-- later reports whether the decimal time a is after b.
local function later(a, b)
	if #a ~= #b then return #a > #b end
	return a > b
end
local function fields(s)
	local f = {}
	for v in string.gmatch(s or '', '[^,]+') do f[#f + 1] = v end
	for i = #f + 1, 12 do f[i] = '0' end
	return f
end

local written, last = 0, '0'
-- merge returns the stored state s with the block of the given state g,
-- or s unchanged.
local function merge(s, g)
	local gf = fields(g)
	if not later(gf[5], now) then return s end
	if later(gf[5], last) then last = gf[5] end
	if s == nil or s == '' then
		written = written + 1
		return g
	end
	local sf = fields(s)
	if not later(gf[5], sf[5]) then return s end
	sf[5] = gf[5]
	if later(gf[6], sf[6]) then sf[6] = gf[6] end
	if tonumber(gf[11]) > tonumber(sf[11]) then sf[11] = gf[11] end
	sf[12] = gf[12]
	written = written + 1
	return table.concat(sf, ',')
end

local raw = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
local n = tonumber(h.n or '0')
local args = {}
local function put(k, v) args[#args + 1] = k; args[#args + 1] = v end
local a = merge(h.a, ARGV[5])
if a ~= nil and a ~= '' then put('a', a) end
for i = 6, #ARGV - 1, 2 do
	local tok, st, slot = ARGV[i], ARGV[i + 1], nil
	for j = 1, n do
		if h['k' .. j] == tok then slot = j end
	end
	if slot == nil and n < 4 and later(fields(st)[5], now) then
		n = n + 1
		slot = n
		put('k' .. slot, tok)
	end
	if slot ~= nil then
		local merged = merge(h['t' .. slot], st)
		if merged ~= h['t' .. slot] then put('t' .. slot, merged) end
	end
end
if written == 0 then return 0 end
if h.s == nil then put('s', now) end
if h.a == nil and a == nil then put('a', '0,0,0,0,0,0,0,0,0,0,0,0') end
if name ~= '' and (h.m == nil or h.m == '') then put('m', name) end
put('n', tostring(n))
put('v', string.format('%d', math.max(tonumber(h.v or '0'), version) + 1))
redis.call('HSET', KEYS[1], unpack(args))
-- The block's end and the TTL, in milliseconds from now (to the second).
local ms = ((tonumber(string.sub(last, 1, -10)) or 0) - (tonumber(string.sub(now, 1, -10)) or 0) + 1) * 1000 + math.floor(ttl / 1000000) + 60000
if redis.call('PTTL', KEYS[1]) < ms then redis.call('PEXPIRE', KEYS[1], ms) end
return written
