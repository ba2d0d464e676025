//! Crash safety of `navin mcp`: the server is killed with SIGKILL while write calls are
//! in flight, again and again; after every kill the ledger reads, its version has only
//! grown, every operation that landed landed once, and the next write goes through.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::agents::{navin_as, ok_as, started};
use crate::mcp_support::McpClient;

const ROUNDS: u64 = 20;
/// Write calls of each kind fired per round, none waited for.
const CALLS: u64 = 4;
const TOKENS: u64 = 10;
const HUMAN: &str = "human:maintainer";

/// `navin mcp --mode agent` on `dir`, handshake done.
fn start(dir: &Path) -> McpClient {
    let repo = dir.to_str().expect("a UTF-8 path");
    McpClient::start(
        dir,
        &["--mode", "agent", "--repo", repo],
        &[("NAVIN_ACTOR", "subagent:crash")],
        "crash",
    )
}

/// Everything the checks need, read through the CLI.
struct Seen {
    version: u64,
    tokens_used: u64,
    /// The entries this test added (as constraints: an agent may not add facts), with
    /// how often each is on the ledger.
    facts: HashMap<String, usize>,
    /// Per op id of this test (`mcp:key:<digest>:crash-…`), the commits that carry it.
    deliveries: HashMap<String, usize>,
}

fn look(dir: &Path) -> Seen {
    let show: Value = serde_json::from_str(&ok_as(dir, HUMAN, &["--json", "ledger", "show"]))
        .expect("`navin ledger show --json` parses: the ledger is readable");
    let mission = &show["mission"];
    let mut facts = HashMap::new();
    for fact in mission["constraints"]
        .as_array()
        .expect("constraints")
        .iter()
    {
        let fact = fact.as_str().expect("a constraint is a string");
        if fact.starts_with("crash fact ") {
            *facts.entry(fact.to_owned()).or_insert(0) += 1;
        }
    }
    let history: Value = serde_json::from_str(&ok_as(
        dir,
        HUMAN,
        &["--json", "ledger", "history", "--limit", "100000"],
    ))
    .expect("history json");
    let commits = history.as_array().expect("a list of commits");
    // Newest first, one version each, no gaps: v1 is the first commit.
    let versions: Vec<u64> = commits
        .iter()
        .filter_map(|c| c["version"].as_u64())
        .collect();
    let version = mission["version"].as_u64().expect("version");
    let expected: Vec<u64> = (1..=version).rev().collect();
    assert_eq!(
        versions, expected,
        "the branch holds one commit per version"
    );
    let mut deliveries = HashMap::new();
    for c in commits {
        for line in c["body"].as_str().unwrap_or_default().lines() {
            // `mcp:key:<call digest>:crash-<id>`: the digest binds the key to its call.
            let id = line
                .strip_prefix("Navin-Delivery: mcp:key:")
                .and_then(|rest| rest.split_once(':'))
                .and_then(|(_, key)| key.strip_prefix("crash-"));
            if let Some(id) = id {
                *deliveries.entry(id.trim().to_owned()).or_insert(0) += 1;
            }
        }
    }
    Seen {
        version,
        tokens_used: mission["progress"]["tokens_used"]
            .as_u64()
            .expect("tokens_used"),
        facts,
        deliveries,
    }
}

