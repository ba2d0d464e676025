//! The local plan loop: plans saved on the ledger branch, decided by people, started as missions.
//!
//! The same records the GitHub App keeps (`.navin/plans/<id>.json` beside the canonical
//! `<id>.md`), so `plan_get`, briefs and the dashboard read a local plan like any other.
//! Nothing here touches the working tree: a plan lives on the ledger branch only.

use navin_runner::checks::LineSource;
use std::io::Read as _;
use std::path::Path;

use chrono::{DateTime, Utc};
use navin_ledger::model::{Actor, MissionMode, Origin};
use navin_ledger::ops::{Ctx, Operation};
use navin_ledger::plan::record::{
    record_path, text_path, ApprovalEntry, EditEntry, PlanRecord, RecordStatus,
};
use navin_ledger::plan::{commit_message, convert, PlanDocument};
use navin_ledger::store::{Store, StoreError};
use serde_json::json;

use super::{CliError, EXIT_REFUSED};

/// Prefix of the ids of plans saved from the command line.
const LOCAL_PREFIX: &str = "local-";

/// A plan's id from its text: saving the same text twice finds the first save.
pub(super) fn local_id(doc: &PlanDocument) -> String {
    let hex = doc.hash().trim_start_matches("sha256:");
    format!("{LOCAL_PREFIX}{}", &hex[..hex.len().min(12)])
}

fn refused(message: impl Into<String>) -> CliError {
    CliError {
        message: message.into(),
        code: EXIT_REFUSED,
    }
}

/// The login a record names for `actor` (`alice` for `human:alice`, the whole actor otherwise).
fn login(actor: &Actor) -> String {
    match actor {
        Actor::Human(login) => login.clone(),
        other => other.to_string(),
    }
}

/// Only people decide plans: an agent's approval would let it approve its own work.
fn require_human(actor: &Actor, verb: &str) -> Result<(), CliError> {
    if actor.is_human() {
        return Ok(());
    }
    Err(refused(format!(
        "{actor} may not {verb} a plan: only a person (human:LOGIN) decides plans"
    )))
}

/// `.github/navin.yml` of the checkout at `repo`, or defaults when there is none (or no
/// checkout, as in a bare clone).
pub(super) fn repo_config(repo: &Path) -> Result<navin_domain::config::RepoConfig, CliError> {
    crate::local::repo_config(repo).map_err(CliError::usage)
}

/// Plan `id`'s record and text, checked against each other: a text whose hash is not the
/// record's is reported as corrupt, never repaired.
pub(super) fn load(store: &Store, id: &str) -> Result<(PlanRecord, PlanDocument), CliError> {
    if id.trim().is_empty() {
        return Err(CliError::usage(
            "no plan id given: `navin plan list` shows the saved plans and their ids",
        ));
    }
    if !navin_ledger::model::valid_step_id(id) {
        return Err(CliError::usage(format!(
            "{id:?} is not a plan id (letters, digits and -_. only; `navin plan list` shows them)"
        )));
    }
    let json_path = record_path(id);
    let Some(bytes) = store.read_file(&json_path)? else {
        return Err(refused(format!(
            "there is no plan {id:?} on the ledger branch {}; `navin plan list` shows the plans",
            store.branch()
        )));
    };
    let corrupt = |path: &str, message: String| {
        CliError::from(StoreError::Corrupt {
            commit: "the branch tip".to_owned(),
            path: path.to_owned(),
            field: String::new(),
            message,
        })
    };
    let record: PlanRecord =
        serde_json::from_slice(&bytes).map_err(|e| corrupt(&json_path, e.to_string()))?;
    let md_path = text_path(id);
    let text = store
        .read_file(&md_path)?
        .ok_or_else(|| corrupt(&md_path, "missing beside its record".to_owned()))?;
    let text = String::from_utf8(text).map_err(|e| corrupt(&md_path, e.to_string()))?;
    let doc = PlanDocument::parse(&text).map_err(|e| corrupt(&md_path, e.to_string()))?;
    if doc.hash() != record.hash {
        return Err(corrupt(
            &md_path,
            format!(
                "its content hash {} is not the record's {}",
                doc.hash(),
                record.hash
            ),
        ));
    }
    Ok((record, doc))
}

