//! External plan sources against a fake OpenAI-compatible endpoint on 127.0.0.1 and small bash plan commands.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use navin_ledger::plan::{PlanErrorKind, READ_ONLY_PERSONA};
use navin_planner::external::{
    generate, generate_async, ApiKey, ExternalConfig, ExternalError, ExternalKind, ENV_API_KEY,
    ENV_BASE_URL, ENV_COMMAND, ENV_MODEL, ENV_TIMEOUT,
};
use serde_json::Value;
use support::*;
use tempfile::TempDir;

// ------------------------------------------------------------ HTTP source

#[test]
fn http_source_returns_the_plan_from_a_fenced_reply() {
    let repo = repo();
    let reply = format!("Here is the plan:\n\n```markdown\n{}```\n", valid_text());
    let llm = FakeLlm::start(vec![chat(&reply)]);

    let plan = generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect("plan");

    assert_eq!(plan.attempts, 1);
    assert_eq!(plan.source, "http:test-model");
    assert_eq!(plan.document.plan(), &valid_plan());
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert!(req.head.starts_with("POST /v1/chat/completions HTTP/1.1"));
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["temperature"], 0);
    assert_eq!(req.header("authorization"), None, "no key configured");
    let (role, system) = req.message(0);
    assert_eq!(role, "system");
    assert!(system.contains("## Proposed Changes") && system.contains(READ_ONLY_PERSONA));
    assert!(system.contains("must not run anything"));
}

#[test]
fn http_prompt_carries_the_request_and_the_repository_summary() {
    let repo = repo();
    let llm = FakeLlm::start(vec![chat(&valid_text())]);

    generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect("plan");

    let requests = llm.requests();
    let (role, user) = requests[0].message(1);
    assert_eq!(role, "user");
    assert!(user.contains(REQUEST));
    assert!(user.contains("Files most relevant to the request"));
    assert!(
        user.contains("src/webhook.rs"),
        "ranked file missing:\n{user}"
    );
    assert!(
        user.contains("Cargo.toml [Cargo]"),
        "manifest missing:\n{user}"
    );
    let total: usize = (0..2).map(|i| requests[0].message(i).1.len()).sum();
    assert!(total <= 24 * 1024, "prompt is {total} bytes");
}

#[test]
fn http_source_sends_the_validation_error_back_once_and_accepts_the_fix() {
    let repo = repo();
    let llm = FakeLlm::start(vec![chat(&two_risk_text()), chat(&valid_text())]);

    let plan = generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect("plan");

    assert_eq!(plan.attempts, 2);
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1];
    assert_eq!(second.body["messages"].as_array().map(Vec::len), Some(4));
    let (role, earlier) = second.message(2);
    assert_eq!(role, "assistant");
    assert_eq!(earlier, two_risk_text());
    let (role, feedback) = second.message(3);
    assert_eq!(role, "user");
    assert!(feedback.starts_with("Your plan failed validation: line "));
    assert!(feedback.contains("section \"Risks\": expected 3 to 5 risk bullets, found 2"));
    assert!(feedback.ends_with("reply with the corrected full plan."));
}

