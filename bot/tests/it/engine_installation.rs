//! Installation events end to end: a repository removed from the App loses its clones
//! under the data directory, and a repository added back that already has a ledger
//! branch gets its mission panel refreshed, with no mission command needed.

use serde_json::json;

use crate::engine_support::{OWNER, REPO};
use crate::world::World;

const PANEL: &str = "<!-- navin:panel";

/// `installation_repositories` `action` naming this World's repository.
fn repositories_event(w: &World, action: &str) -> navin_e2e::Payload {
    let list = format!("/repositories_{action}/0");
    let id = w.fake().repo_id(OWNER, REPO);
    w.payload(&format!("installation_repositories.{action}"))
        .set(&format!("{list}/id"), json!(id))
        .set(&format!("{list}/name"), json!(REPO))
        .set(
            &format!("{list}/full_name"),
            json!(format!("{OWNER}/{REPO}")),
        )
}

/// alice starts a mission on a new issue; returns the issue once the panel is posted.
async fn mission(w: &mut World) -> u64 {
    let issue = w.issue("Ship it", "- [ ] first\n- [ ] second\n");
    w.comment(issue, "alice", "/mission ship it").await;
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    issue
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_removed_from_the_app_loses_its_clones_under_the_data_dir() {
    let mut w = World::new().await;
    mission(&mut w).await;
    let ledger = navin_engine::clones::clone_dir(w.data_dir(), &format!("{OWNER}/{REPO}"));
    assert!(ledger.exists(), "the mission made a ledger clone");
    let source = navin_engine::clones::source_dir(w.data_dir(), &format!("{OWNER}/{REPO}"));
    std::fs::create_dir_all(&source).unwrap();

    w.clear_requests();
    let removed = repositories_event(&w, "removed");
    w.send(&removed).await;
    assert!(
        !ledger.exists(),
        "ledger clone left at {}",
        ledger.display()
    );
    assert!(
        !source.exists(),
        "source clone left at {}",
        source.display()
    );
    assert_eq!(w.requests("installation_repositories.removed"), 0);
    // The ledger branch on GitHub is untouched: only the local copies went.
    assert!(w.ledger().is_some());
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_added_back_with_a_ledger_gets_its_panel_refreshed() {
    let mut w = World::new().await;
    let issue = mission(&mut w).await;
    let panel = w.latest(PANEL);
    // Removed, then its panel goes stale on GitHub (hand-edited, say).
    w.send(&repositories_event(&w, "removed")).await;
    let marker = panel.lines().next().unwrap().to_owned();
    w.fake().with_state(|m| {
        let comment = m.comments.values_mut().find(|c| c.body.starts_with(PANEL));
        comment.expect("the panel comment").body = format!("{marker}\nstale");
    });

    w.clear_requests();
    w.send(&repositories_event(&w, "added")).await;
    let refreshed = w.edited(PANEL);
    assert_eq!(refreshed, panel, "the panel shows the ledger again");
    let on_issue = w.fake().comments(OWNER, REPO, issue);
    assert!(on_issue.iter().any(|c| c.body == panel), "{on_issue:#?}");
    let ledger = navin_engine::clones::clone_dir(w.data_dir(), &format!("{OWNER}/{REPO}"));
    assert!(ledger.exists(), "the ledger was fetched again");
    w.requests("installation_repositories.added (repository with a mission)");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_added_without_a_ledger_costs_one_config_read_and_posts_nothing() {
    let mut w = World::new().await;
    w.clear_requests();
    w.send(&repositories_event(&w, "added")).await;
    assert!(w.called("GET", "/contents/**"));
    assert!(w.ledger().is_none(), "no ledger branch was made");
    let n = w.requests("installation_repositories.added (repository without a ledger)");
    assert!(n <= 3, "{n} requests");
    w.no_reply().await;
    w.finish().await;
}
