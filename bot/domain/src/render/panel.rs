//! The sticky mission panel: one comment on the mission's issue, re-rendered and edited in place after every change.

use std::collections::HashSet;
use std::fmt::Write;

use chrono::{DateTime, Utc};
use navin_ledger::model::{Evidence, Ledger, MissionStatus, Task, TaskStatus};

use super::marker::{Marker, PANEL_FORMAT};
use super::mermaid;
use super::repo::RepoRef;
use super::table::{self, FOLD_AT};
use super::text::{
    closers_for, code, inline, link, prefix_bytes, prose, short_sha, thousands, COMMENT_BUDGET,
};

/// What the panel needs besides the ledger: where links point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanelContext {
    pub repo: RepoRef,
    /// Extra links for the panel's foot (the approved plan, a dashboard…).
    pub links: Vec<PanelLink>,
    /// Setup problems that stop the mission moving the way it is configured to (no
    /// user token for Copilot dispatch): shown once, under the summary, until fixed.
    pub notices: Vec<String>,
}

impl PanelContext {
    pub fn new(repo: RepoRef) -> Self {
        Self {
            repo,
            links: Vec::new(),
            notices: Vec::new(),
        }
    }
}

/// A labelled link in the panel's foot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanelLink {
    pub label: String,
    pub url: String,
}

/// The graph is dropped (with a note) rather than squeeze the table below this.
const GRAPH_MAX_BYTES: usize = 20_000;

/// How generous the free-text parts of the panel are. The panel first tries
/// [`Limits::NORMAL`] and falls back to tighter limits when adversarial text
/// (thousands of `@`s or `&`s, which escaping expands) would crowd out the
/// step table.
#[derive(Debug, Clone, Copy)]
struct Limits {
    goal: usize,
    items: usize,
    item_chars: usize,
    reason: usize,
}

impl Limits {
    const NORMAL: Limits = Limits {
        goal: 1000,
        items: 10,
        item_chars: 240,
        reason: 300,
    };
    const TIGHT: Limits = Limits {
        goal: 300,
        items: 3,
        item_chars: 100,
        reason: 120,
    };
}

/// The summary above the table must leave the table at least this much room.
const HEAD_MAX_BYTES: usize = 16_000;

/// Renders the mission panel as GitHub markdown. The output is a pure
/// function of the ledger (no clock), so the engine can skip the edit when
/// the new body equals the old one. Always under [`COMMENT_BUDGET`] bytes,
/// whatever the board's size: past [`FOLD_AT`] steps the table and the graph
/// fold into `<details>`; when the table does not fit, unfinished steps are
/// kept first and the rest are counted in an "N more steps" note.
pub fn mission_panel(ledger: &Ledger, ctx: &PanelContext) -> String {
    let ready_tasks = ledger.ready();
    let ready: HashSet<&str> = ready_tasks.iter().map(|t| t.id.as_str()).collect();

    let mut head = summary(ledger, &ready_tasks, Limits::NORMAL);
    if head.len() > HEAD_MAX_BYTES {
        head = summary(ledger, &ready_tasks, Limits::TIGHT);
    }
    if head.len() > HEAD_MAX_BYTES {
        let cut = prefix_bytes(&head, HEAD_MAX_BYTES);
        head = format!("{cut}{}\n\n_(summary shortened)_\n\n", closers_for(cut));
    }
    // Notices are Navin's own sentences (never user text), so their code spans stay.
    for notice in &ctx.notices {
        head.push_str(&format!(
            "> [!WARNING]\n> {}\n\n",
            notice.replace('\n', " ")
        ));
    }
    let foot = footer(ledger, ctx);
    let graph = graph_section(ledger, &ready);
    let fixed = head.len() + foot.len() + graph.len();
    let table = table::section(
        ledger,
        &ready,
        &ctx.repo,
        COMMENT_BUDGET.saturating_sub(fixed),
    );

    let mut out = String::with_capacity(fixed + table.len());
    out.push_str(&head);
    out.push_str(&table);
    out.push_str(&graph);
    out.push_str(&foot);
    if out.len() > COMMENT_BUDGET {
        // Every part is bounded above, so this is a guard, not a layout.
        let cut = prefix_bytes(&out, COMMENT_BUDGET - 200).to_owned();
        out = format!(
            "{cut}{}\n\n_(panel shortened to fit a GitHub comment)_\n",
            closers_for(&cut)
        );
    }
    out
}

