-- csfq.lua: a Wireshark/tshark dissector for CSFQ rate labels.
--
-- The csfq edge (the simulator's `csfq run --pcap`, and the eBPF dataplane's `csfq dp edge`)
-- writes each packet's rate label into the header:
--   * IPv4: the 16-bit Identification field of atomic datagrams (DF set, MF clear, offset 0,
--     RFC 6864), as a float with a 5-bit exponent and an 11-bit mantissa in kbit/s;
--   * IPv6: the 20-bit flow label, 5-bit exponent and 15-bit mantissa in kbit/s.
-- A code c = e << M | m stands for (1 + m / 2^M) * 2^e kbit/s; code 0 is "unlabeled"
-- (no edge on the path, or under 1 kbit/s). See crates/csfq-algo/src/label_codec.rs.
--
-- Use:  wireshark -X lua_script:contrib/wireshark/csfq.lua trace.pcapng
--       tshark -X lua_script:contrib/wireshark/csfq.lua -r trace.pcapng \
--              -T fields -e ip.src -e csfq.rate
-- or copy it to ~/.local/lib/wireshark/plugins/. Filters: csfq.rate > 1e6, csfq.dropped.
--
-- Not every DF IPv4 ID (or IPv6 flow label) is a label: packets that crossed no csfq edge
-- (captured before one, or ACKs coming back the other way) carry whatever their sender put
-- there (Linux picks IPv4 IDs per socket), and they decode as rates all the same. Name the
-- sources an edge labels in the "Labeled sources" preference (prefixes, e.g.
-- `10.77.1.0/24, fd00:1::/64`; tshark: -o "csfq.sources:10.77.1.0/24"): packets from
-- elsewhere are then not decoded. With it empty every value is decoded and marked
-- "unverified" in the tree.

local csfq = Proto("csfq", "CSFQ rate label")

local f_code = ProtoField.uint32("csfq.code", "Label code", base.HEX_DEC)
local f_exponent = ProtoField.uint8("csfq.exponent", "Exponent", base.DEC)
local f_mantissa = ProtoField.uint16("csfq.mantissa", "Mantissa", base.DEC)
local f_rate = ProtoField.double("csfq.rate", "Rate (bit/s)")
local f_labeled = ProtoField.bool("csfq.labeled", "Labeled")
local f_carrier = ProtoField.string("csfq.carrier", "Carried in")
local f_dropped = ProtoField.bool("csfq.dropped", "Dropped here")
local f_reason = ProtoField.string("csfq.drop_reason", "Drop reason")
local f_verified = ProtoField.bool("csfq.from_labeled_source",
    "From a source an edge labels")
csfq.fields = { f_code, f_exponent, f_mantissa, f_rate, f_labeled, f_carrier, f_dropped, f_reason,
    f_verified }

csfq.prefs.ipv4 = Pref.bool("IPv4 Identification carries labels", true,
    "Decode the Identification field of atomic IPv4 datagrams as a CSFQ label")
csfq.prefs.ipv6 = Pref.bool("IPv6 flow label carries labels", true,
    "Decode the IPv6 flow label as a CSFQ label")
csfq.prefs.sources = Pref.string("Labeled sources", "",
    "Comma-separated source prefixes (IPv4 a.b.c.d/len, IPv6 x:y::/len) whose packets a csfq " ..
    "edge labels; packets from other sources are not decoded. Empty: decode every packet, " ..
    "marked unverified")

local ip_id = Field.new("ip.id")
local ip_src = Field.new("ip.src")
local ipv6_src = Field.new("ipv6.src")
local ip_df = Field.new("ip.flags.df")
local ip_mf = Field.new("ip.flags.mf")
local ip_frag = Field.new("ip.frag_offset")
local ipv6_flow = Field.new("ipv6.flow")
local frame_comment = Field.new("frame.comment")

local UNIT_BPS = 1000

-- The rate a code stands for, bits/s (label_codec.rs, LabelCodec::decode).
local function decode(code, mantissa_bits)
    local m = code % (2 ^ mantissa_bits)
    local e = math.floor(code / (2 ^ mantissa_bits))
    return (1 + m / 2 ^ mantissa_bits) * 2 ^ e * UNIT_BPS, e, m
end

local function human(bps)
    local units = { { 1e12, "Tbit/s" }, { 1e9, "Gbit/s" }, { 1e6, "Mbit/s" }, { 1e3, "kbit/s" } }
    for _, u in ipairs(units) do
        if bps >= u[1] then
            return string.format("%.4g %s", bps / u[1], u[2])
        end
    end
    return string.format("%.4g bit/s", bps)
end

