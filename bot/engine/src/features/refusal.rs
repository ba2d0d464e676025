//! Why a command changed nothing, as a typed value: handlers decide the refusal, this
//! module alone words it, so callers (the automatic plan, tests) act on the kind and
//! never on the text.

use navin_domain::evidence::NotDone;
use navin_domain::render::reply;

/// A command that went through to Navin but changed nothing, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// The command's arguments did not parse; the parser's own words.
    Unparsed(String),
    /// `.github/navin.yml` on the default branch is invalid (why, in the loader's words).
    ConfigInvalid(String),
    /// A ledger rule or the ledger branch's state refused the change (worded with the
    /// slash command that fixes it when there is one).
    Ledger(crate::error::LedgerRefusal),
    /// More commands in one comment than `limits.max_commands_per_comment`.
    TooManyCommands {
        cap: usize,
        skipped: usize,
        /// The first skipped lines, already as code spans.
        listed: Vec<String>,
    },
    /// A free text (`part`: request, feedback, goal…) over `limits.max_text_bytes`.
    TextTooLong {
        command: String,
        part: &'static str,
        bytes: usize,
        limit: usize,
    },
    /// A mutating command on a closed or locked issue or pull request.
    ClosedForChanges {
        command: String,
        on_pull_request: bool,
        why: &'static str,
    },
    /// A mutating command from someone without write access.
    NeedsWrite {
        command: String,
        repo: String,
        author: String,
        role: String,
    },
    NoMission,
    /// `/answer N` where N is not an open question (`listed`: the open ones, in words).
    NoOpenQuestion {
        number: usize,
        listed: String,
    },
    /// `/mission` while another mission is live, without `--replace`.
    MissionLive {
        status: String,
        place: String,
        goal: String,
    },
    /// `/mission` without a goal on an issue with no approved plan.
    NoApprovedPlan,
    /// `/mission` would record a command that can never run on the default branch
    /// (`step`: the plan's step whose verification it is; `None`: `validation.commands`).
    CommandCannotRun {
        step: Option<String>,
        problem: String,
    },
    NoStep {
        step: String,
    },
    /// `/done` on a manual step without a word on what was checked.
    ManualNeedsNote {
        step: String,
    },
    /// `/done` on a step whose evidence does not close it.
    NotDone {
        step: String,
        validation: String,
        why: NotDone,
    },
    /// The planner could not make a plan.
    PlannerFailed(String),
    PlanNotStored,
    /// The plan record refused the change (already approved, approved twice…).
    Plan(String),
    /// `/approve` in a pull request's conversation: reviews approve there.
    ApproveWithReview,
    /// `approval.require_codeowners` and the approver owns none of the plan's files.
    NeedsCodeOwner(String),
    /// The `/plan edit` block is not a valid plan.
    PlanEditInvalid(String),
    /// The `/plan edit` block is the stored text.
    PlanUnchanged,
    /// The block and the texts stored since change the same lines (`reason` names the
    /// sections).
    EditConflict(String),
    /// The text the block was written against is no longer in recent history.
    UnknownEditBase,
    /// A plan command where there is no plan (`verb`: what was asked).
    NoPlan {
        verb: &'static str,
    },
}

impl Refusal {
    /// The whole reply: its reason escaped as prose, except a reason Navin rendered as
    /// Markdown itself (a failed or missing check's message, whose links must stay links).
    pub(crate) fn reply(&self) -> String {
        match self {
            Refusal::NotDone {
                why: NotDone::Failed { message } | NotDone::NotGreen { message },
                ..
            } => reply::refusal_rendered(message, &self.todo()),
            _ => reply::refusal(&self.reason(), &self.todo()),
        }
    }

