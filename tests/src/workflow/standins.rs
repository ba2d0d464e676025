//! Stand-ins for the third-party actions and tools the shipped workflows use, each held to the `action.yml` of its pinned commit.
//!
//! A stand-in refuses an input its vendored `action.yml` does not declare, requires what
//! it requires, and enforces the preconditions the action documents (a token; which
//! actors may start an agent), then does the part the tests need for real: git clones
//! from the fake, artifacts and caches on the runner's disk, and the scripted agent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_yaml_ng::Value as Yaml;

use super::host::{Done, Host};
use super::{AgentTask, Runner, NAVIN_PLACEHOLDER};

/// The `gh` stand-in's directory (first on every job's PATH, as GitHub's runners ship `gh`).
pub(super) fn gh_dir(runner: &Runner) -> PathBuf {
    let dir = runner.root.path().join("bin");
    let gh = dir.join("gh");
    if !gh.exists() {
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("bin: {e}"));
        std::fs::write(&gh, include_str!("gh.sh")).unwrap_or_else(|e| panic!("gh: {e}"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| panic!("chmod gh: {e}"));
        }
    }
    dir
}

/// The vendored `action.yml` of `action` at commit `pin`.
pub fn vendored(action: &str, pin: &str) -> Option<Yaml> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/actions")
        .join(action)
        .join(pin)
        .join("action.yml");
    let text = std::fs::read_to_string(path).ok()?;
    serde_yaml_ng::from_str(&text).ok()
}

fn fail(log: impl Into<String>) -> Done {
    Done {
        ok: false,
        outputs: BTreeMap::new(),
        log: log.into(),
    }
}

fn ok(outputs: &[(&str, String)], log: impl Into<String>) -> Done {
    Done {
        ok: true,
        outputs: outputs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        log: log.into(),
    }
}

/// Runs the stand-in for `action@pin` with `with`, after checking them against its metadata.
pub(super) fn run(
    state: &dyn Host,
    action: &str,
    pin: &str,
    with: &BTreeMap<String, String>,
) -> Done {
    let Some(meta) = vendored(action, pin) else {
        return fail(format!(
            "Unable to resolve action `{action}@{pin}`: no action.yml for that commit under tests/fixtures/actions"
        ));
    };
    let declared = meta["inputs"].as_mapping().cloned().unwrap_or_default();
    for key in with.keys() {
        if !declared.contains_key(key.as_str()) {
            return fail(format!(
                "Unexpected input(s) '{key}', valid inputs are {:?}",
                declared.keys().filter_map(Yaml::as_str).collect::<Vec<_>>()
            ));
        }
    }
    let mut inputs: BTreeMap<String, String> = BTreeMap::new();
    for (k, spec) in &declared {
        let Some(k) = k.as_str() else { continue };
        match with.get(k) {
            Some(v) => {
                inputs.insert(k.to_owned(), v.clone());
            }
            None if spec["required"].as_bool() == Some(true) && spec["default"].is_null() => {
                return fail(format!("Input required and not supplied: {k}"));
            }
            None => {
                inputs.insert(k.to_owned(), state.expr_text(&spec["default"]));
            }
        }
    }
    match action {
        "actions/checkout" => checkout(state, &inputs),
        "actions/upload-artifact" => upload(state, &inputs),
        "actions/download-artifact" => download(state, &inputs),
        "actions/cache/restore" => cache_restore(state, &inputs),
        "actions/cache/save" => cache_save(state, &inputs),
        "anthropics/claude-code-action" => claude(state, &inputs),
        "openai/codex-action" => codex(state, &inputs),
        other => fail(format!("the runner has no stand-in for {other}")),
    }
}

fn git(dir: &Path, args: &[&str], home: &Path) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("git {}: {text}", args.join(" ")))
    }
}

