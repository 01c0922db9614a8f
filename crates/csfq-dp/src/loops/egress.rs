//! The egress daemon: each loop's output rate and accumulation, every interval.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use csfq_algo::overlay::{Control, Egress};
use csfq_algo::time::Nanos;

use super::pins::{attach_loop, publish, read_counts, Made};
use super::wire::{no_checksum, precise_timers, udp, wait, Message};
use super::{check_loops, check_period, pid, EgressSettings};
use crate::abi::{LoopConfigRaw, LoopStateRaw};
use crate::error::AttachError;
use crate::pins::{dir, preflight};
use crate::role::Role;
use crate::sys::{change_lock, monotonic_ns};

/// A control message as the egress handles it: (arrival ns, loop, control, the loop's
/// bytes received before it, its sender).
type Arrived = (u64, usize, Control, u64, SocketAddr);

/// Runs the egress daemon until `stop` is set or the duration ends; everything it made is
/// removed when it returns. `progress` gets a line per second.
pub fn run_egress(
    s: &EgressSettings,
    stop: &AtomicBool,
    mut progress: impl FnMut(&str),
) -> Result<(), AttachError> {
    check_loops(&s.loops)?;
    let interval = check_period("interval", s.interval)?;
    preflight("csfq dp loop egress", &s.dev)?;
    let made = {
        let _lock = change_lock()?;
        let cfg = LoopConfigRaw {
            control_port: u32::from(s.listen.port().to_be()),
            loops: s.loops.len() as u32,
            ..Default::default()
        };
        attach_loop(&s.dev, Role::LoopEgress, &s.loops, &cfg)?;
        Made {
            dev: s.dev.clone(),
            role: Role::LoopEgress,
            htb: None,
        }
    };
    let d = dir(&s.dev, Role::LoopEgress);
    let sock = udp(s.listen, "listening on")?;
    no_checksum(&sock, s.listen.is_ipv6())?;
    let n = s.loops.len();
    let mut egress: Vec<Egress> = (0..n).map(|_| Egress::new(interval)).collect();
    let mut fed = vec![0u64; n];
    let mut peer: Vec<Option<SocketAddr>> = vec![None; n];
    let mut states = vec![LoopStateRaw::default(); n];
    precise_timers();
    let start = monotonic_ns();
    let end = s
        .duration
        .map(|d| start.saturating_add(d.as_nanos().min(u64::MAX as u128) as u64));
    let mut next_report = start + 1_000_000_000;
    let mut buf = [0u8; 256];
    let mut warned = std::collections::HashSet::new();
    let feed = |e: &mut Egress, fed: &mut u64, to: u64| {
        let mut delta = to.saturating_sub(*fed);
        *fed = (*fed).max(to);
        while delta > 0 {
            let b = delta.min(u32::MAX as u64) as u32;
            e.on_data(b);
            delta -= b as u64;
        }
    };
    while !stop.load(Ordering::Relaxed) && end.is_none_or(|e| monotonic_ns() < e) {
        let next_end = egress
            .iter()
            .filter_map(|e| e.next_interval_end())
            .map(|t| t.0)
            .min();
        wait(
            &[&sock],
            next_end
                .unwrap_or(u64::MAX)
                .min(monotonic_ns() + 100_000_000),
        );
        // The counts at this instant, then every control that arrived before it, in the
        // order they arrived (their stamps), interval ends between them.
        let now = monotonic_ns();
        let counts = read_counts(&d, n)?;
        let mut msgs: Vec<Arrived> = Vec::new();
        while let Ok((len, from)) = sock.recv_from(&mut buf) {
            if let Some(Message::Control {
                loop_index,
                control,
                tau_ns,
                tag,
                rx_bytes,
                rx_ns,
            }) = Message::decode(&buf[..len])
            {
                let l = loop_index as usize;
                let mismatch = if l >= n {
                    Some(format!(
                        "a control for loop {l} from {from}, but this egress has {n} loop(s)"
                    ))
                } else if tau_ns != interval.0 {
                    Some(format!(
                        "loop {l}'s controls from {from} come every {} ms (its ingress's \
                         --tau) but this egress's --interval is {} ms",
                        tau_ns as f64 / 1e6,
                        interval.0 as f64 / 1e6
                    ))
                } else if tag != s.loops[l].tag() {
                    Some(format!(
                        "loop {l} at the ingress {from} is not {}/{} (give both edges the \
                         same --loop list, in the same order)",
                        s.loops[l].prefix, s.loops[l].len
                    ))
                } else {
                    None
                };
                if let Some(why) = mismatch {
                    // Ignored: a mismatched loop would measure another's bytes.
                    if warned.insert(why.clone()) {
                        progress(&format!("ignoring controls: {why}"));
                    }
                    continue;
                }
                {
                    // Unstamped (the message had a checksum): its arrival is now.
                    let (rx, t) = if rx_ns == 0 {
                        (counts[loop_index as usize].bytes, now)
                    } else {
                        (rx_bytes, rx_ns.min(now))
                    };
                    msgs.push((t, loop_index as usize, control, rx, from));
                }
            }
        }
        msgs.sort_by_key(|m: &Arrived| m.0);
        let mut answers: Vec<(SocketAddr, Message)> = Vec::new();
        for l in 0..n {
            let mine: Vec<_> = msgs.iter().filter(|m| m.1 == l).collect();
            let mut it = mine.iter().peekable();
            states[l].controls += mine.len() as u64;
            let control = |e: &mut Egress, fed: &mut u64, m: &Arrived| {
                feed(e, fed, m.3);
                e.on_control(&m.2, Nanos(m.0)).map(|fb| {
                    (
                        m.4,
                        Message::Feedback {
                            loop_index: l as u16,
                            feedback: fb,
                        },
                    )
                })
            };
            while let Some(t_end) = egress[l]
                .next_interval_end()
                .map(|t| t.0)
                .filter(|&t| t <= now)
            {
                while let Some(m) = it.next_if(|m| m.0 <= t_end) {
                    peer[l] = Some(m.4);
                    answers.extend(control(&mut egress[l], &mut fed[l], m));
                }
                // R at the interval's end: the count read on waking, which is late by the
                // wake-up's latency, bounded by the stamp of any control that arrived after
                // the end (the count only grows). Several ends passed in one wake, with no
                // control between them, share the count: a daemon late by more than an
                // interval mismeasures mu for those.
                let after = mine.iter().filter(|m| m.0 > t_end).map(|m| m.3).min();
                let r_end = after.map_or(counts[l].bytes, |r| r.min(counts[l].bytes));
                feed(&mut egress[l], &mut fed[l], r_end);
                if let (Some(fb), Some(p)) = (egress[l].on_interval_end(Nanos(t_end)), peer[l]) {
                    answers.push((
                        p,
                        Message::Feedback {
                            loop_index: l as u16,
                            feedback: fb,
                        },
                    ));
                }
            }
            for m in it {
                peer[l] = Some(m.4);
                answers.extend(control(&mut egress[l], &mut fed[l], m));
            }
            let st = egress[l].stats();
            states[l] = LoopStateRaw {
                mu_bps: st.mu_bps as u64,
                accumulation_bytes: st.accumulation_bytes as u64,
                epochs: st.resyncs,
                lost_bytes: st.lost_bytes,
                updated_ns: now,
                pid: pid(),
                ..states[l]
            };
        }
        for (to, m) in answers {
            if let Message::Feedback { loop_index, .. } = m {
                if sock.send_to(&m.encode(), to).is_ok() {
                    states[loop_index as usize].feedbacks += 1;
                }
            }
        }
        publish(&d, &states)?;
        if now >= next_report {
            next_report += 1_000_000_000;
            let line: Vec<String> = states
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    format!(
                        "loop {i}: received {:.2} MB, mu {:.2} Mbit/s, a {} B",
                        counts[i].bytes as f64 / 1e6,
                        st.mu_bps as f64 / 1e6,
                        st.accumulation_bytes
                    )
                })
                .collect();
            progress(&line.join("; "));
        }
    }
    drop(made);
    Ok(())
}
