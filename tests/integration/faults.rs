//! Faults a careful user can cause with ordinary tools — a flipped bit, a deleted manifest,
//! bytes appended to the log, planted links, foreign files, a closed pipe, a full device —
//! driven through the real binary. Each test is named after what it must never allow, and
//! each asserts the data is still there, not merely that the command did not crash.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{self, arg, reliora, snapshot, tempdir, Run, NOW};

/// 40 built records, then 5 recorded through the log: returns the directory and the offset of
/// each log entry (from the `record` answers' locators).
fn index_with_log(dir: &Path) -> Vec<u64> {
    let input = dir.with_extension("jsonl");
    let lines: Vec<String> = (0..40)
        .map(|i| {
            json!({"id": format!("built-{i}"), "title": format!("built record number {i} about widgets"),
                   "problems": [format!("widget {i} misbehaves")], "tags": ["widgets"]})
            .to_string()
        })
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    reliora(dir, &["build", "--input", arg(&input)], None).assert_ok("build");
    (0..5)
        .map(|i| {
            let record = json!({"id": format!("recorded-{i}"),
                                "title": format!("recorded gadget lesson {i}"),
                                "problems": ["gadgets overheat"], "tags": ["gadgets"]});
            let answer = reliora(dir, &["record", "-"], Some(record.to_string().as_bytes())).ok();
            let locator = answer["locator"].as_str().unwrap();
            locator.rsplit_once('@').unwrap().1.parse().unwrap()
        })
        .collect()
}

fn log_path(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .expect("a record log")
}

/// The recorded records (`recorded-N`) a search finds.
fn recorded_ids(dir: &Path) -> (Vec<String>, Value) {
    let response = reliora(
        dir,
        &["search", "gadget lesson", "--limit", "50", "--now", NOW],
        None,
    )
    .ok();
    let mut ids: Vec<String> = response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .filter(|id| id.starts_with("recorded-"))
        .collect();
    ids.sort();
    (ids, response)
}

fn assert_refused_as_damaged(run: &Run, what: &str) {
    assert_eq!(run.status, 1, "{what}: {run:?}");
    let error = run.json();
    assert_eq!(error["error"], "index_damaged", "{what}: {error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("reliora salvage"), "{what}: {message}");
}

const WRITES: [&[&str]; 4] = [
    &["record", "-"],
    &["feedback", "built-1", "--outcome", "success"],
    &["delete", "built-2"],
    &["compact"],
];
const NEW_RECORD: &str = r#"{"id": "late", "title": "a late lesson", "tags": ["x"]}"#;

fn write(dir: &Path, args: &[&str]) -> Run {
    let stdin = (args[0] == "record").then_some(NEW_RECORD.as_bytes());
    reliora(dir, args, stdin)
}

#[test]
fn a_flipped_bit_in_a_log_entry_header_loses_no_acknowledged_record() {
    let base = tempdir();
    let template = base.path().join("template");
    let offsets = index_with_log(&template);
    for (entry, &offset) in offsets.iter().enumerate() {
        for byte in [0usize, 1, 5, 9, 17] {
            let dir = base.path().join(format!("e{entry}-b{byte}"));
            support::copy_dir(&template, &dir);
            let log = log_path(&dir);
            let mut bytes = std::fs::read(&log).unwrap();
            bytes[offset as usize + byte] ^= 1 << 3;
            std::fs::write(&log, &bytes).unwrap();
            let what = format!("entry {entry}, header byte {byte}");

            // Search answers from every sound entry, degraded, naming the file and offset.
            let (ids, response) = recorded_ids(&dir);
            let expected: Vec<String> = (0..5)
                .filter(|&i| i != entry)
                .map(|i| format!("recorded-{i}"))
                .collect();
            assert_eq!(ids, expected, "{what}");
            assert_eq!(response["degraded"], true, "{what}");
            let notice = response["notices"][0].as_str().unwrap();
            assert!(
                notice.contains(&format!("offset {offset}")),
                "{what}: {notice}"
            );
            // check reports the damage.
            let check = reliora(&dir, &["check"], None);
            assert_eq!(check.status, 3, "{what}: {check:?}");
            assert!(check.stdout.contains(&format!("offset {offset}")), "{what}");
            // Every write refuses and changes nothing.
            let before = snapshot(&dir);
            for args in WRITES {
                assert_refused_as_damaged(&write(&dir, args), &format!("{what}: {args:?}"));
                assert_eq!(snapshot(&dir), before, "{what}: {args:?} changed files");
            }
            // export still has every sound record.
            let export = reliora(&dir, &["export"], None);
            export.assert_ok(&what);
            assert_eq!(export.stdout.lines().count(), 44, "{what}");
            // salvage rebuilds them into a new generation, after which writes work again.
            let salvaged = reliora(&dir, &["salvage"], None).ok();
            assert_eq!(salvaged["records"], 44, "{what}: {salvaged}");
            assert_eq!(recorded_ids(&dir).0, expected, "{what}");
            let check = reliora(&dir, &["check"], None);
            assert_eq!(check.status, 0, "{what}: {check:?}");
            write(&dir, &["record", "-"]).assert_ok(&what);
        }
    }
}

#[test]
fn garbage_appended_to_the_log_keeps_every_record_readable() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    index_with_log(&dir);
    let log = log_path(&dir);
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"garbage: 21 bytes!!!!");
    std::fs::write(&log, &bytes).unwrap();

    let (ids, response) = recorded_ids(&dir);
    assert_eq!(ids.len(), 5);
    assert_eq!(response["degraded"], true);
    let export = reliora(&dir, &["export"], None);
    export.assert_ok("export");
    assert_eq!(export.stdout.lines().count(), 45);
    assert_eq!(reliora(&dir, &["check"], None).status, 3);
    let before = snapshot(&dir);
    for args in WRITES {
        assert_refused_as_damaged(&write(&dir, args), &format!("{args:?}"));
    }
    assert_eq!(snapshot(&dir), before);
    assert_eq!(reliora(&dir, &["salvage"], None).ok()["records"], 45);
    assert_eq!(recorded_ids(&dir).0.len(), 5);
}

