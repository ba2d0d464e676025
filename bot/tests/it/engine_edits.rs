//! Human edits of a mission on GitHub, end to end: `/update goal|fact|constraint|missing`
//! bump the version with the writer as actor and show on the panel; `/rollback v<N>`
//! restores an older version as a new one; readers cannot edit.

use navin_ledger::model::{Actor, TaskStatus};

use crate::world::World;

const PANEL: &str = "<!-- navin:panel";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_edit_the_task_ledger_and_roll_it_back_as_a_new_version() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(
        issue,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting\" --validation manual",
    )
    .await;
    assert!(w.reply().await.starts_with(PANEL));
    let v1 = w.ledger().expect("ledger").mission.version;

    w.comment(
        issue,
        "alice",
        "/update fact the API is frozen until Friday",
    )
    .await;
    w.comment(issue, "alice", "/update constraint no new dependencies")
        .await;
    w.comment(issue, "alice", "/update missing which locales ship first?")
        .await;
    w.comment(issue, "alice", "/update goal greetings in every locale")
        .await;
    let ledger = w.ledger().expect("ledger");
    let m = &ledger.mission;
    assert_eq!(m.goal, "greetings in every locale");
    assert!(
        m.facts
            .iter()
            .any(|f| f == "the API is frozen until Friday"),
        "{:?}",
        m.facts
    );
    assert!(m.constraints.iter().any(|c| c == "no new dependencies"));
    assert!(m
        .missing_info
        .iter()
        .any(|q| q == "which locales ship first?"));
    assert_eq!(m.version, v1 + 4, "one version per edit");
    let last = m.history.last().expect("history");
    assert_eq!(last.actor, Actor::Human("alice".into()));
    assert!(last.reason.contains("goal changed by @alice"), "{last:?}");
    let panel = w.latest(PANEL);
    assert!(panel.contains("greetings in every locale"), "{panel}");
    assert!(
        panel.contains("1. which locales ship first?"),
        "numbered for /answer: {panel}"
    );

    // The open question answered by its number: it becomes a fact.
    w.comment(issue, "alice", "/answer 2 French").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("no open question 2") && refusal.contains("1. which locales ship first?"),
        "{refusal}"
    );
    w.comment(issue, "alice", "/answer 1 French first, then German")
        .await;
    let m = w.ledger().expect("ledger").mission;
    assert!(m.missing_info.is_empty(), "{:?}", m.missing_info);
    assert!(
        m.facts
            .iter()
            .any(|f| f == "which locales ship first? → French first, then German"),
        "{:?}",
        m.facts
    );
    let v_answered = m.version;

    // A reader cannot edit.
    w.comment(issue, "mallory", "/update goal something else")
        .await;
    let refusal = w.reply().await;
    assert!(refusal.contains("write access"), "{refusal}");
    assert_eq!(
        w.ledger().expect("ledger").mission.goal,
        "greetings in every locale"
    );

    // Back to the first version, written as a new one.
    w.comment(issue, "alice", &format!("/rollback v{v1}")).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(ledger.mission.goal, "configurable greetings");
    assert!(
        ledger.mission.facts.is_empty(),
        "{:?}",
        ledger.mission.facts
    );
    assert_eq!(
        ledger.mission.version,
        v_answered + 1,
        "history is never rewritten"
    );
    assert_eq!(w.step("S1").status, TaskStatus::Planned);

    w.comment(issue, "alice", "/rollback v99").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("Nothing changed") && refusal.contains("version 99"),
        "{refusal}"
    );
    w.finish().await;
}

