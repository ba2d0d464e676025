//! The deploy files under `bot/deploy/` keep their promises without Docker or systemd at
//! hand: the image runs as non-root with a health check, a data volume and no compiler,
//! its health check really probes `/healthz`, the unit is hardened and gets its secrets
//! as credentials, and the compose example mounts the data volume.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

fn read(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Dockerfile instructions (`KEYWORD args`), continuation lines joined, comments dropped.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                let (keyword, args) = current.trim().split_once(' ').unwrap_or((&current, ""));
                out.push((keyword.to_ascii_uppercase(), args.trim().to_owned()));
                current.clear();
            }
        }
    }
    out
}

/// The instructions of the last stage (from its `FROM`).
fn final_stage(all: &[(String, String)]) -> &[(String, String)] {
    let start = all.iter().rposition(|(k, _)| k == "FROM").expect("a FROM");
    &all[start..]
}

fn args_of<'a>(stage: &'a [(String, String)], keyword: &str) -> Vec<&'a str> {
    stage
        .iter()
        .filter(|(k, _)| k == keyword)
        .map(|(_, a)| a.as_str())
        .collect()
}

#[test]
fn the_image_runs_navin_as_a_non_root_user_with_a_health_check_and_a_data_volume() {
    let all = instructions(&read("Dockerfile"));
    let froms = args_of(&all, "FROM");
    assert!(froms.len() >= 2, "a multi-stage build: {froms:?}");
    assert!(
        froms[0].starts_with("rust:"),
        "builds on the official rust image"
    );
    let stage = final_stage(&all);
    let from = &stage[0].1;
    assert!(
        from.starts_with("debian:") && from.contains("slim"),
        "{from}"
    );

    let user = args_of(stage, "USER");
    let user = user.last().expect("the final stage sets USER");
    let name = user.split(':').next().unwrap_or_default();
    assert!(!matches!(name, "root" | "0" | ""), "runs as {user}");

    let health = args_of(stage, "HEALTHCHECK").join(" ");
    assert!(health.contains("/healthz"), "{health}");
    let volume = args_of(stage, "VOLUME").join(" ");
    assert!(volume.contains("/var/lib/navin"), "{volume}");
    let env = args_of(stage, "ENV").join(" ");
    assert!(env.contains("NAVIN_LISTEN=0.0.0.0:8080"), "{env}");
    assert!(env.contains("NAVIN_DATA_DIR=/var/lib/navin"), "{env}");

    let copies = args_of(stage, "COPY").join(" ");
    assert!(
        copies.contains("--from=builder"),
        "the binary comes from the builder"
    );
    let builder = args_of(&all[..all.len() - stage.len()], "RUN").join(" ");
    assert!(
        builder.contains("strip "),
        "the binary is stripped: {builder}"
    );
}

#[test]
fn the_final_image_stage_has_no_compiler() {
    let all = instructions(&read("Dockerfile"));
    let stage = final_stage(&all);
    let installs = args_of(stage, "RUN").join(" ");
    for tool in [
        "cargo",
        "rustc",
        "rustup",
        "gcc",
        "clang",
        "build-essential",
        " cc ",
        "-dev ",
    ] {
        assert!(
            !installs.contains(tool),
            "the runtime stage installs {tool}"
        );
    }
    assert!(
        !stage[0].1.starts_with("rust"),
        "the runtime is not the rust image"
    );
    assert!(installs.contains("ca-certificates") && installs.contains("git"));
}

/// A one-request HTTP server answering `status` on `/healthz` (404 elsewhere).
fn answer_once(status: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            // Read the whole request head before answering: closing a socket with
            // unread bytes sends a reset, which can beat the answer to the client.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 0) && header != "\r\n" {
                header.clear();
            }
            let status = if request_line.starts_with("GET /healthz ") {
                status
            } else {
                "404 Not Found"
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    port
}

/// Runs the image's HEALTHCHECK command as Docker would (exec form), with
/// NAVIN_LISTEN pointing at `port`.
fn run_health_check(port: u16) -> bool {
    let all = instructions(&read("Dockerfile"));
    let health = args_of(final_stage(&all), "HEALTHCHECK").join(" ");
    let json = &health[health.find("CMD").expect("HEALTHCHECK CMD") + 3..];
    let argv: Vec<String> = serde_json::from_str(json.trim()).expect("exec form");
    Command::new(&argv[0])
        .args(&argv[1..])
        .env("NAVIN_LISTEN", format!("0.0.0.0:{port}"))
        .stderr(std::process::Stdio::null())
        .status()
        .expect("the health check runs")
        .success()
}

#[test]
fn the_image_health_check_passes_on_a_200_from_healthz_and_fails_otherwise() {
    assert!(run_health_check(answer_once("200 OK")));
    assert!(!run_health_check(answer_once("503 Service Unavailable")));
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    assert!(!run_health_check(port), "nothing listening");
}