/// Read-modify-write of plan `id` (record, and `text` when given) as one compare-and-swap
/// commit. `change` sees the record as it is at the tip (re-read after a lost race) and
/// returns the record to write, `None` to keep the one there, or why nothing may change.
fn update(
    store: &Store,
    id: &str,
    text: Option<&str>,
    message: &str,
    now: DateTime<Utc>,
    mut change: impl FnMut(Option<PlanRecord>) -> Result<Option<PlanRecord>, String>,
) -> Result<PlanRecord, CliError> {
    let paths = [record_path(id), text_path(id)];
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut outcome: Result<Option<PlanRecord>, CliError> = Ok(None);
    store.update_files(&refs, message, now, |current| {
        let old = match current[0]
            .as_deref()
            .map(serde_json::from_slice::<PlanRecord>)
        {
            None => None,
            Some(Ok(record)) => Some(record),
            Some(Err(e)) => {
                outcome = Err(CliError::from(StoreError::Corrupt {
                    commit: "the branch tip".to_owned(),
                    path: paths[0].clone(),
                    field: String::new(),
                    message: e.to_string(),
                }));
                return None;
            }
        };
        match change(old.clone()) {
            Ok(None) => {
                outcome = Ok(old);
                None
            }
            Ok(Some(record)) => {
                let mut files = vec![(paths[0].clone(), record.to_json())];
                if let Some(text) = text {
                    files.push((paths[1].clone(), text.as_bytes().to_vec()));
                }
                outcome = Ok(Some(record));
                Some(files)
            }
            Err(reason) => {
                outcome = Err(refused(reason));
                None
            }
        }
    })?;
    outcome?.ok_or_else(|| CliError::usage(format!("plan {id} was not written")))
}

/// `navin plan REQUEST --save`: stores the plan as pending. The same text saved again is
/// the same plan (nothing is written twice).
pub(super) fn save(
    store: &Store,
    actor: &Actor,
    doc: &PlanDocument,
    request: &str,
    source: &str,
    repository: &str,
    run: Option<navin_ledger::plan::record::PlannerRun>,
) -> Result<(PlanRecord, bool), CliError> {
    let id = local_id(doc);
    let now = Utc::now();
    let mut fresh = false;
    let message = commit_message(&id, "plan", actor, request, None);
    let record = update(store, &id, Some(doc.text()), &message, now, |old| {
        // Saved before: keep that record and its text (it may have been edited since).
        fresh = old.is_none();
        if old.is_some() {
            return Ok(None);
        }
        Ok(Some(PlanRecord {
            source: source.to_owned(),
            run: run.clone(),
            request: request.to_owned(),
            repository: repository.to_owned(),
            requested_by: login(actor),
            ..PlanRecord::pending(&id, doc.hash(), now)
        }))
    })?;
    Ok((record, fresh))
}

/// `navin plan approve ID`: the acting person's approval, bound to the current text.
pub(super) fn approve(
    store: &Store,
    actor: &Actor,
    id: &str,
    approval: &navin_domain::config::Approval,
) -> Result<PlanRecord, CliError> {
    require_human(actor, "approve")?;
    let required = approval.required_approvals;
    let allow_author = approval.allow_author_approval;
    load(store, id)?;
    let who = login(actor);
    let now = Utc::now();
    let message = commit_message(id, "approve", actor, "", None);
    update(store, id, None, &message, now, |old| {
        let mut record = old.ok_or_else(|| format!("plan {id} disappeared"))?;
        if record.status == RecordStatus::Rejected {
            return Err(format!(
                "plan {id} is rejected; edit it (`navin plan edit {id}`) or save a new one before approving"
            ));
        }
        if record.is_approved() {
            return Err(format!("plan {id} is already approved"));
        }
        if navin_domain::rules::approvals::own_plan(&record.requested_by, &who, allow_author) {
            return Err(format!(
                "{who} asked for plan {id}, and people do not approve their own plans: working alone, set `approval.allow_author_approval: true` in the checkout's .github/navin.yml, then approve; otherwise another person approves it as themselves (`navin plan approve {id}` in their checkout)"
            ));
        }
        let approval = ApprovalEntry::new(&who, &record.hash, now, None);
        if record
            .current_approvals()
            .any(|a| a.identity() == approval.identity())
        {
            return Err(format!(
                "{who} already approved this text of plan {id}; it needs {required} distinct approvers"
            ));
        }
        record.approvals.push(approval);
        record.updated_at = now;
        record.settle(required);
        Ok(Some(record))
    })
}

