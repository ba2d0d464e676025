//! Ranking tests: the obvious file wins, the import graph lifts neighbours, ties are deterministic.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use crate::*;

fn rank_of(files: &[(&str, &str)], request: &str) -> Vec<RankedFile> {
    let src = MemorySource::from_files(
        "t",
        files.iter().map(|(p, c)| (p.to_string(), c.to_string())),
    );
    plan_repository(&src, request, &PlannerOptions::default())
        .unwrap()
        .ranked
}

fn position(ranked: &[RankedFile], path: &str) -> Option<usize> {
    ranked.iter().position(|r| r.path == path)
}

#[test]
fn file_named_after_the_request_ranks_first() {
    let ranked = rank_of(
        &[
            (
                "src/billing/invoice.rs",
                "pub struct Invoice { total: u64 }\npub fn render_invoice() {}\n",
            ),
            ("src/auth/session.rs", "pub fn login() {}\n"),
            ("src/main.rs", "mod billing;\nmod auth;\nfn main() {}\n"),
            ("README.md", "An app with invoices and sessions.\n"),
        ],
        "Add a due date to invoices",
    );
    assert_eq!(ranked[0].path, "src/billing/invoice.rs");
    assert!(
        ranked[0].reasons.iter().any(|r| r.contains("invoic")),
        "{:?}",
        ranked[0].reasons
    );
}

#[test]
fn camel_case_identifiers_match_plain_words() {
    let ranked = rank_of(
        &[
            (
                "lib/handlers.ts",
                "export function parseHttpHeader(raw: string) {}\n",
            ),
            ("lib/other.ts", "export function render() {}\n"),
            ("lib/more.ts", "export const x = 1;\n"),
        ],
        "parse http header values with quotes",
    );
    assert_eq!(ranked[0].path, "lib/handlers.ts");
    assert!(
        ranked[0].reasons.iter().any(|r| r.contains("defines")),
        "{:?}",
        ranked[0].reasons
    );
}

#[test]
fn importer_of_a_strong_hit_is_lifted_by_the_graph() {
    let ranked = rank_of(
        &[
            (
                "app/ratelimit.py",
                "class RateLimiter:\n    def allow(self): pass\n",
            ),
            (
                "app/server.py",
                "from .ratelimit import RateLimiter\n\ndef serve(): pass\n",
            ),
            ("app/unrelated.py", "def nothing(): pass\n"),
            ("app/__init__.py", ""),
        ],
        "configurable ratelimit window",
    );
    assert_eq!(ranked[0].path, "app/ratelimit.py");
    let server = position(&ranked, "app/server.py").expect("importer ranked");
    assert!(ranked[server]
        .reasons
        .iter()
        .any(|r| r.contains("imports `app/ratelimit.py`")));
    assert_eq!(
        position(&ranked, "app/unrelated.py"),
        None,
        "files with no relevance are left out"
    );
}

#[test]
fn test_file_is_paired_with_the_source_it_tests() {
    let ranked = rank_of(
        &[
            ("pkg/cache/lru.go", "package cache\n\nfunc Evict() {}\n"),
            (
                "pkg/cache/lru_test.go",
                "package cache\n\nfunc TestX(t *testing.T) {}\n",
            ),
            ("pkg/other/x.go", "package other\n"),
        ],
        "lru eviction should respect capacity",
    );
    assert_eq!(ranked[0].path, "pkg/cache/lru.go");
    let test = position(&ranked, "pkg/cache/lru_test.go").expect("test ranked");
    assert!(test <= 2);
}

#[test]
fn equal_scores_are_ordered_by_path() {
    let ranked = rank_of(
        &[
            ("b/widget.js", "widget\n"),
            ("a/widget.js", "widget\n"),
            ("c/widget.js", "widget\n"),
        ],
        "widget",
    );
    let paths: Vec<&str> = ranked.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, vec!["a/widget.js", "b/widget.js", "c/widget.js"]);
}

