//! The bounds a scenario's times keep, shared by the scenario's checks (`config`) and the
//! disciplines' tables (`discipline`).

/// The longest run, simulated seconds.
pub const MAX_DURATION_S: f64 = 1e6;
/// The shortest time constant, interval, timer or mean ON/OFF period of any table, ms
/// (1 us; time is kept in whole ns), and the shortest run (`duration_s`), in ms.
pub const MIN_TIME_MS: f64 = 1e-3;

/// Whether `v` lies in `lo..=hi` (false for NaN).
pub fn within(v: f64, lo: f64, hi: f64) -> bool {
    v >= lo && v <= hi
}