/// `navin plan reject ID [--feedback TEXT]`: the plan stops counting; approvals are revoked.
pub(super) fn reject(
    store: &Store,
    actor: &Actor,
    id: &str,
    feedback: Option<&str>,
) -> Result<PlanRecord, CliError> {
    require_human(actor, "reject")?;
    load(store, id)?;
    let who = login(actor);
    let now = Utc::now();
    let feedback = feedback.map(str::trim).filter(|f| !f.is_empty());
    let message = commit_message(id, "reject", actor, feedback.unwrap_or_default(), None);
    update(store, id, None, &message, now, |old| {
        let mut record = old.ok_or_else(|| format!("plan {id} disappeared"))?;
        if record.status == RecordStatus::Rejected {
            return Err(format!("plan {id} is already rejected"));
        }
        record.reject(&who, &who, feedback.map(str::to_owned), now);
        record.updated_at = now;
        Ok(Some(record))
    })
}

/// `navin plan edit ID [FILE]`: replaces the text with a person's edit. The diff against
/// the first text is kept (it is binding on whoever executes the plan), approvals of the
/// old text go stale and the plan waits for approval again.
pub(super) fn edit(
    store: &Store,
    actor: &Actor,
    id: &str,
    edited_text: &str,
) -> Result<(PlanRecord, PlanDocument), CliError> {
    require_human(actor, "edit")?;
    let edited = PlanDocument::parse(edited_text).map_err(|e| {
        refused(format!(
            "the edited plan is not valid, so nothing changed: {e}"
        ))
    })?;
    let (current_record, current) = load(store, id)?;
    if edited.hash() == current.hash() {
        return Err(refused(format!(
            "the edited text is plan {id} as it stands; nothing to change"
        )));
    }
    let original = match current_record.original.as_deref() {
        Some(text) => PlanDocument::parse(text).map_err(|e| {
            CliError::from(StoreError::Corrupt {
                commit: "the branch tip".to_owned(),
                path: record_path(id),
                field: "original".to_owned(),
                message: e.to_string(),
            })
        })?,
        None => current.clone(),
    };
    let diff = navin_ledger::plan::diff(original.plan(), edited.plan());
    let who = login(actor);
    let now = Utc::now();
    let via = "edited with navin plan edit";
    let message = commit_message(
        id,
        "edit",
        actor,
        &format!("Replaced with an edited text ({}).", edited.hash()),
        None,
    );
    let base_hash = current.hash().to_owned();
    let record = update(store, id, Some(edited.text()), &message, now, |old| {
        let mut record = old.ok_or_else(|| format!("plan {id} disappeared"))?;
        if record.hash != base_hash {
            return Err(format!(
                "plan {id} changed while it was being edited; run `navin plan show {id}` and edit the current text"
            ));
        }
        record.edits.push(EditEntry {
            by: who.clone(),
            by_id: None,
            at: now,
            from_hash: record.hash.clone(),
            to_hash: edited.hash().to_owned(),
            via: Some(via.to_owned()),
            op_id: None,
        });
        record.original = Some(original.text().to_owned());
        record.diff = (!diff.is_empty()).then(|| diff.clone());
        record.replace_text(edited.hash(), &who, via, now);
        record.updated_at = now;
        Ok(Some(record))
    })?;
    Ok((record, edited))
}

/// `navin mission start --from-plan ID`: the same conversion as `/mission` (staged) or
/// `/cruise` (one stage) on GitHub, from an approved plan only.
pub(super) fn start(
    store: &Store,
    ctx: &Ctx,
    id: &str,
    mode: MissionMode,
    replace: bool,
    config: &navin_domain::config::RepoConfig,
    root: &std::path::Path,
) -> Result<navin_ledger::store::Committed, CliError> {
    let (record, doc) = load(store, id)?;
    if !record.is_approved() {
        let how = format!("approve it with `navin plan approve {id}` first");
        let why = match (record.status, record.stale_note()) {
            (RecordStatus::Rejected, _) => {
                format!("it was rejected; edit it (`navin plan edit {id}`) and {how}")
            }
            (RecordStatus::Superseded, _) => "a newer text replaced it".to_owned(),
            (_, Some(note)) => format!("{note} (`navin plan approve {id}`)"),
            (_, None) => format!("nobody has approved it yet; {how}"),
        };
        return Err(refused(format!(
            "plan {id} is {}: {why}",
            record.status.word()
        )));
    }
    // What the checkout's manifests, scripts and commands run: a plan's verification
    // command outside it is prose a person checks, not a command line that cannot run.
    let toolchain = navin_planner::LocalSource::new(root)
        .and_then(|source| {
            navin_planner::repository_toolchain(&source, &navin_planner::PlannerOptions::default())
        })
        .ok();
    let knobs = convert::Knobs {
        toolchain,
        ..config.plan_knobs()
    };
    let mut init = convert::plan_init(doc.plan(), mode, &knobs, ctx.now);
    init.replace = replace;
    init.commands = crate::local::default_branch_config(root)
        .ok()
        .map(|(config, _)| config.validation.commands);
    init.origin = Some(Origin {
        repository: None,
        issue: None,
        plan_id: Some(record.id.clone()),
    });
    init.budget = Some(convert::plan_budget(doc.plan(), config.budgets.to_budget()));
    // The plan's commit when its record names one, else the checkout's `HEAD` now: the
    // first steps' work starts there either way.
    init.base =
        convert::plan_base(&record).or_else(|| crate::local::checkout(root).ok().map(|c| c.head));
    if let Err((source, problem)) = navin_runner::checks::check_init(&init, root) {
        return Err(refused(match source {
            LineSource::Config => format!(
                "validation.commands in .github/navin.yml: {problem}; fix it there, then start the mission again"
            ),
            LineSource::Step(step) => format!(
                "plan {id}, step {step}: {problem}; edit the plan's verification (`navin plan edit {id}`), then start the mission again"
            ),
        }));
    }
    let op = Operation::Init(init);
    Ok(store.transact(&op, ctx)?)
}

