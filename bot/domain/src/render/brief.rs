//! The sub-agent brief a dispatched step's issue carries: Role, Goal, Context paths, Constraints, Done when, Do not (docs/engine.md, "Dispatch").
//!
//! A brief stands alone: whoever picks the step up (a coding agent or a person) sees
//! none of the conversation that produced the mission, so everything needed to finish
//! and prove the step is written out here, including how to link the work back.

use navin_ledger::model::{Ledger, Task, Validation};

use super::repo::RepoRef;
use super::text::{code, inline, prose, truncate_chars};

/// Longest title GitHub shows comfortably; ours stay well under its 256 limit.
const TITLE_CHARS: usize = 120;
/// Paths listed before "and N more".
const MAX_PATHS: usize = 30;

/// The hidden line that finds a step's issue again (after a crash between creating
/// the issue and recording it on the ledger). Bound to the mission's start time so a
/// later mission's step `S1` is not mistaken for this one's.
pub fn step_marker(ledger: &Ledger, step: &str) -> String {
    let safe: String = step
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    format!(
        "<!-- navin:step {safe} mission {} -->",
        ledger.mission.created_at.timestamp()
    )
}

/// What a brief says besides the ledger: each front end (dispatch, CLI, MCP) fills in
/// what it knows, so all three render the same text from the same facts.
#[derive(Debug, Default, Clone, Copy)]
pub struct BriefOptions<'a> {
    /// Check names config requires for the step's validation (empty: every trusted
    /// check on the PR head).
    pub required_checks: &'a [String],
    /// The model the agent is asked to use (`models.dev` or `models.deep`).
    pub model: Option<&'a str>,
    /// The plan's edits since it was first proposed, as Markdown
    /// (`PlanRecord::binding_edits`): binding on the agent.
    pub plan_edits: Option<&'a str>,
    /// The agent works in a local checkout of a mission with no GitHub behind it
    /// (`navin board brief`, `navin mcp` on a mission made locally): its work is a commit
    /// proven by `navin board verify`, not a pull request proven by CI.
    pub checkout: bool,
}