/// Lock files git or Navin left under the git directory (a write killed while holding one).
fn stray_locks(dir: &Path) -> Vec<String> {
    fn walk(path: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "lock") {
                out.push(p.display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir.join(".git"), &mut out);
    out
}

#[test]
fn killing_navin_mcp_mid_call_leaves_the_ledger_consistent_and_each_op_applied_once() {
    let clock = Instant::now();
    let dir = started(None);
    let d = dir.path();
    let mut before = look(d);
    assert_eq!(before.tokens_used, 0);
    let mut fired = 0;
    for round in 0..ROUNDS {
        let mut server = start(d);
        for k in 0..CALLS {
            server.call(
                "ledger_progress",
                json!({ "step": "S1", "real_progress": true, "tokens": TOKENS,
                        "cost_usd": 0.0, "op_id": format!("crash-r{round}-p{k}") }),
            );
            server.call(
                "ledger_update",
                json!({ "add_constraints": [format!("crash fact r{round}-{k}")],
                        "reason": "crash test", "op_id": format!("crash-r{round}-u{k}") }),
            );
            fired += 2;
        }
        // 0, 7, 14, … 35, 1, 8, …: every delay up to 40 ms, in a fixed order.
        std::thread::sleep(Duration::from_millis(round * 7 % 41));
        server.kill();

        let now = look(d);
        assert!(
            now.version >= before.version,
            "round {round}: the version went back from {} to {}",
            before.version,
            now.version
        );
        let twice: Vec<_> = now.deliveries.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "round {round}: ops applied more than once: {twice:?}"
        );
        let progress = now.deliveries.keys().filter(|k| k.contains("-p")).count() as u64;
        let updates: HashSet<&String> =
            now.deliveries.keys().filter(|k| k.contains("-u")).collect();
        assert_eq!(
            now.tokens_used,
            TOKENS * progress,
            "round {round}: tokens used vs {progress} progress reports landed"
        );
        let doubled: Vec<_> = now.facts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            doubled.is_empty(),
            "round {round}: facts added twice: {doubled:?}"
        );
        assert_eq!(
            now.facts.len(),
            updates.len(),
            "round {round}: facts on the ledger vs updates landed"
        );
        // The branch takes the next write. A ref lock the kill left behind is waited
        // out and removed once it is old enough to be a dead writer's, never a reason
        // to stop writing for good.
        let left = stray_locks(d);
        let write = |n: &str| {
            navin_as(
                d,
                HUMAN,
                &[
                    "ledger",
                    "update",
                    "--add-fact",
                    &format!("after kill {round}{n}"),
                    "--reason",
                    "still writable",
                ],
                "",
            )
        };
        let next = write("");
        assert!(
            next.status.success(),
            "round {round}: after the kill (locks left: {left:?}) the next write failed: {}",
            String::from_utf8_lossy(&next.stderr).trim()
        );
        let mut extra = 0;
        if !stray_locks(d).is_empty() {
            // Only the last-tip record's lock can outlive a write; the one after it is
            // old enough to be cleared.
            std::thread::sleep(Duration::from_millis(1200));
            let again = write(" (again)");
            assert!(again.status.success(), "round {round}");
            extra = 1;
        }
        let locks = stray_locks(d);
        assert!(
            locks.is_empty(),
            "round {round}: lock files outlived the writes after the kill: {locks:?}"
        );
        before = look(d);
        assert_eq!(before.version, now.version + 1 + extra, "round {round}");
    }
    let landed: Vec<&String> = before.deliveries.keys().collect();
    assert!(
        !landed.is_empty(),
        "none of the {fired} calls landed before a kill: the test proves nothing"
    );
    eprintln!(
        "{} of {fired} write calls landed over {ROUNDS} kills",
        landed.len()
    );

    // A retry of a progress report that landed (the very same call), in a new session,
    // applies nothing.
    let retried = before
        .deliveries
        .keys()
        .filter(|k| k.contains("-p"))
        .max_by_key(|k| {
            // The newest: r<round>-p<k>.
            k.trim_start_matches('r')
                .split_once("-p")
                .and_then(|(r, k)| Some((r.parse::<u64>().ok()?, k.parse::<u64>().ok()?)))
        })
        .cloned()
        .expect("some progress report landed");
    let mut server = start(d);
    let id = server.call(
        "ledger_progress",
        json!({ "step": "S1", "real_progress": true, "tokens": TOKENS,
                "cost_usd": 0.0, "op_id": format!("crash-{retried}") }),
    );
    let answer = server.reply(id);
    server.kill();
    assert_eq!(
        answer.pointer("/result/structuredContent/already_applied"),
        Some(&json!(true)),
        "a retried op id is already applied: {answer}"
    );
    let after = look(d);
    assert_eq!(after.tokens_used, before.tokens_used, "tokens did not grow");
    assert_eq!(after.version, before.version, "nothing was written");
    assert!(
        clock.elapsed() < Duration::from_secs(60),
        "took {:?}",
        clock.elapsed()
    );
}

/// `mission.json` keeps the last 100 history entries, op ids with them; past that the op
/// id is found in the commit log (`navin mcp` writes with `Ctx::with_retry_since`).
#[test]
fn an_op_id_retried_after_a_hundred_other_writes_is_still_applied_once() {
    let dir = started(None);
    let d = dir.path();
    let mut server = start(d);
    let progress = json!({ "step": "S1", "real_progress": true, "tokens": TOKENS,
                           "op_id": "crash-old" });
    let id = server.call("ledger_progress", progress.clone());
    let first = server.reply(id);
    assert_eq!(
        first.pointer("/result/structuredContent/already_applied"),
        Some(&json!(false)),
        "{first}"
    );
    for i in 0..105 {
        let id = server.call(
            "ledger_update",
            json!({ "add_constraints": [format!("crash fact w{i}")], "reason": "fill the window" }),
        );
        server.reply(id);
    }
    let id = server.call("ledger_progress", progress);
    let again = server.reply(id);
    server.kill();
    let seen = look(d);
    assert_eq!(
        seen.deliveries.get("old"),
        Some(&1),
        "commits carrying the op id"
    );
    assert_eq!(seen.tokens_used, TOKENS, "tokens debited once");
    assert_eq!(
        again.pointer("/result/structuredContent/already_applied"),
        Some(&json!(true)),
        "{again}"
    );
}
