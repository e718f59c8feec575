-- robotsguard: apply one enforce.Op to an address prefix's record, and to
-- its crawler's record, atomically.
--
-- This is enforce.Apply and enforce.MemoryStore.Apply (record expiry, token
-- slots, stale token states) written in Lua, so that a decision is one round
-- trip. The differential test (store_test.go) runs the same random Op
-- sequences through MemoryStore and this script and compares every Outcome.
--
-- KEYS[1]  the record: a hash with s (seen), v (version), a (the address's
--          state), n (tokens), k1..k4 (token names) and t1..t4 (their states)
-- KEYS[2]  for an Op with CheckCrawler, the crawler's record: s, v, a (its
--          state) and m (its name); the same hash tag as KEYS[1]
-- ARGV     now, token, flags, interval, burst, addr_interval, addr_burst,
--          grace, strikes, addr_strikes, window, cooldown, max_cooldown, ttl,
--          snapshot (1: return the records that hold a block), full (1:
--          the zone's blocks are at their bound, max_blocks: a record with
--          no block in force gets none; the Op's new block is dropped, as
--          MemoryStore drops it, and the reply says so), why (the reason a
--          block the Op makes carries: enforce.BlockReason),
--          crawler_interval, crawler_burst, crawler_strikes, crawler_name
--
-- Times are Unix nanoseconds, stored as decimal strings, "0" when unset.
-- Lua numbers are doubles, exact only below 2^53 (104 days of nanoseconds),
-- so the script computes with times as offsets from now (nil for unset),
-- exact for times within 104 days of now, and writes a time it did not
-- change back as the string it read.

local NS = 1000000000
local MAXQ = 2305843009213693951 -- math.MaxInt64 / 4, as the Go code caps
local MAXI32 = 2147483647
local MAXTOK = 4

local now = ARGV[1]
local token = ARGV[2]
local flags = tonumber(ARGV[3])
local op = {
	interval = tonumber(ARGV[4]), burst = tonumber(ARGV[5]),
	addr_interval = tonumber(ARGV[6]), addr_burst = tonumber(ARGV[7]),
	grace = tonumber(ARGV[8]), strikes = tonumber(ARGV[9]), addr_strikes = tonumber(ARGV[10]),
	window = tonumber(ARGV[11]), cooldown = tonumber(ARGV[12]), max_cooldown = tonumber(ARGV[13]),
}
local ttl = tonumber(ARGV[14])
local want_snapshot = ARGV[15] == '1'
local full = ARGV[16] == '1'
local why = tonumber(ARGV[17] or '0')
op.cr_interval, op.cr_burst, op.cr_strikes = tonumber(ARGV[18] or '0'), tonumber(ARGV[19] or '0'), tonumber(ARGV[20] or '0')
local cr_name = ARGV[21] or ''
local function flag(bit) return math.floor(flags / bit) % 2 == 1 end
op.peek, op.check_addr, op.mark_robots = flag(1), flag(2), flag(4)
op.strike, op.block, op.blockable, op.is_addr = flag(8), flag(16), flag(32), flag(64)
op.check_crawler = flag(128) and KEYS[2] ~= nil

-- floor(a / b) for integer-valued doubles, corrected for rounding.
local function fdiv(a, b)
	local q = math.floor(a / b)
	if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
	return q
end

local function split(s)
	if #s <= 9 then return 0, tonumber(s) end
	return tonumber(string.sub(s, 1, -10)), tonumber(string.sub(s, -9))
end
local now_s, now_n = split(now)

-- rel turns a stored time into an offset from now; nil when unset.
local function rel(s)
	if s == '0' then return nil end
	local sec, ns = split(s)
	return (sec - now_s) * NS + (ns - now_n)
end

-- abs turns an offset from now into a stored time.
local function abs(off)
	if off == nil then return '0' end
	local t = now_n + off
	local c = fdiv(t, NS)
	local sec, ns = now_s + c, t - c * NS
	if sec == 0 then return string.format('%d', ns) end
	return string.format('%d%09d', sec, ns)
end