    /// What went wrong, as the reply's first sentence.
    pub(crate) fn reason(&self) -> String {
        match self {
            Refusal::Ledger(why) => why.to_string(),
            Refusal::Unparsed(why)
            | Refusal::ConfigInvalid(why)
            | Refusal::Plan(why)
            | Refusal::NeedsCodeOwner(why)
            | Refusal::EditConflict(why) => why.clone(),
            Refusal::PlannerFailed(why) => format!("no plan could be made: {why}"),
            Refusal::TooManyCommands {
                cap,
                skipped,
                listed,
            } => format!(
                "Navin runs at most {cap} commands from one comment; these {skipped} were skipped: {}.",
                listed.join("; ")
            ),
            Refusal::TextTooLong {
                command,
                part,
                bytes,
                limit,
            } => format!(
                "the {part} of `/{command}` is {bytes} bytes; Navin takes at most {limit}, so nothing changed."
            ),
            Refusal::ClosedForChanges {
                command,
                on_pull_request,
                why,
            } => {
                let what = if *on_pull_request {
                    "pull request"
                } else {
                    "issue"
                };
                format!(
                    "`/{command}` changes the mission or its plan, and this {what} is {why}: nothing changed."
                )
            }
            Refusal::NeedsWrite {
                command,
                repo,
                author,
                role,
            } => format!(
                "`/{command}` changes the mission, which needs write access to {repo}; @{author}'s role is `{role}`."
            ),
            Refusal::NoMission => "there is no mission on this repository yet.".to_owned(),
            Refusal::NoOpenQuestion { number, listed } => {
                format!("there is no open question {number}: {listed}.")
            }
            Refusal::MissionLive {
                status,
                place,
                goal,
            } => format!("a mission is already {status} on {place}: {goal:?}."),
            Refusal::NoApprovedPlan => "`/mission` without a goal starts from this issue's approved plan, and there is none.".to_owned(),
            Refusal::CommandCannotRun { step, problem } => match step {
                Some(step) => format!("the plan's verification for {step} can never run on the default branch: {problem}."),
                None => format!("`validation.commands` in `.github/navin.yml` can never run on the default branch: {problem}."),
            },
            Refusal::NoStep { step } => format!("there is no step `{step}` on the board."),
            Refusal::ManualNeedsNote { step } => {
                format!("`{step}` is a manual step: closing it needs a word on what was checked.")
            }
            Refusal::NotDone {
                step,
                validation,
                why,
            } => match why {
                NotDone::NoLinkedPr { checks } => format!(
                    "`{step}` has validation `{validation}`: it is done only when {checks} is green on a linked pull request's head, and no pull request is linked yet. A comment is not evidence for it."
                ),
                NotDone::Failed { message } | NotDone::NotGreen { message } => message.clone(),
                NotDone::Waiting { why } => format!("`{step}` is green but not done: {why}."),
            },
            Refusal::PlanNotStored => "the plan could not be stored.".to_owned(),
            Refusal::ApproveWithReview => "on a pull request the plan is approved with a review, so that GitHub's own review rules apply.".to_owned(),
            Refusal::PlanEditInvalid(why) => {
                format!("the edited plan is not valid, so nothing changed: {why}.")
            }
            Refusal::PlanUnchanged => {
                "the block is the plan as it stands; nothing to change.".to_owned()
            }
            Refusal::UnknownEditBase => "the plan changed after this comment was written, and the text it was written against is no longer in the ledger branch's recent history, so the block cannot be merged: nothing changed.".to_owned(),
            Refusal::NoPlan { verb } => format!("there is no plan here to {verb}."),
        }
    }

