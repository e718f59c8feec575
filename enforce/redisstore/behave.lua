-- robotsguard: behaviour.Summary.Observe, for a fleet (issue 37).
--
-- This runs before apply.lua in the same script (behave.go joins them), so
-- that a navigation's behaviour summaries travel in the round trip of the
-- decision's state. It is evidence/behaviour's Summary.Observe and
-- enforce's behaviourTable.observe written in Lua; the differential test
-- (behave_test.go) runs the same random navigations through both and
-- compares every verdict and summary.
--
-- KEYS[#KEYS-1]  the group's summary, KEYS[#KEYS] the client's: strings
--                (below), with the hash tag of KEYS[1]
-- ARGV[22..]     now's milliseconds are computed from ARGV[1] (now, Unix
--                ns); then site, user ('?1' or not), conditional (0/1),
--                gestures (0/1: the handshake is an engine's that sends
--                Sec-Fetch-User), target (its hash, uint32), disallowed
--                (0/1), and window, pages, disallowed, hold of the client,
--                the group and a member of a held group (ns, counts)
--
-- A summary is packed with struct: times as two uint32 (seconds and
-- nanoseconds of Unix ns, 0 0 unset) for Last, Epoch, HeldUntil, LastSelf
-- and BurstLast; Navs[0], Navs[1], Self[0], Self[1] (uint16); SeenPages,
-- SeenDisallowed (uint8), SeenNavs (uint16), Gestures, BurstN (uint8); a
-- uint16 bitmap of the used target slots, then for each used slot in order
-- its entry: the target hash's top 29 bits times 4 plus the burst bit
-- times 2 plus the disallowed bit, and its time (Unix ms, low 32 bits),
-- two uint32. 56 bytes and 8 a target. A value of another length (a
-- summary of an earlier packing) is no summary.
--
-- Times are computed as offsets from now (doubles, exact within 104 days
-- of now), as apply.lua does.

local B_NS = 1000000000
local B_2_32 = 4294967296
local B_HEAD = '>I4I4I4I4I4I4I4I4I4I4HHHHBBHBBH'
local B_HEAD_LEN = 56
-- behaviour.BurstGap and BurstStall, ns.
local B_BURST_GAP = 15000000
local B_BURST_STALL = 300000000

local function b_split(s)
	if #s <= 9 then return 0, tonumber(s) end
	return tonumber(string.sub(s, 1, -10)), tonumber(string.sub(s, -9))
end
local b_now_s, b_now_n = b_split(ARGV[1])
local b_ms = (b_now_s * 1000 + math.floor(b_now_n / 1000000)) % B_2_32

-- b_rel: a stored time (seconds, nanoseconds) as an offset from now, nil
-- when unset; b_abs: back.
local function b_rel(s, n)
	if s == 0 and n == 0 then return nil end
	return (s - b_now_s) * B_NS + (n - b_now_n)
end
local function b_abs(off)
	if off == nil then return 0, 0 end
	local t = b_now_n + off
	local c = math.floor(t / B_NS)
	if c * B_NS > t then c = c - 1 elseif (c + 1) * B_NS <= t then c = c + 1 end
	return b_now_s + c, t - c * B_NS
end

local function b_unpack(raw)
	local ls, ln, es, en, hs, hn, lss, lsn, bs, bn, n0, n1, s0, s1, sp, sd, sn, g, burst_n, used, pos = struct.unpack(B_HEAD, raw)
	local s = { last = b_rel(ls, ln), epoch = b_rel(es, en), held = b_rel(hs, hn), last_self = b_rel(lss, lsn),
		burst_last = b_rel(bs, bn), burst_n = burst_n, navs = { n0, n1 }, self = { s0, s1 },
		seen_pages = sp, seen_dis = sd, seen_navs = sn, gestures = g == 1, t = {} }
	for i = 1, 16 do
		if math.floor(used / 2 ^ (i - 1)) % 2 == 1 then
			local hd, ms
			hd, ms, pos = struct.unpack('>I4I4', raw, pos)
			s.t[i] = { h = math.floor(hd / 4), burst = math.floor(hd / 2) % 2 == 1, dis = hd % 2 == 1, ms = ms }
		end
	end
	return s
