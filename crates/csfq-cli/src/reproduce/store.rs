//! Finished runs of `reproduce --all`, kept in `OUT/.runs/` until the report is published,
//! so that a run interrupted halfway (Ctrl-C, a reboot, a full disk) resumes where it
//! stopped: the next `reproduce --all --out OUT` takes every run it finds there instead of
//! simulating it again, and removes the directory once its report is out.
//!
//! A run is kept under its key (its whole scenario, discipline, sweep value and label:
//! `csfq_papers::RunStore`) and this program's identity (a hash of its executable), so a
//! rebuilt `csfq` never takes a run an older one made. Files are CBOR, written to a
//! temporary name and renamed, so a file is whole or absent; one that cannot be read is
//! simulated again. Each file begins with a checksum of its bytes, this build's identity
//! and its key: a file damaged or edited by hand (a throughput changed) does not verify,
//! and is removed and simulated again, not taken. (A checksum, not a signature: it stops
//! damage and edits, not someone who rebuilds it with this code.) The directory holds what
//! the interrupted runs made, no more.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use csfq_papers::{RunResult, RunStore};

/// The directory's name under `--out`.
pub const RUNS_DIR: &str = ".runs";

/// Finished runs in a directory.
pub struct FileStore {
    dir: PathBuf,
    /// This program's identity.
    build: u64,
    /// Runs taken from the directory that an earlier invocation left there.
    pub reused: AtomicUsize,
    /// Runs taken that this invocation itself kept (experiments that share a run).
    pub shared: AtomicUsize,
    /// The keys of the runs an earlier invocation left, as the store opened.
    left: std::collections::HashSet<u64>,
    /// Runs simulated (and kept).
    pub made: AtomicUsize,
}

/// A hash of this program's executable: runs made by another build are not taken.
fn build_identity() -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match std::env::current_exe().and_then(std::fs::read) {
        Ok(bytes) => bytes.hash(&mut h),
        // Unknown: a value no build has, so nothing is taken.
        Err(_) => std::process::id().hash(&mut h),
    }
    env!("CARGO_PKG_VERSION").hash(&mut h);
    h.finish()
}

impl FileStore {
    /// The store under `out`; runs another build left there are removed.
    pub fn open(out: &Path) -> std::io::Result<Self> {
        let dir = out.join(RUNS_DIR);
        // Only a directory of its own: a symbolic link (or a file) in its place would have
        // the clean-up below, and the removal once the report is out, delete what it
        // points to.
        if let Ok(m) = std::fs::symlink_metadata(&dir) {
            if !m.is_dir() {
                return Err(std::io::Error::other(format!(
                    "{} is not a directory csfq made (a symbolic link or a file): remove it",
                    dir.display()
                )));
            }
        }
        std::fs::create_dir_all(&dir)?;
        let mut store = FileStore {
            dir,
            build: build_identity(),
            reused: AtomicUsize::new(0),
            shared: AtomicUsize::new(0),
            made: AtomicUsize::new(0),
            left: std::collections::HashSet::new(),
        };
        // Runs of another build, and files an interrupted write left half done.
        let mine = format!("{:016x}-", store.build);
        // Anything but a regular file (a FIFO, a device, a link) is not a run csfq wrote:
        // opened, a FIFO would block the run for ever.
        for e in std::fs::read_dir(&store.dir)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let regular = e.file_type().is_ok_and(|t| t.is_file());
            if !regular || !name.starts_with(&mine) || !name.ends_with(".cbor") {
                let _ = std::fs::remove_file(e.path());
            } else if let Ok(key) = u64::from_str_radix(&name[mine.len()..name.len() - 5], 16) {
                store.left.insert(key);
            }
        }
        Ok(store)
    }

    /// Runs kept now.
    pub fn kept(&self) -> usize {
        std::fs::read_dir(&self.dir).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".cbor"))
                .count()
        })
    }

    fn path(&self, key: u64) -> PathBuf {
        self.dir
            .join(format!("{:016x}-{key:016x}.cbor", self.build))
    }

    /// The checksum a kept run's file begins with: of its CBOR bytes, this build and its
    /// key.
    fn checksum(&self, key: u64, bytes: &[u8]) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.build.hash(&mut h);
        key.hash(&mut h);
        bytes.hash(&mut h);
        h.finish()
    }

    /// Removes the directory and every run in it (the report is out).
    pub fn remove(self) -> std::io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }
}