#[test]
fn the_systemd_unit_is_hardened_and_reads_secrets_from_credentials() {
    let unit = read("navin.service");
    let keys: Vec<(&str, &str)> = unit
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .collect();
    let has = |key: &str, value: &str| keys.iter().any(|(k, v)| *k == key && *v == value);
    for (key, value) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("DynamicUser", "yes"),
        ("StateDirectory", "navin"),
        ("RestrictSUIDSGID", "yes"),
        ("CapabilityBoundingSet", ""),
        ("Environment", "NAVIN_DATA_DIR=%S/navin"),
        ("Environment", "NAVIN_PRIVATE_KEY_PATH=%d/private-key.pem"),
        ("Environment", "NAVIN_WEBHOOK_SECRET_FILE=%d/webhook-secret"),
        (
            "LoadCredential",
            "private-key.pem:/etc/navin/private-key.pem",
        ),
        ("LoadCredential", "webhook-secret:/etc/navin/webhook-secret"),
        ("ExecStart", "/usr/local/bin/navin serve"),
    ] {
        assert!(has(key, value), "navin.service lacks {key}={value}");
    }
    for (key, value) in &keys {
        let inline_secret = value.starts_with("NAVIN_WEBHOOK_SECRET=")
            || value.starts_with("NAVIN_PRIVATE_KEY=")
            || value.starts_with("NAVIN_LLM_API_KEY=");
        assert!(!inline_secret, "a secret inline in {key}={value}");
    }
}

#[test]
fn the_compose_example_keeps_the_data_on_a_volume_and_secrets_in_files() {
    let text = read("compose.yml");
    let compose: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&text).expect("compose.yml is YAML");
    let navin = &compose["services"]["navin"];
    let volumes = serde_yaml_ng::to_string(&navin["volumes"]).unwrap();
    assert!(volumes.contains("navin-data:/var/lib/navin"), "{volumes}");
    assert!(!compose["volumes"]["navin-data"].is_null());
    let env = &navin["environment"];
    assert_eq!(
        env["NAVIN_PRIVATE_KEY_PATH"].as_str(),
        Some("/run/secrets/private-key.pem")
    );
    assert_eq!(
        env["NAVIN_WEBHOOK_SECRET_FILE"].as_str(),
        Some("/run/secrets/webhook-secret")
    );
    assert!(env["NAVIN_WEBHOOK_SECRET"].is_null() && env["NAVIN_PRIVATE_KEY"].is_null());
    assert!(
        text.contains("# NAVIN_DATABASE_URL:") && text.contains("#   image: postgres"),
        "the PostgreSQL example is there, commented out"
    );
}

fn repo_file(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value after `flag` in a command line (`-p navin-bot` → `navin-bot`).
fn flag_value<'a>(command: &'a str, flag: &str) -> Option<&'a str> {
    let mut words = command.split_whitespace();
    words.find(|w| *w == flag)?;
    words.next()
}

#[test]
fn the_image_builds_a_package_and_binary_the_workspace_has_and_runs_what_it_installed() {
    let all = instructions(&read("Dockerfile"));
    let stage = final_stage(&all);
    let builder = &all[..all.len() - stage.len()];
    let build = args_of(builder, "RUN")
        .into_iter()
        .find(|r| r.contains("cargo build"))
        .expect("the builder runs cargo build");
    assert!(
        build.contains("--locked"),
        "builds from Cargo.lock: {build}"
    );
    assert!(build.contains("--release"), "{build}");

    // The package and binary exist: the workspace lists the package, it declares the bin.
    let package = flag_value(build, "-p").expect("-p <package>");
    let bin = flag_value(build, "--bin").expect("--bin <name>");
    let manifest = read_manifest();
    assert!(
        manifest.contains(&format!("name = \"{package}\"")),
        "bot/Cargo.toml is not package {package}"
    );
    assert!(
        manifest.contains(&format!("[[bin]]\nname = \"{bin}\"")),
        "bot/Cargo.toml has no binary {bin}"
    );
    let workspace = repo_file("Cargo.toml");
    assert!(workspace.contains("\"bot\""), "bot is a workspace member");
    // Every feature the build asks for is one the package has.
    if let Some(features) = flag_value(build, "--features") {
        for feature in features.split(',') {
            assert!(
                manifest.contains(&format!("\n{feature} = [")),
                "the image asks for feature {feature} that navin-bot lacks"
            );
        }
    }

    // What the builder installs is what the runtime copies and runs.
    let installed = build
        .split("&&")
        .find_map(|step| step.trim().strip_prefix("install "))
        .and_then(|args| args.split_whitespace().last())
        .expect("the builder installs the binary");
    assert!(installed.ends_with(&format!("/{bin}")), "{installed}");
    let copy = args_of(stage, "COPY").join(" ");
    assert!(
        copy.contains(&format!("--from=builder {installed} ")),
        "the runtime copies {installed}: {copy}"
    );
    let entry = args_of(stage, "ENTRYPOINT").join(" ");
    assert!(entry.contains(installed), "{entry}");

    // glibc: the runtime is the Debian release the builder compiled against.
    let codename = |image: &str| {
        image
            .rsplit(['-', ':'])
            .find(|p| *p != "slim")
            .map(str::to_owned)
    };
    let built_on = args_of(builder, "FROM")[0]
        .split_whitespace()
        .next()
        .unwrap_or_default();
    let runs_on = stage[0].1.split_whitespace().next().unwrap_or_default();
    assert_eq!(
        codename(built_on),
        codename(runs_on),
        "builder {built_on} and runtime {runs_on} are different Debian releases"
    );

    // The port the server listens on is the one exposed, and the health check asks it.
    let env = args_of(stage, "ENV").join(" ");
    let listen = env
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("NAVIN_LISTEN="))
        .expect("NAVIN_LISTEN is set");
    let port = listen.rsplit(':').next().unwrap_or_default();
    assert_eq!(
        args_of(stage, "EXPOSE"),
        vec![port],
        "EXPOSE matches NAVIN_LISTEN"
    );
    let health = args_of(stage, "HEALTHCHECK").join(" ");
    assert!(
        health.contains("${NAVIN_LISTEN##*:}"),
        "the health check follows NAVIN_LISTEN: {health}"
    );
}

