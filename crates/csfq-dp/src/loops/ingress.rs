//! The ingress daemon: the loops' shapers, their control messages, AIMD-ER.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};

use csfq_algo::overlay::{Ingress, Service};
use csfq_algo::time::Nanos;

use super::pins::{attach_loop, publish, refuse_running, Made};
use super::wire::{no_checksum, precise_timers, udp, wait, Message};
use super::{classid, pid, IngressSettings, HTB_MAJOR};
use crate::abi::{LoopConfigRaw, LoopStateRaw};
use crate::error::{AttachError, SysError};
use crate::htb::Tc;
use crate::pins::{dir, preflight};
use crate::role::Role;
use crate::sys::{change_lock, monotonic_ns};

/// The most controls a late daemon sends at once (a second's worth at 10 ms).
const MAX_CATCH_UP: u64 = 100;

/// Runs the ingress daemon until `stop` is set or the duration ends; everything it made
/// is removed when it returns. `progress` gets a line per second.
pub fn run_ingress(
    s: &IngressSettings,
    stop: &AtomicBool,
    mut progress: impl FnMut(&str),
) -> Result<(), AttachError> {
    let params = s.params()?;
    preflight("csfq dp loop ingress", &s.dev)?;
    let ifindex = crate::sys::ifindex(&s.dev)?;
    let made = {
        let _lock = change_lock()?;
        refuse_running(&s.dev, Role::LoopIngress)?;
        let mut tc = Tc::open(ifindex)?;
        tc.add_root(HTB_MAJOR)?;
        let mut made = Made {
            dev: s.dev.clone(),
            role: Role::LoopIngress,
            htb: Some(tc),
        };
        let tc = made.htb.as_mut().expect("htb");
        for (i, p) in params.iter().enumerate() {
            let start = match p.service {
                Service::QuasiLeased { rate_bps } => rate_bps,
                _ => p.initial_rate_bps,
            };
            tc.set_class(classid(i), start as u64, true)?;
            tc.set_fifo(classid(i), s.queue_packets)?;
        }
        let mut cfg = LoopConfigRaw {
            control_port: u32::from(s.egress.port().to_be()),
            loops: s.loops.len() as u32,
            ..Default::default()
        };
        for i in 0..s.loops.len() {
            cfg.classid[i] = classid(i);
        }
        attach_loop(&s.dev, Role::LoopIngress, &s.loops, &cfg)?;
        made
    };
    let mut made = made;
    let d = dir(&s.dev, Role::LoopIngress);
    let any: SocketAddr = if s.egress.is_ipv4() {
        "0.0.0.0:0".parse().expect("addr")
    } else {
        "[::]:0".parse().expect("addr")
    };
    let socks = (0..s.loops.len())
        .map(|_| {
            let u = udp(any, "binding a control socket to")?;
            u.connect(s.egress)
                .map_err(|e| SysError::kernel(format!("connecting to {}", s.egress), e))?;
            no_checksum(&u, s.egress.is_ipv6())?;
            Ok(u)
        })
        .collect::<Result<Vec<_>, SysError>>()?;
    precise_timers();
    let start = monotonic_ns();
    let mut ingress: Vec<Ingress> = params
        .iter()
        .map(|p| Ingress::new(*p, Nanos(start)))
        .collect();
    let mut departed = vec![0u64; s.loops.len()];
    let mut controls = vec![0u64; s.loops.len()];
    let mut states = vec![LoopStateRaw::default(); s.loops.len()];
    let tau = params[0].tau.0;
    let end = s
        .duration
        .map(|d| start.saturating_add(d.as_nanos().min(u64::MAX as u128) as u64));
    let mut next_tick = start + tau;
    let mut next_report = start + 1_000_000_000;
    let mut buf = [0u8; 256];
    let refs: Vec<&UdpSocket> = socks.iter().collect();
    while !stop.load(Ordering::Relaxed) && end.is_none_or(|e| monotonic_ns() < e) {
        wait(&refs, next_tick.min(monotonic_ns() + 100_000_000));
        for (i, u) in socks.iter().enumerate() {
            while let Ok(n) = u.recv(&mut buf) {
                let Some(Message::Feedback {
                    loop_index,
                    feedback,
                }) = Message::decode(&buf[..n])
                else {
                    continue;
                };
                if loop_index as usize != i {
                    continue;
                }
                let r = ingress[i].on_feedback(&feedback, Nanos(monotonic_ns()));
                let tc = made.htb.as_mut().expect("htb");
                tc.set_class(classid(i), r as u64, false)?;
                states[i].mu_bps = feedback.mu_bps as u64;
                states[i].accumulation_bytes = feedback.accumulation_bytes as u64;
            }
        }
        let now = monotonic_ns();
        if now < next_tick {
            // A heartbeat for `csfq dp stats`, whatever tau is.
            for st in &mut states {
                st.updated_ns = now;
                st.pid = pid();
            }
            publish(&d, &states)?;
            continue;
        }
        // Every tick due is counted (the controller's `k`), late ones included: the egress
        // numbers its intervals by the controls, so a tick skipped would shift every later
        // control an interval late, read as a standing accumulation of mu * tau for good (a
        // daemon slowed by a busy machine held both loops at their floor that way). Of a
        // long stall's ticks only the last second's are sent; the egress takes the others
        // as lost controls.
        let mut due = 0u64;
        while next_tick <= now {
            next_tick += tau;
            due += 1;
        }
        let stats = made.htb.as_mut().expect("htb").class_stats()?;
        for (i, u) in socks.iter().enumerate() {
            let Some(&(_, cs)) = stats.iter().find(|(id, _)| *id == classid(i)) else {
                return Err(SysError::Gone(format!(
                    "loop {i}'s htb class {:x}:{:x} is gone from {} (removed by someone \
                     else?); stopping",
                    HTB_MAJOR,
                    0x10 + i,
                    s.dev
                ))
                .into());
            };
            let mut delta = cs.bytes.saturating_sub(departed[i]);
            departed[i] = departed[i].max(cs.bytes);
            while delta > 0 {
                let b = delta.min(u32::MAX as u64) as u32;
                ingress[i].on_send(b, Nanos(now));
                delta -= b as u64;
            }
            for j in 0..due {
                let mut c = ingress[i].tick(Nanos(now));
                if due - j > MAX_CATCH_UP {
                    continue; // counted, not sent
                }
                // Sent into the network before this message: what the shaper released.
                c.sent_bytes = departed[i];
                let m = Message::Control {
                    loop_index: i as u16,
                    control: c,
                    tau_ns: tau,
                    tag: s.loops[i].tag(),
                    rx_bytes: 0,
                    rx_ns: 0,
                };
                if u.send(&m.encode()).is_ok() {
                    controls[i] += 1;
                }
            }
            let st = ingress[i].stats();
            states[i] = LoopStateRaw {
                lambda_bps: ingress[i].rate_bps() as u64,
                epochs: st.epochs,
                feedbacks: st.feedbacks,
                controls: controls[i],
                updated_ns: now,
                in_epoch: ingress[i].in_epoch() as u32,
                pid: pid(),
                ..states[i]
            };
        }
        publish(&d, &states)?;
        if now >= next_report {
            next_report += 1_000_000_000;
            let line: Vec<String> = states
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    format!(
                        "loop {i}: lambda {:.2} Mbit/s, mu {:.2}, a {} B, epochs {}",
                        st.lambda_bps as f64 / 1e6,
                        st.mu_bps as f64 / 1e6,
                        st.accumulation_bytes,
                        st.epochs
                    )
                })
                .collect();
            progress(&line.join("; "));
        }
    }
    drop(made);
    Ok(())
}
