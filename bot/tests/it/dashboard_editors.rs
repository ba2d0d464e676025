//! Five people editing one plan at once, 20 rounds: two change different sections, two change different lines of one section (merged), and one, in a real browser, changes the same line as another (a conflict shown to whoever saves second, who then resolves it). Every round ends with every non-conflicting edit present, the conflict resolved by the person who saw it, and a valid plan.

use std::time::Duration;

use navin_e2e::browser::Browser;
use navin_ledger::plan::PlanDocument;

use crate::dashboard_browser::world_with_mission_and_plan;
use crate::dashboard_support::{Answer, EditorForm, WebUser};
use crate::engine_support::{OWNER, REPO};

const ROUNDS: usize = 20;
const UI: Duration = Duration::from_secs(20);

/// `text` with a line added at the end of section `heading`'s body.
fn append_to_section(text: &str, heading: &str, line: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == heading).unwrap();
    let mut end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    lines.insert(end, line);
    lines.insert(end, "");
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// `text` with its one line starting `prefix` replaced by `line`.
fn replace_line(text: &str, prefix: &str, line: &str) -> String {
    let found: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(
        found.len(),
        1,
        "one line starts with {prefix:?} in:\n{text}"
    );
    text.replacen(found[0], line, 1)
}

fn line_starting<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(prefix)).unwrap()
}

fn record_hash(w: &crate::world::World, issue: u64) -> String {
    w.plan_record(&format!("issue-{issue}")).unwrap().hash
}