fn read_manifest() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    std::fs::read_to_string(path).unwrap()
}

/// The body of the first fenced block of `lang` in docs/deploy.md.
fn deploy_doc_block(lang: &str) -> String {
    let doc = repo_file("docs/deploy.md");
    let start = doc
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("docs/deploy.md has no {lang} block"))
        + lang.len()
        + 4;
    let end = start + doc[start..].find("\n```").unwrap();
    doc[start..end].to_owned()
}

/// Where nginx sends `path` under the documented `location`s (exact, then the longest
/// prefix, overridden by the first matching regex, as nginx does): `true` when it is
/// proxied to navin, `false` when answered 404.
fn nginx_proxies(config: &str, path: &str) -> bool {
    let mut exact = None;
    let mut prefix: Option<(usize, bool)> = None;
    let mut regex = None;
    let mut rest = config;
    while let Some(at) = rest.find("location ") {
        let head_end = at + rest[at..].find('{').unwrap();
        let head = rest[at + "location ".len()..head_end].trim();
        // One level of braces per location in the documented examples.
        let body_end = head_end + rest[head_end..].find('}').unwrap();
        let body = &rest[head_end..body_end];
        let proxied = body.contains("proxy_pass http://127.0.0.1:8080");
        assert!(
            proxied || body.contains("return 404"),
            "location {head}: {body}"
        );
        if let Some(p) = head.strip_prefix("= ") {
            if p == path {
                exact = Some(proxied);
            }
        } else if let Some(re) = head.strip_prefix("~ ") {
            // `^/(a|b|c)$`: an anchored list of names, the only regex form used.
            let names = re
                .strip_prefix("^/(")
                .and_then(|r| r.strip_suffix(")$"))
                .unwrap_or_else(|| panic!("unexpected regex {re}"));
            if regex.is_none() && names.split('|').any(|n| path == format!("/{n}")) {
                regex = Some(proxied);
            }
        } else if path.starts_with(head) && prefix.is_none_or(|(len, _)| head.len() > len) {
            prefix = Some((head.len(), proxied));
        }
        rest = &rest[body_end..];
    }
    exact
        .or(regex)
        .or(prefix.map(|(_, p)| p))
        .unwrap_or_else(|| panic!("no location for {path}"))
}

/// Paths the dashboard and the sign-in need from the outside, and those kept inside.
const PUBLIC: [&str; 9] = [
    "/webhook",
    "/",
    "/login",
    "/auth/callback",
    "/logout",
    "/missions",
    "/r/octo-org/hello",
    "/r/octo-org/hello/act",
    "/assets/dashboard.css",
];
const INTERNAL: [&str; 3] = ["/metrics", "/healthz", "/readyz"];

#[test]
fn the_documented_nginx_proxy_serves_the_webhook_sign_in_and_dashboard_but_not_metrics() {
    let config = deploy_doc_block("nginx");
    for path in PUBLIC {
        assert!(nginx_proxies(&config, path), "{path} is not proxied");
    }
    for path in INTERNAL {
        assert!(!nginx_proxies(&config, path), "{path} is exposed");
    }
    assert!(
        config.contains("client_max_body_size 25m"),
        "GitHub's payload cap"
    );
}

#[test]
fn the_documented_caddy_proxy_serves_the_webhook_sign_in_and_dashboard_but_not_metrics() {
    let config = deploy_doc_block("caddyfile");
    let internal = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("@internal path "))
        .expect("an @internal matcher");
    let hidden: Vec<&str> = internal.split_whitespace().collect();
    for path in INTERNAL {
        assert!(hidden.contains(&path), "{path} is exposed");
    }
    for path in PUBLIC {
        assert!(!hidden.contains(&path), "{path} is hidden");
    }
    let internal_block = &config[config.find("handle @internal").unwrap()..];
    let internal_block = &internal_block[..internal_block.find('}').unwrap()];
    assert!(internal_block.contains("respond 404"), "{internal_block}");
    // `/webhook` and a catch-all both reach navin.
    assert!(config.contains("handle /webhook {"));
    let proxies = config.matches("reverse_proxy 127.0.0.1:8080").count();
    let catch_all = config.contains("    handle {");
    assert!(proxies == 2 && catch_all, "{config}");
}