-- A state: [1] TAT, [2] ThrottleUntil, [3] StrikeFrom, [4] WindowStart,
-- [5] BlockedUntil, [6] Remember, [7] RobotsAt, [8] LastSeen as offsets;
-- [9] Strikes, [10] Slips, [11] Offenses, [12] Why (absent in a state
-- written before blocks carried their reason: 0); orig holds the strings
-- read.
local function decode(s)
	local st, orig, i = {}, {}, 1
	for f in string.gmatch(s, '[^,]+') do
		orig[i] = f
		if i <= 8 then st[i] = rel(f) else st[i] = tonumber(f) end
		i = i + 1
	end
	if st[12] == nil then st[12] = 0 end
	st.orig = orig
	return st
end

local function fresh()
	return { nil, nil, nil, nil, nil, nil, nil, nil, 0, 0, 0, 0, orig = {} }
end

local function encode(st)
	local out = {}
	for i = 1, 8 do
		local o = st.orig[i]
		if o ~= nil and rel(o) == st[i] then out[i] = o else out[i] = abs(st[i]) end
	end
	for i = 9, 12 do out[i] = string.format('%d', st[i]) end
	return table.concat(out, ',')
end

-- time returns field i of st as a stored time, for the reply.
local function time(st, i)
	local o = st.orig[i]
	if o ~= nil and rel(o) == st[i] then return o end
	return abs(st[i])
end

local function is_blocked(st) return st[5] ~= nil and st[5] > 0 end
local function is_offender(st) return is_blocked(st) or st[6] ~= nil and st[6] > 0 end

local function new_window(st, window)
	if st[4] == nil or -st[4] > window then
		st[4], st[9], st[10] = 0, 0, 0
	end
end

local function add_strike(st, window)
	new_window(st, window)
	if st[9] < MAXI32 then st[9] = st[9] + 1 end
end

local function block(st)
	local cd = op.cooldown
	if cd > 0 then
		local i = 0
		while i < st[11] and cd < op.max_cooldown do
			cd, i = cd * 2, i + 1
		end
	end
	cd = math.min(cd, op.max_cooldown)
	st[5] = cd
	st[6] = st[5] + op.max_cooldown
	st[12] = why
	if st[11] < MAXI32 then st[11] = st[11] + 1 end
end

-- take: one token from the bucket (interval, burst) of st (State.take).
local function take(st, iv, burst, grace, window)
	local tol = MAXQ
	local b = math.max(burst, 1) - 1
	if b == 0 or iv <= fdiv(MAXQ, b) then tol = b * iv end
	local tat = 0
	if st[1] ~= nil and st[1] > 0 then tat = st[1] end
	if 0 >= tat - tol then
		st[1] = tat + math.min(iv, MAXQ)
		return { took = true, retry = 0 }
	end
	if st[2] ~= nil and 0 < st[2] then
		local r = { retry = st[2] }
		if st[3] == nil or 0 >= st[3] then
			r.strike, st[3] = true, st[2]
		end
		return r
	end
	new_window(st, window)
	if st[10] < MAXI32 then st[10] = st[10] + 1 end
	if st[10] <= grace then return { slip = true, retry = 0 } end
	local ra = fdiv(tat - tol + NS - 1, NS) * NS
	st[2] = ra
	st[3] = math.min(fdiv(ra, 2), NS)
	return { retry = ra }
end

