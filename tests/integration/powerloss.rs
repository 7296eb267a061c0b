//! Power loss during `record`, `feedback`, `delete` and `compact` (SPEC §8): once one of the
//! writing commands exits 0 its change is durable — it survives a crash or a power loss the next
//! moment.
//!
//! A SIGKILL alone cannot test that: the page cache outlives the process, so an unsynced write
//! still reaches the disk. Here every command runs with `tests/powerloss/shim.c` preloaded (built
//! with `cc` when the test starts). The shim journals, for the index directory, everything not
//! yet durable — file data until the file is fsync'd, directory entries (creations, renames,
//! unlinks) until the directory is fsync'd — and kills the process at a chosen call. The test
//! then undoes what the journal says a power loss would lose (optionally keeping a random
//! prefix of unsynced appended bytes: a torn write), and checks without the shim that the index
//! passes `check`, holds every acknowledged change (and nothing but whole commands), and takes
//! one more `record` — which itself meets a second power loss at one of its first calls (or
//! not), after which the same holds again.
//!
//! The crash points sweep every tracked call of a fixed sequence of commands, each killed
//! before and after the call. `POWERLOSS_SEED` picks the torn prefixes and the second crash
//! (printed). Without a C compiler the test fails, saying so.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::support::Rng;

const BIN: &str = env!("CARGO_BIN_EXE_reliora");

/// Builds the shim once per test binary; fails the test when there is no C compiler.
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/powerloss/shim.c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("powerloss");
        std::fs::create_dir_all(&out).expect("a directory for the shim");
        let so = out.join("shim.so");
        let tmp = out.join(format!("shim-{}.so", std::process::id()));
        let result = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-std=gnu11", "-o"])
            .arg(&tmp)
            .arg(&source)
            .args(["-ldl", "-lpthread"])
            .output();
        match result {
            Err(e) => panic!(
                "the power-loss test needs a C compiler: running `cc` failed ({e}); \
                 install one (e.g. gcc) — this test does not pass without running"
            ),
            Ok(output) if !output.status.success() => panic!(
                "compiling {} failed:\n{}",
                source.display(),
                String::from_utf8_lossy(&output.stderr)
            ),
            Ok(_) => {
                std::fs::rename(&tmp, &so).expect("the shim in place");
                so
            }
        }
    })
}

