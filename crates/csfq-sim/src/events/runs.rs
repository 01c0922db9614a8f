//! Packets' arrivals kept as a few runs, each already in key order, beside the heap.
//!
//! An arrival is scheduled when its packet is put on a wire, at the time it is sent plus
//! its transmission and the link's delay; on links of one delay, arrivals come to be
//! scheduled mostly in the order they will run. Such an event is appended to the run
//! whose last event is the latest not later than it (best fit, so a run keeps to one
//! delay), or else starts a run; the queue's next event is the earliest of the runs'
//! first, the heap's and the timers'. An arrival that fits no run when every run is taken
//! (a short packet overtaking a long one sent just before it on another wire, a link of
//! another delay) waits in the heap. Which structure an event waits in changes nothing of
//! when it runs: every key is distinct, and each structure gives its events in key order.
//!
//! The runs are kept by their last keys, latest first: the best fit is then the first run
//! that fits, and appending keeps that order (the run's last key grows to one still
//! earlier than the last keys of the runs before it, which did not fit). So an append
//! is a comparison or two and a take a few, where a heap's are a path from root to leaf.

use super::Event;

/// Runs: enough for the links' delays of a scenario's usual graphs (access, core,
/// reverse), few enough that finding the earliest first event takes a few comparisons.
const RUNS: usize = 4;

/// Events in up to [`RUNS`] queues, each in key order.
#[derive(Debug)]
pub(super) struct Runs {
    /// Each run's events: those from `heads[i]` on are pending. Runs `0..len` have some,
    /// by their last keys, latest first; the others none. (A vector and a head rather
    /// than a `VecDeque`: with one, tcp1000 took 2.4% more instructions, and the peak
    /// memory at 100 000 flows was the same.)
    runs: [Vec<Event>; RUNS],
    heads: [usize; RUNS],
    /// Each pending run's first key.
    firsts: [u128; RUNS],
    /// Each pending run's last key.
    lasts: [u128; RUNS],
    len: usize,
    /// The pending run whose first key is the earliest (when `len > 0`).
    earliest: usize,
}

impl Runs {
    pub(super) fn new() -> Self {
        Runs {
            runs: Default::default(),
            heads: [0; RUNS],
            firsts: [0; RUNS],
            lasts: [0; RUNS],
            len: 0,
            earliest: 0,
        }
    }

    /// Slots the runs have allocated.
    pub(super) fn capacity(&self) -> usize {
        self.runs.iter().map(Vec::capacity).sum()
    }

    /// Appends `e` to the run whose last event is the latest not later than it, or else
    /// starts a run with it; gives it back if neither can be done.
    #[inline]
    pub(super) fn push(&mut self, e: Event) -> Result<(), Event> {
        let key = e.key();
        for i in 0..self.len {
            if self.lasts[i] <= key {
                let (run, head) = (&mut self.runs[i], self.heads[i]);
                if head >= 1024 && 2 * head >= run.len() {
                    // Mostly taken: the pending moved to the front, so that a run's
                    // space follows what it holds at once, not all it ever held.
                    run.drain(..head);
                    self.heads[i] = 0;
                }
                run.push(e);
                self.lasts[i] = key;
                return Ok(());
            }
        }
        if self.len == RUNS {
            return Err(e);
        }
        // Later than none of the runs' last keys: a new run, last in their order.
        let i = self.len;
        self.runs[i].clear();
        self.runs[i].push(e);
        self.heads[i] = 0;
        (self.firsts[i], self.lasts[i]) = (key, key);
        self.len += 1;
        if i == 0 || key < self.firsts[self.earliest] {
            self.earliest = i;
        }
        Ok(())
    }

    /// The run whose first event is the earliest, with that event's key.
    #[inline]
    pub(super) fn first(&self) -> Option<(usize, u128)> {
        (self.len > 0).then(|| (self.earliest, self.firsts[self.earliest]))
    }

    /// The first event of run `i`.
    #[inline]
    pub(super) fn front(&self, i: usize) -> Option<&Event> {
        self.runs[i].get(self.heads[i])
    }

