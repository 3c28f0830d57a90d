//! Group-commit throughput under `sync = always`: commits per second with 1 committer and with
//! many concurrent committers, each commit a small transaction that must be fsynced before it
//! returns. Run through `bench/group_commit.sh`.
//!
//! Usage: group_commit [--dir DIR] [--seconds N] [--committers 1,64] [--rounds N]
//!                     [--sync always|everysec|none]  (none shows the commit path's CPU ceiling)
//!
//! Each round runs every committer count, then the disk floor, so all see the same disk. It
//! also measures the disk's floor for one committer: a loop of 150-byte write(2) + fdatasync
//! into a sparse, preallocated file in the same directory (the LSM journal's pattern), so the
//! report shows how much of a single commit is the disk and how much is our code.

use orcinus_storage::{Engine, StorageConfig, SyncPolicy};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Args {
    dir: std::path::PathBuf,
    seconds: u64,
    committers: Vec<usize>,
    rounds: usize,
    sync: SyncPolicy,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: std::env::temp_dir(),
        seconds: 5,
        committers: vec![1, 64],
        rounds: 3,
        sync: SyncPolicy::Always,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => args.dir = value.into(),
            "--seconds" => args.seconds = value.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--sync" => {
                args.sync = match value.as_str() {
                    "always" => SyncPolicy::Always,
                    "everysec" => SyncPolicy::Everysec,
                    "none" => SyncPolicy::None,
                    other => return Err(format!("--sync: unknown policy {other}")),
                }
            }
            "--rounds" => args.rounds = value.parse().map_err(|e| format!("--rounds: {e}"))?,
            "--committers" => {
                args.committers = value
                    .split(',')
                    .map(|s| s.parse().map_err(|e| format!("--committers: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

async fn run(engine: &Engine, committers: usize, seconds: u64) -> (f64, u64) {
    let ks = engine
        .keyspace("bench")
        .unwrap_or_else(|e| fail(&e.to_string()));
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let syncs_before = engine.stats().syncs;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..committers {
        let (engine, ks, stop, commits) =
            (engine.clone(), ks.clone(), stop.clone(), commits.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut txn = engine.begin();
                let key = [(c as u64).to_be_bytes(), n.to_be_bytes()].concat();
                txn.put(&ks, &key, vec![7u8; 100])
                    .await
                    .unwrap_or_else(|e| fail(&e.to_string()));
                txn.commit().await.unwrap_or_else(|e| fail(&e.to_string()));
                commits.fetch_add(1, Ordering::Relaxed);
                n += 1;
                // Without a sync to wait for (sync = none) a commit never yields; yield so the
                // timer that ends the round still runs.
                tokio::task::yield_now().await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total = commits.load(Ordering::Relaxed);
    (total as f64 / elapsed, engine.stats().syncs - syncs_before)
}

/// Raw write + fdatasync loop, one writer: appends per second.
fn disk_floor(dir: &std::path::Path, seconds: u64) -> std::io::Result<f64> {
    let path = dir.join("floor.jnl");
    let mut file = std::fs::File::create_new(&path)?;
    file.set_len(64 * 1024 * 1024)?;
    file.sync_all()?;
    let record = [7u8; 150];
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) {
        file.write_all(&record)?;
        file.sync_data()?;
        n += 1;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    std::fs::remove_file(&path)?;
    Ok(rate)
}

fn fail(msg: &str) -> ! {
    eprintln!("group_commit: {msg}");
    std::process::exit(1)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| fail(&e));
    let dir = tempfile::Builder::new()
        .prefix("orcinus-gc-bench")
        .tempdir_in(&args.dir)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let config = StorageConfig {
        path: dir.path().join("db"),
        sync: args.sync,
        ..StorageConfig::default()
    };
    let engine = Engine::open(config).unwrap_or_else(|e| fail(&e.to_string()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&e.to_string()));
    // Rounds interleave the committer counts and the disk floor, so that all of them see the
    // same disk (on a shared machine its fdatasync latency drifts by 10x within minutes), and
    // the ratio is taken within each round.
    let k = args.committers.len();
    let mut rates = vec![Vec::new(); k];
    let mut per_sync = vec![Vec::new(); k];
    let mut ratios = Vec::new();
    let mut floors = Vec::new();
    for _ in 0..args.rounds {
        for (i, &n) in args.committers.iter().enumerate() {
            let (rate, syncs) = rt.block_on(run(&engine, n, args.seconds));
            if let (Some(r), Some(p)) = (rates.get_mut(i), per_sync.get_mut(i)) {
                r.push(rate);
                p.push(rate * args.seconds as f64 / syncs.max(1) as f64);
            }
        }
        if let (Some(first), Some(last)) = (rates.first(), rates.last())
            && let (Some(base), Some(top)) = (first.last(), last.last())
        {
            ratios.push(top / base.max(1.0));
        }
        floors.push(disk_floor(dir.path(), args.seconds).unwrap_or_else(|e| fail(&e.to_string())));
    }
    println!(
        "| committers | commits/s (median of {}) | commits per fdatasync |",
        args.rounds
    );
    println!("|---:|---:|---:|");
    for ((n, r), p) in args.committers.iter().zip(rates).zip(per_sync) {
        println!("| {n} | {:.0} | {:.1} |", median(r), median(p));
    }
    if let (Some(n1), Some(nk)) = (args.committers.first(), args.committers.last()) {
        println!(
            "\nratio {nk} vs {n1} committers: {:.1}x (median of the per-round ratios; target >= 20x)",
            median(ratios)
        );
    }
    let stats = engine.stats();
    println!(
        "syncs through the LSM's journal lock: {} of {}",
        stats.locked_syncs, stats.syncs
    );
    println!(
        "disk floor, 1 writer (150 B write + fdatasync loop, {} s per round): {:.0}/s (median)",
        args.seconds,
        median(floors)
    );
    let _ = engine.shutdown();
}