fn seed() -> u64 {
    std::env::var("POWERLOSS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2026)
        .max(1)
}

/// Where to kill a command: before or after its `call`th tracked call.
#[derive(Clone, Copy, Debug)]
struct Crash {
    call: usize,
    after: bool,
}

/// The watched index directory and the shim's journal, side by side (hard links between them
/// must work).
struct Scene {
    _root: tempfile::TempDir,
    index: PathBuf,
    journal: PathBuf,
}

impl Scene {
    fn new(base: Option<&Path>) -> Scene {
        let root = tempfile::tempdir().expect("a temporary directory");
        let index = root.path().join("index");
        let journal = root.path().join("journal");
        std::fs::create_dir(&journal).expect("the journal directory");
        match base {
            Some(base) => copy_dir(base, &index),
            None => std::fs::create_dir(&index).expect("the index directory"),
        }
        let index = index.canonicalize().expect("a canonical index path");
        let journal = journal.canonicalize().expect("a canonical journal path");
        Scene {
            _root: root,
            index,
            journal,
        }
    }

    /// Runs `program args` with the shim watching the index, killed at `crash` if given.
    fn run_shimmed(&self, program: &str, args: &[String], crash: Option<Crash>) -> Output {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("LD_PRELOAD", shim())
            .env("POWERLOSS_DIR", &self.index)
            .env("POWERLOSS_JOURNAL", &self.journal)
            .env_remove("POWERLOSS_CRASH_AFTER")
            .env_remove("POWERLOSS_CRASH_MODE")
            .stdin(Stdio::null());
        if let Some(crash) = crash {
            command
                .env("POWERLOSS_CRASH_AFTER", crash.call.to_string())
                .env(
                    "POWERLOSS_CRASH_MODE",
                    if crash.after { "after" } else { "before" },
                );
        }
        command.output().expect("the command runs")
    }

    fn journal_text(&self) -> String {
        std::fs::read_to_string(self.journal.join("journal")).unwrap_or_default()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the copy's directory");
    for entry in std::fs::read_dir(from).expect("the directory to copy") {
        let entry = entry.expect("an entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("a copied file");
    }
}

fn reliora<S: AsRef<std::ffi::OsStr>>(index: &Path, args: &[S]) -> Output {
    Command::new(BIN)
        .arg("--index")
        .arg(index)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("reliora runs")
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}, stdout {}, stderr {}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim(),
        String::from_utf8_lossy(&output.stderr).trim()
    )
}

/// One event of the shim's journal.
#[derive(Clone, Debug)]
enum Event {
    /// A `CMD` line the test writes: the events that follow belong to this workload command.
    Command(usize),
    Call,
    Data {
        dev: u64,
        ino: u64,
        copy: String,
        path: String,
    },
    SyncFile {
        dev: u64,
        ino: u64,
    },
    Create {
        path: String,
    },
    Unlink {
        path: String,
        victim: String,
    },
    Rename {
        from: String,
        to: String,
        victim: String,
    },
    SyncDir,
    Crash {
        description: String,
    },
    Unmodelled {
        line: String,
    },
}

fn parse_journal(journal: &str) -> Vec<Event> {
    journal
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let s = |i: usize| f[i].to_string();
            let n = |i: usize| f[i].parse::<u64>().expect("a number in the journal");
            match f[0] {
                "CALL" => Event::Call,
                "DATA" => Event::Data {
                    dev: n(1),
                    ino: n(2),
                    copy: s(3),
                    path: s(4),
                },
                "SYNCF" => Event::SyncFile {
                    dev: n(1),
                    ino: n(2),
                },
                "CREATE" => Event::Create { path: s(1) },
                "UNLINK" => Event::Unlink {
                    path: s(1),
                    victim: s(2),
                },
                "RENAME" => Event::Rename {
                    from: s(1),
                    to: s(2),
                    victim: s(3),
                },
                "SYNCD" => Event::SyncDir,
                "CMD" => Event::Command(n(1) as usize),
                "CRASH" => Event::Crash {
                    description: format!("{} the {} of {} (call {})", f[2], f[3], name(f[4]), f[1]),
                },
                _ => Event::Unmodelled {
                    line: line.to_string(),
                },
            }
        })
        .collect()
}

fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn calls(journal: &str) -> usize {
    journal.lines().filter(|l| l.starts_with("CALL\t")).count()
}

/// What a power loss now loses, and what it did to the directory.
#[derive(Default)]
struct Rollback {
    /// Directory changes undone, newest first.
    undone_entries: Vec<String>,
    /// Files whose unsynced data was dropped (or torn), by their name after the rollback.
    undone_data: Vec<String>,
    /// Files created and never covered by a directory fsync.
    unsynced_creations: Vec<String>,
    /// Each change undone, with the command that made it (by the `CMD` lines the test writes
    /// to the journal) and what was missing to make it durable.
    lost: Vec<(Option<usize>, String)>,
}

/// How [`Rollback::lost`] starts a directory change.
const ENTRY_LOST: &str = "directory change: ";

/// Marks the journal: the events that follow belong to command `index` of the workload.
fn mark_command(scene: &Scene, index: usize) {
    use std::io::Write;
    let mut journal = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(scene.journal.join("journal"))
        .expect("the journal");
    writeln!(journal, "CMD\t{index}").expect("a journal mark");
}

