//! Property tests: render/parse round trip, parse never panics, whitespace never moves the hash.

use super::fixture::sample_text;
use crate::plan::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

const WORD: &str = "[a-zA-Z0-9éüßñ漢字,.;:!?()'/_+=<>*-]{1,8}";

fn words(max: usize) -> impl Strategy<Value = String> {
    vec(WORD, 1..=max).prop_map(|w| w.join(" "))
}

/// One line of prose: words, sometimes inline code.
fn prose_line() -> impl Strategy<Value = String> {
    vec(
        prop_oneof![4 => WORD.prop_map(String::from), 1 => "`[a-z =]{1,6}`".prop_map(String::from)],
        1..8,
    )
    .prop_map(|w| w.join(" "))
}

/// A fenced block whose content may hold `#` lines and blank lines.
fn fenced() -> impl Strategy<Value = Vec<String>> {
    let content = prop_oneof![
        prose_line(),
        words(3).prop_map(|w| format!("# {w}")),
        words(3).prop_map(|w| format!("## {w}")),
        words(3).prop_map(|w| format!("    {w}")),
        Just(String::new()),
    ];
    (
        select(vec!["```", "```rust", "~~~", "````"]),
        vec(content, 0..5),
    )
        .prop_map(|(open, body)| {
            let close = if open.starts_with('~') {
                "~~~"
            } else if open.starts_with("````") {
                "````"
            } else {
                "```"
            };
            let mut lines = vec![open.to_owned()];
            lines.extend(body);
            lines.push(close.to_owned());
            lines
        })
}

/// Free text already in normal form: paragraphs, lists, `###` headings and
/// fences, separated by single blank lines.
fn free_text() -> impl Strategy<Value = String> {
    let block = prop_oneof![
        3 => vec(prose_line(), 1..3),
        1 => vec(prose_line().prop_map(|l| format!("- {l}")), 1..3),
        1 => words(3).prop_map(|w| vec![format!("### {w}")]),
        1 => fenced(),
    ];
    vec(block, 1..4).prop_map(|blocks| {
        blocks
            .into_iter()
            .map(|b| b.join("\n"))
            .collect::<Vec<_>>()
            .join("\n\n")
    })
}

fn path() -> impl Strategy<Value = String> {
    (
        vec("[a-z][a-z0-9_-]{0,6}", 0..3),
        "[a-zA-Z][a-zA-Z0-9_-]{0,6}",
        select(vec!["", ".rs", ".toml", ".md", ".sql"]),
    )
        .prop_map(|(dirs, name, ext)| {
            let mut parts = dirs;
            parts.push(format!("{name}{ext}"));
            parts.join("/")
        })
}

fn operation() -> impl Strategy<Value = Operation> {
    select(vec![Operation::Edit, Operation::Create, Operation::Delete])
}

fn changes() -> impl Strategy<Value = Vec<FileChange>> {
    vec(
        (path(), operation(), words(6), words(6), any::<bool>()),
        0..5,
    )
    .prop_map(|entries| {
        entries
            .into_iter()
            .enumerate()
            .map(
                |(i, (path, operation, change, rationale, optional))| FileChange {
                    // The index keeps paths unique.
                    path: format!("{path}{i}"),
                    operation,
                    change,
                    rationale,
                    optional,
                },
            )
            .collect()
    })
}

fn question() -> impl Strategy<Value = Question> {
    (words(6), words(4), proptest::option::of(words(4)))
        .prop_map(|(question, default, answer)| Question {
            question,
            default,
            answer,
        })
        .prop_filter("reads like a field", |q| {
            !matches!(
                text_label(&q.question).as_deref(),
                Some("default" | "answer")
            )
        })
}

fn text_label(s: &str) -> Option<String> {
    crate::plan::text::label(s).map(|(l, _)| l)
}

fn handoff() -> impl Strategy<Value = HandoffContract> {
    let command = "[a-z][a-z0-9 ./=-]{0,12}[a-z0-9]".prop_map(String::from);
    (
        words(6),
        vec(words(4), 1..3),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        vec(words(2), 0..3),
        vec(words(2), 0..3),
        vec(command, 1..3),
    )
        .prop_map(
            |(objective, completion_criteria, (r, p, s), allowed_tools, scope, verification)| {
                HandoffContract {
                    objective,
                    completion_criteria,
                    budgets: HandoffBudgets {
                        max_retries: r,
                        max_replans: p,
                        max_stalls: s,
                    },
                    allowed_tools,
                    scope,
                    verification,
                }
            },
        )
}

