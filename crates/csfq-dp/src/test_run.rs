//! Running a program on crafted packets with `BPF_PROG_TEST_RUN`, for the tests and the
//! cost measurements.

use aya::maps::{Array, LpmTrie, MapData, PerCpuArray};
use aya::programs::{SchedClassifier, TestRun, TestRunOptions};
use aya::Ebpf;

use crate::abi::{
    CoreConfigRaw, CoreStateRaw, Count, Counter, CsfneConfigRaw, CsfneStateRaw, EdgeConfigRaw,
    FlowEntryRaw, FlowKeyRaw, LoopConfigRaw, LoopCountRaw, MayConfigRaw, MayEntryRaw, MaySlotRaw,
    MayStateRaw, TufConfigRaw, TufSourceConfigRaw, TufStateRaw, WeightKey, FLOW_WAYS,
};
use crate::error::SysError;
use crate::flow_table;
use crate::loader::{insert_prefix, load, load_seeded, map, read_counters};
use crate::program::Program;
use crate::programs::{self, CORE, CSFNE, EDGE, MAY, TUF};
use crate::role::Role;

/// One of the programs loaded into the kernel but not attached, for running on crafted
/// packets with `BPF_PROG_TEST_RUN`. In test mode the programs take their clock (and the
/// core its random draw and queue) from the configuration instead of the kernel.
pub struct TestProgram {
    ebpf: Ebpf,
    program: &'static Program,
    /// The flows' hash seed (edge, MAY, CS-FNE).
    seed: u64,
}

impl TestProgram {
    /// Loads `role`'s program. Needs root.
    pub fn load(role: Role) -> Result<Self, SysError> {
        let program = programs::of(role);
        Ok(TestProgram {
            ebpf: load(program, None)?,
            program,
            seed: 0,
        })
    }

    /// Loads the edge with a flow table of `flows` entries (rounded up to whole sets)
    /// whose hash takes seed 0.
    pub fn load_edge(flows: u32) -> Result<Self, SysError> {
        Self::load_edge_seeded(flows, 0)
    }

    /// Loads the edge with a flow table of `flows` entries whose hash takes `seed`.
    pub fn load_edge_seeded(flows: u32, seed: u64) -> Result<Self, SysError> {
        Ok(TestProgram {
            ebpf: load_seeded(&EDGE, Some(flows), seed)?,
            program: &EDGE,
            seed,
        })
    }

    /// Loads the TUF source tagger's object with its vector program in place of the tagger:
    /// it reads `n`, `srtt8_us` and `mss` (host order) right after the Ethernet header and
    /// returns the tag's code the tagger would write for them
    /// (`csfq_algo::tuf_source::source_tag`).
    pub fn load_tuf_source_vectors() -> Result<Self, SysError> {
        let program = &programs::tuf_source::TUF_SOURCE_VECTOR;
        Ok(TestProgram {
            ebpf: load(program, None)?,
            program,
            seed: 0,
        })
    }

    /// Sets the TUF source tagger's configuration.
    pub fn set_tuf_source_config(&mut self, c: &TufSourceConfigRaw) -> Result<(), SysError> {
        let p = self.program;
        self.set_config(p, c)
    }

    /// Sets the edge's configuration (`test_mode` and `test_now_ns` included).
    pub fn set_edge_config(&mut self, c: &EdgeConfigRaw) -> Result<(), SysError> {
        self.set_config(&EDGE, c)
    }

    /// Sets the core's configuration (test inputs included).
    pub fn set_core_config(&mut self, c: &CoreConfigRaw) -> Result<(), SysError> {
        self.set_config(&CORE, c)
    }

    /// Loads MAY with a table of `flows` entries (rounded up to whole sets) whose hash
    /// takes seed 0.
    pub fn load_may(flows: u32) -> Result<Self, SysError> {
        Ok(TestProgram {
            ebpf: load(&MAY, Some(flows))?,
            program: &MAY,
            seed: 0,
        })
    }

    /// Loads the CS-FNE core with its fingerprints hashed with `seed`.
    pub fn load_csfne(seed: u64) -> Result<Self, SysError> {
        Ok(TestProgram {
            ebpf: load_seeded(&CSFNE, None, seed)?,
            program: &CSFNE,
            seed,
        })
    }

    /// Sets the CS-FNE core's configuration (test inputs included).
    pub fn set_csfne_config(&mut self, c: &CsfneConfigRaw) -> Result<(), SysError> {
        self.set_config(&CSFNE, c)
    }

    /// The CS-FNE core's state.
    pub fn csfne_state(&self) -> Result<Box<CsfneStateRaw>, SysError> {
        let a: Array<&MapData, CsfneStateRaw> =
            Array::try_from(self.ebpf.map("csfne_state").expect("csfne_state")).expect("array");
        a.get(&0, 0)
            .map(Box::new)
            .map_err(|e| SysError::kernel("reading the CS-FNE state", e))
    }

