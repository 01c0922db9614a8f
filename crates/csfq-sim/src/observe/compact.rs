//! Per-flow records kept in the narrowest integer width their values need so far, widening
//! (keeping every value) when one would not fit: with a million flows, the widths of their
//! counters and series are most of what a flow's statistics cost.

/// A flow's data packets dropped, by reason code: 4 bytes a reason while every count fits
/// in 32 bits, all widened to 8 once one would not.
#[derive(Debug, Clone)]
pub(crate) enum DropCounts {
    Narrow([u32; 16]),
    Wide(Box<[u64; 16]>),
}

impl Default for DropCounts {
    fn default() -> Self {
        DropCounts::Narrow([0; 16])
    }
}

impl DropCounts {
    pub(crate) fn add(&mut self, code: u8) {
        let i = code as usize;
        match self {
            DropCounts::Narrow(n) => match n[i].checked_add(1) {
                Some(v) => n[i] = v,
                None => {
                    let mut wide = Box::new(n.map(u64::from));
                    wide[i] += 1;
                    *self = DropCounts::Wide(wide);
                }
            },
            DropCounts::Wide(w) => w[i] += 1,
        }
    }

    pub(crate) fn get(&self, code: u8) -> u64 {
        match self {
            DropCounts::Narrow(n) => u64::from(n[code as usize]),
            DropCounts::Wide(w) => w[code as usize],
        }
    }

    pub(crate) fn total(&self) -> u64 {
        (0..16).map(|c| self.get(c)).sum()
    }
}

/// Bytes per sampling interval in the narrowest width every value so far fits: 2 bytes a
/// sample while each interval's bytes fit in 16 bits (64 KiB: 5.2 Mbit/s with the default
/// 100 ms samples, where most flows of a run with many flows stay), 4 while they fit in 32
/// (4.29 GB an interval), else 8. A flow widens once per width it needs.
#[derive(Debug, Clone)]
pub(crate) enum IntervalSeries {
    Short(Vec<u16>),
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for IntervalSeries {
    fn default() -> Self {
        IntervalSeries::Short(Vec::new())
    }
}

impl IntervalSeries {
    pub(crate) fn with_capacity(samples: usize) -> Self {
        IntervalSeries::Short(Vec::with_capacity(samples))
    }

    pub(crate) fn push(&mut self, bytes: u64) {
        match self {
            IntervalSeries::Short(v) => match u16::try_from(bytes) {
                Ok(b) => v.push(b),
                Err(_) => {
                    let cap = v.capacity();
                    *self = match u32::try_from(bytes) {
                        Ok(b) => IntervalSeries::Narrow(Self::widen(v, cap, b)),
                        Err(_) => IntervalSeries::Wide(Self::widen(v, cap, bytes)),
                    }
                }
            },
            IntervalSeries::Narrow(v) => match u32::try_from(bytes) {
                Ok(b) => v.push(b),
                Err(_) => {
                    let cap = v.capacity();
                    *self = IntervalSeries::Wide(Self::widen(v, cap, bytes));
                }
            },
            IntervalSeries::Wide(v) => v.push(bytes),
        }
    }

    /// `narrow`'s samples and then `last`, in a vector of the wider type with room for
    /// `capacity` samples (what the narrow one had reserved).
    fn widen<N: Copy, W: From<N>>(narrow: &[N], capacity: usize, last: W) -> Vec<W> {
        let mut wide = Vec::with_capacity(capacity.max(narrow.len() + 1));
        wide.extend(narrow.iter().map(|&b| W::from(b)));
        wide.push(last);
        wide
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let (short, narrow, wide): (&[u16], &[u32], &[u64]) = match self {
            IntervalSeries::Short(v) => (v, &[], &[]),
            IntervalSeries::Narrow(v) => (&[], v, &[]),
            IntervalSeries::Wide(v) => (&[], &[], v),
        };
        short
            .iter()
            .map(|&b| u64::from(b))
            .chain(narrow.iter().map(|&b| u64::from(b)))
            .chain(wide.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::{DropCounts, IntervalSeries};

    /// A count keeps going past 2^32 - 1, and the others keep theirs.
    #[test]
    fn drop_counts_widen_without_losing_a_drop() {
        let mut d = DropCounts::Narrow([0; 16]);
        d.add(3);
        if let DropCounts::Narrow(n) = &mut d {
            n[5] = u32::MAX;
        }
        d.add(5);
        assert!(matches!(d, DropCounts::Wide(_)));
        d.add(5);
        assert_eq!(d.get(3), 1);
        assert_eq!(d.get(5), u64::from(u32::MAX) + 2);
        assert_eq!(d.total(), u64::from(u32::MAX) + 3);
    }

    /// Values keep their order and size across the switches from 2-byte to 4-byte to
    /// 8-byte samples, and from 2 bytes straight to 8.
    #[test]
    fn interval_series_widens_without_losing_a_sample() {
        let big = u64::from(u32::MAX);
        let mut s = IntervalSeries::with_capacity(4);
        s.push(7);
        s.push(65_535);
        assert!(matches!(s, IntervalSeries::Short(_)));
        s.push(65_536);
        assert!(matches!(s, IntervalSeries::Narrow(_)));
        s.push(big);
        assert!(matches!(s, IntervalSeries::Narrow(_)));
        s.push(big + 1);
        assert!(matches!(s, IntervalSeries::Wide(_)));
        s.push(3);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [7, 65_535, 65_536, big, big + 1, 3]
        );

        let mut s = IntervalSeries::default();
        s.push(1);
        s.push(big + 1);
        assert!(matches!(s, IntervalSeries::Wide(_)));
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, big + 1]);
    }
}