/// Issue title and body for `task`.
pub fn step_brief(
    ledger: &Ledger,
    task: &Task,
    repo: &RepoRef,
    options: BriefOptions<'_>,
) -> (String, String) {
    let required_checks = options.required_checks;
    let title = truncate_chars(
        &format!("[navin {}] {}", task.id, task.title.trim()),
        TITLE_CHARS,
    );
    let mut body = String::new();
    body.push_str(&step_marker(ledger, &task.id));
    body.push('\n');
    body.push_str(&format!(
        "Step {} of the mission **{}** (v{}). This {} is the whole brief: it does not assume you saw the conversation that planned the mission.\n\n",
        code(&task.id),
        prose(&ledger.mission.goal, 200),
        ledger.mission.version,
        if options.checkout { "text" } else { "issue" }
    ));

    let place = match options.checkout {
        true => super::attempts::Workplace::Checkout,
        false => super::attempts::Workplace::PullRequests,
    };
    body.push_str(&super::attempts::previous_attempts(task, place));
    body.push_str(&super::attempts::last_red_run(task));

    body.push_str("### Role\n");
    body.push_str(&match options.checkout {
        true => "Implementer of one step: change the code for this step only, committed in this checkout.\n\n".to_owned(),
        false => format!(
            "Implementer of one step in {}: change the code for this step only, in one pull request.\n\n",
            code(&repo.full_name)
        ),
    });

    body.push_str("### Goal\n");
    body.push_str(&prose(&task.title, 300));
    body.push('\n');
    if let Some(d) = task.description.as_deref().filter(|d| !d.trim().is_empty()) {
        body.push('\n');
        body.push_str(&inline(d, 2000));
        body.push('\n');
    }
    body.push('\n');

    body.push_str("### Context paths\n");
    let paths = context_paths(task);
    if paths.is_empty() {
        body.push_str("- None named by the plan: start from the files the goal mentions.\n");
    } else {
        for p in paths.iter().take(MAX_PATHS) {
            body.push_str(&format!("- {}\n", code(p)));
        }
        if paths.len() > MAX_PATHS {
            body.push_str(&format!("- and {} more\n", paths.len() - MAX_PATHS));
        }
    }
    if let Some(plan) = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.as_deref())
    {
        let path = format!("{}/{plan}.md", navin_ledger::store::PLANS_DIR);
        body.push_str(&match options.checkout {
            true => format!(
                "- The approved plan: {}\n",
                code(&format!("git show {}:{path}", repo.ledger_branch))
            ),
            false => format!(
                "- The approved plan: [{}]({})\n",
                code(&path).trim_matches('`'),
                repo.ledger_blob_url(&path)
            ),
        });
    }
    body.push('\n');

    body.push_str("### Constraints\n");
    for c in &ledger.mission.constraints {
        body.push_str(&format!("- {}\n", prose(c, 300)));
    }
    for fact in &ledger.mission.facts {
        body.push_str(&format!("- Fact (a person's word): {}\n", prose(fact, 500)));
    }
    if !task.depends_on.is_empty() {
        let deps: Vec<String> = task.depends_on.iter().map(|d| code(d)).collect();
        body.push_str(&format!(
            "- Builds on {} (done): keep their behaviour.\n",
            deps.join(", ")
        ));
    }
    body.push_str(&format!(
        "- At most {} attempts: each failed required check counts one (this step has used {}).\n\n",
        task.max_retries, task.retry_count
    ));

    body.push_str("### Done when\n");
    if let Some(a) = task.acceptance.as_deref().filter(|a| !a.trim().is_empty()) {
        body.push_str(&format!("- Acceptance: {}\n", prose(a, 1000)));
    }
    if options.checkout {
        done_in_checkout(&mut body, task);
    } else {
        done_on_github(&mut body, task, required_checks);
    }
    body.push('\n');

    body.push_str("### Do not\n");
    let ask = match options.checkout {
        true => "with `ask_user`",
        false => "on this issue",
    };
    body.push_str(&format!(
        "- Do not work on other steps or widen the scope; ask {ask} instead.\n"
    ));
    body.push_str(&format!(
        "- Do not write to the ledger branch {} or claim the step done {}.\n",
        code(&repo.ledger_branch),
        match options.checkout {
            true => "before `navin board verify` records a green run: only that run proves it",
            false => "in a comment: only green checks prove it",
        }
    ));
    body.push_str(&format!(
        "- Do not invent facts: when information is missing, {} and wait.\n",
        match options.checkout {
            true => "ask with `ask_user`",
            false => "say what on this issue",
        }
    ));
    body.push('\n');
    if let Some(edits) = options.plan_edits.filter(|e| !e.trim().is_empty()) {
        body.push_str("### Plan edits (binding)\n");
        body.push_str("The plan was edited after it was first proposed. These edits are binding: added entries are part of the work, removed entries are not to be done, and answered questions are the answers to use.\n\n");
        body.push_str(edits.trim_end());
        body.push_str("\n\n");
    }
    report_back(&mut body, ledger, task, options);
    (title, body)
}

/// "Done when" for a step worked in a local checkout: a commit, proven by `navin board
/// verify`.
fn done_in_checkout(body: &mut String, task: &Task) {
    match task.validation {
        Validation::Test | Validation::Lint | Validation::Verify => {
            body.push_str(&format!(
                "- A commit in this checkout makes the step's change (since the commit the step was started from), on a clean tree.\n- Validation `{}`: `navin board verify {}` records a green run for that `HEAD`; then `board_done` closes the step.\n",
                task.validation, task.id
            ));
        }
        Validation::Manual => body.push_str(
            "- Validation `manual`: a person checks the change and closes the step with `navin board done`.\n",
        ),
        Validation::None => body.push_str(
            "- Validation `none`: the change is committed; `board_done` closes the step.\n",
        ),
    }
}