    /// Sets the TUF core's configuration (test inputs included).
    pub fn set_tuf_config(&mut self, c: &TufConfigRaw) -> Result<(), SysError> {
        self.set_config(&TUF, c)
    }

    /// The TUF core's state.
    pub fn tuf_state(&self) -> Result<Box<TufStateRaw>, SysError> {
        let a: Array<&MapData, TufStateRaw> =
            Array::try_from(self.ebpf.map("tuf_state").expect("tuf_state")).expect("array");
        a.get(&0, 0)
            .map(Box::new)
            .map_err(|e| SysError::kernel("reading the TUF state", e))
    }

    /// Sets MAY's configuration (test inputs included).
    pub fn set_may_config(&mut self, c: &MayConfigRaw) -> Result<(), SysError> {
        self.set_config(&MAY, c)
    }

    /// MAY's aggregate state.
    pub fn may_state(&self) -> Result<MayStateRaw, SysError> {
        let a: Array<&MapData, MayStateRaw> =
            Array::try_from(self.ebpf.map("may_state").expect("may_state")).expect("array");
        a.get(&0, 0)
            .map_err(|e| SysError::kernel("reading the MAY state", e))
    }

    /// MAY's bytes arrived in the current interval (`csfq_algo::may_fixed`'s
    /// `arrived_bytes`): every CPU's running total, summed, less the sum at the interval's
    /// start.
    pub fn may_arrived(&self) -> Result<u64, SysError> {
        let totals: PerCpuArray<&MapData, u64> =
            PerCpuArray::try_from(self.ebpf.map("may_arrivals").expect("may_arrivals"))
                .map_err(|e| SysError::kernel("opening MAY's arrival totals", e))?;
        let sum: u64 = totals
            .get(&0, 0)
            .map_err(|e| SysError::kernel("reading MAY's arrival totals", e))?
            .iter()
            .sum();
        Ok(sum.saturating_sub(self.may_state()?.counted_bytes))
    }

    /// The edge's flow table, entry by entry: each entry's flow, `None` if empty.
    pub fn edge_flows(&self) -> Result<Vec<Option<FlowKeyRaw>>, SysError> {
        let a: Array<&MapData, FlowEntryRaw> =
            Array::try_from(self.ebpf.map("flows").expect("flows")).expect("array");
        (0..a.len())
            .map(|i| {
                let e = a
                    .get(&i, 0)
                    .map_err(|e| SysError::kernel("reading the flow table", e))?;
                Ok((e.key.family != 0).then_some(e.key))
            })
            .collect()
    }

    /// MAY's table entry for a flow, if it has one: the entry of its two sets that holds
    /// its key.
    pub fn may_entry(&self, key: &FlowKeyRaw) -> Result<Option<MayEntryRaw>, SysError> {
        let a = self.may_slots()?;
        let sets = a.len() / FLOW_WAYS;
        for set in flow_table::sets_of(key, self.seed, sets) {
            for i in set * FLOW_WAYS..(set + 1) * FLOW_WAYS {
                let slot = a
                    .get(&i, 0)
                    .map_err(|e| SysError::kernel("reading MAY's table", e))?;
                if slot.key == *key {
                    return Ok(Some(slot.entry));
                }
            }
        }
        Ok(None)
    }

    /// MAY's table, entry by entry: each entry's flow, `None` if empty.
    pub fn may_flows(&self) -> Result<Vec<Option<FlowKeyRaw>>, SysError> {
        let a = self.may_slots()?;
        (0..a.len())
            .map(|i| {
                let e = a
                    .get(&i, 0)
                    .map_err(|e| SysError::kernel("reading MAY's table", e))?;
                Ok((e.key.family != 0).then_some(e.key))
            })
            .collect()
    }

    fn may_slots(&self) -> Result<Array<&MapData, MaySlotRaw>, SysError> {
        Array::try_from(self.ebpf.map("may_flows").expect("may_flows"))
            .map_err(|e| SysError::kernel("opening MAY's table", e))
    }

    /// Adds an edge weight class: flows from `addr/prefixlen` (IPv6 form) get `milli`/1000.
    pub fn add_weight(&mut self, key: WeightKey, milli: u32) -> Result<(), SysError> {
        let mut trie = LpmTrie::try_from(map(&mut self.ebpf, "weights")).expect("lpm trie");
        insert_prefix(&mut trie, &key, milli, "writing a weight class")
    }

    /// Makes the edge accept sources in `key` (IPv6 form) when its configuration filters
    /// sources.
    pub fn allow_source(&mut self, key: WeightKey) -> Result<(), SysError> {
        let mut trie = LpmTrie::try_from(map(&mut self.ebpf, "sources")).expect("lpm trie");
        insert_prefix(&mut trie, &key, 1, "writing an accepted source prefix")
    }

