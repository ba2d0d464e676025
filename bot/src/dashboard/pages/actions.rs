//! The forms a writer acts with on a repository's page (each one slash command's worth, posted to `/r/{repo}/act`), and the words for a blocked mission.

use maud::{html, Markup};
use navin_ledger::{Ledger, MissionStatus, TaskStatus};

use super::layout::Chrome;

/// Set on a repository page shown to someone who may act on it.
#[derive(Clone, Copy)]
pub struct Acts<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    /// A fresh random token per page view: each form's idempotency key starts with it,
    /// so a form sent twice acts once and two forms of one page never share a key.
    pub token: &'a str,
    /// The server's MAC, which binds each form's key to its action and target (see
    /// [`act_binding`]): a key sent with another action is refused, not taken as that
    /// action already done.
    pub sign: &'a dyn Fn(&str) -> String,
}

impl std::fmt::Debug for Acts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acts")
            .field("repo", &self.repo)
            .field("token", &self.token)
            .finish()
    }
}

/// What a form's key is bound to: the repository, the key itself, the action and its
/// target fields (absent ones empty), one per line. The page signs it; the server
/// signs it again from what was posted.
pub fn act_binding(
    repo: &str,
    key: &str,
    action: &str,
    plan: &str,
    step: &str,
    question: &str,
) -> String {
    format!("navin act v1\n{repo}\n{key}\n{action}\nplan={plan}\nstep={step}\nquestion={question}")
}

/// One form's fields besides the token.
#[derive(Debug)]
pub struct Form<'a> {
    /// Unique on the page; the form's element id is `act-<key>`.
    pub key: &'a str,
    pub action: &'a str,
    pub hidden: &'a [(&'a str, &'a str)],
    /// A text field: its placeholder, and whether it must be filled.
    pub text: Option<(&'a str, bool)>,
    pub label: &'a str,
    pub primary: bool,
}

impl Acts<'_> {
    pub fn form(&self, chrome: &Chrome<'_>, form: &Form<'_>) -> Markup {
        let key: String = form
            .key
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        html! {
            form.act.inline id=(format!("act-{key}")) method="post" action=(chrome.path(&format!("/r/{}/act", self.repo))) {
                input type="hidden" name="csrf" value=(chrome.csrf);
                @let id = format!("{}-{key}", self.token);
                @let field = |name: &str| form.hidden.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| *v);
                @let signature = (self.sign)(&act_binding(self.repo, &id, form.action, field("plan"), field("step"), field("question")));
                input type="hidden" name="act_id" value=(format!("{id}.{signature}"));
                input type="hidden" name="action" value=(form.action);
                @for (name, value) in form.hidden { input type="hidden" name=(name) value=(value); }
                @if let Some((placeholder, required)) = form.text {
                    input type="text" name="text" placeholder=(placeholder) maxlength="2000" required[required];
                }
                button type="submit" class=[form.primary.then_some("primary")] { (form.label) }
            }
        }
    }
}

/// Why a blocked mission cannot move, and what unblocks it: the failed steps that hold
/// the rest back, or the steps waiting on one another.
pub fn blocked_why(ledger: &Ledger) -> Option<(String, String)> {
    if ledger.mission.status != MissionStatus::Blocked {
        return None;
    }
    let failed: Vec<&str> = ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Failed)
        .map(|t| t.id.as_str())
        .collect();
    Some(match failed.first() {
        Some(first) => (
            format!(
                "No step can move: {} failed, and the steps after {} wait for {}.",
                failed.join(", "),
                if failed.len() == 1 { "it" } else { "them" },
                if failed.len() == 1 { "it" } else { "them" },
            ),
            format!(
                "Once the cause is fixed, retry a failed step (its Retry button, or /retry {first} on the issue), or replan around it with /replan {first}."
            ),
        ),
        None => (
            "No step can move: every step left waits for another that is not done.".to_owned(),
            "Add the missing step with /step add, or replan with /replan on the issue.".to_owned(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::model::{Actor, Validation};
    use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};
    use navin_ledger::AttemptOutcome;

    fn applied(ledger: Option<&Ledger>, op: Operation) -> Ledger {
        let ctx = Ctx::new(chrono::Utc::now(), Actor::Human("maya".into()));
        match apply(ledger, &op, &ctx) {
            Ok(Outcome::Applied(a)) => a.ledger,
            other => panic!("{} failed: {other:?}", op.name()),
        }
    }

    fn step(id: &str, after: &[&str]) -> NewTask {
        NewTask {
            id: id.into(),
            title: format!("step {id}"),
            depends_on: after.iter().map(|s| (*s).to_owned()).collect(),
            validation: Validation::Manual,
            ..NewTask::default()
        }
    }

    #[test]
    fn a_blocked_mission_names_its_failed_step_and_how_to_unblock_it() {
        let ledger = applied(
            None,
            Operation::Init(InitArgs {
                goal: "greetings".into(),
                steps: vec![step("S1", &[]), step("S2", &["S1"])],
                ..InitArgs::default()
            }),
        );
        assert_eq!(
            blocked_why(&ledger),
            None,
            "a running mission is not blocked"
        );
        let ledger = applied(Some(&ledger), Operation::Start { step: "S1".into() });
        let ledger = applied(
            Some(&ledger),
            Operation::Fail {
                step: "S1".into(),
                evidence: None,
                reason: "tests fail".into(),
                outcome: AttemptOutcome::Failed,
            },
        );
        assert_eq!(
            ledger.mission.status,
            MissionStatus::Blocked,
            "{:?}",
            ledger.board
        );
        let (why, unblock) = blocked_why(&ledger).expect("blocked");
        assert!(why.contains("S1 failed"), "{why}");
        assert!(unblock.contains("/retry S1"), "{unblock}");
    }
}