/// Marker, goal, badges, last change, progress, queue, last failure, missing info and facts.
fn summary(ledger: &Ledger, ready: &[&Task], limits: Limits) -> String {
    let m = &ledger.mission;
    let mut out = String::with_capacity(4096);
    let _ = writeln!(
        out,
        "{}",
        Marker::Panel {
            format: PANEL_FORMAT
        }
    );
    let _ = writeln!(out, "### 🧭 Navin mission\n");
    let _ = writeln!(out, "**Goal:** {}\n", prose(&m.goal, limits.goal));
    let _ = writeln!(out, "{}\n", badges(ledger).join(" · "));
    if let Some(last) = m.history.last() {
        let _ = writeln!(
            out,
            "> Last change: v{} by {} at {}: {}\n",
            last.version,
            code(&last.actor.to_string()),
            when(last.at),
            inline(&last.reason, limits.reason)
        );
    }
    let _ = writeln!(out, "{}\n", progress_line(ledger));
    let _ = writeln!(out, "{}\n", queue_line(ledger, ready));
    if let Some(line) = stage_line(ledger) {
        let _ = writeln!(out, "{line}\n");
    }
    if let Some(line) = last_failure(ledger) {
        let _ = writeln!(out, "{line}\n");
    }
    if let Some(line) = unreported_spend(ledger) {
        let _ = writeln!(out, "{line}\n");
    }
    drift_section(&mut out, ledger);
    // Numbered as `/answer <n>` takes them; a pending default says when it stands.
    let missing: Vec<String> = m
        .missing_info
        .iter()
        .map(
            |item| match m.pending_defaults.iter().find(|d| d.question == *item) {
                Some(d) => format!(
                    "{item} (default \"{}\" applies from {})",
                    d.default,
                    when(d.due_at)
                ),
                None => item.clone(),
            },
        )
        .collect();
    numbered_list(
        &mut out,
        "❓ Missing info (`/answer <n> <text>` to unblock)",
        &missing,
        limits,
    );
    list(&mut out, "📌 Facts", &m.facts, limits);
    if let Some(line) = checkpoints_line(ledger) {
        let _ = writeln!(out, "{line}\n");
    }
    out
}

/// Agent runs that reported no spend: the caps cannot see them, and the reader should
/// know the token and cost figures are short.
fn unreported_spend(ledger: &Ledger) -> Option<String> {
    let runs: Vec<String> = ledger
        .board
        .tasks
        .iter()
        .flat_map(|t| {
            t.attempts
                .iter()
                .filter(|a| a.spend_unreported)
                .map(move |a| {
                    format!(
                        "{} attempt {} ({})",
                        code(&t.id),
                        a.number,
                        inline(&a.agent, 40)
                    )
                })
        })
        .collect();
    if runs.is_empty() {
        return None;
    }
    let shown = runs.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    let more = match runs.len() {
        n if n > 5 => format!(" and {} more", n - 5),
        _ => String::new(),
    };
    Some(format!(
        "⚠️ **Spend not reported** by {shown}{more}: debited 0, so the token and cost caps do not count them. Have the agent workflow pass the agent's usage (its execution file, JSON events or `navin-usage:` lines) to the `progress` job."
    ))
}