#[test]
fn http_source_gives_up_after_a_second_invalid_plan() {
    let repo = repo();
    let llm = FakeLlm::start(vec![
        chat(&two_risk_text()),
        chat("I cannot help with that."),
    ]);

    let err =
        generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect_err("must fail");

    match &err {
        ExternalError::InvalidPlan {
            origin,
            attempts,
            error,
            output_excerpt,
        } => {
            assert_eq!(origin, "http:test-model");
            assert_eq!(*attempts, 2);
            assert!(matches!(error.kind, PlanErrorKind::MissingTitle { .. }));
            assert_eq!(output_excerpt, "I cannot help with that.");
        }
        other => panic!("expected InvalidPlan, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("failed validation after 2 attempt(s)"),
        "{msg}"
    );
    assert!(msg.contains("expected the title line"), "{msg}");
    assert!(msg.contains("use the built-in planner"), "{msg}");
    assert_eq!(llm.requests().len(), 2);
}

#[test]
fn http_500_names_the_status_and_the_body() {
    let repo = repo();
    let llm = FakeLlm::start(vec![raw(
        500,
        r#"{"error":{"message":"upstream exploded"}}"#,
    )]);

    let err =
        generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect_err("must fail");

    assert!(
        matches!(err, ExternalError::Http { status: 500, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("HTTP 500") && msg.contains("upstream exploded"),
        "{msg}"
    );
    assert!(msg.contains("try again later"), "{msg}");
}

#[test]
fn api_key_is_sent_as_bearer_and_never_shown() {
    let repo = repo();
    let key = test_key();
    let llm = FakeLlm::start(vec![
        chat(&valid_text()),
        raw(401, &format!(r#"{{"error":"invalid api key {key}"}}"#)),
        raw(200, &format!("<html>bad gateway for {key}</html>")),
    ]);
    let mut cfg = llm.config();
    cfg.api_key = Some(ApiKey::new(key.clone()));
    assert!(!format!("{cfg:?}").contains(&key), "key in config Debug");
    assert!(!format!(
        "{:?} {}",
        ApiKey::new(key.clone()),
        ApiKey::new(key.clone())
    )
    .contains(&key));

    let plan = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect("plan");
    assert!(!format!("{plan:?}").contains(&key));
    assert_eq!(
        llm.requests()[0].header("authorization"),
        Some(format!("Bearer {key}"))
    );

    let unauthorized =
        generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(
        unauthorized,
        ExternalError::Http { status: 401, .. }
    ));
    assert!(unauthorized.to_string().contains("check NAVIN_LLM_API_KEY"));
    assert!(unauthorized
        .to_string()
        .contains("invalid api key <redacted>"));
    assert_no_key(&unauthorized, &key);

    let not_json = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");
    assert!(
        matches!(not_json, ExternalError::NotJson { .. }),
        "{not_json:?}"
    );
    assert_no_key(&not_json, &key);

    let refused = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");
    assert!(
        matches!(refused, ExternalError::Connect { .. }),
        "{refused:?}"
    );
    assert_no_key(&refused, &key);
}

#[test]
fn http_source_times_out_on_a_silent_server() {
    let repo = repo();
    let mut slow = chat(&valid_text());
    slow.delay = Duration::from_secs(3);
    let llm = FakeLlm::start(vec![slow]);
    let mut cfg = llm.config();
    cfg.timeout = Duration::from_millis(500);

    let started = Instant::now();
    let err = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");

    assert!(
        started.elapsed() < Duration::from_secs(3),
        "did not time out early"
    );
    assert!(matches!(err, ExternalError::Timeout { .. }), "{err:?}");
    assert!(err.to_string().contains("within 500ms"), "{err}");
    assert!(err.to_string().contains(ENV_TIMEOUT), "{err}");
}

#[test]
fn https_base_url_opens_a_tls_connection() {
    let repo = repo();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let first_bytes = thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut hello = [0u8; 3];
        stream.read_exact(&mut hello).expect("client hello");
        hello
    });
    let cfg = ExternalConfig {
        base_url: Some(format!("https://127.0.0.1:{port}/v1")),
        model: Some("m".to_owned()),
        ..ExternalConfig::default()
    };

    let err = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");

    // 0x16 0x03: a TLS handshake record, so https goes through rustls.
    assert_eq!(&first_bytes.join().expect("server")[..2], &[0x16, 0x03]);
    assert!(matches!(err, ExternalError::Connect { .. }), "{err:?}");
}

#[test]
fn http_reply_that_is_not_json_or_is_empty_gets_its_own_error() {
    let repo = repo();
    let llm = FakeLlm::start(vec![raw(200, "<html>proxy login</html>"), chat("   ")]);

    let err =
        generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::NotJson { .. }), "{err:?}");
    assert!(err.to_string().contains("proxy login"), "{err}");
    assert!(err.to_string().contains("OpenAI-compatible"), "{err}");

    let err =
        generate(ExternalKind::Http, &llm.config(), repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::EmptyReply { .. }), "{err:?}");
}

#[test]
fn async_entry_point_works_inside_a_runtime_and_blocking_one_refuses() {
    let repo = repo();
    let llm = FakeLlm::start(vec![chat(&valid_text())]);
    let cfg = llm.config();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    runtime.block_on(async {
        let blocked =
            generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");
        assert!(matches!(blocked, ExternalError::Runtime(_)), "{blocked:?}");
        let plan = generate_async(ExternalKind::Http, &cfg, repo.path(), REQUEST)
            .await
            .expect("plan");
        assert_eq!(plan.document.plan().title, valid_plan().title);
    });
}

// ------------------------------------------------------------ config

#[test]
fn missing_settings_name_the_variable_to_set() {
    let repo = repo();
    let none = ExternalConfig::from_vars(|_| None).expect("config");
    let err = generate(ExternalKind::Http, &none, repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::MissingConfig { var } if var == ENV_BASE_URL));
    assert!(err
        .to_string()
        .starts_with("NAVIN_LLM_BASE_URL is not set; set it to"));

    let url_only = ExternalConfig::from_vars(|v| {
        (v == ENV_BASE_URL).then(|| "http://127.0.0.1:9/v1".to_owned())
    })
    .expect("config");
    let err = generate(ExternalKind::Http, &url_only, repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::MissingConfig { var } if var == ENV_MODEL));

    assert!(url_only.check(ExternalKind::Http).is_err());
    let err = generate(ExternalKind::Command, &none, repo.path(), REQUEST).expect_err("must fail");
    assert!(
        err.to_string().starts_with("NAVIN_PLAN_COMMAND is not set"),
        "{err}"
    );
}