#[test]
fn a_path_named_in_the_request_wins_over_lexical_matches() {
    let ranked = rank_of(
        &[
            ("src/config.py", "def load(): pass\n"),
            (
                "src/settings.py",
                "timeout timeout timeout retries retries\n",
            ),
        ],
        "timeout retries in src/config.py are wrong",
    );
    assert_eq!(ranked[0].path, "src/config.py");
    assert!(ranked[0].reasons[0].contains("named in the request"));
}

#[test]
fn docs_rank_low_for_code_requests_and_high_for_docs_requests() {
    let files = [
        (
            "docs/streaming.md",
            "Streaming responses: set headers before streaming.\n",
        ),
        ("src/streaming.py", "def stream_response(): pass\n"),
    ];
    assert_eq!(
        rank_of(&files, "fix streaming response headers")[0].path,
        "src/streaming.py"
    );
    assert_eq!(
        rank_of(&files, "docs: explain streaming headers")[0].path,
        "docs/streaming.md"
    );
}

#[test]
fn scope_prefix_prefers_files_in_the_named_area() {
    let files = [
        ("cli/src/output.rs", "pub fn print_error() {}\n"),
        ("server/src/output.rs", "pub fn print_error() {}\n"),
    ];
    assert_eq!(
        rank_of(&files, "fix(server): print errors once")[0].path,
        "server/src/output.rs"
    );
    assert_eq!(
        rank_of(&files, "cli: print errors once")[0].path,
        "cli/src/output.rs"
    );
}

/// A small clap CLI: the command declared in `args.rs`, its implementation in
/// `show.rs`, a same-named function elsewhere, and an integration test running it.
fn cli_repo() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "src/cli/args.rs",
            "#[derive(clap::Subcommand)]\npub enum Command {\n    #[command(subcommand)]\n    Ledger(LedgerCommand),\n}\n#[derive(clap::Subcommand)]\npub enum LedgerCommand {\n    /// Commits, newest first.\n    History {\n        #[arg(long)]\n        limit: usize,\n    },\n    Show,\n}\n",
        ),
        (
            "src/cli/run.rs",
            "use crate::cli::args::LedgerCommand;\nuse crate::cli::show;\npub fn run(c: LedgerCommand) {\n    match c {\n        LedgerCommand::History { limit } => show::history(limit),\n        LedgerCommand::Show => show::show(),\n    }\n}\n",
        ),
        (
            "src/cli/show.rs",
            "pub fn history(limit: usize) {}\npub fn show() {}\n",
        ),
        (
            "src/web/pages.rs",
            "/// The page listing a plan's history of edits and approvals in the ledger.\npub fn history() {}\n",
        ),
        (
            "tests/cli_ledger.rs",
            "#[test]\nfn history_lists_commits() {\n    run(&[\"--json\", \"ledger\", \"history\"]);\n}\n",
        ),
        (
            "tests/web.rs",
            "#[test]\nfn pages_render() {\n    // The page shows what `app ledger history` prints.\n    get(\"/ledger history\");\n}\n",
        ),
    ]
}

#[test]
fn a_command_request_ranks_its_declaration_implementation_and_test_first() {
    let ranked = rank_of(&cli_repo(), "add a --since option to app ledger history");
    let top: Vec<&str> = ranked.iter().take(3).map(|r| r.path.as_str()).collect();
    assert_eq!(
        top,
        ["src/cli/args.rs", "src/cli/show.rs", "tests/cli_ledger.rs"],
        "{ranked:#?}"
    );
    assert!(ranked[1]
        .reasons
        .contains(&"implements the `history` command".to_owned()));
    assert!(ranked[2]
        .reasons
        .contains(&"runs `ledger history`".to_owned()));
}

#[test]
fn a_same_named_function_far_from_the_command_is_not_its_implementation() {
    let ranked = rank_of(&cli_repo(), "add a --since option to app ledger history");
    let pages = ranked.iter().find(|r| r.path == "src/web/pages.rs");
    assert!(
        pages.is_none_or(|r| !r.reasons.iter().any(|x| x.starts_with("implements"))),
        "{pages:?}"
    );
    let web = position(&ranked, "tests/web.rs");
    assert!(web.is_none_or(|p| p > 2), "{ranked:#?}");
}