/// `Stage 2/3`, and what `/continue` would release when a finished stage waits.
fn stage_line(ledger: &Ledger) -> Option<String> {
    let view = ledger.stages()?;
    let title = |n: u32| {
        ledger
            .board
            .tasks
            .iter()
            .find(|t| t.stage == Some(n))
            .map(|t| prose(&t.title, 80))
            .unwrap_or_default()
    };
    let mut line = format!(
        "**Stage:** {}/{} {}",
        view.current,
        view.total,
        title(view.current)
    );
    if view.all_done {
        line.push_str(" · every stage done");
    } else if view.waiting_for_continue {
        let ids: Vec<String> = view
            .release
            .iter()
            .take(QUEUE_SHOWN)
            .map(|id| code(id))
            .collect();
        let _ = write!(
            line,
            " · ✅ done, waiting for a writer: `/continue` releases stage {} ({}: {})",
            view.current + 1,
            title(view.current + 1),
            ids.join(", ")
        );
    } else if view.policy == navin_ledger::model::StagePolicy::RunAll {
        line.push_str(" · stages run one after another (`stages: run-all`)");
    }
    Some(line)
}

/// How many checkpoints the panel lists, newest first.
const CHECKPOINTS_SHOWN: usize = 5;

/// The newest automatic checkpoints, each one `/rollback` away.
fn checkpoints_line(ledger: &Ledger) -> Option<String> {
    let marks = &ledger.mission.checkpoints;
    if marks.is_empty() {
        return None;
    }
    let shown: Vec<String> = marks
        .iter()
        .rev()
        .take(CHECKPOINTS_SHOWN)
        .map(|c| {
            format!(
                "{} {}",
                code(&format!("v{}", c.version)),
                inline(&c.reason, 120)
            )
        })
        .collect();
    Some(format!(
        "**🛟 Checkpoints** (`/rollback v<N>`): {}",
        shown.join(" · ")
    ))
}

fn when(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn status_badge(status: MissionStatus) -> &'static str {
    match status {
        MissionStatus::Draft => "📝 **draft** (start it with `/mission`)",
        MissionStatus::Running => "🟢 **running**",
        MissionStatus::Paused => "⏸️ **paused**",
        MissionStatus::Blocked => "🧱 **blocked** (no step can move)",
        MissionStatus::Done => "🏁 **done**",
        MissionStatus::Failed => "💥 **failed**",
    }
}

/// Version, status, then the counters a reader must not miss. Stall and
/// replan counters always show (they are how close the mission is to an
/// automatic pause); loop, replan-needed and pause show only when set; token
/// and cost budgets show once capped or spent.
pub fn badges(ledger: &Ledger) -> Vec<String> {
    let m = &ledger.mission;
    let p = &m.progress;
    let b = &p.budget;
    let mut out = vec![
        format!("`v{}`", m.version),
        status_badge(m.status).to_owned(),
    ];
    if m.status == MissionStatus::Paused {
        let reason = m.pause_reason.map_or("unknown", |r| r.as_str());
        let since = m
            .paused_at
            .map(|t| format!(" since {}", when(t)))
            .unwrap_or_default();
        // Navin's own pause for an open question is lifted by answering it.
        let asked = m.pause_reason == Some(navin_ledger::model::PauseReason::Human)
            && m.paused_by
                .as_ref()
                .is_some_and(|a| matches!(a, navin_ledger::model::Actor::App(_)) || a.is_agent())
            && !m.missing_info.is_empty();
        let how = if asked {
            "`/answer <n> <text>` below, or `/resume` to go on without"
        } else {
            "`/resume` to continue"
        };
        out.push(format!("⏸️ paused: {reason}{since} ({how})"));
    }
    let stall_icon = if p.stall_count >= b.max_stalls {
        "🛑"
    } else {
        "🐢"
    };
    out.push(format!(
        "{stall_icon} stall {}/{}",
        p.stall_count, b.max_stalls
    ));
    if p.loop_detected {
        let repeated = p
            .recent_action_fingerprints
            .last()
            .map(|f| format!(": {}", code(short_fingerprint(f))))
            .unwrap_or_default();
        out.push(format!("🔁 loop detected{repeated}"));
    }
    let replan_icon = if p.replan_count >= b.max_replans {
        "🛑"
    } else {
        "🔧"
    };
    out.push(format!(
        "{replan_icon} replans {}/{}",
        p.replan_count, b.max_replans
    ));
    if p.replan_needed {
        out.push("⚠️ replan needed".to_owned());
    }
    match b.max_tokens {
        Some(max) => out.push(format!(
            "🪙 tokens {}/{}",
            thousands(p.tokens_used),
            thousands(max)
        )),
        None if p.tokens_used > 0 => out.push(format!("🪙 tokens {}", thousands(p.tokens_used))),
        None => {}
    }
    match b.max_cost_usd {
        Some(max) => out.push(format!("💵 cost ${:.2}/${max:.2}", p.cost_used_usd)),
        None if p.cost_used_usd > 0.0 => out.push(format!("💵 cost ${:.2}", p.cost_used_usd)),
        None => {}
    }
    out
}