/// `actions/checkout`: a clone from the fake with the given token (the job's by
/// default), `fetch-depth: 0` bringing every branch, credentials kept in the clone's
/// config only with `persist-credentials: true`. Navin's own repository (the examples'
/// placeholder) is the release the runner installed.
fn checkout(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let r = state.runner();
    let repository = inputs.get("repository").cloned().unwrap_or_default();
    let target = match inputs.get("path").filter(|p| !p.is_empty()) {
        Some(p) => state.work().join(p),
        None => state.work().to_path_buf(),
    };
    if repository == NAVIN_PLACEHOLDER {
        let version = inputs.get("ref").cloned().unwrap_or_default();
        let release = r.actions_dir().join(NAVIN_PLACEHOLDER).join(&version);
        if !release.exists() {
            return fail(format!(
                "A branch or tag with the name '{version}' could not be found"
            ));
        }
        super::copy_navin_source(&r.source, &target);
        return ok(&[("ref", version)], "checked out Navin's release");
    }
    let Some((owner, name)) = repository.split_once('/') else {
        return fail(format!("Invalid repository '{repository}'"));
    };
    let token = inputs.get("token").cloned().unwrap_or_default();
    let url = r.fake.git_remote_url_with_token(owner, name, &token);
    let plain = r.fake.git_remote_url(owner, name);
    let mut depth = inputs.get("fetch-depth").map_or("1", String::as_str);
    // Without `ref`, the workflow's own repository is checked out at the event's commit:
    // a pull request's head (GitHub uses its merge commit), else `github.ref`.
    let own = repository == format!("{}/{}", r.owner, r.repo);
    let git_ref = inputs
        .get("ref")
        .filter(|s| !s.is_empty())
        .cloned()
        .or_else(|| {
            own.then(|| {
                let key = if state.trigger().event.starts_with("pull_request") {
                    "sha"
                } else {
                    "ref"
                };
                state.github(key)
            })
        });
    let by_sha = git_ref
        .as_deref()
        .is_some_and(|r| r.len() == 40 && r.chars().all(|c| c.is_ascii_hexdigit()));
    if by_sha {
        depth = "0";
    }
    std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("checkout dir: {e}"));
    let dest = target.display().to_string();
    let mut args = vec!["clone", "--quiet"];
    let branch;
    if depth != "0" {
        args.extend(["--depth", depth, "--single-branch"]);
        if let Some(b) = &git_ref {
            branch = b
                .trim_start_matches("refs/heads/")
                .trim_start_matches("refs/tags/")
                .to_owned();
            args.extend(["--branch", branch.as_str()]);
        }
    }
    args.extend([url.as_str(), dest.as_str()]);
    let home = state.home().to_path_buf();
    let mut log = String::new();
    let result = (|| -> Result<(), String> {
        log.push_str(&git(state.work(), &args, &home)?);
        if depth == "0" {
            if let Some(b) = &git_ref {
                log.push_str(&git(
                    &target,
                    &["checkout", "--quiet", b.trim_start_matches("refs/heads/")],
                    &home,
                )?);
            }
        }
        git(&target, &["remote", "set-url", "origin", &plain], &home)?;
        if inputs.get("persist-credentials").map(String::as_str) != Some("false") {
            use base64::Engine as _;
            let basic =
                base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
            git(
                &target,
                &[
                    "config",
                    "--local",
                    &format!("http.{}/.extraheader", r.fake.base_url()),
                    &format!("AUTHORIZATION: basic {basic}"),
                ],
                &home,
            )?;
        }
        if let Some(patterns) = inputs
            .get("sparse-checkout")
            .filter(|s| !s.trim().is_empty())
        {
            let mut a = vec!["sparse-checkout", "set", "--no-cone"];
            a.extend(patterns.lines().map(str::trim).filter(|l| !l.is_empty()));
            git(&target, &a, &home)?;
        }
        Ok(())
    })();
    match result {
        Err(e) => fail(format!("{log}{e}")),
        Ok(()) => {
            let commit = git(&target, &["rev-parse", "HEAD"], &home)
                .unwrap_or_default()
                .trim()
                .to_owned();
            ok(
                &[("commit", commit), ("ref", git_ref.unwrap_or_default())],
                log,
            )
        }
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    let mut n = 0;
    if from.is_file() {
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::copy(from, to)?;
        return Ok(1);
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        n += copy_tree(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(n)
}

/// `actions/upload-artifact`: the files under `path`, kept for this workflow run.
fn upload(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let name = inputs
        .get("name")
        .cloned()
        .unwrap_or_else(|| "artifact".into());
    let key = (state.run_id(), name.clone());
    let overwrite = inputs.get("overwrite").map(String::as_str) == Some("true");
    let store = state
        .runner()
        .root
        .path()
        .join("artifacts")
        .join(state.run_id().to_string())
        .join(&name);
    {
        let artifacts = state
            .runner()
            .artifacts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if artifacts.contains_key(&key) && !overwrite {
            return fail(format!(
                "an artifact with the name '{name}' already exists in this run"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&store);
    let mut count = 0;
    for line in inputs
        .get("path")
        .map(String::as_str)
        .unwrap_or_default()
        .lines()
    {
        let p = state.work().join(line.trim());
        let p = p.as_path();
        if line.trim().is_empty() || !p.exists() {
            continue;
        }
        let to = if p.is_file() {
            store.join(p.file_name().unwrap_or_default())
        } else {
            store.clone()
        };
        count += copy_tree(p, &to).unwrap_or(0);
    }
    if count == 0 {
        let mode = inputs
            .get("if-no-files-found")
            .map_or("warn", String::as_str);
        if mode == "error" {
            return fail("No files were found with the provided path");
        }
        return ok(
            &[],
            "No files were found with the provided path; no artifact",
        );
    }
    state
        .runner()
        .artifacts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, store);
    ok(
        &[("artifact-id", state.run_id().to_string())],
        format!("uploaded {count} files as {name}"),
    )
}

/// `actions/download-artifact`: an artifact of this run by `name`, or every one whose
/// name matches `pattern` (a `*` glob), into `path`.
fn download(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let name = inputs.get("name").cloned().unwrap_or_default();
    let pattern = inputs.get("pattern").cloned().unwrap_or_default();
    let run = state.run_id();
    let found: Vec<PathBuf> = state
        .runner()
        .artifacts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|((r, n), _)| {
            *r == run
                && if name.is_empty() {
                    glob(&pattern, n)
                } else {
                    *n == name
                }
        })
        .map(|(_, p)| p.clone())
        .collect();
    if found.is_empty() {
        return fail(format!(
            "Unable to download artifact(s): Artifact not found for name: {name}{pattern}"
        ));
    }
    // A relative path is under GITHUB_WORKSPACE, as the action resolves it.
    let to = match inputs.get("path").filter(|p| !p.is_empty()) {
        Some(p) => state.work().join(p),
        None => state.work().to_path_buf(),
    };
    let mut count = 0;
    for from in &found {
        match copy_tree(from, &to) {
            Ok(n) => count += n,
            Err(e) => return fail(e.to_string()),
        }
    }
    ok(
        &[("download-path", to.display().to_string())],
        format!("downloaded {count} files"),
    )
}

/// Whether `name` matches `pattern`, whose `*` stands for any text.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
    }
}

/// `actions/cache/restore`: the paths saved under `key` (or a `restore-keys` prefix).
fn cache_restore(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let key = inputs.get("key").cloned().unwrap_or_default();
    let caches = state
        .runner()
        .caches
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let prefixes: Vec<String> = inputs
        .get("restore-keys")
        .map(|s| {
            s.lines()
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let hit = caches.get(&key).map(|p| (p.clone(), true)).or_else(|| {
        prefixes.iter().find_map(|pre| {
            caches
                .iter()
                .find(|(k, _)| k.starts_with(pre.as_str()))
                .map(|(_, p)| (p.clone(), false))
        })
    });
    let Some((dir, exact)) = hit else {
        return ok(&[("cache-hit", "false".into())], "Cache not found");
    };
    for (i, line) in inputs
        .get("path")
        .map(String::as_str)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
    {
        let _ = copy_tree(&dir.join(i.to_string()), Path::new(line.trim()));
    }
    ok(
        &[("cache-hit", exact.to_string()), ("cache-matched-key", key)],
        "Cache restored",
    )
}

/// `actions/cache/save`: the paths, under `key`.
fn cache_save(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let key = inputs.get("key").cloned().unwrap_or_default();
    let dir = state.runner().root.path().join("caches").join(format!(
        "{}",
        state
            .runner()
            .caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    ));
    for (i, line) in inputs
        .get("path")
        .map(String::as_str)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
    {
        let p = Path::new(line.trim());
        if p.exists() {
            let _ = copy_tree(p, &dir.join(i.to_string()));
        }
    }
    state
        .runner()
        .caches
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, dir);
    ok(&[], "Cache saved")
}

/// Whether `actor` is a bot by its login (`name[bot]`).
fn bot_name(actor: &str) -> Option<&str> {
    actor.strip_suffix("[bot]")
}

/// The agent stand-ins' shared part: hand the checkout and prompt to the scripted agent.
fn agent(
    state: &dyn Host,
    action: &str,
    prompt: String,
    mcp: Option<PathBuf>,
    model: Option<String>,
) -> Result<super::AgentSpend, String> {
    let Some(agent) = state.runner().agent.clone() else {
        return Err("the runner has no scripted agent".into());
    };
    let task = AgentTask {
        action: action.into(),
        workspace: state.work().to_path_buf(),
        prompt,
        mcp_config: mcp,
        model,
        inputs: state.trigger().payload["inputs"].clone(),
    };
    agent.work(&task)
}

/// `anthropics/claude-code-action` in agent mode (a `prompt` given): it needs an
/// Anthropic key, a GitHub token (`github_token`, or OIDC with `id-token: write` to
/// exchange for its App's token, which no test can reach), and refuses a bot actor
/// unless `allowed_bots` lists it.
fn claude(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let given = |k: &str| inputs.get(k).filter(|v| !v.trim().is_empty()).cloned();
    if given("anthropic_api_key").is_none() && given("claude_code_oauth_token").is_none() {
        return fail("Error: Either ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN is required");
    }
    if given("github_token").is_none() {
        let why = if state.id_token() {
            "OIDC: exchanging the job's ID token for the Claude App's token needs api.anthropic.com, which no test reaches; pass `github_token`"
        } else {
            "Could not fetch an OIDC token. Did you remember to add `id-token: write` to your workflow permissions?"
        };
        return fail(why);
    }
    let actor = state.trigger().actor.clone();
    if let Some(bot) = bot_name(&actor) {
        let allowed = given("allowed_bots").unwrap_or_default();
        let listed = allowed.trim() == "*"
            || allowed
                .split(',')
                .any(|b| b.trim().trim_end_matches("[bot]").eq_ignore_ascii_case(bot));
        if !listed {
            return fail(format!(
                "Workflow initiated by non-human actor: {bot} (type: Bot). Add bot to allowed_bots list or use '*' to allow all bots."
            ));
        }
    }
    let Some(prompt) = given("prompt") else {
        return fail("no prompt: claude-code-action in agent mode needs `prompt`");
    };
    let args = inputs.get("claude_args").cloned().unwrap_or_default();
    let words: Vec<&str> = args.split_whitespace().collect();
    let after = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|i| words.get(i + 1))
            .map(|s| (*s).to_owned())
    };
    let mcp = after("--mcp-config").map(PathBuf::from);
    if let Some(p) = &mcp {
        if !p.exists() {
            return fail(format!("--mcp-config {}: no such file", p.display()));
        }
    }
    match agent(
        state,
        "anthropics/claude-code-action",
        prompt,
        mcp,
        after("--model"),
    ) {
        Ok(spend) => {
            let file = state.temp().join("claude-execution-output.json");
            let report = serde_json::json!([
                {"type": "system", "subtype": "init"},
                {"type": "result", "subtype": "success", "total_cost_usd": spend.cost_usd,
                 "usage": {"input_tokens": spend.tokens, "output_tokens": 0}}
            ]);
            std::fs::write(&file, report.to_string())
                .unwrap_or_else(|e| panic!("execution file: {e}"));
            ok(
                &[
                    ("execution_file", file.display().to_string()),
                    ("conclusion", "success".into()),
                ],
                "Claude finished",
            )
        }
        Err(e) => fail(format!("Claude failed: {e}")),
    }
}