-- apply: enforce.Apply. st is the key's state, addr the address's (or nil),
-- cr the crawler's (or nil).
local function apply(st, addr, cr)
	local out = { retry = 0 }
	if addr ~= nil then
		out.addr_robots, out.addr_until, out.addr_why = time(addr, 7), time(addr, 5), addr[12]
		if is_blocked(addr) then
			out.addr_blocked, out.blocked = true, true
			return out
		end
	end
	-- The crawler's block, reported; true when it is in force.
	local function crawler_blocked()
		out.cr_until, out.cr_why = time(cr, 5), cr[12]
		if is_blocked(cr) then
			out.cr_blocked, out.blocked = true, true
			return true
		end
		return false
	end
	if op.peek then
		out.blocked = is_blocked(st)
		if not out.blocked and cr ~= nil then crawler_blocked() end
		return out
	end
	st[8] = 0
	if op.mark_robots then st[7] = 0 end
	if is_blocked(st) then
		out.blocked = true
		return out
	end
	-- A block (a trap) applies whatever the crawler's state.
	local cr_was_blocked = cr ~= nil and crawler_blocked()
	if cr_was_blocked and not op.block then return out end
	out.blocked = false
	if addr ~= nil then addr[8] = 0 end
	if cr ~= nil then cr[8] = 0 end
	local strike, addr_strike, cr_strike, do_block = op.strike, false, false, op.block
	if op.interval > 0 then
		local tat, addr_tat = st[1], nil
		if addr ~= nil then addr_tat = addr[1] end
		local r = take(st, op.interval, op.burst, op.grace, op.window)
		if r.took and addr ~= nil and op.addr_interval > 0 then
			local ar = take(addr, op.addr_interval, op.addr_burst, op.grace, op.window)
			if not ar.took then
				if not ar.slip then st[1] = tat end
				r, out.by_addr, addr_strike = ar, true, ar.strike
			end
		end
		if r.took and cr ~= nil and op.cr_interval > 0 then
			local crr = take(cr, op.cr_interval, op.cr_burst, op.grace, op.window)
			if not crr.took then
				if not crr.slip then
					st[1] = tat
					if addr ~= nil then addr[1] = addr_tat end
				end
				r, out.by_crawler, cr_strike = crr, true, crr.strike
			end
		end
		out.took, out.slip = r.took, r.slip
		out.throttled = not r.took and not r.slip
		out.retry = r.retry
		strike = strike or (r.strike and not out.by_addr and not out.by_crawler)
	end
	if strike then
		add_strike(st, op.window)
		out.struck = true
		if op.blockable and op.strikes > 0 and st[9] >= op.strikes then do_block = true end
	end
	if addr ~= nil and op.blockable and (strike or addr_strike) then
		add_strike(addr, op.window)
		out.struck = true
		out.addr_strikes = addr[9]
		if op.addr_strikes > 0 and addr[9] >= op.addr_strikes then
			block(addr)
			out.addr_blocked, out.addr_new = true, true
			out.addr_until, out.addr_why = time(addr, 5), addr[12]
		end
	end
	-- A block (a trap) is one strike on the crawler.
	if cr ~= nil and not cr_was_blocked and ((op.blockable and (strike or cr_strike)) or op.block) then
		add_strike(cr, op.window)
		out.struck = true
		if op.cr_strikes > 0 and cr[9] >= op.cr_strikes then
			block(cr)
			out.cr_blocked, out.cr_new = true, true
			out.cr_until, out.cr_why = time(cr, 5), cr[12]
		end
	end
	if do_block then
		block(st)
		out.new = true
	end
	return out
end

-- The records.
local key = KEYS[1]
local rec = { tokens = {} }
local raw = redis.call('HGETALL', key)
local exists = #raw > 0
if exists then
	local h = {}
	for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
	rec.seen_s, rec.version = h.s or '0', tonumber(h.v or '0')
	rec.seen = rel(rec.seen_s)
	rec.addr = decode(h.a)
	for i = 1, tonumber(h.n or '0') do
		rec.tokens[i] = { name = h['k' .. i], st = decode(h['t' .. i]) }
	end
end

local function rec_offender()
	if is_offender(rec.addr) then return true end
	for _, t in ipairs(rec.tokens) do
		if is_offender(t.st) then return true end
	end
	return false
end

local function stale(st)
	return (st[8] == nil or st[8] + ttl < 0) and not is_offender(st)
end

-- An idle record is forgotten, as MemoryStore.node does.
if exists and (rec.seen == nil or rec.seen + ttl < 0) and not rec_offender() then
	redis.call('DEL', key)
	exists = false
	rec = { tokens = {} }
end

