//! The CS-FNE and TUF cores' layouts, and the TUF source tagger's: `#[repr(C)]` mirrors of
//! their structs in `bpf/csfq_shared.h`, held against the compiled objects' BTF with the
//! rest (`tests.rs`).

use super::{FixedPadhyeParams, FixedRate, MAX_TRUSTED};

/// `CSFNE_RING_MAX`: the CS-FNE core's ring entries (generated from
/// `csfq_algo::csfne_fixed::RING_MAX`).
pub const CSFNE_RING_MAX: usize = csfq_algo::csfne_fixed::RING_MAX as usize;

/// `struct csfq_csfne_config`: `csfq_algo::csfne_fixed::FixedCsfneParams`, whose labels
/// count, the clock and the test inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CsfneConfigRaw {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `K`, ns.
    pub k_ns: u64,
    /// The target queue, bytes.
    pub target_bytes: u32,
    /// The virtual queue's size, bytes.
    pub limit_bytes: u32,
    /// Ring entries used (a power of two, at most [`CSFNE_RING_MAX`]).
    pub ring: u32,
    /// Nonzero: the clock and the draws come from the `test_` fields.
    pub test_mode: u32,
    /// The clock in test mode, ns.
    pub test_now_ns: u64,
    /// The queued packet's draw in test mode.
    pub test_pick: u32,
    /// The drop's draw in test mode.
    pub test_draw: u32,
    /// [`TRUST_ANY`](super::TRUST_ANY) or [`TRUST_LISTED`](super::TRUST_LISTED).
    pub trust: u32,
    /// [`TRUST_LISTED`](super::TRUST_LISTED): the trusted interfaces' indexes (0 ends the list).
    pub trusted: [u32; MAX_TRUSTED],
    /// [`CLOCK_FINE`](super::CLOCK_FINE) or [`CLOCK_COARSE`](super::CLOCK_COARSE).
    pub clock: u32,
    /// Nonzero: drop what the core cannot parse (non-IP but ARP, truncated); else judge
    /// it as unlabeled traffic.
    pub drop_unparsed: u32,
    /// Padding.
    pub pad: u32,
    /// [`CLOCK_COARSE`](super::CLOCK_COARSE): the kernel's tick, ns.
    pub tick_ns: u64,
}

impl CsfneConfigRaw {
    /// The parameters the model takes.
    pub fn params(&self) -> csfq_algo::csfne_fixed::FixedCsfneParams {
        csfq_algo::csfne_fixed::FixedCsfneParams {
            capacity_bps: self.capacity_bps,
            k_ns: self.k_ns,
            target_bytes: self.target_bytes,
            limit_bytes: self.limit_bytes,
            ring: self.ring,
        }
    }
}

/// `struct csfq_csfne_entry`: an admitted packet in the ring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CsfneEntryRaw {
    /// Its flow's fingerprint.
    pub fingerprint: u32,
    /// Padding.
    pub pad: u32,
    /// When it leaves the virtual queue, ns.
    pub finish_ns: u64,
}

/// `struct csfq_csfne_state`: `csfq_algo::csfne_fixed::FixedCsfneCore` and its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct CsfneStateRaw {
    /// `struct bpf_spin_lock` (reads as 0).
    pub lock: u32,
    /// Padding.
    pub pad: u32,
    /// `r_hit`.
    pub hit: FixedRate,
    /// `r_miss`.
    pub miss: FixedRate,
    /// The unlabeled traffic's rate.
    pub unlabeled: FixedRate,
    /// When the virtual queue empties, ns.
    pub vq_finish_ns: u64,
    /// Packets admitted.
    pub admitted: u64,
    /// The ring.
    pub ring: [CsfneEntryRaw; CSFNE_RING_MAX],
}

impl Default for CsfneStateRaw {
    fn default() -> Self {
        CsfneStateRaw {
            lock: 0,
            pad: 0,
            hit: FixedRate::default(),
            miss: FixedRate::default(),
            unlabeled: FixedRate::default(),
            vq_finish_ns: 0,
            admitted: 0,
            ring: [CsfneEntryRaw::default(); CSFNE_RING_MAX],
        }
    }
}

/// `TUF_TAGS`: the tags (and each histogram's bins).
pub const TUF_TAGS: usize = csfq_algo::tuf::TAGS;