/// Defect 7 of the hardening review on GitHub: someone with push access commits a
/// consistent edit of both ledger files marking a `test` step done. Navin refuses to build
/// on it and says so in the reply; the branch keeps the forged tip for a person to revert.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_forged_by_a_push_to_the_ledger_branch_and_buried_under_a_thousand_commits_is_reported_and_not_built_upon(
) {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(
        issue,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting\" --validation test",
    )
    .await;
    w.reply().await;
    let mut ledger = w.ledger().expect("ledger");
    let mut s1 = (*ledger.board.tasks[0]).clone();
    s1.status = TaskStatus::Done;
    ledger.board.tasks[0] = std::sync::Arc::new(s1);
    let (mission, board) = navin_ledger::encode(&ledger).expect("encode");
    let forged = w.fake().commit_files(
        "octo-org",
        "hello",
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
    assert_eq!(
        w.step("S1").status,
        TaskStatus::Done,
        "the forged tip is there"
    );

    // Buried under a thousand empty commits: the server vets back to its last seal,
    // however far that is.
    let bare = w.fake().git_dir_path("octo-org", "hello");
    crate::agents_change::bury(&bare, "navin/ledger", &forged, 1000);

    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/update fact the API is frozen")
        .await;
    let reply = w.reply().await;
    assert!(
        reply.contains(&forged[..12]),
        "the reply names the commit: {reply}"
    );
    assert!(
        reply.contains("was not made by Navin") && reply.contains("marks S1 done"),
        "{reply}"
    );
    assert_eq!(
        w.ledger_commits(),
        commits,
        "nothing built on the forged tip"
    );
    w.finish().await;
}

/// Issue 29: the forger copies what used to identify Navin's commits, its committer name
/// (`navin[bot]`) and its trailers, and changes a step's validation, then marks it done.
/// The ledger is sealed by the server, so the first commit without its seal is named and
/// nothing is built on either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_forged_as_navins_own_are_refused_by_their_missing_seal_naming_the_first() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(
        issue,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting\" --validation test",
    )
    .await;
    w.reply().await;
    let git_dir = w.fake().git_dir_path("octo-org", "hello");
    let seal_line = |repo: &git2::Repository| {
        let tip = repo
            .find_reference("refs/heads/navin/ledger")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let message = tip.message().unwrap().to_owned();
        assert!(
            message.contains("\nNavin-Seal: v2 "),
            "the server seals its commits: {message}"
        );
        message.lines().last().unwrap().to_owned()
    };
    let repo = git2::Repository::open_bare(&git_dir).unwrap();
    let copied = seal_line(&repo);
    let forge = |change: &dyn Fn(&mut navin_ledger::model::Task), subject: &str| {
        let parent = repo
            .find_reference("refs/heads/navin/ledger")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let read = |name: &str| {
            let entry = parent
                .tree()
                .unwrap()
                .get_path(std::path::Path::new(&format!(".navin/board/{name}")))
                .unwrap();
            repo.find_blob(entry.id()).unwrap().content().to_vec()
        };
        let mut ledger = navin_ledger::decode(&read("mission.json"), &read("board.json")).unwrap();
        let mut s1 = (*ledger.board.tasks[0]).clone();
        change(&mut s1);
        ledger.board.tasks[0] = std::sync::Arc::new(s1);
        let (mission, board) = navin_ledger::encode(&ledger).unwrap();
        let mut index = git2::Index::new().unwrap();
        index.read_tree(&parent.tree().unwrap()).unwrap();
        for (name, bytes) in [("mission.json", &mission), ("board.json", &board)] {
            let blob = repo.blob(bytes).unwrap();
            let mut entry = index
                .get_path(std::path::Path::new(&format!(".navin/board/{name}")), 0)
                .unwrap();
            entry.id = blob;
            entry.file_size = u32::try_from(bytes.len()).unwrap();
            index.add(&entry).unwrap();
        }
        let tree = repo.find_tree(index.write_tree_to(&repo).unwrap()).unwrap();
        let sig =
            git2::Signature::now("navin[bot]", "navin[bot]@users.noreply.github.com").unwrap();
        let message = format!(
            "navin: {subject} by human:alice\n\nNavin-Operation: update\nNavin-Delivery: forged\n{copied}\n"
        );
        repo.commit(
            Some("refs/heads/navin/ledger"),
            &sig,
            &sig,
            &message,
            &tree,
            &[&parent],
        )
        .unwrap()
        .to_string()
    };
    let relaxed = forge(
        &|t| t.validation = navin_ledger::model::Validation::None,
        "relax S1",
    );
    forge(&|t| t.status = TaskStatus::Done, "close S1");

    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/update fact the API is frozen")
        .await;
    let reply = w.reply().await;
    assert!(
        reply.contains(&relaxed[..12]),
        "the reply names the first forged commit: {reply}"
    );
    assert!(
        reply.contains("changes S1's validation") && reply.contains("no valid Navin seal"),
        "{reply}"
    );
    assert_eq!(w.ledger_commits(), commits, "nothing built on the forgery");
    w.finish().await;
}

