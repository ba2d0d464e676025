//! The panel's warning about who may change the ledger branch, end to end: without `administration: read` a guarded branch's exemptions are unknown; with it, classic protection's holes and ruleset bypass actors are named (Navin itself is not), and a refused read degrades instead of failing the command.

use navin_e2e::fake::{BypassActor, ClassicProtection, Fault};

use crate::world::World;

const OWNER: &str = "octo-org";
const REPO: &str = "hello";
const BRANCH: &str = "navin/ledger";

/// Grants the (only) installation `administration` at `level`.
fn grant_administration(w: &World, level: &str) {
    w.fake().with_state(|m| {
        for inst in m.installations.values_mut() {
            inst.permissions
                .insert("administration".into(), level.into());
        }
    });
}

/// Starts a mission and returns the panel it posts.
async fn panel(w: &mut World) -> String {
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    w.reply().await
}

fn actor(kind: &str, id: Option<u64>) -> BypassActor {
    BypassActor {
        actor_type: kind.into(),
        actor_id: id,
        bypass_mode: "always".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_administration_read_a_guarded_ledger_branch_says_who_may_bypass_is_unknown() {
    let mut w = World::new().await;
    w.fake().protect_branch(OWNER, REPO, BRANCH);
    let panel = panel(&mut w).await;
    assert!(
        panel.contains("is protected, but who may still push to it or bypass its rules is unknown"),
        "{panel}"
    );
    assert!(panel.contains("`administration: read`"), "{panel}");
    assert!(!w.called("GET", "/rulesets/"), "no admin read tried");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_administration_read_the_panel_names_the_holes_of_classic_protection() {
    let mut w = World::new().await;
    grant_administration(&w, "read");
    w.fake().protect_branch_classic(
        OWNER,
        REPO,
        BRANCH,
        ClassicProtection {
            allow_force_pushes: true,
            enforce_admins: false,
            ..ClassicProtection::default()
        },
    );
    let panel = panel(&mut w).await;
    assert!(
        panel.contains("is protected, but not only Navin can change it: force pushes allowed; admins not included; anyone with write access may push"),
        "{panel}"
    );
    assert!(w.called("GET", "/branches/navin%2Fledger/protection"));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_administration_the_panel_lists_ruleset_bypass_actors_but_not_navin() {
    let mut w = World::new().await;
    // GitHub shows a ruleset's bypass list only to those who may edit it.
    grant_administration(&w, "write");
    let navin = w.fake().with_state(|m| m.app.id);
    w.fake().protect_branch(OWNER, REPO, BRANCH);
    let id = w.fake().add_branch_rule(OWNER, REPO, BRANCH, "update");
    w.fake().set_bypass_actors(
        OWNER,
        REPO,
        id,
        vec![
            actor("Team", Some(5)),
            actor("Integration", Some(navin)),
            actor("OrganizationAdmin", None),
        ],
    );
    let panel = panel(&mut w).await;
    assert!(
        panel.contains("bypass actors: team 5, organization admins"),
        "{panel}"
    );
    assert!(!panel.contains(&format!("app {navin}")), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_administration_read_a_bypass_list_github_withholds_is_named_hidden() {
    let mut w = World::new().await;
    grant_administration(&w, "read");
    let id = w.fake().add_branch_rule(OWNER, REPO, BRANCH, "update");
    let panel = panel(&mut w).await;
    assert!(
        panel.contains(&format!("who may bypass ruleset {id} is hidden")),
        "{panel}"
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_branch_only_navin_may_bypass_gets_no_warning() {
    let mut w = World::new().await;
    grant_administration(&w, "write");
    let navin = w.fake().with_state(|m| m.app.id);
    w.fake().protect_branch(OWNER, REPO, BRANCH);
    let id = w.fake().add_branch_rule(OWNER, REPO, BRANCH, "update");
    w.fake()
        .set_bypass_actors(OWNER, REPO, id, vec![actor("Integration", Some(navin))]);
    let panel = panel(&mut w).await;
    assert!(!panel.contains("ledger branch `navin/ledger`"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_protection_read_degrades_and_the_command_still_answers() {
    let mut w = World::new().await;
    grant_administration(&w, "read");
    w.fake().protect_branch_classic(
        OWNER,
        REPO,
        BRANCH,
        ClassicProtection {
            enforce_admins: true,
            ..ClassicProtection::default()
        },
    );
    w.fake()
        .inject(Fault::on("GET", "/repos/{owner}/{repo}/branches/{branch}/protection").status(403));
    let panel = panel(&mut w).await;
    assert!(
        panel.contains("classic protection settings unreadable"),
        "{panel}"
    );
    w.finish().await;
}