impl RunStore for FileStore {
    fn get(&self, key: u64) -> Option<RunResult> {
        let path = self.path(key);
        // A regular file only (see `open`): what else appears meanwhile is not taken.
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        let verified =
            bytes.len() >= 8 && bytes[..8] == self.checksum(key, &bytes[8..]).to_le_bytes()[..];
        match verified.then(|| ciborium::from_reader::<RunResult, _>(&bytes[8..])) {
            Some(Ok(run)) => {
                // Left by an earlier invocation, or kept by this one for another
                // experiment with the same run: only the first is "taken again".
                let count = if self.left.contains(&key) {
                    &self.reused
                } else {
                    &self.shared
                };
                count.fetch_add(1, Ordering::Relaxed);
                Some(run)
            }
            _ => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    fn put(&self, key: u64, run: &RunResult) {
        self.made.fetch_add(1, Ordering::Relaxed);
        // Best effort: a run that cannot be kept (a full disk) is only not kept.
        let path = self.path(key);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut bytes = Vec::new();
        if ciborium::into_writer(run, &mut bytes).is_err() {
            return;
        }
        let mut file = self.checksum(key, &bytes).to_le_bytes().to_vec();
        file.extend_from_slice(&bytes);
        let written = std::fs::write(&tmp, &file);
        if written.is_err() || std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO named like a kept run is removed when the store opens, and one made after is
    /// not opened (either used to hang `reproduce --all`); a `.runs` that is a symbolic
    /// link is refused, and what it points to is left as it was.
    #[test]
    fn only_regular_files_are_runs_and_runs_is_no_link() {
        let out = std::env::temp_dir().join(format!("csfq-store-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join(RUNS_DIR)).unwrap();
        let mkfifo = |p: &Path| {
            std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .is_ok_and(|s| s.success())
        };
        let build = build_identity();
        let early = out
            .join(RUNS_DIR)
            .join(format!("{build:016x}-{:016x}.cbor", 1));
        if !mkfifo(&early) {
            eprintln!("SKIPPED only_regular_files_are_runs_and_runs_is_no_link: no mkfifo");
            return;
        }
        let store = FileStore::open(&out).unwrap();
        assert!(!early.exists(), "the FIFO is removed");
        assert!(mkfifo(&store.path(2)));
        assert!(store.get(2).is_none(), "a FIFO is not opened");
        drop(store);
        // A symbolic link in the place of .runs.
        let elsewhere = out.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep.txt"), "mine").unwrap();
        std::fs::remove_dir_all(out.join(RUNS_DIR)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join(RUNS_DIR)).unwrap();
        let err = FileStore::open(&out).err().expect("a link is refused");
        assert!(
            err.to_string().contains("not a directory csfq made"),
            "{err}"
        );
        assert!(elsewhere.join("keep.txt").exists());
        let _ = std::fs::remove_dir_all(&out);
    }

    /// A run written and read back is the same run (the links' sojourn histograms, which
    /// no analysis reads, aside): the runs at one seed of experiments with every kind of
    /// flow (UDP, TCP, ON-OFF, short transfers, layered multicast), overlay loops and MAY.
    #[test]
    fn a_kept_run_reads_back_the_same() {
        let dir = std::env::temp_dir().join(format!("csfq-store-{}", std::process::id()));
        let store = FileStore::open(&dir).unwrap();
        let es: Vec<_> = [
            "csfq-fig3b",
            "csfq-table1",
            "csfq-table2",
            "csfq-fig7",
            "overlay-fig8",
            "may-fig7",
        ]
        .iter()
        .map(|id| csfq_papers::find(id).unwrap())
        .collect();
        let runs: Vec<RunResult> =
            csfq_papers::run_experiments(&es, &[1], &csfq_papers::Progress::none())
                .unwrap()
                .into_iter()
                .flatten()
                .collect();
        assert!(runs.len() >= 20);
        let kinds: std::collections::HashSet<&str> = runs
            .iter()
            .flat_map(|r| r.report.flows.iter().map(|f| f.kind))
            .collect();
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        assert!(runs.iter().any(|r| !r.report.loops.is_empty()));
        assert!(runs
            .iter()
            .any(|r| r.report.links.iter().any(|l| l.may.is_some())));
        for (k, r) in runs.iter().enumerate() {
            store.put(k as u64, r);
            let mut back = store.get(k as u64).expect("kept");
            for (a, b) in back.report.flows.iter_mut().zip(&r.report.flows) {
                a.queueing_histogram = b.queueing_histogram.clone();
            }
            assert_eq!(&back, r);
        }
        // Kept by this same store: shared, not taken from an earlier invocation.
        assert_eq!(store.shared.load(Ordering::Relaxed), runs.len());
        assert_eq!(store.reused.load(Ordering::Relaxed), 0);
        // A second invocation over the same directory takes them as left by the first.
        let again = FileStore::open(&dir).unwrap();
        assert!(again.get(1).is_some());
        assert_eq!(again.reused.load(Ordering::Relaxed), 1);
        assert_eq!(again.shared.load(Ordering::Relaxed), 0);
        // A run edited by hand (one byte of its CBOR changed, as a throughput edited
        // would) does not verify: it is removed, not taken.
        let mut bytes = std::fs::read(store.path(1)).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(store.path(1), &bytes).unwrap();
        assert!(again.get(1).is_none());
        assert!(!store.path(1).exists());
        // A damaged file is not a run: it is dropped and the run simulated again.
        std::fs::write(store.path(0), b"not cbor").unwrap();
        assert!(store.get(0).is_none());
        assert!(!store.path(0).exists());
        store.remove().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Kept runs damaged or edited at random: bytes flipped or set, the file cut short or
    /// grown, its checksum replaced, another run's file put in its place, an empty file.
    /// Each is either taken as the very run that was kept (only where the edit changed
    /// nothing) or not taken and removed, to be simulated again; never a panic, never a
    /// different run. Cases: `CSFQ_FUZZ_CASES` (default 2000).
    #[test]
    fn kept_runs_edited_at_random_are_taken_whole_or_not_at_all() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestCaseError, TestRunner};

        let cases = std::env::var("CSFQ_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2000);
        let dir = std::env::temp_dir().join(format!("csfq-store-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = FileStore::open(&dir).unwrap();
        let es = [csfq_papers::find("csfq-fig3a").unwrap()];
        let runs: Vec<RunResult> =
            csfq_papers::run_experiments(&es, &[1], &csfq_papers::Progress::none())
                .unwrap()
                .into_iter()
                .flatten()
                .collect();
        assert!(runs.len() >= 2);
        for (k, r) in runs.iter().enumerate() {
            store.put(k as u64, r);
        }
        let files: Vec<Vec<u8>> = (0..runs.len())
            .map(|k| std::fs::read(store.path(k as u64)).unwrap())
            .collect();
        let same = |a: &RunResult, b: &RunResult| {
            let mut a = a.clone();
            for (x, y) in a.report.flows.iter_mut().zip(&b.report.flows) {
                x.queueing_histogram = y.queueing_histogram.clone();
            }
            &a == b
        };

        #[derive(Debug, Clone)]
        enum Edit {
            Flip(usize, u8),
            Set(usize, u8),
            Cut(usize),
            Grow(Vec<u8>),
            Checksum(u64),
            Another(usize),
            Empty,
        }
        let edit = prop_oneof![
            4 => (any::<usize>(), 1..=255u8).prop_map(|(i, b)| Edit::Flip(i, b)),
            2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
            2 => any::<usize>().prop_map(Edit::Cut),
            1 => proptest::collection::vec(any::<u8>(), 1..64).prop_map(Edit::Grow),
            1 => any::<u64>().prop_map(Edit::Checksum),
            1 => any::<usize>().prop_map(Edit::Another),
            1 => Just(Edit::Empty),
        ];
        let strategy = (0..runs.len(), proptest::collection::vec(edit, 1..4));
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |(k, edits)| {
            let mut bytes = files[k].clone();
            for e in &edits {
                let n = bytes.len().max(1);
                match e {
                    Edit::Flip(i, b) if !bytes.is_empty() => bytes[i % n] ^= b,
                    Edit::Set(i, b) if !bytes.is_empty() => bytes[i % n] = *b,
                    Edit::Cut(i) => bytes.truncate(i % (bytes.len() + 1)),
                    Edit::Grow(more) => bytes.extend_from_slice(more),
                    Edit::Checksum(c) if bytes.len() >= 8 => {
                        bytes[..8].copy_from_slice(&c.to_le_bytes())
                    }
                    Edit::Another(j) => bytes = files[j % files.len()].clone(),
                    Edit::Empty => bytes.clear(),
                    _ => {}
                }
            }
            let path = store.path(k as u64);
            std::fs::write(&path, &bytes).unwrap();
            match store.get(k as u64) {
                Some(run) => {
                    prop_assert!(bytes == files[k], "an edited file was taken: {:?}", edits);
                    prop_assert!(same(&run, &runs[k]));
                }
                None => {
                    prop_assert!(bytes != files[k], "the kept run itself was refused");
                    prop_assert!(!path.exists(), "a refused file is removed");
                }
            }
            Ok::<(), TestCaseError>(())
        });
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