/// "Done when" for a step worked through a pull request on GitHub.
fn done_on_github(body: &mut String, task: &Task, required_checks: &[String]) {
    body.push_str(&format!(
        "- A pull request with the line `Navin-Step: {}` in its body (or a branch named `navin/{}-…`) is open.\n",
        task.id, task.id
    ));
    match task.validation {
        Validation::Test | Validation::Lint | Validation::Verify => {
            let mut checks = if required_checks.is_empty() {
                "every check run from a trusted app".to_owned()
            } else {
                required_checks
                    .iter()
                    .map(|c| code(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            for own in crate::evidence::own_checks(task) {
                let commands: Vec<String> = task.commands.iter().map(|c| code(c)).collect();
                checks.push_str(&format!(
                    ", and {} (this stage's verification: {}, run on the pull request by the `verify` job)",
                    code(&own),
                    commands.join(", ")
                ));
            }
            body.push_str(&format!(
                "- Validation `{}`: {checks} green on the pull request's latest head commit. Navin marks the step done itself when they pass.\n",
                task.validation
            ));
        }
        Validation::Manual => body.push_str(
            "- Validation `manual`: a maintainer checks the change and closes the step with `/done <step> <what was checked>`.\n",
        ),
        Validation::None => body.push_str(
            "- Validation `none`: a maintainer closes the step with `/done` once the pull request is merged.\n",
        ),
    }
}

/// The branch a step's current attempt works on. An attempt that continues a pull
/// request (after red CI) keeps that pull request's branch; otherwise the first attempt
/// works on `navin/<step>-<slug of the title>` and attempt n on
/// `navin/<step>-a<n>-<slug>`, so starting over (after a replan, a closed pull request)
/// never brings an earlier attempt's commits back. Every form is a `navin/<step>-…`
/// branch, which links its pull request to the step.
pub fn step_branch(task: &Task) -> String {
    if crate::rules::attempts::continues(task).is_some() {
        if let Some(branch) = task
            .links
            .branch
            .as_deref()
            .filter(|b| !b.trim().is_empty())
        {
            return branch.to_owned();
        }
    }
    let attempt = match task.attempts.last() {
        Some(open) if open.is_open() => open.number,
        _ => navin_ledger::ops::next_attempt_number(&task.attempts),
    };
    let mut slug = String::new();
    for c in task.title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let prefix = match attempt {
        0 | 1 => format!("navin/{}", task.id),
        n => format!("navin/{}-a{n}", task.id),
    };
    if slug.is_empty() {
        prefix
    } else {
        format!("{prefix}-{slug}")
    }
}

/// How to validate locally and report back, plus the digest: the same for the issue an
/// agent is handed, `navin board brief` and the MCP `board_brief` tool.
fn report_back(body: &mut String, ledger: &Ledger, task: &Task, options: BriefOptions<'_>) {
    if !task.commands.is_empty() || task.validation.needs_run() {
        validation(body, task);
    }
    report(body, ledger, task, options);
}

fn validation(body: &mut String, task: &Task) {
    body.push_str("### Validation\n");
    match task.commands.as_slice() {
        [c] => body.push_str(&format!(
            "- Command: {} (run it with `navin board verify {}`, which records the run).\n",
            code(c),
            task.id
        )),
        [_, _, ..] => body.push_str(&format!(
            "- Commands, in order: {} (`navin board verify {}` runs them all and records each run; the step needs every one green).\n",
            task.commands.iter().map(|c| code(c)).collect::<Vec<_>>().join(", "),
            task.id
        )),
        [] => body.push_str(&format!(
            "- `navin board verify {}` runs the repository's `validation.commands.{}` and records the run.\n",
            task.id,
            match task.validation {
                Validation::Lint => "lint",
                Validation::Verify => "verify",
                _ => "test",
            }
        )),
    }
    body.push('\n');
}

fn report(body: &mut String, ledger: &Ledger, task: &Task, options: BriefOptions<'_>) {
    body.push_str("### Report back\n");
    if let Some(model) = options.model {
        body.push_str(&format!(
            "- Model: {} (this {} mission's choice in `.github/navin.yml` `models`).\n",
            code(model),
            ledger.mission.mode.as_str()
        ));
    }
    body.push_str(&match options.checkout {
        true => format!(
            "- Work on the branch {} in this checkout and commit the change; `navin board verify {}` runs the step's validation and records it.\n",
            code(&step_branch(task)),
            task.id
        ),
        false => format!(
            "- Work on the branch {} and open one pull request whose body has the line `Navin-Step: {}`.\n",
            code(&step_branch(task)),
            task.id
        ),
    });
    body.push_str("- With Navin's MCP server (`navin mcp`): `board_start`, then `ledger_progress` each turn (real_progress, fingerprint, tokens, cost), `board_done` once the run is green, `board_fail` or `ledger_pause` when stuck. You never hand in evidence: Navin looks it up.\n\n");
    // Indented, not fenced: a goal holding a fence cannot end the block early.
    body.push_str("### Mission digest\n\n");
    for line in navin_ledger::digest::digest(ledger).text.lines() {
        body.push_str("    ");
        body.push_str(line);
        body.push('\n');
    }
}

/// Repository paths the step names in its title or description (plan steps carry
/// `Files: a, b.` and titles like `Edit src/lib.rs`), in order, without duplicates.
pub fn context_paths(task: &Task) -> Vec<String> {
    navin_ledger::paths::text_paths(&format!(
        "{} {}",
        task.title,
        task.description.as_deref().unwrap_or_default()
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use navin_ledger::{Actor, Ctx, InitArgs, NewTask, Operation, Origin};

    fn ledger() -> Ledger {
        let now = chrono::Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
        let ctx = Ctx::new(now, Actor::Human("alice".into()));
        let op = Operation::Init(InitArgs {
            goal: "Add a --since option".into(),
            origin: Some(Origin {
                repository: Some("o/r".into()),
                issue: Some(4),
                plan_id: Some("issue-4".into()),
            }),
            constraints: vec!["Keep the CLI backwards compatible".into()],
            steps: vec![
                NewTask {
                    id: "C1".into(),
                    title: "Edit src/cli/history.rs".into(),
                    description: Some(
                        "Files: src/cli/history.rs, docs/cli.md. Parse the date.".into(),
                    ),
                    validation: Validation::Test,
                    acceptance: Some("`navin ledger history --since 2026-01-01` filters".into()),
                    ..NewTask::default()
                },
                NewTask {
                    id: "C2".into(),
                    title: "Document it".into(),
                    depends_on: vec!["C1".into()],
                    ..NewTask::default()
                },
            ],
            ..InitArgs::default()
        });
        match navin_ledger::ops::apply(None, &op, &ctx).unwrap() {
            navin_ledger::ops::Outcome::Applied(a) => a.ledger,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_brief_has_every_field_the_seed_requires_and_copies_acceptance_and_validation() {
        let l = ledger();
        let task = l.board.task("C1").unwrap();
        let mut repo = RepoRef::new("o/r", "https://github.com");
        repo.ledger_branch = "navin/ledger".into();
        let checks = ["ci / test".to_owned()];
        let options = BriefOptions {
            required_checks: &checks,
            ..BriefOptions::default()
        };
        let (title, body) = step_brief(&l, task, &repo, options);
        assert_eq!(title, "[navin C1] Edit src/cli/history.rs");
        let order: Vec<usize> = [
            "### Role",
            "### Goal",
            "### Context paths",
            "### Constraints",
            "### Done when",
            "### Do not",
        ]
        .iter()
        .map(|h| body.find(h).unwrap_or_else(|| panic!("missing {h}")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{body}");
        assert!(body.contains("`src/cli/history.rs`") && body.contains("`docs/cli.md`"));
        assert!(body.contains("Keep the CLI backwards compatible"));
        assert!(body.contains("--since 2026-01-01"), "acceptance copied");
        assert!(body.contains("Validation `test`") && body.contains("`ci / test`"));
        assert!(body.contains("Navin-Step: C1"));
        assert!(body.contains(".navin/plans/issue-4.md"));
        assert!(body.starts_with(&step_marker(&l, "C1")));
        // How to report back, and the digest, close the brief.
        let tail: Vec<usize> = ["### Validation", "### Report back", "### Mission digest"]
            .iter()
            .map(|h| body.find(h).unwrap_or_else(|| panic!("missing {h}")))
            .collect();
        assert!(
            order[5] < tail[0] && tail.windows(2).all(|w| w[0] < w[1]),
            "{body}"
        );
        assert!(
            body.contains("`navin/C1-edit-src-cli-history-rs`"),
            "{body}"
        );
        assert!(
            body.contains("    Mission v1 [running]: Add a --since option"),
            "{body}"
        );
        assert!(body.contains("`navin board verify C1`"), "{body}");
    }

    #[test]
    fn a_step_command_from_the_plan_reaches_the_brief() {
        let mut l = ledger();
        let mut task = l.board.task("C1").unwrap().clone();
        task.commands = vec!["cargo test -p navin-bot history".into()];
        l.board.tasks[0] = std::sync::Arc::new(task.clone());
        let (_, body) = step_brief(
            &l,
            &task,
            &RepoRef::new("o/r", "https://github.com"),
            BriefOptions::default(),
        );
        assert!(
            body.contains("Command: `cargo test -p navin-bot history`"),
            "{body}"
        );
        assert_eq!(step_branch(&task), "navin/C1-edit-src-cli-history-rs");
        task.title = "!!!".into();
        assert_eq!(step_branch(&task), "navin/C1");
    }

    #[test]
    fn an_attempt_that_starts_over_gets_a_branch_of_its_own_and_a_continued_one_keeps_its_pull_requests(
    ) {
        use navin_ledger::model::{Attempt, AttemptOutcome};
        let l = ledger();
        let mut task = l.board.task("C1").unwrap().clone();
        let at = chrono::Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        let attempt = |number: u32, outcome: Option<AttemptOutcome>, pr: Option<u64>| Attempt {
            number,
            agent: "workflow".into(),
            started_at: at,
            ended_at: outcome.map(|_| at),
            outcome,
            pr,
            tokens: 0,
            cost_usd: 0.0,
            failure: None,
            note: None,
            spend_unreported: false,
            start_over: false,
        };
        task.links.branch = Some("feature/history".into());
        task.links.prs = vec![12];
        // Red CI on attempt 1: attempt 2 goes on with #12, on its branch.
        task.attempts = vec![attempt(1, Some(AttemptOutcome::CiRed), Some(12))];
        assert_eq!(step_branch(&task), "feature/history");
        // Replanned since: attempt 2 starts over on a branch no attempt used.
        task.attempts[0].start_over = true;
        assert_eq!(step_branch(&task), "navin/C1-a2-edit-src-cli-history-rs");
        // #13 closed: attempt 3 (open now) starts over too.
        task.attempts = vec![
            attempt(1, Some(AttemptOutcome::CiRed), Some(12)),
            attempt(2, Some(AttemptOutcome::Closed), Some(13)),
            attempt(3, None, None),
        ];
        assert_eq!(step_branch(&task), "navin/C1-a3-edit-src-cli-history-rs");
        let (_, body) = step_brief(
            &l,
            &task,
            &RepoRef::new("o/r", "https://github.com"),
            BriefOptions::default(),
        );
        assert!(
            body.contains("`navin/C1-a3-edit-src-cli-history-rs`"),
            "the brief names the attempt's branch: {body}"
        );
    }

    #[test]
    fn a_stage_step_names_its_verification_as_the_navin_verify_check() {
        let l = ledger();
        let mut task = l.board.task("C1").unwrap().clone();
        task.commands = vec!["cargo test -p parser".into()];
        let repo = RepoRef::new("o/r", "https://github.com");
        let (_, plain) = step_brief(&l, &task, &repo, BriefOptions::default());
        assert!(!plain.contains("navin/verify"), "{plain}");
        task.stage = Some(1);
        let (_, staged) = step_brief(&l, &task, &repo, BriefOptions::default());
        assert!(
            staged
                .contains("and `navin/verify` (this stage's verification: `cargo test -p parser`"),
            "{staged}"
        );
    }

    #[test]
    fn context_paths_are_taken_from_the_step_text_without_prose_words() {
        let l = ledger();
        let paths = context_paths(l.board.task("C1").unwrap());
        assert_eq!(paths, ["src/cli/history.rs", "docs/cli.md"]);
        assert!(context_paths(l.board.task("C2").unwrap()).is_empty());
        for not_a_path in ["e.g.", "i.e.,", "v1.2", "https://x.y/z", "--since"] {
            let mut t = l.board.task("C2").unwrap().clone();
            t.title = format!("see {not_a_path}");
            assert!(context_paths(&t).is_empty(), "{not_a_path}");
        }
        let mut t = l.board.task("C2").unwrap().clone();
        t.title = "Fix main.c and .github/navin.yml".into();
        assert_eq!(context_paths(&t), ["main.c", ".github/navin.yml"]);
    }

    #[test]
    fn markers_differ_between_missions_and_steps() {
        let l = ledger();
        assert_ne!(step_marker(&l, "C1"), step_marker(&l, "C2"));
        let mut later = l.clone();
        later.mission.created_at += chrono::Duration::days(1);
        assert_ne!(step_marker(&l, "C1"), step_marker(&later, "C1"));
        assert!(!step_marker(&l, "C1 -->x").contains("-->x"));
    }
}