end

local function b_pack(s)
	local ls, ln = b_abs(s.last)
	local es, en = b_abs(s.epoch)
	local hs, hn = b_abs(s.held)
	local lss, lsn = b_abs(s.last_self)
	local bs, bn = b_abs(s.burst_last)
	local used, tail = 0, {}
	for i = 1, 16 do
		local e = s.t[i]
		if e ~= nil then
			used = used + 2 ^ (i - 1)
			local d = 0
			if e.dis then d = 1 end
			if e.burst then d = d + 2 end
			tail[#tail + 1] = struct.pack('>I4I4', e.h * 4 + d, e.ms)
		end
	end
	local g = 0
	if s.gestures then g = 1 end
	return struct.pack(B_HEAD, ls, ln, es, en, hs, hn, lss, lsn, bs, bn, s.navs[1], s.navs[2], s.self[1], s.self[2],
		s.seen_pages, s.seen_dis, s.seen_navs, g, s.burst_n, used) .. table.concat(tail)
end

local b_req = { site = ARGV[22], user = ARGV[23], conditional = ARGV[24] == '1', gestures = ARGV[25] == '1',
	target = tonumber(ARGV[26]), disallowed = ARGV[27] == '1' }
local function b_cfg(i)
	return { window = tonumber(ARGV[i]), pages = tonumber(ARGV[i + 1]), disallowed = tonumber(ARGV[i + 2]), hold = tonumber(ARGV[i + 3]) }
end
local b_client, b_group, b_member = b_cfg(28), b_cfg(32), b_cfg(36)

-- Request.MayCount, for a navigation.
local function b_may_count(r)
	if r.conditional then return false end
	return r.site == 'none' or (r.site == 'same-origin' or r.site == 'same-site') and r.user ~= '?1'
end

-- Request.selfStarted.
local function b_self_started(r, gestures)
	if r.conditional then return false end
	local gesture = r.user == '?1'
	if r.site == 'none' then return gesture or not gestures end
	if r.site == 'same-origin' or r.site == 'same-site' then return gestures and not gesture end
	return false
end

local function b_inc(n)
	if n < 65535 then return n + 1 end
	return n
end

local function b_verdict(s)
	if s.held == nil or s.held <= 0 then return { held = false, pages = 0, dis = 0, navs = 0 } end
	return { held = true, pages = s.seen_pages, dis = s.seen_dis, navs = s.seen_navs }
end

-- Summary.Observe of a navigation.
local function b_observe(s, r, c)
	local window = c.window
	if s.last ~= nil and -s.last > window then s.t = {} end
	s.last = 0
	-- roll
	local d = 0
	if s.epoch ~= nil then d = -s.epoch end
	if s.epoch == nil or d >= 2 * window or d < 0 then
		s.epoch, s.navs, s.self = 0, { 0, 0 }, { 0, 0 }
	elseif d >= window then
		s.epoch = s.epoch + window
		s.navs = { 0, s.navs[1] }
		s.self = { 0, s.self[1] }
	end
	if r.user == '?1' then s.gestures = true end
	local counted = b_self_started(r, r.gestures or s.gestures)
	s.navs[1] = b_inc(s.navs[1])
	if not counted then
		local v = b_verdict(s)
		v.counted = false
		return v
	end
	s.self[1] = b_inc(s.self[1])
	local key = math.floor(r.target / 8)
	local window_ms = math.floor(window / 1000000)
	local free, oldest, oldest_age, newest, newest_age, found = nil, nil, 0, nil, 0, nil
	for i = 1, 16 do
		local e = s.t[i]
		if e == nil then
			if free == nil then free = i end
		else
			local age = (b_ms - e.ms) % B_2_32
			if age >= window_ms then
				s.t[i] = nil
				if free == nil then free = i end
			else
				if e.h == key then found = i end
				if age >= oldest_age then oldest, oldest_age = i, age end
				if newest == nil or age < newest_age then newest, newest_age = i, age end
			end
		end
	end
	-- A burst (behaviour.BurstGap).
	local gap = nil
	if s.last_self ~= nil then gap = -s.last_self end
	local soon = gap ~= nil and gap >= 0 and gap < B_BURST_GAP
	local burst = false
	if gap ~= nil and s.burst_last == s.last_self and gap >= 0 and gap < B_BURST_STALL then
		burst = found ~= nil or s.burst_n < 16
	elseif not soon then
	elseif found == nil and (s.burst_last == nil or -s.burst_last >= c.hold) then
		burst, s.burst_n = true, 0
		if newest ~= nil then
			s.t[newest].burst = true
			s.burst_n = 1
		end
	end
	if burst then
		s.burst_last = 0
		if found == nil then s.burst_n = s.burst_n + 1 end
	end
	s.last_self = 0
	local e = { h = key, burst = burst, dis = r.disallowed, ms = b_ms }
	if found ~= nil then
		s.t[found] = e
	elseif free ~= nil then
		s.t[free] = e
	else
		s.t[oldest] = e
	end
	-- Summary.count
	local pages, dis, any_burst, burst_dis = 0, 0, false, false
	for i = 1, 16 do
		local x = s.t[i]
		if x == nil then
		elseif x.burst then
			any_burst = true
			burst_dis = burst_dis or x.dis
		else
			pages = pages + 1
			if x.dis then dis = dis + 1 end
		end
	end
	if any_burst then pages = pages + 1 end
	if burst_dis then dis = dis + 1 end
	local navs, self = s.navs[1] + s.navs[2], s.self[1] + s.self[2]
	local fired = false
	if not burst and (pages >= c.pages or dis >= c.disallowed) and self * 4 >= navs * 3 then
		s.held = c.hold
		s.seen_pages, s.seen_dis, s.seen_navs = pages, dis, math.min(navs, 65535)
		fired = true
	end
	local v = b_verdict(s)
	v.fired, v.counted = fired, true
	return v
end

-- behaviourTable.observe: a summary is made only by a navigation that may
-- count; it lives while it can change a verdict (two windows: the counts'
-- spans; Hold after its free burst) or its hold is in force, and a minute
-- more.
local function b_observe_key(k, c)
	local raw = redis.call('GET', k)
	local s
	if raw and (#raw < B_HEAD_LEN or (#raw - B_HEAD_LEN) % 8 ~= 0) then raw = nil end
	if raw then
		s = b_unpack(raw)
	elseif b_may_count(b_req) then
		s = { navs = { 0, 0 }, self = { 0, 0 }, seen_pages = 0, seen_dis = 0, seen_navs = 0, gestures = false, burst_n = 0, t = {} }
	else
		return { held = false, pages = 0, dis = 0, navs = 0 }
	end
	local v = b_observe(s, b_req, c)
	local life = 2 * c.window
	if s.held ~= nil and s.held > life then life = s.held end
	-- Its free burst is remembered for the hold's length.
	if s.burst_last ~= nil and s.burst_last + c.hold > life then life = s.burst_last + c.hold end
	redis.call('SET', k, b_pack(s), 'PX', math.floor((life + 999999) / 1000000) + 60000)
	return v
end

local b_v
do
	local cfg = b_client
	if b_observe_key(KEYS[#KEYS - 1], b_group).held then cfg = b_member end
	b_v = b_observe_key(KEYS[#KEYS], cfg)
end

-- The verdict, packed in one integer: held, fired, counted (bits 0-2),
-- then pages, disallowed (8 bits each) and navs (16 bits).
local function b_reply(r)
	local bits = 0
	if b_v.held then bits = bits + 1 end
	if b_v.fired then bits = bits + 2 end
	if b_v.counted then bits = bits + 4 end
	bits = bits + b_v.pages * 8 + b_v.dis * 2048 + b_v.navs * 524288
	r[#r + 1] = bits
	return r
end
