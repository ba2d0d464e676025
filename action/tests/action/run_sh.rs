//! `action/run.sh`, the composite action's last step, passes every mode the action documents
//! (its `mode` input) and every shipped workflow uses, and the binary accepts each.

use std::path::Path;
use std::process::Command;

use crate::harness::workspace;

/// The modes `action.yml`'s `mode` input describes: each is written as `` `name` (``.
fn documented_modes() -> Vec<String> {
    let text = std::fs::read_to_string(workspace().join("action/action.yml")).expect("action.yml");
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).expect("yaml");
    let description = yaml["inputs"]["mode"]["description"]
        .as_str()
        .expect("the mode input's description")
        .to_owned();
    let mut modes = Vec::new();
    let mut rest = description.as_str();
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let word = &after[..end];
        let next = after[end + 1..].trim_start();
        if next.starts_with('(') && word.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            modes.push(word.to_owned());
        }
        rest = &after[end + 1..];
    }
    modes
}

/// Every `mode:` a shipped workflow passes to the action.
fn modes_in_examples() -> Vec<String> {
    let mut modes = Vec::new();
    let dir = workspace().join("action/examples");
    for entry in std::fs::read_dir(&dir).expect("examples") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("example");
        for line in text.lines() {
            if let Some(mode) = line.trim().strip_prefix("mode: ") {
                let mode = mode.split('#').next().unwrap_or_default().trim();
                modes.push(mode.trim_matches(['"', '\'']).to_owned());
            }
        }
    }
    modes.sort();
    modes.dedup();
    modes
}

fn run_sh(mode: &str, bin: &Path) -> std::process::Output {
    Command::new("bash")
        .arg(workspace().join("action/run.sh"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INPUT_MODE", mode)
        .env("NAVIN_ACTION_BIN", bin)
        .output()
        .expect("bash runs")
}

#[test]
fn every_documented_and_used_mode_passes_run_sh_and_the_binary_knows_it() {
    let documented = documented_modes();
    assert!(
        documented.len() >= 8 && documented.contains(&"contain".to_owned()),
        "{documented:?}"
    );
    let used = modes_in_examples();
    for mode in &used {
        assert!(
            documented.contains(mode),
            "the examples use mode {mode:?}, which action.yml does not document"
        );
    }
    let dir = tempfile::tempdir().expect("tmp");
    let stub = dir.path().join("navin-action");
    std::fs::write(&stub, "#!/bin/sh\necho \"ran $*\"\n").expect("stub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    for mode in &documented {
        let out = run_sh(mode, &stub);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("ran --mode {mode}")),
            "run.sh refused mode {mode}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The binary itself accepts it: whatever else it lacks here, not the mode.
        let real = Command::new(env!("CARGO_BIN_EXE_navin-action"))
            .args(["--mode", mode])
            .env_clear()
            .output()
            .expect("navin-action runs");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&real.stdout),
            String::from_utf8_lossy(&real.stderr)
        );
        assert!(!said.contains("unknown mode"), "{mode}: {said}");
    }
    let out = run_sh("deploy", &stub);
    assert!(!out.status.success(), "an unknown mode is refused");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("must be one of"),
        "{out:?}"
    );
}
