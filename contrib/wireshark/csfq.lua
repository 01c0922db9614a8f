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
-- Packets captured before a csfq edge carry whatever the sender put there (Linux picks
-- IPv4 IDs per socket): turn the protocol's preferences off for such captures.

local csfq = Proto("csfq", "CSFQ rate label")

local f_code = ProtoField.uint32("csfq.code", "Label code", base.HEX_DEC)
local f_exponent = ProtoField.uint8("csfq.exponent", "Exponent", base.DEC)
local f_mantissa = ProtoField.uint16("csfq.mantissa", "Mantissa", base.DEC)
local f_rate = ProtoField.double("csfq.rate", "Rate (bit/s)")
local f_labeled = ProtoField.bool("csfq.labeled", "Labeled")
local f_carrier = ProtoField.string("csfq.carrier", "Carried in")
local f_dropped = ProtoField.bool("csfq.dropped", "Dropped here")
local f_reason = ProtoField.string("csfq.drop_reason", "Drop reason")
csfq.fields = { f_code, f_exponent, f_mantissa, f_rate, f_labeled, f_carrier, f_dropped, f_reason }

csfq.prefs.ipv4 = Pref.bool("IPv4 Identification carries labels", true,
    "Decode the Identification field of atomic IPv4 datagrams as a CSFQ label")
csfq.prefs.ipv6 = Pref.bool("IPv6 flow label carries labels", true,
    "Decode the IPv6 flow label as a CSFQ label")

local ip_id = Field.new("ip.id")
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

-- The first value of a field in this packet (the outer header if tunneled), or nil.
local function first(field)
    local all = { field() }
    return all[1]
end

function csfq.dissector(tvb, pinfo, tree)
    local code, range, carrier, mantissa_bits
    local id = first(ip_id)
    if id and csfq.prefs.ipv4 then
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
    local t = tree:add(csfq, summary)
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