/// Plans that pass `validate` and are in the form `parse` produces.
pub(super) fn plan() -> impl Strategy<Value = Plan> {
    let free = vec(free_text(), 7..=7);
    let lists = (
        vec(words(5), 0..3),
        vec(words(6), 3..=5),
        vec(words(6), 1..4),
        vec(question(), 0..3),
        proptest::option::of(handoff()),
    );
    (words(8), free, changes(), lists, vec((words(3), words(4), any::<proptest::sample::Index>()), 0..3))
        .prop_map(|(title, free, changes, (deps, risks, steps, questions, handoff), stage_seeds)| {
            let stages = if changes.is_empty() {
                Vec::new()
            } else {
                stage_seeds
                    .into_iter()
                    .map(|(title, verification, pick)| Stage {
                        title,
                        files: vec![changes[pick.index(changes.len())].path.clone()],
                        verification,
                    })
                    .collect()
            };
            let [persona, goal, architecture, capabilities, data_flow, target_state, impact_isolation]: [String; 7] =
                free.try_into().unwrap_or_else(|_| unreachable!("seven sections"));
            Plan {
                title,
                persona,
                goal,
                architecture,
                capabilities,
                data_flow,
                target_state,
                impact_isolation,
                changes,
                new_dependencies: deps,
                risks,
                next_steps: steps,
                questions,
                handoff,
                stages,
            }
        })
}

/// Lines that look like plan markdown, broken and whole.
fn markdownish_line() -> impl Strategy<Value = String> {
    let section_names: Vec<&'static str> = Section::ORDER.iter().map(|s| s.heading()).collect();
    prop_oneof![
        (1usize..7, select(section_names))
            .prop_map(|(n, name)| format!("{} {name}", "#".repeat(n))),
        (0usize..4, "\\PC{0,12}").prop_map(|(n, t)| format!("{} {t}", "#".repeat(n))),
        (
            select(vec!["-", "*", "+", "1.", "2)", "  -", "\t*"]),
            "\\PC{0,16}"
        )
            .prop_map(|(m, t)| format!("{m} {t}")),
        select(vec![
            "```",
            "~~~",
            "````rust",
            "   ```",
            "# Plan: x",
            "# Plan:",
            "None.",
            "### File: src/a.rs",
            "### File: ../x",
            "### Stage 1: s",
            "### Stage 2: s",
            "- **Operation:** edit",
            "- **Operation:** modify",
            "- **Change:** c",
            "- **Rationale:** r",
            "- File: src/a.rs",
            "- Verification: v",
            "1. [ ] step",
            "1. Question?",
            "   - **Default:** d",
            "   - **Answer:** a",
            "- **Answer:**",
            "- **Objective:** o",
            "- **Completion criteria:**",
            "- **Budgets:** retries 3",
            "  - max_stalls: x",
            "- **Verification commands:** `cargo t`",
            "  - `a`",
            "<!--",
            "-->",
            "<!-- c -->",
            "",
            "   ",
            "\r",
            "**",
            "- ",
            "1.",
        ])
        .prop_map(String::from),
        "\\PC{0,30}",
    ]
}

