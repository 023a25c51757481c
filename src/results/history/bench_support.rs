//! For `benches/history.rs` only (cargo feature `bench-support`, off in every build that ships):
//! fills a history database with a lab's years of nightly runs through the store's own write
//! path ([`crate::results::history::store::Store::add_all`]: the statements `history add` runs, many runs a
//! transaction), so the bench times the schema, indexes and queries a real lab has.

use crate::formats::history_json::{BuildInputs, HistoryResult, HistoryRun, RepoInput};
use crate::results::history::location::Location;
use crate::results::history::store::Store;

/// The history to build.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Runs in all (spread over the machines, one a night each).
    pub runs: usize,
    /// Boards measured nightly.
    pub machines: usize,
    /// Scenarios of each run.
    pub scenarios: usize,
    /// Measured CPUs of each scenario (each with a cyclictest and an oslat row).
    pub cpus: usize,
    /// Runs a transaction.
    pub chunk: usize,
    /// The newest night (Unix seconds).
    pub end_unix: i64,
}

/// What the bench asks about afterwards.
#[derive(Debug, Clone, Default)]
pub struct Filled {
    pub runs: usize,
    pub results: usize,
    /// A machine's name (`board-00`…).
    pub machine: String,
    /// Two runs of that machine a year apart (full digests).
    pub run_a: String,
    pub run_b: String,
    /// Two bundles (full digests) and two kernel releases.
    pub bundle_a: String,
    pub bundle_b: String,
    pub release_a: String,
    pub release_b: String,
    /// The first night (Unix seconds).
    pub start_unix: i64,
}

const SCENARIOS: [&str; 8] =
    ["idle", "cpu", "memory", "io", "network", "hackbench", "mixed", "irq"];
const DAY: i64 = 86_400;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The bundle a machine ran on `night`: a new bundle every 30 nights (all boards share it).
fn bundle(night: usize) -> String {
    crate::files::digest::sha256_hex(format!("bundle {}", night / 30).as_bytes())
}

/// The kernel release of `night`: a new stable-rt every 60 nights.
fn release(night: usize) -> String {
    format!("6.6.{}-rt{}", 10 + night / 60, 20 + night / 120)
}

