//! Shared by the dataplane tests: when to skip, and crafted frames.
#![allow(dead_code)]

/// Whether the dataplane tests can run here; if not, says why on stderr (as SKIPPED), or
/// fails when `CSFQ_DP_REQUIRED` is set (CI sets it: there they must run).
pub fn dataplane_or_skip(test: &str) -> bool {
    let why = csfq_dp::unavailable_reason();
    match why {
        None => true,
        Some(why) => {
            if std::env::var_os("CSFQ_DP_REQUIRED").is_some_and(|v| v != "0") {
                panic!("{test}: {why}, but CSFQ_DP_REQUIRED is set");
            }
            // Straight to the process's stderr: libtest would swallow eprintln! of a
            // passing test, and a skip must be seen.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
            false
        }
    }
}

pub const SRC_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const DST_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

pub fn eth(ethertype: u16) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&DST_MAC);
    f.extend_from_slice(&SRC_MAC);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f
}

/// The Internet checksum (RFC 1071) of `b`.
pub fn inet_checksum(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in b.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 packet in an Ethernet frame of exactly `frame_len` bytes.
pub struct V4 {
    pub proto: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub id: u16,
    /// The flags + fragment offset field (0x4000: DF).
    pub frag: u16,
    pub frame_len: usize,
}

impl Default for V4 {
    fn default() -> Self {
        V4 {
            proto: 17,
            src: [10, 0, 1, 1],
            dst: [10, 0, 2, 1],
            sport: 4000,
            dport: 5001,
            id: 0x1234,
            frag: 0x4000,
            frame_len: 1000,
        }
    }
}

impl V4 {
    pub fn frame(&self) -> Vec<u8> {
        let mut f = eth(0x0800);
        let total = (self.frame_len - 14) as u16;
        let mut ip = vec![0x45, 0];
        ip.extend_from_slice(&total.to_be_bytes());
        ip.extend_from_slice(&self.id.to_be_bytes());
        ip.extend_from_slice(&self.frag.to_be_bytes());
        ip.extend_from_slice(&[64, self.proto, 0, 0]);
        ip.extend_from_slice(&self.src);
        ip.extend_from_slice(&self.dst);
        let c = inet_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        let mut l4 = Vec::new();
        l4.extend_from_slice(&self.sport.to_be_bytes());
        l4.extend_from_slice(&self.dport.to_be_bytes());
        f.extend_from_slice(&l4);
        f.resize(self.frame_len, 0xab);
        f
    }
}

/// An IPv6 packet in an Ethernet frame of `frame_len` bytes.
pub fn v6_frame(
    next: u8,
    traffic_class: u8,
    flow_label: u32,
    sport: u16,
    frame_len: usize,
) -> Vec<u8> {
    let mut f = eth(0x86dd);
    let w: u32 = (6 << 28) | ((traffic_class as u32) << 20) | (flow_label & 0xfffff);
    f.extend_from_slice(&w.to_be_bytes());
    f.extend_from_slice(&((frame_len - 54) as u16).to_be_bytes());
    f.extend_from_slice(&[next, 64]);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&5001u16.to_be_bytes());
    f.resize(frame_len, 0xcd);
    f
}

/// An ARP request: not IP.
pub fn arp_frame() -> Vec<u8> {
    let mut f = eth(0x0806);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&SRC_MAC);
    f.extend_from_slice(&[10, 0, 1, 1]);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&[10, 0, 1, 2]);
    f.resize(60, 0);
    f
}

/// The IPv4 ID of a frame.
pub fn v4_id(f: &[u8]) -> u16 {
    u16::from_be_bytes([f[18], f[19]])
}

/// The IPv4 header checksum verifies.
pub fn v4_checksum_ok(f: &[u8]) -> bool {
    inet_checksum(&f[14..34]) == 0
}

/// The IPv6 flow label of a frame.
pub fn v6_label(f: &[u8]) -> u32 {
    u32::from_be_bytes([f[14], f[15], f[16], f[17]]) & 0xfffff
}