    /// What to do instead; empty when the reason says it all.
    pub(crate) fn todo(&self) -> String {
        match self {
            Refusal::Unparsed(_)
            | Refusal::Ledger(_)
            | Refusal::Plan(_)
            | Refusal::PlanNotStored
            | Refusal::PlanUnchanged => String::new(),
            Refusal::ConfigInvalid(_) => {
                "Fix the file on the default branch, then repeat the command.".to_owned()
            }
            Refusal::TooManyCommands { .. } => "Repeat them in another comment, or raise `limits.max_commands_per_comment` in `.github/navin.yml`.".to_owned(),
            Refusal::TextTooLong { .. } => "Shorten it (link to a document for the details), or raise `limits.max_text_bytes` in `.github/navin.yml`.".to_owned(),
            Refusal::ClosedForChanges { command, .. } => format!(
                "Reopen it (or unlock it) first, or run the command on an open issue. A maintainer can allow it here with `allow_on_closed: [{command}]` in `.github/navin.yml`."
            ),
            Refusal::NeedsWrite { .. } => {
                "Ask a maintainer to run it, or use `/status` and `/next`, which anyone may."
                    .to_owned()
            }
            Refusal::NoMission => {
                "Start one with `/mission <goal>`, or `/plan <request>` first.".to_owned()
            }
            Refusal::NoOpenQuestion { .. } => "Answer with `/answer <n> <text>`, n as the panel numbers the missing info.".to_owned(),
            Refusal::MissionLive { .. } => "Close it there with `/mission close`, or replace it with `/mission --replace <goal>`.".to_owned(),
            Refusal::NoApprovedPlan => "Give a goal (`/mission <goal>`), or ask for a plan with `/plan <request>` and `/approve` it.".to_owned(),
            Refusal::CommandCannotRun { step: Some(_), .. } => "Correct the command in the plan's verification with `/plan edit`, have it approved, then `/mission` again.".to_owned(),
            Refusal::CommandCannotRun { step: None, .. } => "Correct `validation.commands` in `.github/navin.yml` on the default branch, then `/mission` again.".to_owned(),
            Refusal::NoStep { .. } => "`/status` shows the steps.".to_owned(),
            Refusal::ManualNeedsNote { step } => format!("Type `/done {step} <what you checked>`."),
            Refusal::NotDone { step, why, .. } => match why {
                NotDone::NoLinkedPr { .. } => format!(
                    "Open a pull request with `Navin-Step: {step}` in its body (or a `navin/{step}-…` branch); Navin marks the step done when the checks pass."
                ),
                NotDone::Failed { .. } | NotDone::NotGreen { .. } => "Navin marks the step done when the checks pass; a comment is not evidence for it.".to_owned(),
                NotDone::Waiting { .. } => "Merge its pull request (or finish the steps it depends on); Navin marks it done then.".to_owned(),
            },
            Refusal::PlannerFailed(_) => "Check the request, the `planner:` settings in `.github/navin.yml` and the repository's default branch, then try `/plan` again.".to_owned(),
            Refusal::ApproveWithReview => "Submit a pull-request review with “Approve”; Navin counts it and turns the `navin/plan` check green.".to_owned(),
            Refusal::NeedsCodeOwner(_) => {
                "Ask a code owner of those files (see CODEOWNERS) to `/approve`.".to_owned()
            }
            Refusal::PlanEditInvalid(_) => "Fix that part of the block and post `/plan edit` again (line numbers count from the block's first line).".to_owned(),
            Refusal::EditConflict(_) => "Read the current plan in the plan comment, make your changes to those sections on top of it, and post `/plan edit` with the whole text again.".to_owned(),
            Refusal::UnknownEditBase => "Read the current plan in the plan comment, make your changes on top of it, and post `/plan edit` again.".to_owned(),
            Refusal::NoPlan { .. } => "Ask for one with `/plan <request>`.".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_on_a_closed_pull_request_names_the_place_and_the_key_that_allows_the_command() {
        let refusal = Refusal::ClosedForChanges {
            command: "approve".to_owned(),
            on_pull_request: true,
            why: "locked",
        };
        assert!(refusal.reason().contains("this pull request is locked"));
        assert!(refusal.todo().contains("`allow_on_closed: [approve]`"));
    }

    #[test]
    fn done_without_a_linked_pull_request_says_how_to_link_one() {
        let refusal = Refusal::NotDone {
            step: "S2".to_owned(),
            validation: "ci".to_owned(),
            why: NotDone::NoLinkedPr {
                checks: "`test`".to_owned(),
            },
        };
        assert!(refusal.reason().starts_with("`S2` has validation `ci`"));
        assert!(refusal.todo().contains("`Navin-Step: S2`"));
    }
}

#[cfg(test)]
mod rendered {
    //! Every refusal as GitHub shows it: rendered by a CommonMark + GFM parser, Navin's
    //! commands and keys are code, and nothing shows a literal backslash-backtick.

    use pulldown_cmark::{Event, Options, Parser, Tag};

    use super::*;
    use navin_domain::render::reply;

    fn every_kind() -> Vec<Refusal> {
        let hostile = "`<!-- x` @octocat **bold** [link](http://e.x) <b>";
        vec![
            Refusal::Unparsed(format!("`/done` takes a step id, got {hostile}")),
            Refusal::ConfigInvalid("unknown key `foo` at line 3".to_owned()),
            Refusal::Ledger(crate::error::LedgerRefusal::Branch(
                "S1 is not ready. Start one with `/mission GOAL`.".to_owned(),
            )),
            Refusal::TooManyCommands {
                cap: 10,
                skipped: 2,
                listed: vec!["line 12: `/pause`".to_owned(), "line 13: `/resume`".to_owned()],
            },
            Refusal::TextTooLong {
                command: "plan".to_owned(),
                part: "request",
                bytes: 70_000,
                limit: 65_536,
            },
            Refusal::ClosedForChanges {
                command: "approve".to_owned(),
                on_pull_request: false,
                why: "closed",
            },
            Refusal::NeedsWrite {
                command: "pause".to_owned(),
                repo: "octo-org/hello_world".to_owned(),
                author: "mallory".to_owned(),
                role: "read".to_owned(),
            },
            Refusal::NoMission,
            Refusal::NoOpenQuestion {
                number: 4,
                listed: "1. Which locale?".to_owned(),
            },
            Refusal::MissionLive {
                status: "active".to_owned(),
                place: "octo-org/hello#3".to_owned(),
                goal: hostile.to_owned(),
            },
            Refusal::NoApprovedPlan,
            Refusal::CommandCannotRun {
                step: Some("S2".to_owned()),
                problem: "`go -C web test ./...` names the directory \"web\", which the checkout does not have".to_owned(),
            },
            Refusal::CommandCannotRun {
                step: None,
                problem: hostile.to_owned(),
            },
            Refusal::NoStep {
                step: "S9".to_owned(),
            },
            Refusal::ManualNeedsNote {
                step: "S2".to_owned(),
            },
            Refusal::NotDone {
                step: "S3".to_owned(),
                validation: "test".to_owned(),
                why: NotDone::NoLinkedPr {
                    checks: "`ci/test`".to_owned(),
                },
            },
            Refusal::PlannerFailed("the default branch is empty".to_owned()),
            Refusal::PlanNotStored,
            Refusal::Plan("@alice already approved this text".to_owned()),
            Refusal::ApproveWithReview,
            Refusal::NeedsCodeOwner(
                "@bob owns none of the plan's files, and `approval.require_codeowners` counts only code owners".to_owned(),
            ),
            Refusal::PlanEditInvalid("line 3: the section is empty".to_owned()),
            Refusal::PlanUnchanged,
            Refusal::EditConflict("the block changes the same lines".to_owned()),
            Refusal::UnknownEditBase,
            Refusal::NoPlan { verb: "approve" },
        ]
    }

    /// The text a reader sees (code spans included, as text) and the code spans alone.
    fn seen(markdown: &str) -> (String, Vec<String>, usize) {
        let mut text = String::new();
        let mut code = Vec::new();
        let mut headings = 0;
        for event in Parser::new_ext(
            markdown,
            Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
        ) {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::Code(c) => {
                    text.push_str(&c);
                    code.push(c.into_string());
                }
                Event::Start(Tag::Heading { .. }) => headings += 1,
                _ => {}
            }
        }
        (text, code, headings)
    }

    #[test]
    fn every_refusal_renders_its_commands_as_code_and_no_escaped_backticks() {
        for refusal in every_kind() {
            let body = refusal.reply();
            let (text, code, headings) = seen(&body);
            assert!(!text.contains("\\`"), "{refusal:?} shows \\` in {text:?}");
            assert!(
                !body.contains("\\`"),
                "{refusal:?} escapes a backtick: {body}"
            );
            assert!(headings <= 1, "{refusal:?}: {headings} headings");
            for (source, expect_code) in [(refusal.reason(), true), (refusal.todo(), true)] {
                if expect_code && source.contains("`/") {
                    assert!(
                        code.iter().any(|c| c.starts_with('/')),
                        "{refusal:?}: a command is not code in {body}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_failed_check_refusal_keeps_its_link_a_link() {
        let refusal = Refusal::NotDone {
            step: "S1".to_owned(),
            validation: "test".to_owned(),
            why: NotDone::Failed {
                message: "Step `S1` is not done: required checks failed on `abc1234`: [test](https://github.com/o/r/runs/1) (failure).".to_owned(),
            },
        };
        let body = refusal.reply();
        let links: Vec<String> = Parser::new_ext(&body, Options::all())
            .filter_map(|e| match e {
                Event::Start(pulldown_cmark::Tag::Link { dest_url, .. }) => {
                    Some(dest_url.to_string())
                }
                _ => None,
            })
            .collect();
        assert_eq!(links, ["https://github.com/o/r/runs/1"], "{body}");
        assert!(!body.contains("\\["), "{body}");
    }

    #[test]
    fn hostile_text_in_a_refusal_opens_no_html_link_emphasis_or_mention() {
        let refusal = Refusal::MissionLive {
            status: "active".to_owned(),
            place: "o/r#1".to_owned(),
            goal: "@octocat **bold** [link](http://e.x) <b>hi</b> <!-- hide".to_owned(),
        };
        let body = refusal.reply();
        for event in Parser::new_ext(&body, Options::all()) {
            match event {
                Event::Html(h) | Event::InlineHtml(h) => {
                    assert!(
                        h.starts_with("<!-- navin:") || h.as_ref() == "<!-- -->",
                        "HTML {h:?} in {body}"
                    )
                }
                Event::Start(Tag::Link { .. } | Tag::Strong | Tag::Emphasis) => {
                    panic!("markup from the goal in {body}")
                }
                _ => {}
            }
        }
        assert!(!body.contains("@octocat"), "a mention: {body}");
    }

    #[test]
    fn help_has_one_heading() {
        let body = reply::help(&navin_domain::command::help_text());
        assert_eq!(seen(&body).2, 1, "{body}");
    }
}
