//! The sender and receiver against hand-worked cases.

use super::*;

fn cfg() -> TcpConfig {
    TcpConfig::default()
}

fn params(c: TcpConfig) -> TcpParams {
    TcpParams::from(c)
}

fn ack(next: u32, ts: Nanos) -> SimPacket {
    SimPacket::ack(FlowId(0), 40, next, ts, [(0, 0); 3])
}

#[test]
fn slow_start_doubles_per_round_trip() {
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    assert_eq!(out.len(), 1);
    let mut t = Nanos::from_millis(10);
    for round in 0..4 {
        let batch: Vec<_> = std::mem::take(&mut out);
        for p in &batch {
            s.on_ack(&ack(p.seq + 1, p.ts), t, &mut out);
        }
        assert_eq!(out.len(), 2usize << round, "round {round}");
        t += Nanos::from_millis(10);
    }
}

#[test]
fn three_dupacks_trigger_fast_retransmit_and_halve() {
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    s.cwnd = 10.0;
    s.ssthresh = 5.0;
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    assert_eq!(out.len(), 10);
    out.clear();
    // Segment 0 lost: segments 1..=3 each produce a duplicate ACK for 0.
    let t = Nanos::from_millis(5);
    s.on_ack(&ack(0, Nanos::ZERO), t, &mut out);
    s.on_ack(&ack(0, Nanos::ZERO), t, &mut out);
    assert!(out.is_empty());
    s.on_ack(&ack(0, Nanos::ZERO), t, &mut out);
    assert_eq!(out[0].seq, 0, "retransmits the hole");
    assert_eq!(s.ssthresh, 5.0);
    assert_eq!(s.cwnd, 8.0);
    assert_eq!(s.stats().fast_retransmits, 1);
    // Full ACK ends recovery with cwnd = ssthresh.
    out.clear();
    s.on_ack(&ack(10, t), t + Nanos::from_millis(5), &mut out);
    assert!(!s.in_recovery);
    assert_eq!(s.cwnd, 5.0);
}

#[test]
fn finite_transfer_sends_its_size_and_completes() {
    let mut s = TcpSender::with_limit(FlowId(0), params(cfg()), Some(5));
    s.cwnd = 10.0;
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    assert_eq!(out.len(), 5);
    assert!(!s.is_complete());
    let mut more = Vec::new();
    s.on_ack(&ack(5, Nanos::ZERO), Nanos::from_millis(5), &mut more);
    assert!(more.is_empty());
    assert!(s.is_complete());
    assert_eq!(s.deadline(), None);
}

#[test]
fn timeout_backs_off_and_goes_back_n() {
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    s.cwnd = 4.0;
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    let d = s.deadline().unwrap();
    assert_eq!(d, Nanos::from_millis(1000), "initial RTO 1 s");
    out.clear();
    s.on_timeout(d, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 0);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.deadline(), Some(d + Nanos::from_millis(2000)));
}

#[test]
fn rto_follows_rfc6298_with_minimum() {
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    s.rtt_sample(Nanos::from_millis(100));
    // srtt 100, rttvar 50: rto = 300 ms.
    assert_eq!(s.rto, Nanos::from_millis(300));
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    s.rtt_sample(Nanos::from_millis(2));
    assert_eq!(s.rto, Nanos::from_millis(200), "clamped to min_rto");
    // With G = 200 ms the floor is on the variance term: 500 + max(200, 4 * 5) ms.
    let mut s = TcpSender::new(
        FlowId(0),
        params(TcpConfig {
            clock_granularity_ms: 200.0,
            ..cfg()
        }),
    );
    s.rtt_sample(Nanos::from_millis(500));
    s.rtt_sample(Nanos::from_millis(500));
    // srtt 500, rttvar 0.75 * 250 = 187.5: 4 * rttvar = 750 > G.
    assert_eq!(s.rto, Nanos::from_millis(1250));
    for _ in 0..40 {
        s.rtt_sample(Nanos::from_millis(500));
    }
    assert_eq!(
        s.rto,
        Nanos::from_millis(700),
        "SRTT + G once RTTVAR has decayed"
    );
}