#[test]
fn an_append_interrupted_before_it_was_acknowledged_is_ignored_then_cut() {
    for tail in [
        &[0u8; 37][..],
        &[0x2a, 0, 0, 0, 7, 7, 7, 7, 9, 9, 9, 9, 1][..],
    ] {
        let dir = tempdir();
        let dir = dir.path().join("index");
        index_with_log(&dir);
        let log = log_path(&dir);
        let bytes = std::fs::read(&log).unwrap();
        std::fs::write(&log, [&bytes[..], tail].concat()).unwrap();
        let (ids, response) = recorded_ids(&dir);
        assert_eq!(ids.len(), 5);
        assert_eq!(response["degraded"], false);
        let check = reliora(&dir, &["check"], None);
        assert_eq!(check.status, 0, "{check:?}");
        assert!(check.stdout.contains("interrupted"), "{check:?}");
        write(&dir, &["record", "-"]).assert_ok("record after a torn tail");
        assert_eq!(recorded_ids(&dir).0.len(), 5);
        assert_eq!(reliora(&dir, &["check"], None).ok()["notes"], json!([]));
    }
}

#[test]
fn a_log_cut_at_an_entry_boundary_is_damage_not_a_shorter_history() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    let offsets = index_with_log(&dir);
    let log = log_path(&dir);
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..offsets[4] as usize]).unwrap();
    let (ids, response) = recorded_ids(&dir);
    assert_eq!(ids.len(), 4);
    assert_eq!(response["degraded"], true, "{response}");
    assert_eq!(reliora(&dir, &["check"], None).status, 3);
    let before = snapshot(&dir);
    for args in WRITES {
        assert_refused_as_damaged(&write(&dir, args), &format!("{args:?}"));
    }
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_missing_manifest_is_never_replaced_by_an_empty_index() {
    let base = tempdir();
    let dir = base.path().join("index");
    index_with_log(&dir);
    std::fs::remove_file(dir.join("MANIFEST")).unwrap();
    let before = snapshot(&dir);
    for args in WRITES {
        assert_refused_as_damaged(&write(&dir, args), &format!("{args:?}"));
        assert_eq!(snapshot(&dir), before, "{args:?} changed files");
    }
    // Starting the MCP server creates nothing either.
    let mcp = Command::new(env!("CARGO_BIN_EXE_reliora"))
        .args(["--index", arg(&dir), "mcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_ne!(mcp.status.code(), Some(0), "{mcp:?}");
    assert!(String::from_utf8_lossy(&mcp.stderr).contains("reliora salvage"));
    assert_eq!(snapshot(&dir), before, "mcp changed files");
    // Reads refuse with the remedy; check reports it.
    let search = reliora(&dir, &["search", "gadget"], None);
    assert_refused_as_damaged(&search, "search");
    assert_eq!(reliora(&dir, &["check"], None).status, 3);
    // A build refuses too: it is not an empty directory.
    let input = base.path().join("other.jsonl");
    std::fs::write(&input, r#"{"title": "other"}"#).unwrap();
    let build = reliora(&dir, &["build", "--input", arg(&input)], None);
    assert_refused_as_damaged(&build, "build");
    // salvage finds the segments and the log without the manifest.
    let salvaged = reliora(&dir, &["salvage"], None).ok();
    assert_eq!(salvaged["records"], 45, "{salvaged}");
    assert_eq!(salvaged["manifest"], false);
    assert_eq!(recorded_ids(&dir).0.len(), 5);
    write(&dir, &["record", "-"]).assert_ok("record after salvage");
}

#[test]
fn build_never_deletes_files_it_did_not_write() {
    let base = tempdir();
    let input = base.path().join("input.jsonl");
    std::fs::write(&input, r#"{"id": "a", "title": "widgets"}"#).unwrap();
    let foreign = [
        "g000001-notes.txt",
        "g123456.jpg",
        "g000001-s0000.store.bak",
    ];

    // A non-empty directory that is not an index is refused.
    let plain = base.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    for name in foreign {
        std::fs::write(plain.join(name), name).unwrap();
    }
    let build = reliora(&plain, &["build", "--input", arg(&input)], None);
    assert_eq!(build.error_code(), "invalid_option", "{build:?}");
    for name in foreign {
        assert_eq!(std::fs::read_to_string(plain.join(name)).unwrap(), name);
    }

    // Foreign files beside an index survive rebuilds, writes and compactions.
    let dir = base.path().join("index");
    reliora(&dir, &["build", "--input", arg(&input)], None).assert_ok("build");
    for name in foreign {
        std::fs::write(dir.join(name), name).unwrap();
    }
    reliora(&dir, &["build", "--input", arg(&input)], None).assert_ok("rebuild");
    write(&dir, &["record", "-"]).assert_ok("record");
    reliora(&dir, &["compact"], None).assert_ok("compact");
    reliora(&dir, &["build", "--input", arg(&input), "--replace"], None).assert_ok("replace");
    for name in foreign {
        assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), name);
    }
}

#[test]
fn build_over_recorded_writes_refuses_unless_replace() {
    let base = tempdir();
    let dir = base.path().join("index");
    index_with_log(&dir);
    let input = base.path().join("input.jsonl");
    std::fs::write(&input, r#"{"id": "a", "title": "widgets"}"#).unwrap();
    let refused = reliora(&dir, &["build", "--input", arg(&input)], None);
    assert_eq!(refused.error_code(), "invalid_option");
    assert!(refused.stdout.contains("--replace"), "{refused:?}");
    assert_eq!(recorded_ids(&dir).0.len(), 5, "nothing was dropped");
    // After a compaction the recorded records live in a segment: still refused.
    reliora(&dir, &["compact"], None).assert_ok("compact");
    let refused = reliora(&dir, &["build", "--input", arg(&input)], None);
    assert_eq!(refused.error_code(), "invalid_option");
    let replaced = reliora(&dir, &["build", "--input", arg(&input), "--replace"], None).ok();
    assert_eq!(replaced["droppedRecorded"], 5, "{replaced}");
    assert_eq!(replaced["records"], 1);
}

#[cfg(unix)]
#[test]
fn no_write_follows_a_link_planted_in_the_index() {
    use std::os::unix::fs::symlink;
    let base = tempdir();
    let template = base.path().join("template");
    index_with_log(&template);
    let manifest = reliora::internals::format::manifest::Manifest::load(&template).unwrap();
    let next = manifest.generation + 1;
    // Every name a writer creates or opens for writing.
    let names = [
        "MANIFEST.tmp".to_string(),
        "LOCK".to_string(),
        "PENDING".to_string(),
        format!("g{next:06}.log"),
        format!("g{next:06}-s0000.store"),
        format!("g{next:06}-s0000.terms.fst"),
        manifest.log.clone(),
    ];
    for name in &names {
        for dangling in [false, true] {
            let dir = base.path().join(format!("{name}-{dangling}"));
            support::copy_dir(&template, &dir);
            let outside = base.path().join(format!("outside-{name}-{dangling}"));
            if !dangling {
                std::fs::write(&outside, b"precious").unwrap();
            }
            let _ = std::fs::remove_file(dir.join(name));
            symlink(&outside, dir.join(name)).unwrap();
            for args in [&["compact"][..], &["record", "-"], &["search", "gadget"]] {
                let _ = write(&dir, args);
            }
            if dangling {
                assert!(
                    !outside.exists(),
                    "{name}: a file was created outside the index"
                );
            } else {
                assert_eq!(std::fs::read(&outside).unwrap(), b"precious", "{name}");
            }
            let manifest = std::fs::symlink_metadata(dir.join("MANIFEST")).unwrap();
            assert!(
                !manifest.file_type().is_symlink(),
                "{name}: MANIFEST became a link"
            );
        }
    }
    // A MANIFEST that is a link is not read.
    let dir = base.path().join("linked-manifest");
    support::copy_dir(&template, &dir);
    std::fs::rename(dir.join("MANIFEST"), base.path().join("real")).unwrap();
    symlink(base.path().join("real"), dir.join("MANIFEST")).unwrap();
    let search = reliora(&dir, &["search", "gadget"], None);
    assert_eq!(search.status, 1, "{search:?}");
    assert!(search.stdout.contains("link"), "{search:?}");
}

#[cfg(unix)]
#[test]
fn special_files_and_huge_files_are_never_read_without_bound() {
    let base = tempdir();
    let dir = base.path().join("index");
    index_with_log(&dir);
    let deadline = |mut child: std::process::Child, what: &str| {
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{what}: still running after 20 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_reliora"))
            .args(["--format", "json", "--index", arg(&dir)])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    for config in ["/dev/zero", "/dev/stdin"] {
        let status = deadline(spawn(&["search", "gadget", "--config", config]), config);
        assert_eq!(status.code(), Some(2), "--config {config}");
    }
    // reliora.toml as a FIFO, then as a huge file.
    let fifo = dir.join("reliora.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let status = deadline(spawn(&["search", "gadget"]), "reliora.toml FIFO");
    assert_ne!(status.code(), Some(0));
    std::fs::remove_file(&fifo).unwrap();
    let huge = std::fs::File::create(&fifo).unwrap();
    huge.set_len(2 << 20).unwrap();
    let status = deadline(spawn(&["search", "gadget"]), "huge reliora.toml");
    assert_ne!(status.code(), Some(0));
    std::fs::remove_file(&fifo).unwrap();
    // The log replaced by a FIFO.
    let log = log_path(&dir);
    std::fs::remove_file(&log).unwrap();
    assert!(Command::new("mkfifo").arg(&log).status().unwrap().success());
    for args in [&["search", "gadget"][..], &["record", "-"], &["check"]] {
        let status = deadline(spawn(args), "log FIFO");
        assert_ne!(status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn output_errors_never_panic() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    index_with_log(&dir);
    // A reader that stops early: export ends quietly.
    for args in [&["export"][..], &["search", "widget", "--limit", "50"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reliora"))
            .args(["--format", "json", "--index", arg(&dir)])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A full device: exit 1 and a message.
    #[cfg(target_os = "linux")]
    for args in [&["export"][..], &["search", "widget"], &["stats"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_reliora"))
            .args(["--format", "json", "--index", arg(&dir)])
            .args(args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("No space left"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_writer_waiting_for_the_lock_says_so() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    index_with_log(&dir);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("LOCK"))
        .unwrap();
    lock.lock().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reliora"))
        .args([
            "--format",
            "json",
            "--index",
            arg(&dir),
            "delete",
            "built-3",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "the writer waits");
    lock.unlock().unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("waiting for another process"), "{stderr}");
}

#[test]
fn an_interrupted_generation_is_named_by_check_and_removed_by_the_next_write() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    index_with_log(&dir);
    let manifest = reliora::internals::format::manifest::Manifest::load(&dir).unwrap();
    let next = manifest.generation + 1;
    // What a compaction killed before its manifest swap leaves: its journal and some files.
    let partial = [
        format!("g{next:06}-s0000.store"),
        format!("g{next:06}-s0000.terms.fst"),
    ];
    for name in &partial {
        std::fs::write(dir.join(name), b"partial").unwrap();
    }
    std::fs::write(
        dir.join("PENDING"),
        json!({"generation": next, "previous": []}).to_string(),
    )
    .unwrap();
    let check = reliora(&dir, &["check"], None);
    assert_eq!(check.status, 0, "{check:?}");
    for name in &partial {
        assert!(check.stdout.contains(name.as_str()), "{check:?}");
    }
    assert!(check.stdout.contains("PENDING"), "{check:?}");
    write(&dir, &["record", "-"]).assert_ok("record");
    reliora(&dir, &["compact"], None).assert_ok("compact");
    for name in &partial {
        assert!(!dir.join(name).exists(), "{name} was left");
    }
    let check = reliora(&dir, &["check"], None).ok();
    assert_eq!(check["notes"], json!([]), "{check}");
}

#[test]
fn a_first_build_killed_before_its_manifest_is_cleaned_up_not_taken_for_damage() {
    let base = tempdir();
    let input = base.path().join("input.jsonl");
    std::fs::write(&input, r#"{"id": "a", "title": "widgets"}"#).unwrap();
    for next in ["build", "record"] {
        let dir = base.path().join(next);
        std::fs::create_dir(&dir).unwrap();
        // What a first build killed mid-way leaves: its journal and some of its files.
        std::fs::write(dir.join("PENDING"), r#"{"generation": 1, "previous": []}"#).unwrap();
        std::fs::write(dir.join("g000001-s0000.store"), b"partial").unwrap();
        std::fs::write(dir.join("g000001-s0000.terms.fst"), b"partial").unwrap();
        let run = match next {
            "build" => reliora(&dir, &["build", "--input", arg(&input)], None),
            _ => write(&dir, &["record", "-"]),
        };
        run.assert_ok(next);
        let check = reliora(&dir, &["check"], None).ok();
        assert_eq!(check["notes"], json!([]), "{next}: {check}");
        assert!(!dir.join("PENDING").exists(), "{next}");
    }
}

#[test]
fn a_manifest_naming_a_segment_twice_is_damage() {
    let dir = tempdir();
    let dir = dir.path().join("index");
    index_with_log(&dir);
    let mut manifest = reliora::internals::format::manifest::Manifest::load(&dir).unwrap();
    let segment = manifest.segments[0].clone();
    manifest.segments = vec![segment; 201];
    manifest.store(&dir).unwrap();
    let check = reliora(&dir, &["check"], None);
    assert_eq!(check.status, 3, "{check:?}");
    assert!(check.stdout.contains("more than once"), "{check:?}");
}

#[test]
fn explicit_compactions_racing_readers_never_report_damage() {
    let base = tempdir();
    let dir = base.path().join("index");
    index_with_log(&dir);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let searches = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let request = reliora::SearchRequest::new("gadget widget");
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let index = reliora::Index::open(&dir).expect("opens");
                    let response = index.search(&request).expect("searches");
                    assert!(
                        !response.degraded,
                        "a search racing a compaction reported damage: {:?}",
                        response.notices
                    );
                    assert_eq!(response.counts.candidates, 45);
                    searches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
        let writer = reliora::IndexWriter::new(&dir);
        for _ in 0..150 {
            writer.compact().expect("compacts");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert!(searches.into_inner() > 100);
}