    /// Takes the first event of run `i`.
    #[inline]
    pub(super) fn pop(&mut self, i: usize) -> Option<Event> {
        let e = *self.runs.get(i)?.get(self.heads[i])?;
        self.heads[i] += 1;
        match self.runs[i].get(self.heads[i]) {
            Some(next) => self.firsts[i] = next.key(),
            None => {
                // Emptied: the runs after it move up one, keeping their order, and it
                // goes last, its space kept for a later run.
                let n = self.len;
                self.runs[i..n].rotate_left(1);
                self.heads[i..n].rotate_left(1);
                self.firsts[i..n].rotate_left(1);
                self.lasts[i..n].rotate_left(1);
                self.len -= 1;
            }
        }
        let mut earliest = 0;
        for j in 1..self.len {
            if self.firsts[j] < self.firsts[earliest] {
                earliest = j;
            }
        }
        self.earliest = earliest;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;
    use csfq_algo::Nanos;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// The runs' invariants: the pending runs first, by their last keys, latest first;
    /// each pending run's events in key order, its first and last keys recorded; the
    /// earliest run the one with the earliest first key.
    fn check(r: &Runs) {
        for i in 0..r.len {
            let pending = &r.runs[i][r.heads[i]..];
            assert!(!pending.is_empty(), "run {i} of {} is empty", r.len);
            assert!(pending.windows(2).all(|w| w[0].key() < w[1].key()));
            assert_eq!(r.firsts[i], pending[0].key());
            assert_eq!(r.lasts[i], pending[pending.len() - 1].key());
            if i > 0 {
                assert!(r.lasts[i - 1] > r.lasts[i], "runs out of order");
            }
        }
        for i in r.len..RUNS {
            assert_eq!(r.heads[i], r.runs[i].len(), "run {i} is past the pending");
        }
        if r.len > 0 {
            let min = (0..r.len).map(|i| r.firsts[i]).min();
            assert_eq!(Some(r.firsts[r.earliest]), min);
        }
    }

    proptest! {
        /// Arrivals at times a little ahead of the clock, with the clock moving forward
        /// as events are taken (some at one instant, some out of order, some with an
        /// earlier scheduling order at a later time, as a wire's next packet): what the
        /// runs take is exactly what they do not give back, they give it in key order,
        /// and each take is the earliest of what they hold, as a sorted set says.
        #[test]
        fn runs_give_what_they_took_in_key_order(
            ops in proptest::collection::vec((0u8..3, 0u64..40, 0u64..3), 1..2000)
        ) {
            let mut runs = Runs::new();
            let mut held = BTreeSet::new();
            let (mut now, mut seq) = (0u64, 10u64);
            for (op, ahead, back) in ops {
                if op < 2 {
                    seq += 1;
                    let e = Event {
                        at: Nanos(now + ahead),
                        seq: seq - back,
                        kind: EventKind::Arrive(seq as u32),
                    };
                    if held.contains(&(e.at.0, e.seq)) {
                        continue;
                    }
                    let full = runs.len == RUNS;
                    match runs.push(e) {
                        Ok(()) => {
                            held.insert((e.at.0, e.seq));
                        }
                        Err(back) => {
                            prop_assert!(full, "given back with a run free");
                            prop_assert_eq!(back.key(), e.key());
                            prop_assert!((0..RUNS).all(|i| runs.lasts[i] > e.key()));
                        }
                    }
                } else if let Some((i, key)) = runs.first() {
                    let e = runs.pop(i).expect("the first run has an event");
                    prop_assert_eq!(e.key(), key);
                    prop_assert_eq!(Some((e.at.0, e.seq)), held.pop_first());
                    now = e.at.0;
                } else {
                    prop_assert!(held.is_empty());
                }
                check(&runs);
            }
            while let Some((i, _)) = runs.first() {
                let e = runs.pop(i).expect("the first run has an event");
                prop_assert_eq!(Some((e.at.0, e.seq)), held.pop_first());
                check(&runs);
            }
            prop_assert!(held.is_empty());
        }
    }

    /// A hand-made case: a run per lag, the best fit chosen over a run that merely fits,
    /// the fifth lag given back, and an emptied run's place taken by those after it.
    #[test]
    fn each_lag_keeps_to_its_run() {
        let ev = |at: u64, seq: u64| Event {
            at: Nanos(at),
            seq,
            kind: EventKind::Arrive(seq as u32),
        };
        let mut r = Runs::new();
        for (seq, at) in [(1, 1000), (2, 100), (3, 10), (4, 1)].into_iter() {
            assert!(r.push(ev(at, seq)).is_ok());
        }
        assert_eq!(r.len, 4);
        // Later than each run's last: the best fit is the run ending at 1000.
        assert!(r.push(ev(1001, 5)).is_ok());
        assert_eq!(r.runs[0].len(), 2);
        // Between 10 and 100: the run ending at 10.
        assert!(r.push(ev(50, 6)).is_ok());
        assert_eq!(r.runs[2].len(), 2);
        // Earlier than every run's last, none free: given back.
        assert!(r.push(ev(0, 7)).is_err());
        // Taking 1 empties the last run; then 10 and 50 empty the third, and the runs
        // after it (none pending) keep their order.
        let taken: Vec<u64> = std::iter::from_fn(|| {
            let (i, _) = r.first()?;
            let e = r.pop(i)?;
            check(&r);
            Some(e.at.0)
        })
        .collect();
        assert_eq!(taken, [1, 10, 50, 100, 1000, 1001]);
        assert_eq!(r.len, 0);
    }
}