/// Bytes that differ between two frames, by offset.
pub fn changed(a: &[u8], b: &[u8]) -> Vec<usize> {
    assert_eq!(a.len(), b.len(), "frame length changed");
    (0..a.len()).filter(|&i| a[i] != b[i]).collect()
}

/// The packets of `kind` a program has counted, summed over CPUs.
pub fn count(p: &csfq_dp::TestProgram, c: csfq_dp::abi::Counter) -> u64 {
    p.counters()
        .unwrap()
        .into_iter()
        .find(|(k, _)| *k == c)
        .map(|(_, v)| v.packets)
        .unwrap()
}

/// `CLOCK_MONOTONIC` now, ns: the programs' fine clock (`bpf_ktime_get_ns`).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime into a struct we own.
    assert_eq!(
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) },
        0
    );
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The shared vectors' lines of one kind, split on commas, as text.
pub fn raw_vectors(kind: &str) -> Vec<Vec<String>> {
    raw_vectors_in("csfq-fixed-vectors.csv", kind)
}

/// The lines of one kind of a vector file in `testdata/`, split on commas, as text.
pub fn raw_vectors_in(file: &str, kind: &str) -> Vec<Vec<String>> {
    let path = format!("{}/../../testdata/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| l.starts_with(kind) && l.as_bytes().get(kind.len()) == Some(&b','))
        .map(|l| l.split(',').skip(1).map(str::to_string).collect())
        .collect()
}

/// The shared vectors' lines of one kind, split on commas.
pub fn vectors(kind: &str) -> Vec<Vec<u64>> {
    raw_vectors(kind)
        .into_iter()
        .map(|l| l.iter().map(|v| v.parse().expect("number")).collect())
        .collect()
}

/// The key the program makes of `V4 { sport, .. }` (network-order fields as they lie in
/// the packet).
pub fn key_v4(v: &V4, ports: bool) -> csfq_dp::abi::FlowKeyRaw {
    csfq_dp::abi::FlowKeyRaw {
        family: 4,
        proto: v.proto,
        sport: if ports {
            u16::from_ne_bytes(v.sport.to_be_bytes())
        } else {
            0
        },
        dport: if ports {
            u16::from_ne_bytes(v.dport.to_be_bytes())
        } else {
            0
        },
        pad: 0,
        saddr: [u32::from_ne_bytes(v.src), 0, 0, 0],
        daddr: [u32::from_ne_bytes(v.dst), 0, 0, 0],
    }
}

/// The CPUs this thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a cpu_set_t we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Moves this thread to `cpu` (BPF_PROG_TEST_RUN runs the program on the caller's CPU).
pub fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one bit set, for this thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "pinning to CPU {cpu}"
        );
    }
}

/// Spreads a replay over two CPUs: before each packet, [`TwoCpus::before`] moves this
/// thread to the other CPU after a run of 1 to 8 packets (a fixed sequence), so that
/// windows and intervals end on either CPU. With `on: false` it does nothing.
pub struct TwoCpus {
    cpus: Vec<usize>,
    cpu: usize,
    left: u64,
    /// Packets run on the second CPU so far.
    pub on_second: usize,
}

impl TwoCpus {
    /// Alternating between the first two allowed CPUs if `on`.
    pub fn new(on: bool) -> Self {
        TwoCpus {
            cpus: if on { allowed_cpus() } else { Vec::new() },
            cpu: 0,
            left: 0,
            on_second: 0,
        }
    }

    /// Before packet `i`: on the CPU it is to run on.
    pub fn before(&mut self, i: usize) {
        if self.cpus.is_empty() {
            return;
        }
        if self.left == 0 {
            self.cpu = 1 - self.cpu;
            self.left = 1 + (i as u64).wrapping_mul(2_654_435_761) % 8;
            pin_to(self.cpus[self.cpu]);
        }
        self.left -= 1;
        self.on_second += self.cpu;
    }
}
