//! The `navin/config` check end to end, in the World DSL: a pull request that changes
//! `.github/navin.yml` gets the file at its head checked by Navin's own parser, with the
//! offending line annotated, and a pull request that leaves the file alone gets nothing.

use navin_e2e::fake::model::CheckRun;

use crate::engine_plans::{carols_pr, conclusion, summary, GREETING};
use crate::engine_support::{OWNER, REPO};
use crate::world::World;

const CONFIG: &str = ".github/navin.yml";

/// A valid file: two approvals and a stricter evidence rule.
const VALID: &str = "approval:\n  required_approvals: 2\nevidence:\n  done_on: merged\n";

/// `allow_author` (for `allow_author_approval`) is unknown: line 3.
const UNKNOWN_KEY_AT_LINE_3: &str =
    "approval:\n  required_approvals: 2\n  allow_author: true\nevidence:\n  done_on: merged\n";

/// The `navin/config` runs on `sha`, oldest first.
fn config_checks(w: &World, sha: &str) -> Vec<CheckRun> {
    let runs = w.fake().check_runs(OWNER, REPO).into_iter();
    runs.filter(|r| r.name == "navin/config" && r.head_sha == sha)
        .collect()
}

/// The one `navin/config` run on `sha`.
fn config_check(w: &World, sha: &str) -> CheckRun {
    let runs = config_checks(w, sha);
    assert_eq!(runs.len(), 1, "one navin/config run on {sha}: {runs:#?}");
    runs[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_with_a_valid_config_gets_a_green_navin_config_check() {
    let mut w = World::new().await;
    w.clear_requests();
    let (_, head) = carols_pr(&mut w, &[(CONFIG, VALID), GREETING], "Two approvals.").await;
    let run = config_check(&w, &head);
    assert_eq!(conclusion(&run), "success");
    assert!(summary(&run).contains("is valid"), "{}", summary(&run));
    assert!(
        summary(&run).contains("so the file there still applies"),
        "{}",
        summary(&run)
    );
    assert!(run.output.get("annotations").is_none(), "{run:#?}");
    w.requests("pull_request.opened (valid .github/navin.yml)");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_key_fails_navin_config_with_an_annotation_at_its_line() {
    let mut w = World::new().await;
    w.clear_requests();
    let files = [(CONFIG, UNKNOWN_KEY_AT_LINE_3)];
    let (_, head) = carols_pr(&mut w, &files, "Let authors approve.").await;
    let run = config_check(&w, &head);
    assert_eq!(conclusion(&run), "failure");
    let text = summary(&run);
    assert!(text.contains("approval.allow_author"), "{text}");
    assert!(text.contains("still applies until this is fixed"), "{text}");
    let marks = run.output["annotations"].as_array().expect("annotations");
    assert_eq!(marks.len(), 1, "{marks:#?}");
    assert_eq!(marks[0]["path"], CONFIG);
    assert_eq!(marks[0]["annotation_level"], "failure");
    assert_eq!(marks[0]["start_line"], 3);
    assert_eq!(marks[0]["end_line"], 3);
    let message = marks[0]["message"].as_str().unwrap();
    assert!(message.contains("`approval.allow_author`"), "{message}");
    assert!(message.contains("unknown field"), "{message}");
    w.requests("pull_request.opened (invalid .github/navin.yml)");
    w.no_reply().await;
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_that_leaves_the_config_alone_gets_no_navin_config_check() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "Code only.").await;
    assert!(config_checks(&w, &head).is_empty());
    let new_head = w.push(pr, &[("src/greet.rs", "// v2\n")]).await;
    assert!(config_checks(&w, &new_head).is_empty());
    // Nothing read at the head for it: the files list the engine reads anyway said so.
    let read_at_head = w
        .fake()
        .api_requests()
        .into_iter()
        .any(|r| r.path.contains("navin.yml") && r.query_param("ref").is_some());
    assert!(!read_at_head, "the config was read at a head");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushing_a_fix_turns_navin_config_green_on_the_new_head() {
    let mut w = World::new().await;
    let files = [(CONFIG, UNKNOWN_KEY_AT_LINE_3)];
    let (pr, head) = carols_pr(&mut w, &files, "Let authors approve.").await;
    assert_eq!(conclusion(&config_check(&w, &head)), "failure");

    w.clear_requests();
    let fixed = UNKNOWN_KEY_AT_LINE_3.replace("allow_author:", "allow_author_approval:");
    let new_head = w.push(pr, &[(CONFIG, &fixed)]).await;
    assert_eq!(conclusion(&config_check(&w, &new_head)), "success");
    w.requests("pull_request.synchronize (fixes .github/navin.yml)");
    // The old head keeps its failure: its file never changes.
    assert_eq!(conclusion(&config_check(&w, &head)), "failure");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_fixing_a_broken_default_branch_config_is_checked_all_the_same() {
    let mut w = World::new().await;
    w.commit(&[(CONFIG, UNKNOWN_KEY_AT_LINE_3)]);
    let (_, head) = carols_pr(&mut w, &[(CONFIG, VALID)], "Fix the config.").await;
    let run = config_check(&w, &head);
    assert_eq!(conclusion(&run), "success");
    assert!(summary(&run).contains("is valid"), "{}", summary(&run));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_branch_that_is_the_default_branch_is_refused_and_nothing_is_written() {
    let mut w = World::new().await;
    w.commit(&[(CONFIG, "ledger_branch: main\n")]);
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    // Read as GitHub renders it: the reply escapes Markdown in the reason.
    let reply = w.reply().await.replace('\\', "");
    assert!(reply.contains("`ledger_branch` is `main`"), "{reply}");
    assert!(reply.contains("default branch"), "{reply}");
    assert!(w.ledger().is_none(), "no mission anywhere");
    let main_has_ledger = w
        .fake()
        .file_at(OWNER, REPO, "main", ".navin/board/mission.json")
        .is_some();
    assert!(!main_has_ledger, "nothing was committed to main");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_config_from_a_pull_request_fails_navin_config_without_being_parsed() {
    let mut w = World::new().await;
    // 150 KB of nested brackets: the YAML parser's cost grows faster than the file.
    let nested = format!(
        "ledger_branch: x\nextra: {}{}\n",
        "[".repeat(75_000),
        "]".repeat(75_000)
    );
    let (_, head) = carols_pr(&mut w, &[(CONFIG, nested.as_str())], "Tweak.").await;
    let run = config_check(&w, &head);
    assert_eq!(conclusion(&run), "failure");
    let text = summary(&run);
    assert!(
        text.contains("64 KiB"),
        "the size is refused before parsing: {text}"
    );
    w.no_reply().await;
    w.finish().await;
}