/// Width of the text progress bar, in cells.
const BAR_CELLS: usize = 20;

/// `▓▓▓▓░░░░ 4/8 steps done`, plus what is moving and what is stuck.
pub fn progress_line(ledger: &Ledger) -> String {
    let tasks = &ledger.board.tasks;
    let total = tasks.len();
    let count = |s: TaskStatus| tasks.iter().filter(|t| t.status == s).count();
    let done = count(TaskStatus::Done);
    let filled = (done * BAR_CELLS).checked_div(total).unwrap_or(0);
    let bar = format!("{}{}", "▓".repeat(filled), "░".repeat(BAR_CELLS - filled));
    let mut line = format!("**Progress** `{bar}` {done}/{total} steps done");
    let (running, failed) = (count(TaskStatus::InProgress), count(TaskStatus::Failed));
    if running > 0 {
        let _ = write!(line, " · 🔄 {running} in progress");
    }
    if failed > 0 {
        let _ = write!(line, " · ❌ {failed} failed");
    }
    line
}

/// The ready queue shows at most this many step ids.
const QUEUE_SHOWN: usize = 15;

fn queue_line(ledger: &Ledger, ready: &[&Task]) -> String {
    let p = &ledger.mission.progress;
    let mut line = String::from("**Ready:** ");
    if ready.is_empty() {
        line.push_str("nothing");
    } else {
        let ids: Vec<String> = ready
            .iter()
            .take(QUEUE_SHOWN)
            .map(|t| code(&t.id))
            .collect();
        line.push_str(&ids.join(", "));
        if ready.len() > QUEUE_SHOWN {
            let _ = write!(line, " and {} more", ready.len() - QUEUE_SHOWN);
        }
    }
    if let Some(current) = &p.current_step_id {
        let _ = write!(line, " · **current step:** {}", code(current));
    }
    let _ = write!(line, " · **up next:** {}", who_acts(&p.next_actor));
    line
}

/// Who acts next, in the words of the people reading the panel (the mission's
/// `next_actor`: `main`, `human` or `subagent:NAME`).
fn who_acts(next: &navin_ledger::model::NextActor) -> String {
    use navin_ledger::model::NextActor;
    match next {
        NextActor::Main => "the coding agent".to_owned(),
        NextActor::Human => "a person (a maintainer's command or answer)".to_owned(),
        NextActor::Subagent(name) => format!("the agent {}", code(name)),
    }
}