/// `openai/codex-action`: an OpenAI key, a prompt or prompt file, and for a run a bot
/// started, `allow-bots` (github-actions[bot]) or `allow-bot-users` naming it.
fn codex(state: &dyn Host, inputs: &BTreeMap<String, String>) -> Done {
    let given = |k: &str| inputs.get(k).filter(|v| !v.trim().is_empty()).cloned();
    if given("openai-api-key").is_none() && given("responses-api-endpoint").is_none() {
        return fail("openai-api-key is required");
    }
    let actor = state.trigger().actor.clone();
    if let Some(bot) = bot_name(&actor) {
        let trusted = bot == "github-actions" && given("allow-bots").as_deref() == Some("true");
        let listed = given("allow-bot-users")
            .unwrap_or_default()
            .split(',')
            .any(|b| b.trim().trim_end_matches("[bot]").eq_ignore_ascii_case(bot));
        if !trusted && !listed {
            return fail(format!(
                "{actor} does not have write access and is not an allowed bot"
            ));
        }
    }
    let prompt = match (given("prompt"), given("prompt-file")) {
        (Some(p), _) => p,
        (None, Some(file)) => match std::fs::read_to_string(&file) {
            Ok(p) => p,
            Err(e) => return fail(format!("prompt-file {file}: {e}")),
        },
        (None, None) => return fail("Either `prompt` or `prompt-file` must be provided."),
    };
    let home = state.home().join(".codex/config.toml");
    let mcp = home.exists().then_some(home);
    match agent(state, "openai/codex-action", prompt, mcp, given("model")) {
        Ok(spend) => {
            let events = format!(
                "{{\"type\":\"thread.started\"}}\n{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":{},\"output_tokens\":0}}}}",
                spend.tokens
            );
            ok(&[("final-message", events)], "Codex finished")
        }
        Err(e) => fail(format!("Codex failed: {e}")),
    }
}