fn run_of(spec: &Spec, index: usize, rng: &mut Rng) -> HistoryRun {
    let machines = spec.machines.max(1);
    let (night, board) = (index / machines, index % machines);
    let nights = spec.runs.div_ceil(machines);
    let started =
        spec.end_unix - (nights.saturating_sub(1) - night) as i64 * DAY + board as i64 * 60;
    let machine = format!("board-{board:02}");
    // One run in 200 cannot be trusted; one in 100 has a spike. Each CPU's maximum also varies
    // by up to ±50 % from night to night, so at `--regression-pct 20` almost every run has one
    // CPU over its baseline: the trend page's worst case (nearly every run a regression).
    let invalid = rng.below(200) == 0;
    let spike = rng.below(100) == 0;
    let mut results = Vec::with_capacity(spec.scenarios * spec.cpus * 2);
    for scenario in SCENARIOS.iter().cycle().take(spec.scenarios) {
        for test in ["cyclictest", "oslat"] {
            for cpu in 0..spec.cpus {
                let base = 4.0 + rng.below(8) as f64;
                let max = if spike && cpu == 0 {
                    150.0 + rng.below(400) as f64
                } else {
                    base + 10.0 + rng.below(25) as f64
                };
                results.push(HistoryResult {
                    scenario: scenario.to_string(),
                    test: test.to_string(),
                    cpu: Some(cpu as u32),
                    samples: Some(3_600_000),
                    min_us: Some(1.0 + rng.below(3) as f64),
                    avg_us: Some(base),
                    p99_us: Some(base + 4.0),
                    p999_us: Some(base + 8.0),
                    max_us: Some(max),
                    overflows: Some(0),
                    verdict: crate::formats::judge::max_against(Some(max), 100.0).verdict().into(),
                    valid: !invalid,
                    reasons: if invalid {
                        vec!["a CPU was throttled".to_string()]
                    } else {
                        Vec::new()
                    },
                });
            }
        }
    }
    let failed = results.iter().any(|r| r.verdict == "FAIL");
    let verdict = crate::formats::judge::Findings { invalid, failed, regressed: false }.verdict();
    let digest = crate::files::digest::sha256_hex(format!("bench run {index}").as_bytes());
    HistoryRun {
        source: format!("/lab/results/{machine}/{night:05}"),
        kind: "result-folder".to_string(),
        added_unix: started + 3 * 3600,
        machine: Some(machine.clone()),
        target: Some(format!("ssh://root@{machine}")),
        kernel_release: Some(release(night)),
        kernel_version: Some("#1 SMP PREEMPT_RT".to_string()),
        kernel_config_digest: Some(crate::files::digest::sha256_hex(release(night).as_bytes())),
        lock_digest: Some(crate::files::digest::sha256_hex(
            format!("lock {}", night / 30).as_bytes(),
        )),
        bundle_digest: Some(bundle(night)),
        tuning_fingerprint: Some(crate::files::digest::sha256_hex(b"tuning")),
        started_unix: Some(started),
        duration_s: Some(3600.0 * spec.scenarios as f64),
        threshold_us: 100.0,
        verdict,
        valid: !invalid,
        reasons: if invalid { vec!["idle: a CPU was throttled".to_string()] } else { Vec::new() },
        inputs: BuildInputs {
            boot_args: Some(format!("isolcpus=1-{0} nohz_full=1-{0} rcu_nocbs=1-{0}", spec.cpus)),
            repos: vec![RepoInput {
                name: "meta-qcom".to_string(),
                commit: crate::files::digest::sha256_hex(
                    format!("commit {}", night / 30).as_bytes(),
                )[..40]
                    .to_string(),
            }],
            tuning: vec![format!("rt_cpus 1-{}", spec.cpus), "policy0 performance".to_string()],
        },
        results,
        digest,
    }
}

/// Fills the database at `url` (`sqlite:PATH` or `postgres://…`) with `spec`'s history;
/// `progress` is called with the runs written so far after each transaction.
pub fn fill(url: &str, spec: &Spec, progress: &mut dyn FnMut(usize)) -> Result<Filled, String> {
    let location = Location::parse(url).map_err(|e| e.to_string())?;
    let mut store = Store::open(&location, super::DEFAULT_WAIT).map_err(|e| e.to_string())?;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut written = 0;
    let mut results = 0;
    while written < spec.runs {
        let end = (written + spec.chunk.max(1)).min(spec.runs);
        let runs: Vec<HistoryRun> = (written..end).map(|i| run_of(spec, i, &mut rng)).collect();
        results += runs.iter().map(|r| r.results.len()).sum::<usize>();
        store.add_all(&runs).map_err(|e| e.to_string())?;
        written = end;
        progress(written);
    }
    Ok(Filled { runs: written, results, ..describe(spec) })
}

/// What [`fill`] wrote for `spec` (the same names and digests), for a database it filled
/// before.
pub fn describe(spec: &Spec) -> Filled {
    let machines = spec.machines.max(1);
    let nights = spec.runs.div_ceil(machines);
    let digest = |night: usize| {
        crate::files::digest::sha256_hex(format!("bench run {}", night * machines).as_bytes())
    };
    let (old, new) = (nights.saturating_sub(366), nights.saturating_sub(1));
    Filled {
        runs: spec.runs,
        results: spec.runs * spec.scenarios * spec.cpus * 2,
        machine: "board-00".to_string(),
        run_a: digest(old),
        run_b: digest(new),
        bundle_a: bundle(old),
        bundle_b: bundle(new),
        release_a: release(old),
        release_b: release(new),
        start_unix: spec.end_unix - (nights as i64 - 1) * DAY,
    }
}