    /// Runs the program once on `frame` (an Ethernet frame); returns the program's return
    /// code (`-1`: pass on, `2`: drop) and the frame as the program left it.
    pub fn run(&self, frame: &[u8]) -> Result<(i32, Vec<u8>), SysError> {
        self.run_repeat(frame, 1).map(|(r, out, _)| (r, out))
    }

    /// Runs the program once on `frame` as if it had been received on interface
    /// `ingress_ifindex` (`skb->ingress_ifindex`; `run` leaves it 0).
    pub fn run_from(&self, frame: &[u8], ingress_ifindex: u32) -> Result<(i32, Vec<u8>), SysError> {
        // `struct __sk_buff` up to `ifindex`; the kernel takes a prefix of it and lets a
        // test set `ingress_ifindex` (offset 36).
        let mut ctx = [0u8; 44];
        ctx[36..40].copy_from_slice(&ingress_ifindex.to_ne_bytes());
        self.run_with(frame, 1, Some(&ctx), None)
            .map(|(r, out, _)| (r, out))
    }

    /// Runs the program `repeat` times on `frame`; also returns the kernel's mean time per
    /// run, ns.
    pub fn run_repeat(&self, frame: &[u8], repeat: u32) -> Result<(i32, Vec<u8>, u64), SysError> {
        self.run_with(frame, repeat, None, None)
    }

    fn run_with(
        &self,
        frame: &[u8],
        repeat: u32,
        ctx: Option<&[u8]>,
        ctx_out: Option<&mut [u8]>,
    ) -> Result<(i32, Vec<u8>, u64), SysError> {
        let prog: &SchedClassifier = self
            .ebpf
            .program(self.program.function)
            .expect("program")
            .try_into()
            .expect("classifier");
        let mut out = vec![0u8; frame.len() + 256];
        let opts = TestRunOptions {
            data_in: Some(frame),
            data_out: Some(&mut out),
            ctx_in: ctx,
            ctx_out,
            repeat,
            ..Default::default()
        };
        let r = prog
            .test_run(opts)
            .map_err(|e| SysError::kernel("BPF_PROG_TEST_RUN", e))?;
        let n = r.data_size_out as usize;
        out.truncate(n);
        Ok((r.return_value as i32, out, r.duration.as_nanos() as u64))
    }

    /// Sets the overlay loops' configuration.
    pub fn set_loop_config(&mut self, c: &LoopConfigRaw) -> Result<(), SysError> {
        let p = self.program;
        self.set_config(p, c)
    }

    /// Writes `c` into `p`'s configuration map (`p` is this program, or one that shares
    /// its object's map layout).
    fn set_config<T: aya::Pod>(&mut self, p: &Program, c: &T) -> Result<(), SysError> {
        crate::loader::configure(&mut self.ebpf, p, c)
    }

    /// Makes destinations in `key` (IPv6 form) loop `index`'s.
    pub fn add_loop_prefix(&mut self, key: WeightKey, index: u32) -> Result<(), SysError> {
        let mut trie: LpmTrie<&mut MapData, [u8; 16], u32> =
            LpmTrie::try_from(map(&mut self.ebpf, "loop_prefixes")).expect("lpm trie");
        insert_prefix(&mut trie, &key, index, "writing a loop's prefix")
    }

    /// Loop `index`'s packets and bytes counted so far.
    pub fn loop_count(&self, index: u32) -> Result<LoopCountRaw, SysError> {
        let a: Array<&MapData, LoopCountRaw> =
            Array::try_from(self.ebpf.map("loop_counts").expect("loop_counts")).expect("array");
        a.get(&index, 0)
            .map_err(|e| SysError::kernel("reading a loop's count", e))
    }

    /// Runs the program once on `frame`; also returns the packet's priority
    /// (`skb->priority`) as the program left it.
    pub fn run_priority(&self, frame: &[u8]) -> Result<(i32, Vec<u8>, u32), SysError> {
        // `struct __sk_buff` up to `ifindex` in; all of it back: priority at offset 32.
        let mut ctx_out = [0u8; 512];
        let (r, out, _) = self.run_with(frame, 1, Some(&[0u8; 44]), Some(&mut ctx_out))?;
        let prio = u32::from_ne_bytes(ctx_out[32..36].try_into().expect("4 bytes"));
        Ok((r, out, prio))
    }

    /// The counters, summed over CPUs.
    pub fn counters(&self) -> Result<Vec<(Counter, Count)>, SysError> {
        read_counters(self.ebpf.map("counters").expect("counters"))
    }

    /// The core's aggregate state.
    pub fn core_state(&self) -> Result<CoreStateRaw, SysError> {
        let a: Array<&MapData, CoreStateRaw> =
            Array::try_from(self.ebpf.map("core_state").expect("core_state")).expect("array");
        a.get(&0, 0)
            .map_err(|e| SysError::kernel("reading the core state", e))
    }
}
