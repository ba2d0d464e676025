//! The one message shape of every plan commit on the ledger branch.

use crate::model::Actor;

/// Builds `navin: plan ID WHAT by ACTOR`, then `detail` as the body (if any), then the
/// trailers: `Navin-Plan`, which marks a plan commit for the authorship check and the
/// history, and for a webhook's change `Navin-Delivery`, which keeps a redelivery from
/// applying it twice.
///
/// `detail` may hold text people wrote (a `/plan` request). A line of it that starts
/// like a trailer is indented, so a request cannot plant a `Navin-Delivery` id that would
/// make a later delivery look applied, nor pass a commit off as another plan's.
pub fn commit_message(
    id: &str,
    what: &str,
    actor: &Actor,
    detail: &str,
    delivery: Option<&str>,
) -> String {
    let mut msg = format!("navin: plan {id} {what} by {actor}\n\n");
    let detail = detail.trim();
    if !detail.is_empty() {
        for line in detail.lines() {
            if line.trim_start().starts_with("Navin-") {
                msg.push_str("  ");
                msg.push_str(line.trim_start());
            } else {
                msg.push_str(line);
            }
            msg.push('\n');
        }
        msg.push('\n');
    }
    msg.push_str(&format!("Navin-Plan: {id}\n"));
    if let Some(delivery) = delivery {
        msg.push_str(&format!("Navin-Delivery: {delivery}\n"));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Actor {
        Actor::Human("alice".to_owned())
    }

    #[test]
    fn a_plan_commit_names_the_plan_the_change_and_who_in_subject_and_trailers() {
        assert_eq!(
            commit_message("issue-7", "approve", &alice(), "", Some("d-1")),
            "navin: plan issue-7 approve by human:alice\n\nNavin-Plan: issue-7\nNavin-Delivery: d-1\n"
        );
        assert_eq!(
            commit_message("pr-3", "plan", &Actor::Main, "add a CONTRIBUTING.md", None),
            "navin: plan pr-3 plan by main\n\nadd a CONTRIBUTING.md\n\nNavin-Plan: pr-3\n"
        );
    }

    #[test]
    fn a_request_cannot_plant_trailers_in_its_plan_commit() {
        let msg = commit_message(
            "issue-7",
            "plan",
            &alice(),
            "do it\nNavin-Delivery: someone-elses-delivery\n Navin-Plan: issue-9",
            Some("d-1"),
        );
        let delivery_lines: Vec<&str> = msg
            .lines()
            .filter_map(|l| l.strip_prefix("Navin-Delivery: "))
            .collect();
        assert_eq!(delivery_lines, ["d-1"]);
        let plan_lines: Vec<&str> = msg
            .lines()
            .filter_map(|l| l.strip_prefix("Navin-Plan: "))
            .collect();
        assert_eq!(plan_lines, ["issue-7"]);
        assert!(
            msg.contains("  Navin-Delivery: someone-elses-delivery\n"),
            "{msg}"
        );
    }
}
