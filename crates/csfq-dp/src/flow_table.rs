//! The edge's flow table (`bpf/edge.bpf.c`), modelled: which entry each flow's packets
//! find, which flows are new and which are evicted. The program tests hold the program
//! to this model.
//!
//! The table is a flow cache of sets of [`FLOW_WAYS`] entries, as line-rate routers keep
//! one: a flow's key hashes, with the table's seed, to two sets ([`sets_of`]); the flow is
//! in one of their entries or in none. A flow in neither takes the first empty entry of
//! its first set, else of its second, else the entry of the least recently seen of the
//! flows in the two sets (the earliest last packet; the first such, in that order, on a
//! tie), which is evicted. So eviction is least recently seen among a flow's eight entries,
//! not in the whole table: a table less than full can evict an active flow. With two sets
//! to choose from that stays rare until about half the table is taken (the tests below
//! measure it).

use crate::abi::{FlowKeyRaw, FLOW_WAYS};

/// The sets a table of (at least) `entries` entries has: `entries / FLOW_WAYS`, rounded up.
pub fn sets_for(entries: u32) -> u32 {
    entries.div_ceil(FLOW_WAYS)
}

/// The key's hash (`csfq_flow_hash`): its five 64-bit words (each two 32-bit halves as the
/// program reads them, the first the low) each xored in after the seed, multiplied by
/// 2^64 / phi (odd) and the product's high half folded into its low, then SplitMix64's
/// finalizer. Fast, not cryptographic.
pub fn flow_hash(key: &FlowKeyRaw, seed: u64) -> u64 {
    let bytes = key_bytes(key);
    let half = |i: usize| {
        u64::from(u32::from_ne_bytes(
            bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"),
        ))
    };
    let mut h = seed;
    for i in 0..5 {
        let w = (half(2 * i + 1) << 32) | half(2 * i);
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 32;
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// A key's first and second sets among `sets`: the hash's low and high 32 bits each
/// scaled to `[0, sets)` by a multiply and a shift (`flow_slot`). They may be one set.
pub fn sets_of(key: &FlowKeyRaw, seed: u64, sets: u32) -> [u32; 2] {
    let h = flow_hash(key, seed);
    let scale = |half: u64| ((half * u64::from(sets)) >> 32) as u32;
    [scale(h & 0xffff_ffff), scale(h >> 32)]
}

/// The key as the program holds it: 40 bytes, the fields in order, addresses as stored.
fn key_bytes(k: &FlowKeyRaw) -> [u8; 40] {
    let mut b = [0u8; 40];
    b[0] = k.family;
    b[1] = k.proto;
    b[2..4].copy_from_slice(&k.sport.to_ne_bytes());
    b[4..6].copy_from_slice(&k.dport.to_ne_bytes());
    b[6..8].copy_from_slice(&k.pad.to_ne_bytes());
    for (i, w) in k.saddr.iter().chain(&k.daddr).enumerate() {
        b[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_ne_bytes());
    }
    b
}

/// What a packet found in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Its flow's entry.
    Found,
    /// No entry: its flow took an empty one.
    Entered,
    /// No entry: its flow took the entry of this flow, the least recently seen of its
    /// two sets' flows.
    Evicted(FlowKeyRaw),
}

/// The table: each entry's flow and the time of its last packet (the program's
/// `rate.last_ns`: the latest packet time seen, at least 1).
#[derive(Debug, Clone)]
pub struct FlowTable {
    seed: u64,
    sets: u32,
    entries: Vec<Option<(FlowKeyRaw, u64)>>,
}

impl FlowTable {
    /// An empty table of (at least) `entries` entries whose hash takes `seed`.
    pub fn new(entries: u32, seed: u64) -> Self {
        let sets = sets_for(entries);
        FlowTable {
            seed,
            sets,
            entries: vec![None; (sets * FLOW_WAYS) as usize],
        }
    }

    /// A packet of `key`'s flow at `now_ns`: where it is found or put.
    pub fn packet(&mut self, key: &FlowKeyRaw, now_ns: u64) -> Lookup {
        let ways = FLOW_WAYS as usize;
        // Its eight entries, first set then second, as the program scans them.
        let [first, second] = sets_of(key, self.seed, self.sets).map(|s| s as usize * ways);
        let slots: [usize; 2 * FLOW_WAYS as usize] = std::array::from_fn(|w| {
            if w < ways {
                first + w
            } else {
                second + w - ways
            }
        });
        for &i in &slots {
            if let Some((k, seen)) = &mut self.entries[i] {
                if k == key {
                    *seen = (*seen).max(now_ns);
                    return Lookup::Found;
                }
            }
        }
        // The first empty entry, else the first of the least recently seen.
        let victim = *slots
            .iter()
            .enumerate()
            .min_by_key(|&(order, &i)| (self.entries[i].map_or(0, |(_, seen)| seen), order))
            .map(|(_, i)| i)
            .expect("a flow has entries");
        match self.entries[victim].replace((*key, now_ns.max(1))) {
            None => Lookup::Entered,
            Some((k, _)) => Lookup::Evicted(k),
        }
    }

    /// Each entry's flow, `None` if empty, in the program's order (set after set).
    pub fn flows(&self) -> Vec<Option<FlowKeyRaw>> {
        self.entries.iter().map(|e| e.map(|(k, _)| k)).collect()
    }

    /// Flows in the table.
    pub fn len(&self) -> usize {
        self.entries.iter().flatten().count()
    }

    /// Whether the table holds no flow.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sport: u16) -> FlowKeyRaw {
        FlowKeyRaw {
            family: 4,
            proto: 17,
            sport,
            dport: 5001,
            saddr: [0x0a00_0001, 0, 0, 0],
            daddr: [0x0a00_0002, 0, 0, 0],
            ..Default::default()
        }
    }

    /// Five flows of one set in a table of one set: the fifth takes the entry of the
    /// least recently seen, which is then new again when it returns.
    #[test]
    fn a_full_set_evicts_its_least_recently_seen_flow() {
        let mut t = FlowTable::new(4, 7);
        for (i, s) in [1, 2, 3, 4].into_iter().enumerate() {
            assert_eq!(t.packet(&key(s), 10 + i as u64), Lookup::Entered);
        }
        assert_eq!(t.packet(&key(1), 20), Lookup::Found);
        // Flow 2 (last seen at 11) is the least recently seen.
        assert_eq!(t.packet(&key(5), 21), Lookup::Evicted(key(2)));
        assert_eq!(t.packet(&key(2), 22), Lookup::Evicted(key(3)));
        assert_eq!(t.len(), 4);
    }

    /// On a tie the first entry goes; a packet earlier than the last seen does not make
    /// a flow look older.
    #[test]
    fn ties_take_the_first_entry_and_time_never_goes_back() {
        let mut t = FlowTable::new(4, 0);
        for s in 1..=4 {
            t.packet(&key(s), 5);
        }
        t.packet(&key(1), 3);
        assert_eq!(t.packet(&key(9), 6), Lookup::Evicted(key(1)));
    }

    /// The hash spreads keys that differ in one port over the sets about evenly, with
    /// either half (a chi-square of 4096 keys in 64 sets under its 0.1% point, 104 for 63
    /// degrees), and the two halves name the same set about as often as chance would.
    #[test]
    fn keys_spread_over_the_sets() {
        for seed in [0, 1, 0xdead_beef] {
            let (mut n, mut same) = ([[0u32; 64]; 2], 0);
            for s in 0..4096u16 {
                let [a, b] = sets_of(&key(s), seed, 64);
                n[0][a as usize] += 1;
                n[1][b as usize] += 1;
                same += u32::from(a == b);
            }
            for n in n {
                let chi2: f64 = n
                    .iter()
                    .map(|&c| (f64::from(c) - 64.0).powi(2) / 64.0)
                    .sum();
                assert!(chi2 < 104.0, "seed {seed}: chi2 {chi2}");
            }
            // 4096 / 64 = 64 expected; Poisson's 8 standard deviations around it.
            assert!((0..=128).contains(&same), "seed {seed}: {same}");
        }
    }

    /// A product carries differences only upwards: without the fold of each product's
    /// high half into its low, keys that differ only in the top bits of two words (IPv6
    /// source bytes 7 and 15) hashed alike under every seed. Now they do not, and keys
    /// that differ only in the last bytes of both addresses spread.
    #[test]
    fn top_bits_reach_the_hash() {
        let v6 = FlowKeyRaw {
            family: 6,
            proto: 6,
            saddr: [0x2001_0db8, 1, 2, 3],
            daddr: [0x2001_0db8, 4, 5, 6],
            ..key(80)
        };
        for seed in 0..16u64 {
            let mut other = v6;
            other.saddr[1] ^= 1 << 31;
            other.saddr[3] ^= 1 << 31;
            assert_ne!(flow_hash(&v6, seed), flow_hash(&other, seed), "seed {seed}");
        }
        let mut hashes = std::collections::BTreeSet::new();
        for (s, d) in (0..=255u32).flat_map(|s| (0..=255u32).map(move |d| (s, d))) {
            let mut k = v6;
            k.saddr[3] ^= s << 24;
            k.daddr[3] ^= d << 24;
            hashes.insert(flow_hash(&k, 7));
        }
        assert_eq!(hashes.len(), 65_536);
    }

    /// Evictions of active flows, flows cycling round robin (the order in which a least
    /// recently seen rule evicts a flow soonest after its last packet) through a table of
    /// 16 384 entries, four passes after the first, under four seeds: none with the flows
    /// a quarter of the entries; at half, under 5 in 10 000 packets; at three quarters,
    /// under 2 in 100 (a simulation of the same rule written apart from this one, with a
    /// random hash, gave 0, 0.00016 and 0.011).
    #[test]
    fn active_flows_stay_until_about_half_the_table() {
        let entries = 16_384u32;
        for seed in [1, 2, 3, 99] {
            for (share, most) in [(0.25, 0.0), (0.5, 5e-4), (0.75, 0.02)] {
                let n = (f64::from(entries) * share) as u32;
                let mut t = FlowTable::new(entries, seed);
                let keys: Vec<FlowKeyRaw> = (0..n)
                    .map(|i| FlowKeyRaw {
                        daddr: [0x0a00_0000 + i, 0, 0, 0],
                        ..key(4000)
                    })
                    .collect();
                let (mut now, mut evicted) = (1u64, 0u64);
                for pass in 0..5 {
                    for k in &keys {
                        now += 1;
                        if matches!(t.packet(k, now), Lookup::Evicted(_)) && pass > 0 {
                            evicted += 1;
                        }
                    }
                }
                let rate = evicted as f64 / (4.0 * f64::from(n));
                assert!(
                    rate <= most,
                    "seed {seed}, {n} flows: {rate} evictions a packet"
                );
            }
        }
    }
}