/// Rolls `scene`'s index back to what a power loss would leave, per the journal. With `torn`,
/// unsynced bytes appended to a file partly survive (a random prefix of them).
fn power_loss(scene: &Scene, rng: &mut Rng, torn: bool) -> Rollback {
    let events = parse_journal(&scene.journal_text());
    let mut entries: Vec<(Option<usize>, Event)> = Vec::new();
    let mut data: Vec<(Option<usize>, Event)> = Vec::new();
    let mut last_created: Option<String> = None;
    let mut command = None;
    let same_inode = |e: &Event, dev: u64, ino: u64| matches!(e, Event::Data { dev: d, ino: i, .. } if *d == dev && *i == ino);
    for event in events {
        match &event {
            Event::Command(i) => command = Some(*i),
            Event::Data { dev, ino, path, .. } => {
                if last_created.as_deref() == Some(path.as_str()) {
                    // A new file: an older record of this inode number is of a deleted file.
                    data.retain(|(_, e)| !same_inode(e, *dev, *ino));
                }
                data.push((command, event.clone()));
            }
            Event::SyncFile { dev, ino } => data.retain(|(_, e)| !same_inode(e, *dev, *ino)),
            Event::Create { path } => {
                last_created = Some(path.clone());
                entries.push((command, event.clone()));
            }
            Event::Unlink { .. } | Event::Rename { .. } => entries.push((command, event.clone())),
            Event::SyncDir => entries.clear(),
            Event::Unmodelled { line } => panic!("the shim met a call it does not model: {line}"),
            Event::Call | Event::Crash { .. } => {}
        }
    }
    let mut rollback = Rollback::default();
    let victim = |v: &str| scene.journal.join(v);
    for (command, event) in entries.iter().rev() {
        let undone = match event {
            Event::Create { path } => {
                rollback.unsynced_creations.push(name(path).to_string());
                let _ = std::fs::remove_file(path);
                format!("creation of {}", name(path))
            }
            Event::Unlink { path, victim: v } => {
                std::fs::hard_link(victim(v), path).expect("an unlinked file restored");
                format!("unlink of {}", name(path))
            }
            Event::Rename {
                from,
                to,
                victim: v,
            } => {
                std::fs::rename(to, from).expect("a rename undone");
                if v != "-" {
                    std::fs::hard_link(victim(v), to).expect("a replaced file restored");
                }
                format!("rename of {} to {}", name(from), name(to))
            }
            _ => unreachable!(),
        };
        rollback
            .lost
            .push((*command, format!("{ENTRY_LOST}{undone}")));
        rollback.undone_entries.push(undone);
    }
    let mut by_inode: HashMap<(u64, u64), PathBuf> = HashMap::new();
    for entry in std::fs::read_dir(&scene.index).expect("the index directory") {
        let entry = entry.expect("an entry");
        let meta = entry.metadata().expect("its metadata");
        by_inode.insert((meta.dev(), meta.ino()), entry.path());
    }
    for (command, event) in data.iter().rev() {
        let Event::Data { dev, ino, copy, .. } = event else {
            unreachable!()
        };
        let Some(path) = by_inode.get(&(*dev, *ino)) else {
            continue; // no longer in the directory: its data does not matter
        };
        let saved = std::fs::read(scene.journal.join(copy)).expect("a saved copy");
        let current = std::fs::read(path).expect("a file to roll back");
        let mut restored = saved.clone();
        if torn && current.len() > saved.len() && current.starts_with(&saved) {
            let extra = &current[saved.len()..];
            restored.extend_from_slice(&extra[..rng.below(extra.len() as u64) as usize]);
        }
        if restored != current {
            let file = path.file_name().expect("a name").to_string_lossy();
            rollback.undone_data.push(format!(
                "{file}: {} of {} bytes kept",
                restored.len(),
                current.len()
            ));
            rollback.lost.push((
                *command,
                format!(
                    "its writes to {file} (with any later unsynced ones) were lost, {} of {} \
                     bytes kept: no fsync or fdatasync of {file} followed them",
                    restored.len(),
                    current.len()
                ),
            ));
            std::fs::write(path, &restored).expect("a file rolled back");
        }
    }
    // What is left is durable: the next journal starts from it.
    for entry in std::fs::read_dir(&scene.journal).expect("the journal directory") {
        let entry = entry.expect("an entry");
        let file = entry.file_name().to_string_lossy().into_owned();
        if file == "journal" || file.starts_with("dirty-") {
            std::fs::remove_file(entry.path()).expect("the journal cleared");
        }
    }
    rollback
}

/// What the index holds: each live record's title and feedback counts, by id.
fn state(index: &Path) -> Result<BTreeMap<String, Value>, String> {
    let output = reliora(index, &["export"]);
    if !output.status.success() {
        return Err(format!("`export` fails: {}", text(&output)));
    }
    let mut records = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let record: Value = serde_json::from_str(line).map_err(|e| format!("export: {e}"))?;
        let id = record["id"].as_str().unwrap_or_default().to_string();
        records.insert(
            id,
            json!({"title": record["title"], "feedback": record["feedback"]}),
        );
    }
    Ok(records)
}

fn record_json(id: &str, title: &str, problem: &str, tag: &str) -> String {
    json!({"id": id, "title": title, "problems": [problem], "tags": [tag]}).to_string()
}

