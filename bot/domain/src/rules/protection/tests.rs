//! Each wording of the ledger branch's protection warning.

use super::*;

const B: &str = "navin/ledger";

fn me() -> Me {
    Me {
        app_id: Some(7),
        slug: "navin".into(),
    }
}

fn ruled(kinds: &[&str]) -> Guard {
    Guard {
        classic: false,
        rules: kinds.iter().map(|k| ((*k).to_owned(), 42)).collect(),
    }
}

fn actor(kind: &str, id: Option<u64>) -> Actor {
    Actor {
        kind: kind.into(),
        id,
    }
}

fn bypass(actors: Vec<Actor>) -> Details {
    Details {
        classic: None,
        rulesets: vec![Ruleset {
            id: 42,
            actors: Some(actors),
        }],
    }
}

fn classic(c: Classic) -> (Guard, Details) {
    (
        Guard {
            classic: true,
            rules: Vec::new(),
        },
        Details {
            classic: Some(c),
            rulesets: Vec::new(),
        },
    )
}

fn locked_down() -> Classic {
    Classic {
        allow_force_pushes: false,
        allow_deletions: false,
        enforce_admins: true,
        restrictions: Some(Restrictions {
            apps: vec!["navin".into()],
            ..Restrictions::default()
        }),
    }
}

#[test]
fn an_unprotected_branch_is_named_with_how_to_guard_it() {
    let text = notice(B, &Guard::default(), None, &me()).expect("warned");
    assert!(text.contains("`navin/ledger` is not protected"), "{text}");
    assert!(text.contains("Navin as the only bypass"), "{text}");
}

#[test]
fn a_guarded_branch_without_administration_read_says_who_may_bypass_is_unknown() {
    let text = notice(B, &ruled(&["non_fast_forward"]), None, &me()).expect("warned");
    assert!(
        text.contains("is protected, but who may still push"),
        "{text}"
    );
    assert!(text.contains("`administration: read`"), "{text}");
}

#[test]
fn a_ruleset_only_navin_may_bypass_that_restricts_updates_is_fine() {
    let details = bypass(vec![actor("Integration", Some(7))]);
    assert_eq!(
        notice(
            B,
            &ruled(&["update", "non_fast_forward"]),
            Some(&details),
            &me()
        ),
        None
    );
}

#[test]
fn bypass_actors_other_than_navin_are_listed() {
    let details = bypass(vec![
        actor("User", Some(1)),
        actor("Team", Some(2)),
        actor("Integration", Some(99)),
        actor("Integration", Some(7)),
        actor("OrganizationAdmin", None),
        actor("DeployKey", None),
    ]);
    let text = notice(B, &ruled(&["update"]), Some(&details), &me()).expect("warned");
    assert!(
        text.contains("bypass actors: user 1, team 2, app 99, organization admins, deploy keys"),
        "{text}"
    );
    assert!(!text.contains("app 7"), "{text}");
}

#[test]
fn a_hidden_bypass_list_is_named_as_hidden() {
    let details = Details {
        classic: None,
        rulesets: vec![Ruleset {
            id: 42,
            actors: None,
        }],
    };
    let text = notice(B, &ruled(&["update"]), Some(&details), &me()).expect("warned");
    assert!(
        text.contains("who may bypass ruleset 42 is hidden"),
        "{text}"
    );
}

#[test]
fn a_ruleset_that_only_blocks_rewrites_leaves_pushes_open() {
    let details = bypass(Vec::new());
    let text = notice(B, &ruled(&["non_fast_forward"]), Some(&details), &me()).expect("warned");
    assert!(text.contains("anyone with write access may push"), "{text}");
}

#[test]
fn classic_protection_allowing_force_pushes_says_so() {
    let (guard, details) = classic(Classic {
        allow_force_pushes: true,
        ..locked_down()
    });
    let text = notice(B, &guard, Some(&details), &me()).expect("warned");
    assert!(text.contains(": force pushes allowed."), "{text}");
}

#[test]
fn classic_protection_that_exempts_admins_says_admins_not_included() {
    let (guard, details) = classic(Classic {
        enforce_admins: false,
        ..locked_down()
    });
    let text = notice(B, &guard, Some(&details), &me()).expect("warned");
    assert!(text.contains(": admins not included."), "{text}");
}

#[test]
fn classic_protection_without_push_restrictions_lets_anyone_with_write_push() {
    let (guard, details) = classic(Classic {
        restrictions: None,
        ..locked_down()
    });
    let text = notice(B, &guard, Some(&details), &me()).expect("warned");
    assert!(text.contains("anyone with write access may push"), "{text}");
}

#[test]
fn classic_push_restrictions_name_everyone_but_navin() {
    let (guard, details) = classic(Classic {
        restrictions: Some(Restrictions {
            users: vec!["alice".into()],
            teams: vec!["ops".into()],
            apps: vec!["navin".into(), "other-bot".into()],
        }),
        ..locked_down()
    });
    let text = notice(B, &guard, Some(&details), &me()).expect("warned");
    assert!(
        text.contains("may push: @alice, team ops, app other-bot"),
        "{text}"
    );
}

#[test]
fn classic_protection_locked_down_to_navin_is_fine() {
    let (guard, details) = classic(locked_down());
    assert_eq!(notice(B, &guard, Some(&details), &me()), None);
}

#[test]
fn a_ruleset_blocking_rewrites_covers_classic_force_pushes_and_admins() {
    let guard = Guard {
        classic: true,
        rules: vec![("non_fast_forward".into(), 42), ("update".into(), 42)],
    };
    let details = Details {
        classic: Some(Classic {
            allow_force_pushes: true,
            enforce_admins: false,
            restrictions: None,
            ..Classic::default()
        }),
        rulesets: vec![Ruleset {
            id: 42,
            actors: Some(vec![actor("Integration", Some(7))]),
        }],
    };
    assert_eq!(notice(B, &guard, Some(&details), &me()), None);
}