#[test]
fn env_values_are_read_split_and_checked() {
    let env = |name: &str| match name {
        ENV_BASE_URL => Some(" https://llm.example/v1/ ".to_owned()),
        ENV_MODEL => Some("gpt-test".to_owned()),
        ENV_API_KEY => Some("".to_owned()),
        ENV_COMMAND => Some(r#"python3 "my tools/plan.py" --mode 'fast plan'"#.to_owned()),
        ENV_TIMEOUT => Some("30".to_owned()),
        _ => None,
    };
    let cfg = ExternalConfig::from_vars(env).expect("config");
    assert_eq!(cfg.base_url.as_deref(), Some("https://llm.example/v1/"));
    assert_eq!(cfg.api_key, None, "an empty key counts as unset");
    assert_eq!(
        cfg.command,
        Some(vec![
            "python3".to_owned(),
            "my tools/plan.py".to_owned(),
            "--mode".to_owned(),
            "fast plan".to_owned()
        ])
    );
    assert_eq!(cfg.timeout, Duration::from_secs(30));

    let bad_quote =
        ExternalConfig::from_vars(|v| (v == ENV_COMMAND).then(|| "plan 'unterminated".to_owned()))
            .expect_err("must fail");
    assert!(bad_quote
        .to_string()
        .starts_with("NAVIN_PLAN_COMMAND is invalid"));
    let bad_timeout = ExternalConfig::from_vars(|v| (v == ENV_TIMEOUT).then(|| "soon".to_owned()))
        .expect_err("must fail");
    assert!(bad_timeout.to_string().contains("found \"soon\""));
}

#[test]
fn base_url_must_be_http_or_https() {
    let repo = repo();
    let cfg = ExternalConfig {
        base_url: Some("ftp://llm.example/v1".to_owned()),
        model: Some("m".to_owned()),
        ..ExternalConfig::default()
    };
    let err = generate(ExternalKind::Http, &cfg, repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::InvalidConfig { var, .. } if var == ENV_BASE_URL));
}

// ------------------------------------------------------------ command source

/// A bash script plus a record directory the script writes what it saw to.
struct Script {
    dir: TempDir,
}

