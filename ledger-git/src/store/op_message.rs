//! The message of an operation's commit: what changed and why for people reading the
//! log, then the trailers Navin reads back (operation, version, actor, step, delivery).

use crate::ops::{self, Ctx, Operation};

pub(super) fn commit_message(applied: &ops::Applied, op: &Operation, ctx: &Ctx) -> String {
    let mission = &applied.ledger.mission;
    let mut msg = format!(
        "navin: {} v{} by {}\n\n{}\n",
        op.name(),
        mission.version,
        ctx.actor,
        applied.reason
    );
    if let Some(entry) = mission.history.last() {
        let extra: Vec<&String> = entry
            .changes
            .iter()
            .filter(|c| **c != applied.reason)
            .collect();
        if !extra.is_empty() {
            msg.push('\n');
            for c in extra {
                msg.push_str(&format!("- {c}\n"));
            }
        }
    }
    msg.push_str(&format!(
        "\nNavin-Operation: {}\nNavin-Version: {}\nNavin-Actor: {}\n",
        op.name(),
        mission.version,
        ctx.actor
    ));
    if let Some(step) = op.step() {
        msg.push_str(&format!("Navin-Step: {step}\n"));
    }
    if let Some(id) = &ctx.op_id {
        msg.push_str(&format!("Navin-Delivery: {id}\n"));
    }
    msg
}
