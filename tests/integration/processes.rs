//! The write path across real processes (SPEC §8): concurrent writers and readers, and SIGKILL
//! at random moments. Every acknowledged change must survive, readers must never fail, and the
//! index must always open and pass `check`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use reliora::internals::index::check::check;
use reliora::Index;

use crate::support::Rng;

fn reliora() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reliora"));
    command.env_remove("RELIORA_INDEX");
    command
}

fn spawn_record(index: &Path, id: &str, title: &str) -> Child {
    let mut command = reliora();
    command
        .args(["--format", "json", "--index"])
        .arg(index)
        .arg("record")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let body = serde_json::json!({"id": id, "title": title, "tags": ["load"]}).to_string();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    child
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

#[test]
fn eight_writers_and_two_readers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    const WRITERS: usize = 8;
    const EACH: usize = 200;
    let done = std::sync::atomic::AtomicBool::new(false);
    let reader_runs = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let index = index.clone();
                scope.spawn(move || {
                    for i in 0..EACH {
                        let id = format!("w{w}-{i:03}");
                        let output = spawn_record(&index, &id, &format!("writer {w} note {i}"))
                            .wait_with_output()
                            .unwrap();
                        assert!(output.status.success(), "{id}: {output:?}");
                    }
                })
            })
            .collect();
        for _ in 0..2 {
            scope.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if !index.join("MANIFEST").exists() {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    let output = run(reliora()
                        .args(["--format", "json", "--index"])
                        .arg(&index)
                        .args(["search", "writer note", "--limit", "5"]));
                    assert!(output.status.success(), "reader failed: {output:?}");
                    let response: serde_json::Value =
                        serde_json::from_slice(&output.stdout).unwrap();
                    assert_eq!(response["backend"], "index", "{response}");
                    reader_runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert!(reader_runs.into_inner() > 0);
    let opened = Index::open(&index).unwrap();
    assert_eq!(opened.stats().unwrap().records, (WRITERS * EACH) as u64);
    for w in 0..WRITERS {
        for i in 0..EACH {
            let id = format!("w{w}-{i:03}");
            assert_eq!(opened.get(&id).unwrap().record.id, id);
        }
    }
    assert!(check(&index).sound);
}

/// Kills `child` after `delay`; returns whether it had already finished successfully (its
/// change was acknowledged).
fn kill_after(mut child: Child, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let status = child.wait().unwrap();
            return status.success();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn kill_loop(kills: usize, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let index: PathBuf = dir.path().join("idx");
    let mut rng = Rng(seed);
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let mut attempted: BTreeSet<String> = BTreeSet::new();
    // id → (acknowledged feedback, attempted feedback)
    let mut feedback: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut killed = 0;
    let mut n = 0;
    while killed < kills {
        n += 1;
        let roll = rng.below(10);
        let delay = Duration::from_micros(rng.below(12_000));
        let (child, change) = if roll < 6 || acknowledged.is_empty() {
            let id = format!("k{n:05}");
            attempted.insert(id.clone());
            (
                spawn_record(&index, &id, &format!("crash note {n}")),
                Some(id),
            )
        } else if roll < 9 {
            let target = acknowledged
                .iter()
                .nth(rng.below(acknowledged.len() as u64) as usize)
                .unwrap()
                .clone();
            feedback.entry(target.clone()).or_default().1 += 1;
            let child = reliora()
                .args(["--format", "json", "--index"])
                .arg(&index)
                .args(["feedback", &target, "--outcome", "success"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            (child, Some(format!("feedback:{target}")))
        } else {
            let child = reliora()
                .args(["--format", "json", "--index"])
                .arg(&index)
                .arg("compact")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            (child, None)
        };
        let finished = kill_after(child, delay);
        if !finished {
            killed += 1;
        }
        match change {
            Some(c) if finished => match c.strip_prefix("feedback:") {
                Some(target) => feedback.get_mut(target).unwrap().0 += 1,
                None => {
                    acknowledged.insert(c);
                }
            },
            _ => {}
        }
        if !index.join("MANIFEST").exists() {
            continue;
        }
        // After every change, killed or not: the index opens, check passes, and every
        // acknowledged change is there.
        let report = check(&index);
        assert!(report.sound, "after step {n}: {report:?}");
        let opened = Index::open(&index).unwrap();
        for id in &acknowledged {
            let stored = opened
                .get(id)
                .unwrap_or_else(|e| panic!("acknowledged {id} lost after step {n}: {e}"));
            if let Some((acked, tried)) = feedback.get(id) {
                let have = stored.record.feedback.success;
                assert!(
                    *acked <= have && have <= *tried,
                    "{id}: {have} successes, acknowledged {acked}, attempted {tried}"
                );
            }
        }
        let records = opened.stats().unwrap().records as usize;
        assert!(records >= acknowledged.len() && records <= attempted.len());
    }
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_change() {
    kill_loop(200, 0x5eed_0001);
}

#[test]
#[ignore = "long: thousands of kills; run with `cargo test --release -- --ignored`"]
fn sigkill_thousands_of_times() {
    kill_loop(3000, 0x5eed_0002);
}