/// The newest failed piece of evidence on a step that is not done, with
/// every failing check recorded for that step on the same head: "what failed
/// last" names the checks to look at. Steps done since are history, not news.
fn last_failure(ledger: &Ledger) -> Option<String> {
    let mut newest: Option<(&Task, &Evidence, usize)> = None;
    let mut seq = 0usize;
    for task in ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status != TaskStatus::Done)
    {
        for e in task.evidence.iter().filter(|e| !e.ok) {
            seq += 1;
            let key = (e.recorded_at.or(e.completed_at), seq);
            let better =
                newest.is_none_or(|(_, n, s)| key >= (n.recorded_at.or(n.completed_at), s));
            if better {
                newest = Some((task, e, seq));
            }
        }
    }
    let (task, last, _) = newest?;
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for e in task.evidence.iter().rev().filter(|e| !e.ok) {
        // `last` itself always qualifies: its head is its own.
        if e.head_sha != last.head_sha {
            continue;
        }
        let name = e.name.clone().unwrap_or_else(|| e.kind.as_str().to_owned());
        if !seen.insert(name.clone()) {
            continue;
        }
        let conclusion = e.conclusion.as_deref().unwrap_or("failed");
        names.push(format!(
            "{} ({})",
            link(&name, e.url.as_deref(), 60),
            inline(conclusion, 30)
        ));
        if names.len() == 8 {
            break;
        }
    }
    let on = last
        .head_sha
        .as_deref()
        .map(|s| format!(" on {}", code(&short_sha(s))))
        .unwrap_or_default();
    // The same failure again is a loop: its fingerprint lets a reader see that.
    let fingerprint = task
        .ci_round
        .as_ref()
        .and_then(|r| r.fingerprint.as_deref())
        .map(|f| format!(" · failure {}", code(short_fingerprint(f))))
        .unwrap_or_default();
    Some(format!(
        "**What failed last:** step {}{on}: {}{fingerprint}",
        code(&task.id),
        names.join(", ")
    ))
}

/// Steps and files per list the plan-vs-actual section shows.
const DRIFT_STEPS: usize = 5;
const DRIFT_FILES: usize = 5;

/// Open steps whose pull request changes files outside the mission's plan (or the
/// step's stage) on its linked head, each with those files and, under `plan.scope:
/// strict`, why it is not done.
fn drift_section(out: &mut String, ledger: &Ledger) {
    let drifting: Vec<&Task> = ledger
        .board
        .tasks
        .iter()
        .map(|t| &**t)
        .filter(|t| t.status != TaskStatus::Done)
        .filter(|t| {
            t.plan_drift.as_ref().is_some_and(|d| {
                !d.is_empty()
                    && t.links
                        .head_sha
                        .as_deref()
                        .is_some_and(|h| h.eq_ignore_ascii_case(&d.head_sha))
            })
        })
        .collect();
    if drifting.is_empty() {
        return;
    }
    let _ = writeln!(out, "**📐 Plan vs actual:**\n");
    let files = |paths: &[String]| {
        let mut shown: Vec<String> = paths.iter().take(DRIFT_FILES).map(|p| code(p)).collect();
        if paths.len() > DRIFT_FILES {
            shown.push(format!("and {} more", paths.len() - DRIFT_FILES));
        }
        shown.join(", ")
    };
    for task in drifting.iter().take(DRIFT_STEPS) {
        let Some(d) = task.plan_drift.as_ref() else {
            continue;
        };
        let mut parts: Vec<String> = Vec::new();
        if !d.outside_plan.is_empty() {
            parts.push(format!(
                "changed outside the plan: {}",
                files(&d.outside_plan)
            ));
        }
        if !d.outside_stage.is_empty() {
            let stage = task
                .stage
                .map(|s| format!("stage {s}"))
                .unwrap_or_else(|| "its stage".to_owned());
            parts.push(format!(
                "planned for another stage than {stage}: {}",
                files(&d.outside_stage)
            ));
        }
        if d.omitted > 0 {
            parts.push(format!("{} more file(s)", d.omitted));
        }
        let pr = task
            .links
            .prs
            .last()
            .map(|n| format!(" (#{n})"))
            .unwrap_or_default();
        let held = if d.strict {
            " · ⛔ not done until the plan covers them (`/plan edit`) or they are reverted (`plan.scope: strict`)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "- {}{pr} on {}: {}{held}",
            code(&task.id),
            code(&short_sha(&d.head_sha)),
            parts.join("; ")
        );
    }
    if drifting.len() > DRIFT_STEPS {
        let _ = writeln!(out, "- _…and {} more steps_", drifting.len() - DRIFT_STEPS);
    }
    out.push('\n');
}