fn auto_accept_config() -> impl Strategy<Value = policy::AutoAcceptConfig> {
    use policy::OperationClass::*;
    let classes = || {
        proptest::sample::subsequence(
            vec![
                ReadOnlyToolUse,
                InWorkspaceFileEdit,
                DependencyAdd,
                SchemaMigration,
                DestructiveToolUse,
                MultiFileChange,
            ],
            0..=6,
        )
    };
    (0u32..20, classes(), classes()).prop_map(
        |(after_n_safe_operations, safe_operation_classes, require_approval_for)| {
            policy::AutoAcceptConfig {
                after_n_safe_operations,
                safe_operation_classes,
                require_approval_for,
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn auto_accept_never_fires_on_deletes_dependencies_or_migrations(
        plan in plan(),
        config in auto_accept_config(),
        seen in any::<u32>(),
    ) {
        let risky = !plan.new_dependencies.is_empty()
            || plan.changes.iter().any(|c| {
                c.operation == Operation::Delete
                    || policy::is_dependency_manifest(&c.path)
                    || policy::is_schema_migration(&c.path)
            });
        let doc = PlanDocument::from_plan(&plan).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let decision = policy::decide_auto_accept(&doc, &config, seen);
        if risky {
            prop_assert!(!decision.auto_accept, "{:?}", decision);
        }
        if decision.auto_accept {
            prop_assert!(seen >= config.after_n_safe_operations);
        }
    }

    #[test]
    fn parse_reads_back_every_rendered_plan(plan in plan()) {
        prop_assert_eq!(validate(&plan), Ok(()));
        let text = render(&plan);
        prop_assert_eq!(parse(&text), Ok(plan.clone()), "text:\n{}", text);
        prop_assert_eq!(render(&plan), text);
    }

    #[test]
    fn parse_never_panics_and_what_it_accepts_is_stable(
        lines in vec(markdownish_line(), 0..60),
        crlf in any::<bool>(),
    ) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        if let Ok(plan) = parse(&text) {
            prop_assert_eq!(validate(&plan), Ok(()));
            prop_assert_eq!(parse(&render(&plan)), Ok(plan));
        }
    }

    #[test]
    fn parse_never_panics_on_damaged_plans(
        plan in plan(),
        edits in vec((any::<proptest::sample::Index>(), 0u8..4, markdownish_line()), 1..6),
    ) {
        let mut lines: Vec<String> = render(&plan).lines().map(String::from).collect();
        for (at, kind, line) in edits {
            let i = at.index(lines.len() + 1);
            match kind {
                0 if i < lines.len() => { lines.remove(i); }
                1 if i < lines.len() => { let l = lines[i].clone(); lines.insert(i, l); }
                2 if i < lines.len() => lines[i] = line,
                _ => lines.insert(i, line),
            }
        }
        let text = lines.join("\n");
        match parse(&text) {
            Ok(parsed) => {
                prop_assert_eq!(validate(&parsed), Ok(()));
                prop_assert_eq!(parse(&render(&parsed)), Ok(parsed));
            }
            Err(err) => {
                let line = err.line.unwrap_or(0);
                prop_assert!(line >= 1 && line <= lines.len().max(1), "line {} of {}: {}", line, lines.len(), err);
            }
        }
    }

    #[test]
    fn whitespace_only_edits_keep_the_hash(
        tokens in vec("[a-zA-Z0-9#*`éß漢<>-]{1,6}", 1..40),
        seps in vec(select(vec![" ", "  ", "\n", "\r\n", "\t", " \n\n ", "\n\n\n", "   \n"]), 40),
        lead in select(vec!["", " ", "\n\n", "\r\n\t"]),
        trail in select(vec!["", " ", "\n", "  \r\n\r\n"]),
    ) {
        let plain = tokens.join(" ");
        let mut spaced = String::from(lead);
        for (i, token) in tokens.iter().enumerate() {
            if i > 0 {
                spaced.push_str(seps[i % seps.len()]);
            }
            spaced.push_str(token);
        }
        spaced.push_str(trail);
        prop_assert_eq!(content_hash(&spaced), content_hash(&plain));
    }

    #[test]
    fn any_non_whitespace_edit_changes_the_hash(
        tokens in vec("[a-zA-Z0-9#*`éß漢<>-]{1,6}", 1..40),
        at in any::<proptest::sample::Index>(),
        replacement in "[a-zA-Z0-9#*`éß漢<>-]{1,6}",
    ) {
        let i = at.index(tokens.len());
        prop_assume!(tokens[i] != replacement);
        let mut edited = tokens.clone();
        edited[i] = replacement;
        prop_assert_ne!(content_hash(&tokens.join(" ")), content_hash(&edited.join(" ")));
    }

    #[test]
    fn whitespace_edits_of_a_rendered_plan_keep_its_hash(
        extra in vec(select(vec!["", " ", "  ", "\t"]), 200),
        crlf in any::<bool>(),
    ) {
        let text = sample_text();
        let edited: String = text
            .lines()
            .zip(extra.iter().cycle())
            .map(|(line, pad)| format!("{line}{pad}{}", if crlf { "\r\n" } else { "\n" }))
            .collect();
        prop_assert_eq!(content_hash(&edited), content_hash(&text));
        let doc = PlanDocument::parse(&edited).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(doc.hash(), content_hash(&text));
    }
}
