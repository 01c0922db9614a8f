//! What happened to a packet: the index into each program's per-CPU `counters` map. This
//! list is the one source: `build.rs` includes this file and writes `enum csfq_counter`
//! (`CNT_` and the variant's name in capitals, each with its doc as a comment) into the
//! header the programs include, so C and Rust cannot disagree on an index.

/// Defines [`Counter`] with its names, its doc lines and [`Counter::ALL`].
macro_rules! counters {
    ($($(#[doc = $doc:literal])+ $variant:ident => $name:literal,)+) => {
        /// What happened to a packet: the index into the per-CPU `counters` map
        /// (`enum csfq_counter`, generated from this list).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Counter {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Counter {
            /// Every counter, in index order.
            pub const ALL: [Counter; [$(stringify!($variant)),+].len()] =
                [$(Counter::$variant),+];

            /// The name used in `csfq dp stats` and its JSON: a drop counter's is `drop_`
            /// and its reason's name, as the simulator names drops.
            pub fn name(self) -> &'static str {
                match self {
                    $(Counter::$variant => $name,)+
                }
            }

            /// The variant's name, as the C enumerator takes it (`CNT_` and it in
            /// capitals, words split at each capital).
            pub fn variant(self) -> &'static str {
                match self {
                    $(Counter::$variant => stringify!($variant),)+
                }
            }

            /// Its documentation, a line each.
            pub fn doc(self) -> &'static [&'static str] {
                match self {
                    $(Counter::$variant => &[$($doc),+],)+
                }
            }
        }
    };
}

counters! {
    /// Edge: label written.
    Labeled => "labeled",
    /// Core: forwarded with its label. MAY: forwarded.
    Forwarded => "forwarded",
    /// Core: forwarded with its label lowered to `alpha`.
    Relabeled => "relabeled",
    /// Core: dropped with probability `1 - alpha/label` (CSFQ_DROP_CSFQ_PROB).
    DropProbabilistic => "drop_csfq_prob",
    /// Core: the virtual queue at rate `C` was full (the buffer-overflow amendment;
    /// CSFQ_DROP_OVERFLOW).
    DropOverflow => "drop_overflow",
    /// Core: forwarded with label 0 as it came (traffic that bypassed the edges, flows
    /// under 1 kbit/s), judged as part of the unlabeled aggregate.
    PassUnlabeled => "pass_unlabeled",
    /// Non-IP frame, or a bad IP version field.
    PassNotIp => "pass_not_ip",
    /// IPv4 without DF, or a fragment: no room for a label (the core judges it as part
    /// of the unlabeled aggregate and forwards it as it came; the edge passes it).
    PassNotAtomic => "pass_not_atomic",
    /// Headers shorter than they claim.
    PassTruncated => "pass_truncated",
    /// The label could not be written.
    WriteFailed => "write_failed",
    /// Edge: a flow entered the table (packets only; bytes stay 0).
    NewFlow => "new_flows",
    /// Edge: IPv4 that cannot carry a label, over the rate the operator set for it (or
    /// all of it, when the operator chose to drop it; CSFQ_DROP_POLICED).
    DropPoliced => "drop_policed",
    /// Core: arrived on an interface not trusted to carry labels; its label was ignored
    /// (judged as unlabeled traffic) and overwritten. Also counted under what then
    /// happened to it.
    Untrusted => "untrusted",
    /// MAY: dropped with probability `v * delta` (its flow is in the table;
    /// CSFQ_DROP_MAY_HISTORY).
    DropMayHistory => "drop_may_history",
    /// MAY: sampled into the table while the utilization was above `u0`, and dropped
    /// (CSFQ_DROP_MAY_SAMPLE).
    DropMaySample => "drop_may_sample",
    /// MAY: a flow entered the table (packets only; bytes stay 0).
    MayInserted => "may_inserted",
    /// MAY: an entry idle past `T0` was found and removed (packets only).
    MayExpired => "may_expired",
    /// Edge: a new flow took the entry of its set's least recently seen flow (packets
    /// only); the flows in the table are `NewFlow` less these. MAY: a flow sampled into
    /// the table took the entry of the flow, of its eight, whose last drop (or insert) is
    /// the oldest.
    Evicted => "evicted",
    /// Edge: an IP packet whose source address is in none of the prefixes the edge
    /// accepts (`--allow-source`); dropped.
    DropSource => "drop_source",
    /// CS-FNE core: dropped with probability `1 - CL/label` above the target queue
    /// (CSFQ_DROP_CSFNE_PROB).
    DropCsfneProb => "drop_csfne_prob",
    /// TUF core: its tag was above the filter's threshold (CSFQ_DROP_TUF_HIGHEST_TAG).
    DropTufHighestTag => "drop_tuf_highest_tag",
    /// Core (CSFQ, CS-FNE, TUF) told to drop what it cannot parse (`--unparsed drop`): a
    /// non-IP frame (ARP aside) or truncated headers; dropped. By default such frames are
    /// judged as unlabeled traffic and counted as what they are.
    DropUnparsed => "drop_unparsed",
    /// TUF source tagger: a local TCP socket's packet, tagged with Padhye's `B` from the
    /// socket's round trip.
    SourceTagged => "source_tagged",
    /// TUF source tagger: not a packet of a full local TCP socket (forwarded, UDP, a
    /// listener's or a closed connection's); passed untagged.
    PassNotTcpSocket => "pass_not_tcp_socket",
    /// TUF source tagger: a GSO super-packet, whose segments would not all carry the tag;
    /// passed untagged (turn segmentation offloads off).
    PassSuperPacket => "pass_super_packet",
    /// Edge with `--keep-source-tags`: a TCP packet that came tagged by its source's TUF
    /// tagger; forwarded with its tag.
    KeptSourceTag => "kept_source_tag",
}