/// The commands run in order against the index; each is a writing command whose exit 0 is a
/// promise of durability.
struct Workload {
    _inputs: tempfile::TempDir,
    base: PathBuf,
    commands: Vec<(String, Vec<String>)>,
}

fn workload() -> Workload {
    let inputs = tempfile::tempdir().expect("a directory for inputs");
    let dir = inputs.path();
    let initial: Vec<String> = (1..=4)
        .map(|i| {
            record_json(
                &format!("p-{i}"),
                &format!("initial record number {i} about widgets"),
                &format!("problem {i}"),
                "base",
            )
        })
        .collect();
    std::fs::write(dir.join("initial.jsonl"), initial.join("\n") + "\n").expect("input");
    let base = dir.join("base");
    let built = Command::new(BIN)
        .arg("--index")
        .arg(&base)
        .args(["build", "--input"])
        .arg(dir.join("initial.jsonl"))
        .output()
        .expect("build runs");
    assert!(built.status.success(), "build: {}", text(&built));
    let mut commands = Vec::new();
    let record = |id: &str, title: &str| {
        let file = dir.join(format!("{id}.json"));
        std::fs::write(&file, record_json(id, title, "a new problem", "logged")).expect("input");
        (
            format!("record {id}"),
            vec!["record".to_string(), file.to_string_lossy().into_owned()],
        )
    };
    let feedback = |id: &str, outcome: &str| {
        (
            format!("feedback {id} {outcome}"),
            ["feedback", id, "--outcome", outcome]
                .map(String::from)
                .to_vec(),
        )
    };
    let delete = |id: &str| {
        (
            format!("delete {id}"),
            ["delete", id].map(String::from).to_vec(),
        )
    };
    let compact = || ("compact".to_string(), vec!["compact".to_string()]);
    // First, a rebuild in spills of two records (first so that its crash points replay no
    // command before it): the spills are written unsynced and merged; the merged segment must
    // be durable before the manifest names it. Same ids as the base, other text.
    let rebuilt: Vec<String> = (1..=4)
        .map(|i| {
            record_json(
                &format!("p-{i}"),
                &format!("rebuilt record number {i} about gears"),
                &format!("problem {i}"),
                "rebuilt",
            )
        })
        .collect();
    std::fs::write(dir.join("rebuilt.jsonl"), rebuilt.join("\n") + "\n").expect("input");
    commands.push((
        "build --replace in spills".to_string(),
        vec![
            "build".to_string(),
            "--replace".to_string(),
            "--spill-records".to_string(),
            "2".to_string(),
            "--input".to_string(),
            dir.join("rebuilt.jsonl").to_string_lossy().into_owned(),
        ],
    ));
    commands.push(record("p-10", "ten gadgets fall over"));
    commands.push(feedback("p-1", "success"));
    commands.push(delete("p-2"));
    commands.push(record("p-11", "eleven sprockets rattle"));
    commands.push(compact());
    commands.push(record("p-12", "twelve cogs slip"));
    commands.push(feedback("p-10", "partial"));
    commands.push(delete("p-11"));
    commands.push(record("p-1", "initial record replaced by a revision"));
    commands.push(feedback("p-1", "failure"));
    commands.push(compact());
    commands.push(record("p-13", "thirteen levers jam"));
    commands.push(delete("p-3"));
    Workload {
        _inputs: inputs,
        base,
        commands,
    }
}

fn full_args(index: &Path, args: &[String]) -> Vec<String> {
    let mut all = vec!["--index".to_string(), index.to_string_lossy().into_owned()];
    all.extend(args.iter().cloned());
    all
}

/// One crash point: the command it strikes and where.
#[derive(Clone, Copy, Debug)]
struct Point {
    command: usize,
    crash: Crash,
    torn: bool,
}

/// A crash point where the index is not what a power loss may leave: which rule broke, and the
/// evidence.
struct Failure {
    rule: &'static str,
    detail: String,
}

const CHECK_FAILS: &str = "the index does not pass `check` after a power loss";
const ACK_LOST: &str =
    "a change acknowledged with exit 0 is lost after a power loss (SPEC §8: it must be durable)";
const HALF_COMMAND: &str = "after a power loss the index holds part of an unacknowledged command";
const NO_RECOVERY: &str = "`record` after a power loss fails or loses data";
const HARNESS: &str = "a command failed under the shim before any power loss";

