//! Every page that shows people's and Navin's texts, rendered with texts that name code:
//! code shows as `<code>`, never as literal backticks, and no text opens a link.

use chrono::{TimeZone, Utc};
use navin_engine::view::RepoView;
use navin_ledger::model::{Actor, Ledger, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome, UpdateArgs};

use super::missions::{self, MissionRow};
use super::repo::{self, GitHubLinks};
use super::Chrome;

fn ctx() -> Ctx {
    let now = Utc
        .with_ymd_and_hms(2026, 12, 1, 12, 0, 0)
        .single()
        .unwrap_or_default();
    Ctx::new(now, Actor::Human("alice".into()))
}

fn applied(ledger: Option<&Ledger>, op: Operation) -> Ledger {
    match apply(ledger, &op, &ctx()) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} failed: {other:?}", op.name()),
    }
}

/// A mission whose goal, step title, facts, constraints, acceptance and open question
/// name code, plus a hostile link and tag.
fn coded() -> Ledger {
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "Add `--since` to `navin ledger history`".into(),
            constraints: vec!["Keep `Store::read` unchanged".into()],
            acceptance_criteria: vec!["`cargo test` passes".into()],
            steps: vec![NewTask {
                id: "S1".into(),
                title: "Parse `--since` in `cli/args.rs`".into(),
                validation: Validation::Test,
                ..NewTask::default()
            }],
            ..InitArgs::default()
        }),
    );
    applied(
        Some(&l),
        Operation::Update(UpdateArgs {
            add_facts: vec!["Dates are `YYYY-MM-DD` [not a link](javascript:x) <b>".into()],
            add_missing_info: vec!["Should `--until` come too?".into()],
            reason: "test".into(),
            ..UpdateArgs::default()
        }),
    )
}

/// The text a reader sees: tags and everything inside `<code>` removed, entities left.
fn visible_outside_code(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    let mut code_depth = 0usize;
    while let Some(lt) = rest.find('<') {
        if code_depth == 0 {
            out.push_str(&rest[..lt]);
        }
        let Some(gt) = rest[lt..].find('>') else {
            break;
        };
        let tag = &rest[lt..lt + gt + 1];
        if tag.starts_with("<code") {
            code_depth += 1;
        } else if tag.starts_with("</code") {
            code_depth = code_depth.saturating_sub(1);
        }
        rest = &rest[lt + gt + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_missions_and_repository_pages_show_code_as_code_and_open_no_link_from_a_text() {
    let chrome = Chrome {
        base: "",
        login: "alice",
        csrf: "csrf",
        admin_somewhere: false,
    };
    let ledger = coded();
    let rows = vec![MissionRow {
        full_name: "octo-org/hello".into(),
        plans: 0,
        pending_plans: 0,
        ledger: Ok(Some(ledger.clone())),
    }];
    let view = RepoView {
        repository: "octo-org/hello".into(),
        ledger_branch: "navin/ledger".into(),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        ledger: Ok(Some(ledger)),
        trusted: None,
        plans: Vec::new(),
    };
    let links = GitHubLinks {
        repo_url: "https://github.com/octo-org/hello".into(),
    };
    for (page, html) in [
        (
            "missions",
            missions::render(&chrome, &rows, false).into_string(),
        ),
        (
            "repository",
            repo::render(&chrome, &view, &links, None, None).into_string(),
        ),
    ] {
        let seen = visible_outside_code(&html);
        assert!(!seen.contains('`'), "{page}: a literal backtick in {seen}");
        assert!(html.contains("<code>--since</code>"), "{page}: {html}");
        assert!(!html.contains("href=\"javascript"), "{page}: {html}");
    }
}
