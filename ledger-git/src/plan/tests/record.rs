//! Which text a person was looking at when they wrote an edit, read from a plan record's history.

use crate::plan::record::PlanRecord;
use chrono::{DateTime, Utc};

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default()
}

#[test]
fn the_text_current_when_an_edit_was_written_is_the_one_replaced_after_it() {
    // Text a from 0, replaced by b at 10, replaced by c at 20.
    let mut record = PlanRecord::pending("issue-1", "sha256:a", at(0));
    record.replace_text("sha256:b", "alice", "edited with /plan edit", at(10));
    record.replace_text("sha256:c", "bob", "edited with /plan edit", at(20));

    assert_eq!(record.hash_at(at(-5)), "sha256:a", "before the first text");
    assert_eq!(record.hash_at(at(5)), "sha256:a");
    assert_eq!(
        record.hash_at(at(10)),
        "sha256:b",
        "written at the very moment b landed: b was there"
    );
    assert_eq!(record.hash_at(at(15)), "sha256:b");
    assert_eq!(record.hash_at(at(25)), "sha256:c");
}

#[test]
fn a_plan_never_replaced_was_always_its_current_text() {
    let record = PlanRecord::pending("issue-1", "sha256:a", at(0));
    assert_eq!(record.hash_at(at(-5)), "sha256:a");
    assert_eq!(record.hash_at(at(5)), "sha256:a");
}