-- The crawler's record, read and forgotten when idle likewise; created by
-- an Op that is no peek. It is read only when the Op will consult it: not
-- when the address or the client is blocked already, so that a blocked
-- client's flood costs no more than before (MemoryStore.Apply does the
-- same).
-- The block fields of a state (BlockedUntil, Remember, Offenses), to put
-- back when a new block is dropped.
local function block_fields(s) return { s[5], s[6], s[11], s[12] } end
local function put_back(s, b) s[5], s[6], s[11], s[12] = b[1], b[2], b[3], b[4] end

local crec, cr, cr_held, cr_before = nil, nil, false, nil
local function read_crawler()
	if not op.check_crawler then return end
	local craw = redis.call('HGETALL', KEYS[2])
	if #craw > 0 then
		local h = {}
		for i = 1, #craw, 2 do h[craw[i]] = craw[i + 1] end
		crec = { seen = rel(h.s or '0'), version = tonumber(h.v or '0'), st = decode(h.a), name = h.m or '' }
		if (crec.seen == nil or crec.seen + ttl < 0) and not is_offender(crec.st) then
			redis.call('DEL', KEYS[2])
			crec = nil
		end
	end
	if crec == nil and not op.peek then
		crec = { version = 0, st = fresh(), name = cr_name }
	end
	if crec ~= nil then
		cr = crec.st
		cr_held, cr_before = is_blocked(cr), block_fields(cr)
	end
end

if not exists then
	if op.peek then
		read_crawler()
		if cr == nil then return { 0, '0', '0', '0', '', '0', '0', '0', '0', '0', 0 } end
		-- A peek of an unknown address: only its crawler can be blocked.
		local o = apply(fresh(), nil, cr)
		local b = 0
		if o.blocked then b = b + 2 end
		if o.cr_blocked then b = b + 1024 end
		return { b, '0', '0', '0', '', '0', o.cr_until or '0', string.format('%d', o.cr_why or 0), '0', string.format('%d', crec.version), 0 }
	end
	rec = { seen_s = '0', version = 0, addr = fresh(), tokens = {} }
end

-- held: the record has a block in force, so it is in the zone's index of
-- blocks already and a new block of it takes no more room.
local held = is_blocked(rec.addr)
for _, t in ipairs(rec.tokens) do held = held or is_blocked(t.st) end

local addr_before = block_fields(rec.addr)

-- find returns the slot of the token, creating it (MemoryStore.token).
local function find(create)
	for _, t in ipairs(rec.tokens) do
		if t.name == token then
			if create and stale(t.st) then t.st = fresh() end
			return t
		end
	end
	if not create then return nil end
	local n = #rec.tokens
	if n < MAXTOK then
		rec.tokens[n + 1] = { name = token, st = fresh() }
		return rec.tokens[n + 1]
	end
	-- Replace the least recently seen token, sparing offenders.
	local function seen(st) return st[8] or -math.huge end
	local victim = 1
	for i = 2, n do
		local c, v = rec.tokens[i].st, rec.tokens[victim].st
		local c_off, v_off = is_offender(c), is_offender(v)
		if v_off and not c_off or v_off == c_off and seen(c) < seen(v) then victim = i end
	end
	rec.tokens[victim] = { name = token, st = fresh() }
	return rec.tokens[victim]
end

local out, st, found, tok_before
if op.is_addr then
	st = rec.addr
	if not is_blocked(st) then read_crawler() end
	out = apply(st, nil, cr)
	found = true
else
	local t = find(not op.peek)
	local addr = nil
	if op.check_addr then addr = rec.addr end
	if not (addr ~= nil and is_blocked(addr) or t ~= nil and is_blocked(t.st)) then read_crawler() end
	if t == nil then
		st = fresh()
		out = apply(st, addr, cr)
		st = fresh()
		found = false
	else
		st = t.st
		tok_before = block_fields(st)
		out = apply(st, addr, cr)
		found = true
	end
end
-- A flood of new blocks never evicts the blocks in force: once the zone's
-- blocks are at their bound, a record without one gets none.
local dropped = false
if full and not held and not op.peek and (out.new or out.addr_new) then
	dropped = true
	if out.addr_new then
		put_back(rec.addr, addr_before)
		out.addr_new, out.addr_blocked, out.addr_until, out.addr_why = false, false, time(rec.addr, 5), rec.addr[12]
	end
	if out.new then
		if op.is_addr then put_back(rec.addr, addr_before) else put_back(st, tok_before) end
		out.new = false
	end
