//! `navin config validate` and `navin config schema` as a user runs them: exit codes 0, 1
//! and 2, and the one line that names file, line, column and key.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn navin(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("navin runs");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("navin exits")
}

/// A git checkout whose `.github/navin.yml` holds `config`.
fn checkout_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    git2::Repository::init(dir.path()).expect("git init");
    std::fs::create_dir_all(dir.path().join(".github")).expect("mkdir");
    std::fs::write(dir.path().join(".github/navin.yml"), config).expect("write");
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_valid_config_exits_0_and_says_valid() {
    let repo = checkout_with("approval:\n  required_approvals: 2\nevidence:\n  min_ci_time: 5m\n");
    let out = navin(repo.path(), &["config", "validate"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), ".github/navin.yml: valid\n");
}

#[test]
fn the_default_file_is_found_from_a_subdirectory_with_repo() {
    let repo = checkout_with("stages: run-all\n");
    std::fs::create_dir_all(repo.path().join("src/deep")).expect("mkdir");
    let elsewhere = tempfile::tempdir().expect("tmp");
    let sub = repo.path().join("src/deep");
    let sub = sub.to_str().expect("utf-8 path");
    let out = navin(
        elsewhere.path(),
        &["--repo", sub, "config", "validate"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).ends_with(".github/navin.yml: valid\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_unknown_key_exits_1_naming_file_line_column_and_key() {
    let repo = checkout_with("ledger_branch: navin/ledger\nevidence:\n  trusted_app: [1]\n");
    let out = navin(repo.path(), &["config", "validate"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with(
            "navin: .github/navin.yml line 3 column 3: key `evidence.trusted_app`: unknown field `trusted_app`"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn a_wrong_type_exits_1_naming_the_key_and_the_expected_type() {
    let repo = checkout_with("budgets:\n  max_retries: lots\n");
    let out = navin(
        repo.path(),
        &["config", "validate", ".github/navin.yml"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(".github/navin.yml line 2 column 16: key `budgets.max_retries`: invalid type: string \"lots\""),
        "{err}"
    );
}

#[test]
fn a_value_out_of_range_exits_1_naming_the_key() {
    let repo = checkout_with("approval:\n  required_approvals: 0\n");
    let out = navin(repo.path(), &["config", "validate"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("key `approval.required_approvals`: must be at least 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_missing_file_is_a_usage_error_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    git2::Repository::init(dir.path()).expect("git init");
    let out = navin(dir.path(), &["config", "validate"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(".github/navin.yml"),
        "{}",
        text(&out.stderr)
    );
    let out = navin(dir.path(), &["config", "validate", "nope.yml"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nope.yml"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn dash_reads_the_config_from_stdin() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = navin(
        dir.path(),
        &["config", "validate", "-"],
        Some("dispatch:\n  issues: true\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "<stdin>: valid\n");
    let out = navin(
        dir.path(),
        &["config", "validate", "-"],
        Some("stages: sometimes\n"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("<stdin> line 1 column 9: key `stages`: unknown variant `sometimes`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn config_schema_prints_the_checked_in_schema() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = navin(dir.path(), &["config", "schema"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let on_disk = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("domain/schema/navin.schema.json"),
    )
    .expect("the checked-in schema");
    assert!(
        text(&out.stdout) == on_disk,
        "`navin config schema` differs from bot/domain/schema/navin.schema.json; regenerate with `NAVIN_BLESS=1 cargo test -p navin-domain schema_file`"
    );
}
