//! The mirrors held against the compiled programs, and the counters' names.

use super::*;

/// A drop counter is named by its reason, as the simulator's reports name drops: one
/// vocabulary for both.
#[test]
fn drop_counters_are_named_by_their_reasons() {
    let drops: Vec<_> = Counter::ALL
        .iter()
        .filter_map(|c| c.drop_reason().map(|r| (c, r)))
        .collect();
    assert_eq!(drops.len(), 7);
    for (c, r) in drops {
        assert_eq!(c.name(), format!("drop_{}", r.name()));
    }
}

/// Sizes as the C compiler lays the structs out (x86-64 and arm64 alike), for the
/// structs placed so that what every packet writes shares no cache line with what it
/// reads; the BTF test below checks every member of every mirror.
#[test]
fn layouts_keep_the_hot_fields_apart() {
    // 64 bytes or more between what every packet reads, the lock, and the virtual
    // queue every packet writes: never on one cache line, whatever the alignment.
    assert_eq!(std::mem::offset_of!(CoreStateRaw, lock), 112);
    assert_eq!(std::mem::offset_of!(CoreStateRaw, unlabeled), 168);
    assert_eq!(std::mem::offset_of!(CoreStateRaw, vq_finish_ns), 256);
    assert_eq!(size_of::<CoreStateRaw>(), 320);
}

/// One BTF description per program object, in the order of `programs::ALL`.
fn objects_btf() -> Vec<btf_rs::Btf> {
    use object::{Object, ObjectSection};
    crate::programs::ALL
        .iter()
        .map(|p| {
            let elf = object::File::parse(p.object).expect("an ELF object");
            let btf = elf.section_by_name(".BTF").expect("a .BTF section");
            btf_rs::Btf::from_bytes(btf.data().expect("its data")).expect("BTF")
        })
        .collect()
}

/// `struct name` as one of the objects describes it, with that object's BTF.
fn c_struct<'a>(objects: &'a [btf_rs::Btf], name: &str) -> (&'a btf_rs::Btf, btf_rs::Struct) {
    objects
        .iter()
        .find_map(|b| {
            b.resolve_types_by_name(name)
                .ok()?
                .into_iter()
                .find_map(|t| match t {
                    btf_rs::Type::Struct(s) => Some((b, s)),
                    _ => None,
                })
        })
        .unwrap_or_else(|| panic!("no program object describes struct {name}"))
}