/// `struct csfq_tuf_config`: `csfq_algo::tuf_fixed::FixedTufParams`, whose tags count, the
/// clock and the test inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TufConfigRaw {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// The window arrivals are counted by tag over, ns.
    pub window_ns: u64,
    /// `K` of the untagged traffic's rate, ns.
    pub k_ns: u64,
    /// The virtual queue's size, bytes.
    pub limit_bytes: u32,
    /// Nonzero: the clock is `test_now_ns`.
    pub test_mode: u32,
    /// The clock in test mode, ns.
    pub test_now_ns: u64,
    /// [`TRUST_ANY`](super::TRUST_ANY) or [`TRUST_LISTED`](super::TRUST_LISTED).
    pub trust: u32,
    /// [`TRUST_LISTED`](super::TRUST_LISTED): the trusted interfaces' indexes (0 ends the list).
    pub trusted: [u32; MAX_TRUSTED],
    /// [`CLOCK_FINE`](super::CLOCK_FINE) or [`CLOCK_COARSE`](super::CLOCK_COARSE).
    pub clock: u32,
    /// Nonzero: drop what the core cannot parse (non-IP but ARP, truncated); else judge
    /// it as unlabeled traffic.
    pub drop_unparsed: u32,
    /// Padding.
    pub pad: u32,
    /// [`CLOCK_COARSE`](super::CLOCK_COARSE): the kernel's tick, ns.
    pub tick_ns: u64,
}

impl TufConfigRaw {
    /// The parameters the model takes.
    pub fn params(&self) -> csfq_algo::tuf_fixed::FixedTufParams {
        csfq_algo::tuf_fixed::FixedTufParams {
            capacity_bps: self.capacity_bps,
            limit_bytes: self.limit_bytes,
            window_ns: self.window_ns,
            k_ns: self.k_ns,
        }
    }
}

/// `struct csfq_tuf_state`: `csfq_algo::tuf_fixed::FixedTufFilter` and its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct TufStateRaw {
    /// `TUF_TAGS - 1` less the highest tag that passes (0: every tag passes).
    pub cut: u64,
    /// The current window's number.
    pub window: u64,
    /// When it began, ns.
    pub window_start_ns: u64,
    /// Windows whose threshold was set.
    pub published: u64,
    /// Padding.
    pub pad0: [u64; 4],
    /// `struct bpf_spin_lock` (reads as 0).
    pub lock: u32,
    /// The untagged traffic's counter.
    pub untagged_n: u32,
    /// The untagged traffic's rate.
    pub untagged: FixedRate,
    /// Padding.
    pub pad1: [u64; 4],
    /// When the virtual queue empties, ns.
    pub vq_finish_ns: u64,
    /// Padding.
    pub pad2: [u64; 7],
    /// Each window's bytes by tag, by its parity.
    pub hist: [[u64; TUF_TAGS]; 2],
}

impl TufStateRaw {
    /// The highest tag that passes.
    pub fn threshold(&self) -> u64 {
        (TUF_TAGS as u64 - 1).saturating_sub(self.cut)
    }
}

impl Default for TufStateRaw {
    fn default() -> Self {
        TufStateRaw {
            cut: 0,
            window: 0,
            window_start_ns: 0,
            published: 0,
            pad0: [0; 4],
            lock: 0,
            untagged_n: 0,
            untagged: FixedRate::default(),
            pad1: [0; 4],
            vq_finish_ns: 0,
            pad2: [0; 7],
            hist: [[0; TUF_TAGS]; 2],
        }
    }
}

/// `struct csfq_tuf_source_config`: the source tagger's parameters, the model's own type
/// ([`FixedPadhyeParams`], the program's `struct csfq_tuf_source_params`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TufSourceConfigRaw {
    /// Padhye's constants, the window cap, `rto_min` and the weight.
    pub params: FixedPadhyeParams,
}

/// `struct csfq_tuf_source_socket`: a socket the source tagger has tagged packets of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TufSourceSocketRaw {
    /// Its counter (`X_n = I(n)`).
    pub n: u32,
    /// The kernel's `srtt_us` (times 8) at its last packet.
    pub srtt8_us: u32,
    /// Its MSS then.
    pub mss: u32,
    /// The tag written on it.
    pub tag: u32,
    /// Packets tagged.
    pub packets: u64,
}

/// `CSFQ_TUF_SOURCE_SOCKETS`: sockets the source tagger keeps (least recently used forgotten
/// first).
pub const TUF_SOURCE_SOCKETS: u32 = csfq_algo::tuf_source::SOCKETS;

// SAFETY: plain-old-data C layouts: integers only, no padding holes, any bit pattern valid.
unsafe impl aya::Pod for TufSourceConfigRaw {}
unsafe impl aya::Pod for TufSourceSocketRaw {}
unsafe impl aya::Pod for CsfneConfigRaw {}
unsafe impl aya::Pod for CsfneEntryRaw {}
unsafe impl aya::Pod for CsfneStateRaw {}
unsafe impl aya::Pod for TufConfigRaw {}
unsafe impl aya::Pod for TufStateRaw {}