/// Under ns-2's timer a sender times one segment per round trip on 100 ms ticks: a
/// 20 ms round trip gives 3 ticks (300 ms, where RFC 6298 gives its 200 ms minimum), a
/// timeout doubles it, and the next timed ACK clears the back-off.
#[test]
fn ns2_timer_in_the_sender() {
    let ns2 = TcpConfig {
        timer: TcpTimer::Ns2,
        initial_rto_ms: 3000.0,
        ..cfg()
    };
    let mut s = TcpSender::new(FlowId(0), params(ns2));
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    assert_eq!(s.deadline(), Some(Nanos::from_millis(3000)), "rtxcur_init_");
    let t = Nanos::from_millis(20);
    s.on_ack(&ack(1, out[0].ts), t, &mut out);
    assert_eq!(s.rto(), Nanos::from_millis(300));
    assert_eq!(s.srtt(), Some(Nanos::from_millis(100)), "one tick");
    // Nothing was outstanding: the timer starts afresh with the new segments.
    assert_eq!(s.deadline(), Some(t + Nanos::from_millis(300)));
    // Segments 1 and 2 are out; 1 (timed) is lost: the timer fires and backs off.
    let d = s.deadline().unwrap();
    out.clear();
    s.on_timeout(d, &mut out);
    assert_eq!(s.rto(), Nanos::from_millis(600));
    assert_eq!(s.deadline(), Some(d + Nanos::from_millis(600)));
    // The retransmission of 1 is not timed (Karn); its ACK leaves the back-off.
    let t2 = d + Nanos::from_millis(20);
    s.on_ack(&ack(2, out[0].ts), t2, &mut out);
    assert_eq!(s.rto(), Nanos::from_millis(600));
    // Go-back-N sends 2 again (not timed) and 3, new and timed: 3's ACK clears it.
    let seqs: Vec<u32> = out.iter().map(|p| p.seq).collect();
    assert_eq!(seqs[seqs.len() - 2..], [2, 3]);
    out.clear();
    s.on_ack(&ack(3, t2), t2 + Nanos::from_millis(20), &mut out);
    assert_eq!(s.rto(), Nanos::from_millis(600));
    s.on_ack(&ack(4, t2), t2 + Nanos::from_millis(30), &mut out);
    assert_eq!(s.rto(), Nanos::from_millis(300));
    // With data still out, the timer restarts with the timeout in force before this
    // ACK's sample (600 ms), as ns-2 did before `timerfix_`.
    assert_eq!(
        s.deadline(),
        Some(t2 + Nanos::from_millis(30) + Nanos::from_millis(600))
    );
}

#[test]
fn receiver_buffers_out_of_order_and_acks_cumulatively() {
    let mut r = TcpReceiver::new(
        FlowId(0),
        params(TcpConfig {
            sack: true,
            ..cfg()
        }),
    );
    let seg = |s| SimPacket::data(FlowId(0), 1000, s, Nanos::ZERO);
    assert_eq!(r.on_data(&seg(0), Nanos::ZERO).0, 1);
    // 1 lost; 2, 3, 5 arrive.
    for s in [2, 3, 5] {
        let (d, a) = r.on_data(&seg(s), Nanos::ZERO);
        assert_eq!(d, 0);
        let AckAction::Send(a) = a else { panic!() };
        assert_eq!(a.seq, 1);
        if s == 5 {
            assert_eq!(a.sack[0], (5, 6));
            assert_eq!(a.sack[1], (2, 4));
        }
    }
    // The hole fills: 1, 2, 3 delivered; next expected 4.
    let (d, a) = r.on_data(&seg(1), Nanos::ZERO);
    assert_eq!(d, 3);
    let AckAction::Send(a) = a else { panic!() };
    assert_eq!(a.seq, 4);
    assert_eq!(a.sack[0], (5, 6));
    let (d, _) = r.on_data(&seg(4), Nanos::ZERO);
    assert_eq!(d, 2);
    assert_eq!(r.delivered(), 6);
}

#[test]
fn delayed_ack_every_second_segment() {
    let mut r = TcpReceiver::new(
        FlowId(0),
        params(TcpConfig {
            delayed_ack: true,
            ..cfg()
        }),
    );
    let seg = |s| SimPacket::data(FlowId(0), 1000, s, Nanos::ZERO);
    assert!(matches!(
        r.on_data(&seg(0), Nanos::ZERO).1,
        AckAction::Delay(_)
    ));
    assert!(matches!(r.on_data(&seg(1), Nanos::ZERO).1, AckAction::Send(a) if a.seq == 2));
    let (_, a) = r.on_data(&seg(2), Nanos::ZERO);
    let AckAction::Delay(d) = a else { panic!() };
    assert_eq!(d, Nanos::from_millis(100));
    assert_eq!(r.on_delack_timer(d).map(|a| a.seq), Some(3));
}

/// A CUBIC sender keeps 0.7 of its flight on a fast retransmit (RFC 9438 Section 4.6)
/// where NewReno keeps half, and leaves recovery at that window; its congestion
/// avoidance then follows W_cubic, not 1/cwnd per ACK.
#[test]
fn a_cubic_sender_keeps_seven_tenths_and_grows_by_the_cubic() {
    let mut s = TcpSender::new(FlowId(0), params(cfg()));
    s.set_congestion_control(CongestionControl::Cubic);
    s.cwnd = 10.0;
    s.ssthresh = 5.0;
    let mut out = Vec::new();
    s.start(Nanos::ZERO, &mut out);
    assert_eq!(out.len(), 10);
    let t = Nanos::from_millis(5);
    for _ in 0..3 {
        s.on_ack(&ack(0, Nanos::ZERO), t, &mut out);
    }
    assert_eq!(s.ssthresh, 7.0, "flight 10 x beta 0.7");
    assert_eq!(s.cwnd, 10.0, "NewReno's inflation: ssthresh + 3");
    out.clear();
    let t = t + Nanos::from_millis(5);
    s.on_ack(&ack(10, t), t, &mut out);
    assert_eq!(s.cwnd, 7.0, "recovery ends at ssthresh");
    // The epoch starts at the next ACK: W_max = 10, K = cbrt(3 / 0.4); W_cubic(0) = 7 is
    // below W_est = 7 + 0.5294 / 7, so cwnd = W_est.
    let t2 = t + Nanos::from_millis(10);
    s.on_ack(&ack(11, t), t2, &mut out);
    let est = 7.0 + super::cubic::ALPHA / 7.0;
    assert!((s.cwnd - est).abs() < 1e-12, "{}", s.cwnd);
}