/// What the crash points exercised.
#[derive(Default)]
struct Stats {
    /// Points where the command was killed (the others struck after it exited 0).
    crashed: usize,
    /// Points where the first write after the outage cut a torn log tail off.
    tail_cut: usize,
    /// Points where that write was killed too.
    crashed_again: usize,
}

/// Runs the workload up to `point`, cuts the power and checks what is left. Returns the
/// failures found.
fn run_point(
    work: &Workload,
    expected: &[BTreeMap<String, Value>],
    point: Point,
    rng: &mut Rng,
    stats: &mut Stats,
) -> Vec<Failure> {
    let scene = Scene::new(Some(&work.base));
    let mut acknowledged = 0;
    let mut crashed = false;
    for (i, (label, args)) in work.commands.iter().enumerate().take(point.command + 1) {
        let crash = (i == point.command).then_some(point.crash);
        mark_command(&scene, i);
        let output = scene.run_shimmed(BIN, &full_args(&scene.index, args), crash);
        if output.status.success() {
            acknowledged = i + 1;
        } else if output.status.signal() == Some(9) && crash.is_some() {
            crashed = true;
            stats.crashed += 1;
        } else {
            return vec![Failure {
                rule: HARNESS,
                detail: format!("`{label}`: {}", text(&output)),
            }];
        }
    }
    let events = parse_journal(&scene.journal_text());
    let at = events
        .iter()
        .find_map(|e| match e {
            Event::Crash { description } => Some(description.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let label = &work.commands[point.command].0;
    let when = if crashed {
        format!("power lost during `{label}`, {at}")
    } else {
        format!("power lost after `{label}` exited 0")
    };
    let rollback = power_loss(&scene, rng, point.torn);
    let context = format!(
        "{when}{}; the loss undid: {}; data lost: {}",
        if point.torn { " (torn writes)" } else { "" },
        list(&rollback.undone_entries),
        list(&rollback.undone_data)
    );
    let acked: Vec<(usize, &str)> = work.commands[..acknowledged]
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (i, label.as_str()))
        .collect();
    let evidence = diagnose(&scene.index, &rollback, &acked);
    let fail = |rule, problem: String| Failure {
        rule,
        detail: format!("{context}\n    {problem}{evidence}"),
    };
    let check = reliora(&scene.index, &["check"]);
    if !check.status.success() {
        return vec![fail(CHECK_FAILS, format!("`check`: {}", text(&check)))];
    }
    let now = match state(&scene.index) {
        Ok(now) => now,
        Err(e) => return vec![fail(CHECK_FAILS, e)],
    };
    let mut failures = Vec::new();
    let durable = &expected[acknowledged];
    let maybe = expected.get(acknowledged + 1).filter(|_| crashed);
    if &now != durable && Some(&now) != maybe {
        // Lost acknowledged changes, or a part of the interrupted command (ids that hold
        // neither their durable nor their complete state) — told apart by what differs.
        let mut lost = String::new();
        let mut partial = false;
        let ids: std::collections::BTreeSet<&String> = durable.keys().chain(now.keys()).collect();
        for id in ids {
            let (want, got) = (durable.get(id), now.get(id));
            if want == got {
                continue;
            }
            if maybe.is_some_and(|m| m.get(id) == got) {
                partial = true;
                continue;
            }
            let _ = write!(
                lost,
                "\n      {id}: expected {}, found {}",
                want.map_or("no record".to_string(), Value::to_string),
                got.map_or("no record".to_string(), Value::to_string)
            );
        }
        if lost.is_empty() && partial {
            failures.push(fail(
                HALF_COMMAND,
                "some but not all of its changes survive".to_string(),
            ));
        } else {
            let last = acknowledged
                .checked_sub(1)
                .map_or("none", |i| work.commands[i].0.as_str());
            failures.push(fail(
                ACK_LOST,
                format!("{acknowledged} commands exited 0, the last `{last}`:{lost}"),
            ));
        }
    }
    // The first write after the outage (cutting off a torn log tail, say) meets a power loss
    // too, at one of its first calls or not at all; then one more plain `record` must work.
    let recovery = work.commands.len();
    let recovery_label = "record p-99 (the first write after the power loss)";
    let input = scene.journal.join("p-99.json");
    std::fs::write(
        &input,
        record_json("p-99", "after the outage", "recovery", "after"),
    )
    .expect("input");
    let crash = (rng.below(5) != 0).then(|| Crash {
        call: 1 + rng.below(4) as usize,
        after: rng.below(2) == 1,
    });
    mark_command(&scene, recovery);
    let args = ["record".to_string(), input.to_string_lossy().into_owned()];
    let output = scene.run_shimmed(BIN, &full_args(&scene.index, &args), crash);
    let recorded = output.status.success();
    if !recorded {
        stats.crashed_again += 1;
    }
    if scene.journal_text().contains("\tftruncate\t") {
        stats.tail_cut += 1;
    }
    if !recorded && output.status.signal() != Some(9) {
        failures.push(fail(NO_RECOVERY, format!("`record`: {}", text(&output))));
        return failures;
    }
    let torn = rng.below(2) == 0;
    let second = power_loss(&scene, rng, torn);
    let mut with_99 = now.clone();
    with_99.insert(
        "p-99".into(),
        json!({"title": "after the outage", "feedback": no_feedback()}),
    );
    let acked: Vec<(usize, &str)> = if recorded {
        vec![(recovery, recovery_label)]
    } else {
        Vec::new()
    };
    let second_context = format!(
        "then {}, and power lost again; the loss undid: {}; data lost: {}",
        if recorded {
            format!("`{recovery_label}` exited 0")
        } else {
            format!(
                "`{recovery_label}` was killed at {}",
                crash.map_or(String::new(), |c| format!(
                    "call {} ({})",
                    c.call,
                    if c.after { "after" } else { "before" }
                ))
            )
        },
        list(&second.undone_entries),
        list(&second.undone_data)
    );
    let second_evidence = diagnose(&scene.index, &second, &acked);
    let fail2 = |problem: String| Failure {
        rule: NO_RECOVERY,
        detail: format!("{context}\n    {second_context}\n    {problem}{second_evidence}"),
    };
    let check = reliora(&scene.index, &["check"]);
    if !check.status.success() {
        failures.push(fail2(format!("`check`: {}", text(&check))));
        return failures;
    }
    let later = match state(&scene.index) {
        Ok(later) => later,
        Err(e) => {
            failures.push(fail2(e));
            return failures;
        }
    };
    if later != with_99 && (recorded || later != now) {
        failures.push(fail2(format!(
            "it holds {later:?}, expected {with_99:?}{}",
            if recorded {
                ""
            } else {
                " or the same without p-99"
            }
        )));
        return failures;
    }
    let input = scene.journal.join("p-98.json");
    std::fs::write(
        &input,
        record_json("p-98", "another one after", "recovery", "after"),
    )
    .expect("input");
    let last = reliora(&scene.index, &["record", &input.to_string_lossy()]);
    let mut want = later.clone();
    want.insert(
        "p-98".into(),
        json!({"title": "another one after", "feedback": no_feedback()}),
    );
    if !last.status.success() {
        failures.push(fail2(format!("a plain `record`: {}", text(&last))));
    } else if state(&scene.index).as_ref() != Ok(&want) {
        failures.push(fail2(format!(
            "after a plain `record` it holds {:?}, expected {want:?}",
            state(&scene.index)
        )));
    }
    failures
}

/// The feedback counts of a record nobody gave feedback on (SPEC §8's outcomes).
fn no_feedback() -> Value {
    json!({"success": 0, "partial": 0, "failure": 0, "notApplicable": 0, "outdated": 0})
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".to_string()
    } else {
        items.join(", ")
    }
}

/// The durability rules the rollback shows broken: changes of commands that had exited 0 which
/// the power loss undid, and files the surviving manifest names whose creation or data was not
/// durable.
fn diagnose(index: &Path, rollback: &Rollback, acked: &[(usize, &str)]) -> String {
    let mut out = String::new();
    for &(i, label) in acked {
        let lost: Vec<&str> = rollback
            .lost
            .iter()
            .filter(|(command, _)| *command == Some(i))
            .map(|(_, what)| what.as_str())
            .collect();
        let entries: Vec<&str> = lost
            .iter()
            .filter_map(|what| what.strip_prefix(ENTRY_LOST))
            .collect();
        if !entries.is_empty() {
            let _ = write!(
                out,
                "\n    DURABILITY RULE BROKEN: `{label}` exited 0, but no fsync of the index \
                 directory followed these changes of its, and the power loss undid them: {}",
                entries.join(", ")
            );
        }
        for what in lost.iter().filter(|what| !what.starts_with(ENTRY_LOST)) {
            let _ = write!(
                out,
                "\n    DURABILITY RULE BROKEN: `{label}` exited 0, but {what}"
            );
        }
    }
    if rollback
        .undone_data
        .iter()
        .any(|d| d.starts_with("MANIFEST:"))
    {
        out.push_str(
            "\n    DURABILITY RULE BROKEN: the MANIFEST that survives lost data: the file renamed \
             to MANIFEST was not fsync'd before the rename",
        );
    }
    let Ok(bytes) = std::fs::read(index.join("MANIFEST")) else {
        out.push_str("\n    DURABILITY RULE BROKEN: no MANIFEST survives the power loss");
        return out;
    };
    // The manifest is JSON followed by a binary footer.
    let Some(Ok(manifest)) = serde_json::Deserializer::from_slice(&bytes)
        .into_iter::<Value>()
        .next()
    else {
        return out;
    };
    let mut named: Vec<String> = Vec::new();
    if let Some(log) = manifest["log"].as_str() {
        named.push(log.to_string());
    }
    for segment in manifest["segments"].as_array().into_iter().flatten() {
        let segment_name = segment["name"].as_str().unwrap_or_default();
        for suffix in segment["files"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            named.push(format!("{segment_name}.{suffix}"));
        }
    }
    for file in &named {
        if rollback.unsynced_creations.contains(file) {
            let _ = write!(
                out,
                "\n    DURABILITY RULE BROKEN: the surviving MANIFEST names {file}, whose \
                 creation was never made durable (no fsync of the index directory after it)"
            );
        }
        if !index.join(file).exists() {
            let _ = write!(
                out,
                "\n    DURABILITY RULE BROKEN: the surviving MANIFEST names {file}, which the \
                 power loss took away"
            );
        }
        if rollback
            .undone_data
            .iter()
            .any(|d| d.starts_with(&format!("{file}:")))
            && !file.ends_with(".log")
        {
            let _ = write!(
                out,
                "\n    DURABILITY RULE BROKEN: the surviving MANIFEST names {file}, whose data \
                 was not fsync'd before the manifest named it"
            );
        }
    }
    out
}

#[test]
fn the_shim_drops_what_was_not_synced() {
    let scene = Scene::new(None);
    let file = scene.index.join("f");
    let sh = |script: &str| {
        let output = scene.run_shimmed("sh", &["-c".to_string(), script.to_string()], None);
        assert!(output.status.success(), "sh -c {script}: {}", text(&output));
    };
    let script = format!("printf abc > '{}'", file.display());
    let mut rng = Rng(seed());

    // Written, never synced: the power loss takes the file away.
    sh(&script);
    assert_eq!(std::fs::read(&file).expect("written"), b"abc");
    let rollback = power_loss(&scene, &mut rng, false);
    assert!(
        !file.exists(),
        "an unsynced new file survives the power loss"
    );
    assert_eq!(rollback.unsynced_creations, ["f"]);

    // Synced data, unsynced directory entry: still gone.
    let scene = Scene::new(None);
    let file = scene.index.join("f");
    let sh = |script: &str| {
        let output = scene.run_shimmed("sh", &["-c".to_string(), script.to_string()], None);
        assert!(output.status.success(), "sh -c {script}: {}", text(&output));
    };
    let index = scene.index.display().to_string();
    sh(&format!(
        "printf abc > '{}' && sync '{}'",
        file.display(),
        file.display()
    ));
    power_loss(&scene, &mut rng, false);
    assert!(
        !file.exists(),
        "a file whose directory was not synced survives"
    );

    // Both synced: it stays; then an unsynced append is dropped, and a torn one keeps a prefix.
    sh(&format!(
        "printf abc > '{0}' && sync '{0}' && sync '{index}' && printf defgh >> '{0}'",
        file.display()
    ));
    assert_eq!(std::fs::read(&file).expect("written"), b"abcdefgh");
    let rollback = power_loss(&scene, &mut rng, false);
    assert_eq!(std::fs::read(&file).expect("synced file kept"), b"abc");
    assert_eq!(rollback.undone_data, ["f: 3 of 8 bytes kept"]);
    sh(&format!("printf defgh >> '{}'", file.display()));
    power_loss(&scene, &mut rng, true);
    let torn = std::fs::read(&file).expect("the file after a torn write");
    assert!(
        torn.len() >= 3 && torn.len() < 8 && b"abcdefgh".starts_with(&torn),
        "a torn append keeps a prefix of the unsynced bytes: {torn:?}"
    );

    // A kill before the first tracked call: nothing happened at all.
    let scene = Scene::new(None);
    let file = scene.index.join("f");
    let output = scene.run_shimmed(
        "sh",
        &[
            "-c".to_string(),
            format!("printf abc > '{}'", file.display()),
        ],
        Some(Crash {
            call: 1,
            after: false,
        }),
    );
    assert_eq!(output.status.signal(), Some(9), "{}", text(&output));
    assert!(!file.exists());
    let output = scene.run_shimmed(
        "sh",
        &[
            "-c".to_string(),
            format!(
                "printf abc > '{}'; printf more >> '{}'",
                file.display(),
                file.display()
            ),
        ],
        Some(Crash {
            call: 2,
            after: true,
        }),
    );
    assert_eq!(output.status.signal(), Some(9), "{}", text(&output));
    assert_eq!(std::fs::read(&file).expect("written"), b"abc");
    power_loss(&scene, &mut rng, false);
    assert!(!file.exists());
}

#[test]
fn acknowledged_writes_survive_power_loss() {
    let started = std::time::Instant::now();
    let seed = seed();
    let mut rng = Rng(seed);
    let work = workload();

    // The states after each prefix of the workload, run without the shim.
    let reference = Scene::new(Some(&work.base));
    let mut expected = vec![state(&reference.index).expect("the base index exports")];
    for (label, args) in &work.commands {
        let output = reliora(&reference.index, args);
        assert!(output.status.success(), "`{label}`: {}", text(&output));
        expected.push(state(&reference.index).expect("the index exports"));
    }

    // A census: how many tracked calls each command makes under the shim.
    let census = Scene::new(Some(&work.base));
    let mut counts = Vec::new();
    for (label, args) in &work.commands {
        let before = calls(&census.journal_text());
        let output = census.run_shimmed(BIN, &full_args(&census.index, args), None);
        assert!(
            output.status.success(),
            "`{label}` under the shim: {}",
            text(&output)
        );
        counts.push(calls(&census.journal_text()) - before);
    }
    assert!(
        counts.iter().all(|&n| n > 0),
        "a writing command made no tracked call (is the shim loaded?): {counts:?}"
    );
    assert!(
        !census.journal_text().contains("MMAPW"),
        "a watched file was written through a shared mapping, which the shim does not model"
    );

    let mut points = Vec::new();
    for (command, &count) in counts.iter().enumerate() {
        for call in 1..=count {
            for after in [false, true] {
                let torn = rng.below(2) == 0;
                points.push(Point {
                    command,
                    crash: Crash { call, after },
                    torn,
                });
            }
        }
    }
    let mut failures = Vec::new();
    let mut stats = Stats::default();
    for &point in &points {
        failures.extend(run_point(&work, &expected, point, &mut rng, &mut stats));
    }
    eprintln!(
        "power loss: {} crash points over {} commands (tracked calls per command {counts:?}), \
         seed {seed}: {} killed the command, {} then had the next `record` cut a torn log tail, \
         {} killed that `record` too; {} failing, {:.1?}",
        points.len(),
        work.commands.len(),
        stats.crashed,
        stats.tail_cut,
        stats.crashed_again,
        failures.len(),
        started.elapsed()
    );
    let mut report = String::new();
    for rule in [HARNESS, CHECK_FAILS, ACK_LOST, HALF_COMMAND, NO_RECOVERY] {
        let of_rule: Vec<&Failure> = failures.iter().filter(|f| f.rule == rule).collect();
        if of_rule.is_empty() {
            continue;
        }
        let _ = write!(report, "\n\n{} crash points: {rule}", of_rule.len());
        for failure in of_rule.iter().take(4) {
            let _ = write!(report, "\n  {}", failure.detail);
        }
        if of_rule.len() > 4 {
            let _ = write!(report, "\n  … and {} more", of_rule.len() - 4);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} crash points lose or damage data (seed {seed}):{report}",
        failures.len(),
        points.len()
    );
}