/// `fp:` and the first 8 hex digits: enough to tell two failures apart at a glance.
fn short_fingerprint(f: &str) -> &str {
    f.char_indices().nth(11).map_or(f, |(cut, _)| &f[..cut])
}

/// [`list`] as an ordered list, so each item has the number a command refers to it by.
fn numbered_list(out: &mut String, title: &str, items: &[String], limits: Limits) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "**{title}:**\n");
    for (i, item) in items.iter().take(limits.items).enumerate() {
        let _ = writeln!(out, "{}. {}", i + 1, prose(item, limits.item_chars));
    }
    if items.len() > limits.items {
        let _ = writeln!(
            out,
            "\n_…and {} more in `.navin/board/mission.json`_",
            items.len() - limits.items
        );
    }
    out.push('\n');
}

fn list(out: &mut String, title: &str, items: &[String], limits: Limits) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "**{title}:**\n");
    for item in items.iter().take(limits.items) {
        let _ = writeln!(out, "- {}", prose(item, limits.item_chars));
    }
    if items.len() > limits.items {
        let _ = writeln!(
            out,
            "- _…and {} more in `.navin/board/mission.json`_",
            items.len() - limits.items
        );
    }
    out.push('\n');
}

/// The mermaid DAG, folded past [`FOLD_AT`] steps, or a note when even the
/// capped graph is too large to leave the table room.
fn graph_section(ledger: &Ledger, ready: &HashSet<&str>) -> String {
    if ledger.board.tasks.is_empty() {
        return String::new();
    }
    let g = mermaid::graph(&ledger.board, ready);
    let note = if g.omitted > 0 {
        format!(
            "\n_Showing {} of {} steps, unfinished first; the full board is in `.navin/board/board.json`._\n",
            g.drawn,
            g.drawn + g.omitted
        )
    } else {
        String::new()
    };
    if g.block.len() > GRAPH_MAX_BYTES {
        return "\n_The step graph is too large to draw here._\n".to_owned();
    }
    if ledger.board.tasks.len() > FOLD_AT {
        format!(
            "\n<details><summary>Step graph ({} steps)</summary>\n\n{}{note}\n</details>\n",
            ledger.board.tasks.len(),
            g.block
        )
    } else {
        format!("\n#### Step graph\n\n{}{note}", g.block)
    }
}

/// Links to the ledger branch, the plan the mission came from, and the caller's extras.
fn footer(ledger: &Ledger, ctx: &PanelContext) -> String {
    let mut links = vec![link(
        "ledger branch",
        Some(&ctx.repo.ledger_tree_url(".navin/board")),
        60,
    )];
    let origin = &ledger.mission.origin;
    if let Some(plan) = origin.as_ref().and_then(|o| o.plan_id.as_deref()) {
        let path = format!(".navin/plans/{plan}.md");
        links.push(link(
            &format!("plan {plan}"),
            Some(&ctx.repo.ledger_blob_url(&path)),
            60,
        ));
    }
    for l in ctx.links.iter().take(10) {
        links.push(link(&l.label, Some(&l.url), 60));
    }
    let stages = if ledger.stages().is_some() {
        " `/continue`"
    } else {
        ""
    };
    format!(
        "\n<sub>{} · commands: `/status` `/next` `/done <step>`{stages} `/pause` `/resume` `/help`</sub>\n",
        links.join(" · ")
    )
}