-- An address as a string of bits: IPv4 dotted quads, IPv6 colon groups ("::" expanded).
-- nil if it is neither.
local function bits_of(addr)
    local out = {}
    local function push(v, width)
        for i = width - 1, 0, -1 do
            out[#out + 1] = math.floor(v / 2 ^ i) % 2 == 1 and "1" or "0"
        end
    end
    if string.find(addr, ":", 1, true) then
        local head, tail = string.match(addr, "^(.-)::(.*)$")
        local groups = {}
        local function split(str)
            local g = {}
            for part in string.gmatch(str, "[^:]+") do
                g[#g + 1] = part
            end
            return g
        end
        if head then
            local h, t = split(head), split(tail)
            for _, v in ipairs(h) do groups[#groups + 1] = v end
            for _ = 1, 8 - #h - #t do groups[#groups + 1] = "0" end
            for _, v in ipairs(t) do groups[#groups + 1] = v end
        else
            groups = split(addr)
        end
        if #groups ~= 8 then
            return nil
        end
        for _, g in ipairs(groups) do
            local v = tonumber(g, 16)
            if not v or v > 0xffff then
                return nil
            end
            push(v, 16)
        end
        return table.concat(out)
    end
    local a, b, c, d = string.match(addr, "^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    if not a then
        return nil
    end
    for _, v in ipairs({ a, b, c, d }) do
        v = tonumber(v)
        if v > 255 then
            return nil
        end
        push(v, 8)
    end
    return table.concat(out)
end

-- The "Labeled sources" preference as a list of bit-string prefixes; nil if empty. A
-- malformed entry is reported once and matches nothing.
local parsed_sources, parsed_from
local function sources()
    if parsed_from == csfq.prefs.sources then
        return parsed_sources
    end
    parsed_from, parsed_sources = csfq.prefs.sources, nil
    local bad
    for entry in string.gmatch(csfq.prefs.sources, "[^,%s]+") do
        local addr, len = string.match(entry, "^(.+)/(%d+)$")
        local bits = bits_of(addr or entry)
        len = tonumber(len) or (bits and #bits)
        if bits and len <= #bits then
            parsed_sources = parsed_sources or {}
            parsed_sources[#parsed_sources + 1] = string.sub(bits, 1, len)
        else
            bad = entry
            report_failure("csfq.lua: Labeled sources: cannot read \"" .. entry ..
                "\" (expected a.b.c.d/len or x:y::/len)")
        end
    end
    -- Only malformed entries: nothing is a labeled source, rather than everything.
    if bad and not parsed_sources then
        parsed_sources = {}
    end
    return parsed_sources
end

-- Whether the packet's source is one an edge labels: true, false, or nil when no sources
-- are configured.
local function from_labeled_source(src)
    local list = sources()
    if list == nil then
        return nil
    end
    local bits = src and bits_of(tostring(src.value))
    if not bits then
        return false
    end
    for _, p in ipairs(list) do
        if string.sub(bits, 1, #p) == p then
            return true
        end
    end
    return false
end

-- The first value of a field in this packet (the outer header if tunneled), or nil.
local function first(field)
    local all = { field() }
    return all[1]
end

function csfq.dissector(tvb, pinfo, tree)
    local code, range, carrier, mantissa_bits
    local id = first(ip_id)
    local labeled_source = from_labeled_source(id and first(ip_src) or first(ipv6_src))
    if labeled_source == false then
        -- Not from a source an edge labels: whatever the field holds is not a label.
    elseif id and csfq.prefs.ipv4 then
        local df, mf, off = first(ip_df), first(ip_mf), first(ip_frag)
        local atomic = df and df.value and not (mf and mf.value) and (not off or off.value == 0)
        if atomic then
            code, range, carrier, mantissa_bits = id.value, id.range, "IPv4 Identification", 11
        end
    elseif csfq.prefs.ipv6 then
        local flow = first(ipv6_flow)
        if flow then
            code, range, carrier, mantissa_bits = flow.value, flow.range, "IPv6 flow label", 15
        end
    end
    local reason
    for _, c in ipairs({ frame_comment() }) do
        local r = string.match(tostring(c.value), "^dropped: (.+)$")
        if r then
            reason = r
        end
    end
    if not code and not reason then
        return
    end

    local summary
    if code == nil then
        summary = "CSFQ: no label (not an atomic datagram)"
    elseif code == 0 then
        summary = "CSFQ: unlabeled"
    else
        summary = "CSFQ label: " .. human(decode(code, mantissa_bits))
    end
    if reason then
        summary = summary .. ", dropped (" .. reason .. ")"
    end
    if code ~= nil and code ~= 0 and labeled_source == nil then
        summary = summary .. " (unverified: set Labeled sources)"
    end
    local t = tree:add(csfq, summary)
    if code ~= nil and labeled_source == nil then
        t:add(csfq, "[Unverified: with no \"Labeled sources\" preference every source is " ..
            "decoded; this value may not be a label]")
    elseif code ~= nil then
        t:add(f_verified, true):set_generated()
    end
    if code ~= nil then
        t:add(f_carrier, carrier):set_generated()
        t:add(f_code, range, code)
        t:add(f_labeled, code ~= 0):set_generated()
        if code ~= 0 then
            local rate, e, m = decode(code, mantissa_bits)
            t:add(f_exponent, e):set_generated()
            t:add(f_mantissa, m):set_generated()
            t:add(f_rate, rate):append_text(" (" .. human(rate) .. ")"):set_generated()
        end
    end
    -- Present only on drops, so that the filter `csfq.dropped` selects them.
    if reason then
        t:add(f_dropped, true):set_generated()
        t:add(f_reason, reason):set_generated()
    end
end

register_postdissector(csfq)