/// One line per saved plan: id, status, approvers, title.
pub(super) fn list(store: &Store, json: bool) -> Result<(), CliError> {
    let mut rows = Vec::new();
    for name in store.plan_files()? {
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        rows.push(match load(store, id) {
            Ok((record, doc)) => json!({
                "id": record.id,
                "status": record.status.word(),
                "approvers": record.approver_count(),
                "title": doc.plan().title,
                "hash": record.hash,
                "issue": (record.issue > 0).then_some(record.issue),
            }),
            Err(e) => json!({ "id": id, "error": e.message }),
        });
    }
    if json {
        println!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if rows.is_empty() {
        println!("no plans on the ledger branch {}", store.branch());
    }
    for row in rows {
        let id = row["id"].as_str().unwrap_or_default();
        match row["error"].as_str() {
            Some(error) => println!("{id}  unreadable: {error}"),
            None => println!(
                "{id}  {}  {}",
                row["status"].as_str().unwrap_or_default(),
                row["title"].as_str().unwrap_or_default()
            ),
        }
    }
    Ok(())
}

/// The plan's text, or with `--json` its record and text.
pub(super) fn show(store: &Store, id: &str, json: bool) -> Result<(), CliError> {
    let (record, doc) = load(store, id)?;
    if json {
        println!(
            "{}",
            json!({ "record": record, "markdown": doc.text(), "plan": doc.plan() })
        );
    } else {
        println!(
            "plan {id}: {} ({} approver(s) of {})",
            record.status.word(),
            record.approver_count(),
            record.hash
        );
        if let Some(note) = record.stale_note() {
            println!("note: {note}");
        }
        println!();
        print!("{}", doc.text());
    }
    Ok(())
}

/// The edited text: from FILE (`-` for stdin), or what the person leaves in `$VISUAL` /
/// `$EDITOR` after editing the current text in a temporary file.
pub(super) fn edited_text(
    store: &Store,
    id: &str,
    file: Option<&Path>,
) -> Result<String, CliError> {
    match file {
        Some(path) if path == Path::new("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| CliError::usage(format!("reading stdin: {e}")))?;
            Ok(text)
        }
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| CliError::usage(format!("reading {}: {e}", path.display()))),
        None => {
            let editor = std::env::var("VISUAL")
                .ok()
                .or_else(|| std::env::var("EDITOR").ok())
                .filter(|e| !e.trim().is_empty())
                .ok_or_else(|| {
                    CliError::usage(format!(
                        "no editor: set VISUAL or EDITOR, or pass the edited file (`navin plan edit {id} FILE`, `-` for stdin)"
                    ))
                })?;
            let (_, doc) = load(store, id)?;
            let dir = tempfile::tempdir()
                .map_err(|e| CliError::usage(format!("creating a temporary file: {e}")))?;
            let path = dir.path().join(format!("{id}.md"));
            std::fs::write(&path, doc.text())
                .map_err(|e| CliError::usage(format!("writing {}: {e}", path.display())))?;
            let argv = shlex::split(&editor)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| {
                    CliError::usage(format!("the editor {editor:?} is not a command line"))
                })?;
            let status = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .arg(&path)
                .status()
                .map_err(|e| {
                    CliError::usage(format!("cannot run the editor {:?}: {e}", argv[0]))
                })?;
            if !status.success() {
                return Err(refused(format!(
                    "the editor exited with {status}; nothing changed"
                )));
            }
            std::fs::read_to_string(&path)
                .map_err(|e| CliError::usage(format!("reading {}: {e}", path.display())))
        }
    }
}
