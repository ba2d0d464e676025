//! Short replies to commands: refusals with a reason, acknowledgements, generic errors and the help text.

use super::marker::{Marker, ReplyKind};
use super::text::{code, inline, prose, truncate_chars};

fn marked(kind: ReplyKind, body: &str) -> String {
    format!("{}\n{body}\n", Marker::Reply { kind })
}

/// "Nothing changed, here is why, here is what to do". Both parts may quote
/// people's input, so both are escaped.
pub fn refusal(reason: &str, what_to_do: &str) -> String {
    let mut body = format!("🚫 Nothing changed: {}", prose(reason, 600));
    if !what_to_do.trim().is_empty() {
        body.push_str(&format!("\n\n👉 {}", prose(what_to_do, 600)));
    }
    marked(ReplyKind::Refusal, &body)
}

/// A [`refusal`] whose reason Navin rendered as Markdown itself, every quoted part
/// already escaped (the evidence messages: check names through `code`, links through
/// `link`): escaping it again would show its links as literal `[text](url)`. Still one
/// line and capped.
pub fn refusal_rendered(reason_markdown: &str, what_to_do: &str) -> String {
    let flat: String = reason_markdown
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut body = format!("🚫 Nothing changed: {}", truncate_chars(&flat, 900));
    if !what_to_do.trim().is_empty() {
        body.push_str(&format!("\n\n👉 {}", prose(what_to_do, 600)));
    }
    marked(ReplyKind::Refusal, &body)
}

/// A [`refusal`] addressed to `login` (mentioned, so GitHub notifies them) about
/// `what` they did: for actions that leave no comment to answer, such as a click on a
/// check run's button. A login GitHub would not issue is not mentioned.
pub fn refusal_to(login: &str, what: &str, reason: &str, what_to_do: &str) -> String {
    let valid = !login.is_empty() && login.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let who = if valid {
        format!("@{login}")
    } else {
        inline(login, 60)
    };
    let mut body = format!(
        "{who}, {}:\n\n🚫 Nothing changed: {}",
        prose(what, 200),
        prose(reason, 600)
    );
    if !what_to_do.trim().is_empty() {
        body.push_str(&format!("\n\n👉 {}", prose(what_to_do, 600)));
    }
    marked(ReplyKind::Refusal, &body)
}

/// The record of a command given from the dashboard, where a comment would have got a
/// reaction: who ran what, so the readers see every change made to it.
pub fn from_dashboard(login: &str, command: &str) -> String {
    marked(
        ReplyKind::Accepted,
        &format!(
            "✅ {} ran {} from the Navin dashboard.",
            inline(login, 60),
            code(&truncate_chars(command, 300))
        ),
    )
}

/// Acknowledges an accepted command that deserves more than a reaction.
pub fn accepted(summary: &str) -> String {
    marked(ReplyKind::Accepted, &format!("✅ {}", prose(summary, 600)))
}

/// `/status` when the ledger branch's tip holds a commit Navin refuses: why (the
/// store's words, naming the commit and the fix), and the state Navin last trusted,
/// which it shows read-only and builds nothing on until a writer restores it.
pub fn read_only(why: &str, trusted: &str) -> String {
    marked(
        ReplyKind::Error,
        &format!(
            "⚠️ The ledger is read-only: {}

As Navin last trusted it: {}",
            prose(why, 700),
            prose(trusted, 400)
        ),
    )
}

/// The only thing a user sees of an internal failure. It names no cause
/// (errors may carry paths, tokens or API bodies); `reference` (a delivery id)
/// lets an operator find the logged chain.
pub fn error(reference: Option<&str>) -> String {
    let mut body = String::from(
        "❌ Navin hit an error and could not finish this command. Ledger changes are all-or-nothing: check `/status`, then try again.",
    );
    if let Some(r) = reference.filter(|r| !r.trim().is_empty()) {
        body.push_str(&format!(
            " If it keeps failing, give the maintainers this reference: {}.",
            code(&truncate_chars(r, 80))
        ));
    }
    marked(ReplyKind::Error, &body)
}

/// A comment whose delivery failed for good: `why` in words a user can act on (never the
/// error itself), and `delivery` for an admin to redeliver it by.
pub fn given_up(why: &str, delivery: &str) -> String {
    marked(
        ReplyKind::Error,
        &format!(
            "❌ Navin could not finish the commands in this comment: {why}, and it will not try again on its own. Commands that ran took effect once, and `/status` shows them. Post the others again in a few minutes, or ask an admin to redeliver delivery {} from the dashboard's deliveries page; each command applies once, however often it is delivered.",
            code(&truncate_chars(delivery, 80))
        ),
    )
}

/// Wraps the command list (written by the command parser, which owns the
/// grammar) under a heading; `body` is Navin's own markdown and is not escaped.
pub fn help(body: &str) -> String {
    marked(
        ReplyKind::Help,
        &format!("### 🧭 Navin commands\n\n{}", without_heading(body.trim())),
    )
}

/// `body` without a heading on its first line: the reply has its own.
fn without_heading(body: &str) -> &str {
    match body.split_once('\n') {
        Some((first, rest)) if first.starts_with('#') => rest.trim_start(),
        None if body.starts_with('#') => "",
        _ => body,
    }
}

/// An agent's question (`ask_user`) on the mission's issue: who asks, the question
/// quoted as text, and how a writer answers it (`number` as `/answer` counts).
pub fn agent_question(actor: &str, question: &str, number: usize) -> String {
    format!(
        "### ❓ {} asks a question only a person can answer\n\n> {}\n\nThe mission is paused (`human`) so nothing is guessed. A writer answers with `/answer {number} <text>`; the answer becomes a fact and the mission resumes.",
        code(actor),
        prose(question, 1000),
    )
}