end
if full and not cr_held and not op.peek and out.cr_new then
	dropped = true
	put_back(cr, cr_before)
	out.cr_new, out.cr_blocked, out.cr_until, out.cr_why = false, false, time(cr, 5), cr[12]
end

-- Redis forgets a record when MemoryStore would: after the TTL, or when
-- its last block and remembered offence are over; a minute more allows
-- for clock skew between the fleet and Redis. A record with a block in
-- force outlives its block by the TTL, so that its TTL is always longer
-- than any record's without one: under maxmemory-policy volatile-ttl,
-- Redis evicts those first.
local function expire(k, states)
	local life = ttl
	for _, s in ipairs(states) do
		if s[5] ~= nil and s[5] > life then life = s[5] end
		if s[6] ~= nil and s[6] > life then life = s[6] end
		if is_blocked(s) and s[5] + ttl > life then life = s[5] + ttl end
	end
	redis.call('PEXPIRE', k, fdiv(life + 999999, 1000000) + 60000)
end

if not op.peek then
	rec.seen = 0
	rec.version = rec.version + 1
	local args = { 's', now, 'v', string.format('%d', rec.version), 'a', encode(rec.addr), 'n', tostring(#rec.tokens) }
	local states = { rec.addr }
	for i, t in ipairs(rec.tokens) do
		args[#args + 1] = 'k' .. i
		args[#args + 1] = t.name
		args[#args + 1] = 't' .. i
		args[#args + 1] = encode(t.st)
		states[#states + 1] = t.st
	end
	redis.call('HSET', key, unpack(args))
	expire(key, states)
	if crec ~= nil then
		crec.version = crec.version + 1
		redis.call('HSET', KEYS[2], 's', now, 'v', string.format('%d', crec.version), 'a', encode(cr), 'm', crec.name)
		expire(KEYS[2], { cr })
	end
end

local bits = 0
local function set(cond, bit) if cond then bits = bits + bit end end
set(found, 1); set(out.blocked, 2); set(out.took, 4); set(out.slip, 8)
set(out.throttled, 16); set(out.by_addr, 32); set(out.new, 64)
set(out.addr_blocked, 128); set(out.addr_new, 256); set(dropped, 512)
set(out.cr_blocked, 1024); set(out.cr_new, 2048); set(out.by_crawler, 4096); set(out.struck, 8192)
-- The address's strike count, when this Op struck it, rides above the flags
-- (Outcome.AddrStrikes, the log's address_strikes).
bits = bits + (out.addr_strikes or 0) * 16384

-- The records' versions come with every reply: an instance that holds a
-- newer version of a block than Redis has learns that Redis lost it.
local cr_version = 0
if crec ~= nil then cr_version = crec.version end
local reply = { bits, string.format('%d', out.retry), out.addr_robots or '0', out.addr_until or '0', encode(st),
	string.format('%d', out.addr_why or 0), out.cr_until or '0', string.format('%d', out.cr_why or 0),
	string.format('%d', rec.version), string.format('%d', cr_version), 0 }
-- The record, for the instance's cache of blocked clients, when it holds a
-- block in force; and with a new block, for the other instances (reply[11]
-- counts its items). Then the crawler's, likewise.
if want_snapshot or out.new or out.addr_new then
	local any = is_blocked(rec.addr)
	for _, t in ipairs(rec.tokens) do any = any or is_blocked(t.st) end
	if any then
		reply[#reply + 1] = string.format('%d', rec.version)
		reply[#reply + 1] = encode(rec.addr)
		for _, t in ipairs(rec.tokens) do
			reply[#reply + 1] = t.name
			reply[#reply + 1] = encode(t.st)
		end
		reply[11] = #reply - 11
	end
end
if crec ~= nil and (want_snapshot or out.cr_new) and is_blocked(cr) then
	reply[#reply + 1] = string.format('%d', crec.version)
	reply[#reply + 1] = encode(cr)
	reply[#reply + 1] = crec.name
end
return reply