async fn save(user: &mut WebUser, path: &str, form: &EditorForm, text: &str) -> Answer {
    user.post_form(path, &form.fields(text)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_editors_twenty_rounds_merge_by_section_and_show_the_one_real_conflict() {
    let (w, issue) = world_with_mission_and_plan().await;
    let base = w.dashboard_url();
    let plan_path = format!("/r/{OWNER}/{REPO}/plans/issue-{issue}");
    let edit_path = format!("{plan_path}/edit");
    let logins = ["erin", "frank", "grace", "heidi"];
    for login in logins {
        w.fake().set_role(OWNER, REPO, login, "write");
    }
    let mut people = Vec::new();
    for login in logins {
        let mut p = WebUser::new(&base, login);
        p.sign_in().await;
        people.push(p);
    }
    // A Data Flow section of separate lines, saved once, for the line-level merges.
    let form = EditorForm::parse(&people[0].get(&edit_path).await.body);
    let start = form.text.replacen(
        "## Data Flow\n",
        "## Data Flow\n\nFirst line.\n\nMiddle line stays.\n\nLast line.\n\n",
        1,
    );
    let set_up = save(&mut people[0], &plan_path, &form, &start).await;
    assert_eq!(set_up.status, 303, "{}", set_up.body);

    let b = Browser::start("dashboard_editors").await.unwrap();
    b.goto(&w.fake().sign_in_url("alice")).await.unwrap();
    b.goto(&format!("{base}/login")).await.unwrap();
    b.wait_for("#missions", UI).await.unwrap();

    let edits_before = w
        .plan_record(&format!("issue-{issue}"))
        .unwrap()
        .edits
        .len();
    let mut browser_conflicts = 0;
    for round in 0..ROUNDS {
        // Everyone opens the editor on the same text.
        let mut forms = Vec::new();
        for p in people.iter_mut() {
            forms.push(EditorForm::parse(&p.get(&edit_path).await.body));
        }
        b.goto(&format!("{base}{edit_path}")).await.unwrap();
        b.wait_for_text("#validation", "Valid plan", UI)
            .await
            .unwrap();
        let browser_text = b.value("#plan-text").await.unwrap();
        assert!(forms.iter().all(|f| f.base_hash == forms[0].base_hash));

        let goal = format!("Goal note {round} by erin.");
        let target = format!("Target note {round} by frank.");
        let first_grace = format!("First line {round} by grace.");
        let last = format!("Last line {round} by heidi.");
        let first_alice = format!("First line {round} by alice.");
        let texts = [
            append_to_section(&forms[0].text, "## Goal", &goal),
            append_to_section(&forms[1].text, "## Target State", &target),
            replace_line(&forms[2].text, "First line", &first_grace),
            replace_line(&forms[3].text, "Last line", &last),
        ];
        let alice_text = replace_line(&browser_text, "First line", &first_alice);

        // All five save at once.
        let [p0, p1, p2, p3] = &mut people[..] else {
            unreachable!()
        };
        let browser_save = async {
            b.set_value("#plan-text", &alice_text).await.unwrap();
            b.click("#save").await.unwrap();
        };
        let (a0, a1, a2, a3, ()) = tokio::join!(
            save(p0, &plan_path, &forms[0], &texts[0]),
            save(p1, &plan_path, &forms[1], &texts[1]),
            save(p2, &plan_path, &forms[2], &texts[2]),
            save(p3, &plan_path, &forms[3], &texts[3]),
            browser_save,
        );
        for (who, a) in [("erin", &a0), ("frank", &a1), ("heidi", &a3)] {
            assert_eq!(a.status, 303, "round {round}: {who}'s save: {}", a.body);
        }
        // grace and alice changed the same line: whoever saved second sees both versions.
        b.wait_for(".flash", UI).await.unwrap();
        let alice_conflicted = b.text("#conflict").await.is_ok();
        let grace_conflicted = a2.status == 409;
        assert!(
            alice_conflicted != grace_conflicted,
            "round {round}: exactly one of the two same-line saves conflicts (grace {}, alice {alice_conflicted})",
            a2.status
        );
        if grace_conflicted {
            assert!(
                a2.body.contains(&first_grace) && a2.body.contains(&first_alice),
                "both versions shown: {}",
                a2.body
            );
            let again = EditorForm::parse(&a2.body);
            assert!(
                again.text.contains(&first_alice),
                "the draft is the current plan"
            );
            let resolved = replace_line(&again.text, "First line", &first_grace);
            let done = save(&mut people[2], &plan_path, &again, &resolved).await;
            assert_eq!(
                done.status, 303,
                "round {round}: grace's resolution: {}",
                done.body
            );
        } else {
            browser_conflicts += 1;
            assert_eq!(a2.status, 303, "round {round}: {}", a2.body);
            let yours = b.text(".conflict-section pre.yours").await.unwrap();
            let current = b.text(".conflict-section pre.current").await.unwrap();
            assert!(
                yours.contains(&first_alice) && current.contains(&first_grace),
                "{yours} | {current}"
            );
            if browser_conflicts == 1 {
                b.screenshot("conflict").await.unwrap();
            }
            let draft = b.value("#plan-text").await.unwrap();
            let resolved = replace_line(&draft, "First line", &first_alice);
            b.set_value("#plan-text", &resolved).await.unwrap();
            b.click("#save").await.unwrap();
            b.wait_for_text("#flash", "Saved", UI).await.unwrap();
        }

        // Every edit is there; the conflict ended as its resolver chose; the plan is valid.
        let stored = w
            .ledger_text(&format!(".navin/plans/issue-{issue}.md"))
            .unwrap();
        let doc =
            PlanDocument::parse(&stored).unwrap_or_else(|e| panic!("round {round}: {e}\n{stored}"));
        assert!(
            stored.contains(&goal),
            "round {round}: erin's edit lost:\n{stored}"
        );
        assert!(stored.contains(&target), "round {round}: frank's edit lost");
        assert_eq!(
            line_starting(&stored, "Last line"),
            last,
            "round {round}: heidi's edit lost"
        );
        let resolver = if grace_conflicted {
            &first_grace
        } else {
            &first_alice
        };
        assert_eq!(line_starting(&stored, "First line"), resolver.as_str());
        assert!(stored.contains("Middle line stays."));
        assert_eq!(
            doc.hash(),
            record_hash(&w, issue),
            "round {round}: the record names the stored text"
        );
    }
    let record = w.plan_record(&format!("issue-{issue}")).unwrap();
    assert_eq!(
        record.edits.len() - edits_before,
        ROUNDS * 5,
        "five saves a round (four plus the resolution), each one edit"
    );
    for login in ["alice", "erin", "frank", "grace", "heidi"] {
        assert!(
            record.edits.iter().any(|e| e.by == login),
            "{login} has edits"
        );
    }
    println!("rounds: {ROUNDS}, the browser's save conflicted in {browser_conflicts}");
    // The conflict page answers 409 on purpose; the browser logs that status. Anything
    // else (a script error, a CSP violation) fails the test.
    let errors: Vec<String> = b
        .console_errors()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| !e.contains("status of 409 (Conflict)"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    b.close().await.unwrap();
}