/// Item 35 of the reliability checklist: the ledger push lands on GitHub but its answer
/// is lost (502). The delivery is retried; the retry finds its operation in the ledger
/// and applies nothing twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_push_that_lands_but_reports_an_error_is_not_applied_twice() {
    use navin_e2e::fake::Fault;
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    w.reply().await;
    let commits = w.ledger_commits();
    let lost = w.fake().inject(
        Fault::on("POST", "/{owner}/{repo}/git-receive-pack")
            .land_then_fail(502)
            .once(),
    );
    let c = w
        .comment(
            issue,
            "alice",
            "/update fact the API is frozen until Friday",
        )
        .await;
    assert_eq!(w.fake().fault_hits(lost), 1, "the push's answer was lost");
    let m = w.ledger().expect("ledger").mission;
    assert_eq!(
        m.facts
            .iter()
            .filter(|f| *f == "the API is frozen until Friday")
            .count(),
        1,
        "{:?}",
        m.facts
    );
    assert_eq!(w.ledger_commits(), commits + 1, "one commit, not two");
    assert!(
        w.reactions(c).contains(&"+1".to_owned()),
        "the retry still answers: {:?}",
        w.reactions(c)
    );
    w.finish().await;
}

/// Issue 29: a comment whose delivery fails for good (here the ledger branch refuses every
/// push with a 503 and `--max-attempts 1` leaves no retry) tells its author so, with what
/// to do, and never the internal error; the delivery stays failed for an admin to redeliver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_whose_delivery_finally_fails_is_told_so_with_what_to_do() {
    use navin_e2e::fake::Fault;
    let mut w = World::with_max_attempts(1).await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    w.reply().await;
    let commits = w.ledger_commits();
    w.fake()
        .inject(Fault::on("POST", "/{owner}/{repo}/git-receive-pack").status(503));
    let error = w
        .comment_that_fails(issue, "alice", "/update fact the API is frozen")
        .await;
    assert!(!error.is_empty(), "the queue keeps why it failed");
    let told = w.reply().await;
    assert!(
        told.contains("could not finish the commands in this comment")
            && told.contains("ledger branch stayed busy or out of reach")
            && told.contains("redeliver delivery")
            && told.contains(&w.last_delivery()),
        "{told}"
    );
    // The delivery's id is random hex and may itself spell 503.
    let without_id = told.replace(&w.last_delivery(), "");
    assert!(!without_id.contains("503"), "no internal detail: {told}");
    assert_eq!(w.ledger_commits(), commits, "nothing landed");
    w.finish().await;
}

/// The same on the first attempt for an error no retry gets past: GitHub refuses the
/// panel's edit (422), so the delivery fails at once and its author is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_whose_delivery_fails_permanently_is_told_so_at_once() {
    use navin_e2e::fake::Fault;
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    w.reply().await;
    w.fake()
        .inject(Fault::on("PATCH", "/repos/{owner}/{repo}/issues/comments/{id}").status(422));
    w.comment_that_fails(issue, "alice", "/update fact the API is frozen")
        .await;
    let told = w.reply().await;
    assert!(
        told.contains("could not finish the commands in this comment")
            && told.contains("GitHub kept refusing or failing"),
        "{told}"
    );
    // The status as a word: a delivery id (a random UUID) may hold the digits.
    assert!(
        !told
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == "422"),
        "no internal detail: {told}"
    );
    w.finish().await;
}

/// Defect 6 of the hardening review: the panel warns while the ledger branch is not
/// protected against rewrites, and says nothing once a ruleset guards it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_warns_while_the_ledger_branch_is_unprotected() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    let panel = w.reply().await;
    assert!(
        panel.contains("The ledger branch `navin/ledger` is not protected"),
        "{panel}"
    );
    assert!(w.called("GET", "/rules/branches/navin%2Fledger"));
    w.finish().await;

    let mut w = World::new().await;
    w.fake().protect_branch("octo-org", "hello", "navin/ledger");
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    let panel = w.reply().await;
    assert!(!panel.contains("is not protected"), "{panel}");
    w.finish().await;
}