/// Every `#[repr(C)]` mirror against the struct the compiled programs carry in their
/// BTF (clang -g): the same size, and each C member at the offset of the Rust field
/// of its name, every member mirrored. C and Rust cannot drift apart unnoticed.
#[test]
fn mirrors_match_the_compiled_programs_btf() {
    if !crate::AVAILABLE {
        eprintln!("skipped: this build has no eBPF programs");
        return;
    }
    let objects = objects_btf();
    let check = |name: &str, size: usize, fields: &[(&str, usize)]| {
        let (btf, s) = c_struct(&objects, name);
        assert_eq!(s.size(), size, "struct {name}: size in C and in Rust");
        assert_eq!(s.members.len(), fields.len(), "struct {name}: members");
        for m in &s.members {
            let member = btf.resolve_name(m).expect("a member's name");
            let (_, offset) = fields
                .iter()
                .find(|(f, _)| *f == member)
                .unwrap_or_else(|| panic!("struct {name}: {member} has no Rust mirror"));
            assert_eq!(
                m.bit_offset() as usize,
                offset * 8,
                "struct {name}: {member}"
            );
        }
    };
    // `field = "name"`: a Rust field whose C member has another name.
    macro_rules! mirror {
        ($c:literal, $t:ty, [$($f:ident $(= $cf:literal)?),+ $(,)?]) => {
            check(
                $c,
                size_of::<$t>(),
                &[$((mirror!(@name $f $($cf)?), std::mem::offset_of!($t, $f))),+],
            )
        };
        (@name $f:ident) => { stringify!($f) };
        (@name $f:ident $cf:literal) => { $cf };
    }
    mirror!("csfq_count", Count, [packets, bytes]);
    mirror!("fixed_rate", FixedRate, [rate_bps, last_ns, pending_bytes]);
    mirror!(
        "csfq_flow_key",
        FlowKeyRaw,
        [family, proto, sport, dport, pad, saddr, daddr]
    );
    mirror!("csfq_weight_key", WeightKey, [prefixlen, addr]);
    mirror!(
        "csfq_flow_entry",
        FlowEntryRaw,
        [key, weight_milli, lock, rate, tuf_n, pad]
    );
    mirror!(
        "csfq_edge_config",
        EdgeConfigRaw,
        [
            k_ns,
            default_weight_milli,
            test_mode,
            test_now_ns,
            police_rate_bps,
            police_burst_bytes,
            unlabelable,
            flow_key,
            clock,
            tick_ns,
            source_filter,
            meter,
            tuf,
            keep_source_tags
        ]
    );
    mirror!(
        "csfq_core_config",
        CoreConfigRaw,
        [
            capacity_bps,
            k_alpha_ns,
            k_c_ns,
            threshold_bytes,
            limit_bytes,
            overflow_budget,
            test_mode,
            test_now_ns,
            test_draw,
            test_queue_bytes,
            estimator,
            trust,
            trusted,
            clock,
            drop_unparsed,
            tick_ns
        ]
    );
    mirror!("csfq_hist_bin", HistBin, [bytes, inv]);
    mirror!(
        "csfq_core_state",
        CoreStateRaw,
        [
            alpha_bps,
            start_ns,
            window,
            published,
            congested,
            overflow_left,
            max_label_bps,
            pad0,
            lock,
            pad1,
            arrival,
            accepted,
            unlabeled,
            pad2,
            vq_finish_ns,
            pad3
        ]
    );
    // MAY's parameters are the model's own type, laid out as the programs read them.
    mirror!(
        "csfq_may_params",
        FixedMayParams,
        [
            capacity_bps,
            interval_ns,
            timeout_ns,
            u0_q16,
            gain_q16,
            q_w_q16,
            keep_q32,
            sample_q32,
            passed_only,
            ceiling
        ]
    );
    mirror!(
        "csfq_may_config",
        MayConfigRaw,
        [
            params,
            test_mode,
            test_draw,
            test_now_ns,
            clock,
            pad,
            tick_ns
        ]
    );
    mirror!(
        "csfq_may_state",
        MayStateRaw,
        [
            lock,
            pad,
            v_q32,
            util_q16,
            last_update_ns,
            epoch,
            counted_bytes
        ]
    );
    mirror!(
        "csfq_may_entry",
        MayEntryRaw,
        [delta_q16, ts_ns, epoch, nd, pad]
    );
    mirror!("csfq_may_slot", MaySlotRaw, [key, lock, pad, entry = "e"]);
    mirror!(
        "csfq_csfne_config",
        CsfneConfigRaw,
        [
            capacity_bps,
            k_ns,
            target_bytes,
            limit_bytes,
            ring,
            test_mode,
            test_now_ns,
            test_pick,
            test_draw,
            trust,
            trusted,
            clock,
            drop_unparsed,
            pad,
            tick_ns
        ]
    );
    mirror!(
        "csfq_csfne_entry",
        CsfneEntryRaw,
        [fingerprint, pad, finish_ns]
    );
    mirror!(
        "csfq_csfne_state",
        CsfneStateRaw,
        [
            lock,
            pad,
            hit,
            miss,
            unlabeled,
            vq_finish_ns,
            admitted,
            ring
        ]
    );
    mirror!(
        "csfq_tuf_config",
        TufConfigRaw,
        [
            capacity_bps,
            window_ns,
            k_ns,
            limit_bytes,
            test_mode,
            test_now_ns,
            trust,
            trusted,
            clock,
            drop_unparsed,
            pad,
            tick_ns
        ]
    );
    mirror!(
        "csfq_tuf_state",
        TufStateRaw,
        [
            cut,
            window,
            window_start_ns,
            published,
            pad0,
            lock,
            untagged_n,
            untagged,
            pad1,
            vq_finish_ns,
            pad2,
            hist
        ]
    );
    // The source tagger's parameters are the model's own type, as the program reads them.
    mirror!(
        "csfq_tuf_source_params",
        FixedPadhyeParams,
        [
            c1_q24,
            c2_q24,
            max_window,
            rto_min_us,
            weight_milli,
            per_ack
        ]
    );
    mirror!("csfq_tuf_source_config", TufSourceConfigRaw, [params]);
    mirror!(
        "csfq_tuf_source_socket",
        TufSourceSocketRaw,
        [n, srtt8_us, mss, tag, packets]
    );
    mirror!(
        "csfq_loop_config",
        LoopConfigRaw,
        [control_port, loops, classid]
    );
    mirror!("csfq_loop_count", LoopCountRaw, [packets, bytes]);
    mirror!(
        "csfq_loop_state",
        LoopStateRaw,
        [
            lambda_bps,
            mu_bps,
            accumulation_bytes,
            epochs,
            feedbacks,
            controls,
            lost_bytes,
            updated_ns,
            in_epoch,
            pid
        ]
    );
}
