//! A ledger branch holding a commit Navin refuses is not a dead end: `/status` still
//! answers from the last state Navin trusts, the sweeper stops ticking instead of failing
//! a delivery every interval, and both recoveries the refusal names work: `/rollback v<N>`
//! from a comment, or a revert of the forged commit on the branch.

use navin_ledger::model::TaskStatus;

use crate::world::World;

const OWNER: &str = "octo-org";
const REPO: &str = "hello";

/// A mission with S1 (a test step) by Navin, then a push marking S1 done by hand;
/// returns the forged commit and the two files as Navin last wrote them.
async fn forged_mission(w: &mut World, issue: u64) -> (String, Vec<(String, String)>) {
    w.comment(
        issue,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting\" --validation test",
    )
    .await;
    w.reply().await;
    let honest = w.ledger().expect("ledger");
    let (mission, board) = navin_ledger::encode(&honest).expect("encode");
    let original = vec![
        (
            ".navin/board/mission.json".to_owned(),
            String::from_utf8(mission).expect("utf8"),
        ),
        (
            ".navin/board/board.json".to_owned(),
            String::from_utf8(board).expect("utf8"),
        ),
    ];
    let mut forged = honest.clone();
    let mut s1 = (*forged.board.tasks[0]).clone();
    s1.status = TaskStatus::Done;
    forged.board.tasks[0] = std::sync::Arc::new(s1);
    let (mission, board) = navin_ledger::encode(&forged).expect("encode");
    let commit = w.fake().commit_files(
        OWNER,
        REPO,
        "navin/ledger",
        &[
            (
                ".navin/board/mission.json",
                std::str::from_utf8(&mission).expect("utf8"),
            ),
            (
                ".navin/board/board.json",
                std::str::from_utf8(&board).expect("utf8"),
            ),
        ],
        "mark S1 done",
    );
    (commit, original)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_ledger_answers_status_read_only_and_rollback_to_the_named_version_restores_it() {
    let mut w = World::with_sweeps(1).await;
    let issue = w.issue("Greetings", "");
    let (forged, _) = forged_mission(&mut w, issue).await;
    let trusted = w.ledger_commits();

    // Any write is refused, naming the commit and the version to restore.
    w.comment(issue, "alice", "/update fact the API is frozen")
        .await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains(&forged[..12]) && refusal.contains("marks S1 done"),
        "{refusal}"
    );
    assert!(refusal.contains("/rollback v2"), "{refusal}");

    // /status still answers, from what Navin last trusted, and says so.
    w.comment(issue, "bob", "/status").await;
    let status = w.reply().await;
    assert!(
        status.contains("read-only") && status.contains(&forged[..12]),
        "{status}"
    );
    assert!(
        status.contains("v2") && status.contains("0/1 steps done"),
        "{status}"
    );
    // The panel was refreshed from v2: S1 is not shown done.
    let panel = w.latest("<!-- navin:panel");
    assert!(panel.contains("0/1"), "{panel}");

    // Meanwhile the clock ticks (every second) without failing a delivery.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let stats = w.server().queue().stats().await.expect("stats");
    assert_eq!(stats.failed, 0, "{stats:?}");

    // The recovery the refusal names: Navin writes v2's content on top, sealed.
    w.comment(issue, "alice", "/rollback v2").await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(ledger.mission.version, 3);
    assert_eq!(w.step("S1").status, TaskStatus::Planned);
    assert_eq!(
        w.ledger_commits(),
        trusted + 1,
        "written on top: nothing rewritten"
    );

    // And the ledger is writable again.
    w.comment(issue, "alice", "/update fact the API is frozen")
        .await;
    let ledger = w.ledger().expect("ledger");
    assert!(
        ledger.mission.facts.iter().any(|f| f.contains("frozen")),
        "{:?}",
        ledger.mission.facts
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revert_of_the_forged_commit_on_the_branch_makes_the_ledger_writable_again() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    let (_, original) = forged_mission(&mut w, issue).await;
    // `git revert` of it, pushed by a person: the files as Navin wrote them.
    let files: Vec<(&str, &str)> = original
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    w.fake().commit_files(
        OWNER,
        REPO,
        "navin/ledger",
        &files,
        "Revert \"mark S1 done\"",
    );
    w.comment(issue, "alice", "/update fact the API is frozen")
        .await;
    let ledger = w.ledger().expect("ledger");
    assert!(
        ledger.mission.facts.iter().any(|f| f.contains("frozen")),
        "{:?}",
        ledger.mission.facts
    );
    assert_eq!(w.step("S1").status, TaskStatus::Planned);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_a_refused_ledger_read_only_with_the_fix_as_code() {
    use crate::dashboard_support::WebUser;
    let mut w = World::with_dashboard().await;
    let issue = w.issue("Greetings", "");
    let (forged, _) = forged_mission(&mut w, issue).await;
    let mut alice = WebUser::new(&w.dashboard_url(), "alice");
    alice.sign_in().await;
    let page = alice.get(&format!("/r/{OWNER}/{REPO}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let body = &page.body;
    let problem = body
        .split("id=\"ledger-problem\"")
        .nth(1)
        .and_then(|rest| rest.split("</div>").next())
        .expect("the ledger problem banner");
    assert!(problem.contains(&forged[..12]), "{problem}");
    assert!(
        problem.contains("<code>/rollback v2</code>"),
        "the fix renders as code: {problem}"
    );
    assert!(!problem.contains('`'), "no raw backticks: {problem}");
    // The state Navin trusts, read-only: the mission and its step, no action buttons.
    assert!(body.contains("id=\"trusted-state\""), "{body}");
    assert!(
        body.contains("configurable greetings") && body.contains("0/1 steps done"),
        "{body}"
    );
    assert!(
        !body.contains("name=\"action\""),
        "no action on a refused ledger: {body}"
    );
    w.finish().await;
}