impl Script {
    fn new(body: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("plan.md"), valid_text()).expect("plan");
        std::fs::write(dir.path().join("plan.sh"), body).expect("script");
        Self { dir }
    }

    /// Run through `bash` so the script needs no exec bit (and cannot hit
    /// "text file busy" while another test thread forks).
    fn config(&self) -> ExternalConfig {
        ExternalConfig {
            command: Some(vec![
                "bash".to_owned(),
                self.path("plan.sh").display().to_string(),
                self.dir.path().display().to_string(),
            ]),
            ..ExternalConfig::default()
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

#[test]
fn command_source_gets_request_as_argument_and_json_on_stdin() {
    let repo = repo();
    let script = Script::new(
        r#"rec="$1"; printf '%s' "$2" > "$rec/arg"; pwd -P > "$rec/cwd"; cat > "$rec/stdin"
cat src/webhook.rs > "$rec/seen"; ls -a > "$rec/ls"
if (echo changed > src/webhook.rs) 2>/dev/null || touch new-file 2>/dev/null; then echo wrote > "$rec/write"; else echo refused > "$rec/write"; fi
printf '%s' "${NAVIN_PLAN_FEEDBACK-unset}" > "$rec/feedback"; cat "$rec/plan.md""#,
    );

    let before = snapshot(repo.path());
    let plan = generate(
        ExternalKind::Command,
        &script.config(),
        repo.path(),
        REQUEST,
    )
    .expect("plan");

    assert_eq!(
        before,
        snapshot(repo.path()),
        "the checkout and .git are untouched"
    );
    assert_eq!(plan.attempts, 1);
    assert_eq!(plan.source, "command:bash");
    assert_eq!(plan.document.plan(), &valid_plan());
    assert_eq!(script.read("arg"), REQUEST);
    // It ran in a read-only copy of the commit, not in the checkout.
    let repo_dir = repo.path().canonicalize().expect("canonical");
    assert!(!script
        .read("cwd")
        .trim()
        .starts_with(&*repo_dir.to_string_lossy()));
    assert!(script.read("seen").contains("pub fn send_webhook"));
    assert!(
        !script.read("ls").lines().any(|l| l == ".git"),
        "{}",
        script.read("ls")
    );
    // File modes stop every user but root; root's writes land in the copy only.
    let expected = if is_root() { "wrote" } else { "refused" };
    assert_eq!(script.read("write").trim(), expected);
    assert!(
        !std::path::Path::new(script.read("cwd").trim()).exists(),
        "the copy is removed"
    );
    assert_eq!(script.read("feedback"), "unset");
    let stdin: Value = serde_json::from_str(&script.read("stdin")).expect("stdin JSON");
    assert_eq!(stdin["request"], REQUEST);
    assert!(stdin.get("feedback").is_none());
    let ranked = stdin["repository"]["ranked_files"].to_string();
    assert!(ranked.contains("src/webhook.rs"), "{ranked}");
}

#[test]
fn command_source_reruns_once_with_the_validation_error() {
    let repo = repo();
    let script = Script::new(
        r#"rec="$1"
if [ -n "$NAVIN_PLAN_FEEDBACK" ]; then
  printf '%s' "$NAVIN_PLAN_FEEDBACK" > "$rec/feedback"; cat > "$rec/stdin2"; cat "$rec/plan.md"
else
  echo "garbage, not a plan"
fi"#,
    );

    let plan = generate(
        ExternalKind::Command,
        &script.config(),
        repo.path(),
        REQUEST,
    )
    .expect("plan");

    assert_eq!(plan.attempts, 2);
    let feedback = script.read("feedback");
    assert!(
        feedback.starts_with("line 1: expected the title line"),
        "{feedback}"
    );
    let stdin: Value = serde_json::from_str(&script.read("stdin2")).expect("stdin JSON");
    assert_eq!(stdin["feedback"], feedback);
}

#[test]
fn command_source_gives_up_after_two_invalid_plans() {
    let repo = repo();
    let script = Script::new("echo 'still garbage'");

    let err = generate(
        ExternalKind::Command,
        &script.config(),
        repo.path(),
        REQUEST,
    )
    .expect_err("must fail");

    match &err {
        ExternalError::InvalidPlan {
            attempts, error, ..
        } => {
            assert_eq!(*attempts, 2);
            assert_eq!(error.section, None);
            assert_eq!(error.line, Some(1));
        }
        other => panic!("expected InvalidPlan, got {other:?}"),
    }
    assert!(err
        .to_string()
        .contains("the plan from command:bash failed validation"));
}

#[test]
fn hanging_command_is_killed_with_its_children_on_timeout() {
    let repo = repo();
    let script = Script::new(r#"sleep 30 & echo $! > "$1/sleeper"; wait"#);
    let mut cfg = script.config();
    cfg.timeout = Duration::from_millis(700);

    let started = Instant::now();
    let err = generate(ExternalKind::Command, &cfg, repo.path(), REQUEST).expect_err("must fail");

    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err, ExternalError::Timeout { .. }), "{err:?}");
    assert!(err
        .to_string()
        .contains("the plan command `bash` did not finish within 700ms"));
    let sleeper = script.read("sleeper");
    assert!(!sleeper.trim().is_empty(), "script never started its child");
    let deadline = Instant::now() + Duration::from_secs(3);
    while process_alive(sleeper.trim()) {
        assert!(
            Instant::now() < deadline,
            "child {} survived the timeout",
            sleeper.trim()
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// Alive and not a zombie waiting for a reaper.
fn process_alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn failing_command_reports_exit_status_and_stderr() {
    let repo = repo();
    let script = Script::new("echo 'model quota exceeded for today' >&2; exit 3");

    let err = generate(
        ExternalKind::Command,
        &script.config(),
        repo.path(),
        REQUEST,
    )
    .expect_err("must fail");

    match &err {
        ExternalError::CommandFailed {
            program,
            status,
            stderr_excerpt,
        } => {
            assert_eq!(program, "bash");
            assert!(status.contains('3'), "{status}");
            assert_eq!(stderr_excerpt, "model quota exceeded for today");
        }
        other => panic!("expected CommandFailed, got {other:?}"),
    }
    assert!(err.to_string().contains("model quota exceeded"));
}

#[test]
fn command_that_cannot_start_or_floods_stdout_gets_a_clear_error() {
    let repo = repo();
    let missing = ExternalConfig {
        command: Some(vec!["navin-no-such-planner-xyz".to_owned()]),
        ..ExternalConfig::default()
    };
    let err =
        generate(ExternalKind::Command, &missing, repo.path(), REQUEST).expect_err("must fail");
    assert!(matches!(err, ExternalError::CommandStart { .. }), "{err:?}");
    assert!(err.to_string().contains("not found"), "{err}");
    assert!(err.to_string().contains(ENV_COMMAND), "{err}");

    let flood = Script::new("yes 'plan line' | head -c 3000000");
    let err = generate(ExternalKind::Command, &flood.config(), repo.path(), REQUEST)
        .expect_err("must fail");
    assert!(
        matches!(
            err,
            ExternalError::OutputTooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{err:?}"
    );
}
