//! Planner speed on a generated 10k+ file repository: median and p95 plan time over 20 requests, and peak RSS.
//!
//! Usage: `cargo bench -p navin-planner --bench planner_scale [-- <files-per-unit-scale>]`

use std::path::Path;
use std::time::Instant;

use navin_planner::{map_repository, plan_repository, LocalSource, PlannerOptions};

const WORDS: &[&str] = &[
    "invoice",
    "payment",
    "customer",
    "order",
    "cart",
    "session",
    "token",
    "cache",
    "queue",
    "worker",
    "retry",
    "timeout",
    "config",
    "parser",
    "lexer",
    "render",
    "template",
    "upload",
    "download",
    "thumbnail",
    "search",
    "index",
    "shard",
    "replica",
    "snapshot",
    "backup",
    "metrics",
    "tracing",
    "logger",
    "audit",
    "permission",
    "role",
    "tenant",
    "billing",
    "refund",
    "webhook",
    "schedule",
    "cron",
    "notify",
    "email",
    "sms",
    "report",
    "export",
    "import",
    "csv",
    "json",
    "schema",
    "migration",
    "profile",
    "avatar",
    "comment",
    "thread",
    "vote",
    "feed",
    "ranking",
    "graph",
    "route",
    "handler",
    "middleware",
    "limiter",
    "quota",
    "storage",
    "bucket",
];

/// A tiny deterministic generator so every run builds the same repository.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn word(&mut self) -> &'static str {
        WORDS[(self.next() as usize) % WORDS.len()]
    }
}

fn write(root: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(p, text)
}

fn body(rng: &mut Lcg, lang: &str, lines: usize) -> String {
    let mut s = String::new();
    for _ in 0..lines {
        let (a, b, c) = (rng.word(), rng.word(), rng.word());
        let line = match lang {
            "rs" => format!(
                "pub fn {a}_{b}(input: &{}{}) -> Result<(), Error> {{ let _ = \"{c}\"; Ok(()) }}\n",
                cap(a),
                cap(c)
            ),
            "ts" => format!(
                "export function {a}{}(value: {}) {{ return `{c}`; }}\n",
                cap(b),
                cap(c)
            ),
            "go" => format!(
                "func {}{}(ctx context.Context) error {{ _ = \"{c}\"; return nil }}\n",
                cap(a),
                cap(b)
            ),
            "py" => format!("def {a}_{b}(self, {c}):\n    return self.{c}\n"),
            _ => format!("The {a} {b} handles {c} for every request.\n"),
        };
        s.push_str(&line);
    }
    s
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Builds the repository and returns the number of files written.
fn generate(root: &Path, scale: usize) -> std::io::Result<usize> {
    let mut rng = Lcg(42);
    let mut n = 0;
    let mut members = Vec::new();
    write(root, ".gitignore", "node_modules/\ntarget/\n")?;
    write(root, ".github/workflows/ci.yml", "on: [push]\njobs: {}\n")?;
    for c in 0..20 {
        let name = format!("{}-{}", rng.word(), c);
        members.push(format!("\"crates/{name}\""));
        write(
            root,
            &format!("crates/{name}/Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\n[dependencies]\ntokio = \"1\"\n"),
        )?;
        let mut lib = String::new();
        for f in 0..6 * scale {
            let m = format!("{}_{f}", rng.word());
            lib.push_str(&format!("pub mod {m};\n"));
            let lines = 20 + (rng.next() as usize % 80);
            write(
                root,
                &format!("crates/{name}/src/{m}.rs"),
                &format!("use crate::{m};\n{}", body(&mut rng, "rs", lines)),
            )?;
            n += 1;
        }
        write(root, &format!("crates/{name}/src/lib.rs"), &lib)?;
        write(
            root,
            &format!("crates/{name}/tests/it.rs"),
            &body(&mut rng, "rs", 10),
        )?;
        n += 3;
    }
    write(
        root,
        "Cargo.toml",
        &format!("[workspace]\nmembers = [{}]\n", members.join(", ")),
    )?;
    write(
        root,
        "package.json",
        r#"{"name":"mono","private":true,"workspaces":["packages/*"],"scripts":{"test":"vitest run","lint":"eslint ."}}"#,
    )?;
    for p in 0..30 {
        let name = format!("{}-{p}", rng.word());
        write(
            root,
            &format!("packages/{name}/package.json"),
            &format!(r#"{{"name":"@mono/{name}","dependencies":{{"react":"18"}}}}"#),
        )?;
        for f in 0..8 * scale {
            let m = format!("{}{}", rng.word(), f);
            let prev = if f > 0 {
                format!("import {{ x }} from './{}';\n", "index")
            } else {
                String::new()
            };
            let lines = 20 + (rng.next() as usize % 80);
            write(
                root,
                &format!("packages/{name}/src/{m}.ts"),
                &format!("{prev}{}", body(&mut rng, "ts", lines)),
            )?;
            if f % 4 == 0 {
                write(
                    root,
                    &format!("packages/{name}/src/{m}.test.ts"),
                    &body(&mut rng, "ts", 8),
                )?;
                n += 1;
            }
            n += 1;
        }
        write(
            root,
            &format!("packages/{name}/src/index.ts"),
            "export const x = 1;\n",
        )?;
        n += 2;
    }
    write(
        root,
        "services/go.mod",
        "module example.com/services\n\ngo 1.22\n",
    )?;
    for p in 0..40 {
        let pkg = format!("{}{p}", rng.word());
        for f in 0..4 * scale {
            let lines = 20 + (rng.next() as usize % 60);
            let imp = if p > 0 {
                format!("import \"example.com/services/internal/{}\"\n", "shared")
            } else {
                String::new()
            };
            write(
                root,
                &format!("services/internal/{pkg}/{}_{f}.go", rng.word()),
                &format!("package {pkg}\n{imp}{}", body(&mut rng, "go", lines)),
            )?;
            n += 1;
        }
    }
    write(
        root,
        "python/pyproject.toml",
        "[project]\nname = \"analytics\"\ndependencies = [\"fastapi\", \"pytest\"]\n[tool.ruff]\n",
    )?;
    for p in 0..50 {
        let pkg = format!("{}_{p}", rng.word());
        write(root, &format!("python/analytics/{pkg}/__init__.py"), "")?;
        for f in 0..5 * scale {
            let lines = 20 + (rng.next() as usize % 60);
            write(
                root,
                &format!("python/analytics/{pkg}/{}_{f}.py", rng.word()),
                &format!(
                    "from . import {}\n{}",
                    rng.word(),
                    body(&mut rng, "py", lines)
                ),
            )?;
            n += 1;
        }
        write(
            root,
            &format!("python/tests/test_{pkg}.py"),
            &body(&mut rng, "py", 10),
        )?;
        n += 2;
    }
    for d in 0..100 * scale {
        write(
            root,
            &format!("docs/{}/{}-{d}.md", rng.word(), rng.word()),
            &body(&mut rng, "md", 30),
        )?;
        n += 1;
    }
    for v in 0..100 * scale {
        write(
            root,
            &format!("node_modules/dep{}/index.js", v),
            "module.exports = {};\n",
        )?;
        n += 1;
    }
    for a in 0..30 * scale {
        std::fs::create_dir_all(root.join("assets"))?;
        std::fs::write(
            root.join(format!("assets/img{a}.png")),
            [0x89u8, b'P', b'N', b'G', 0, 0, 0, 13],
        )?;
        n += 1;
    }
    Ok(n)
}

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scale: usize = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .find_map(|a| a.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir()?;
    let t0 = Instant::now();
    let files = generate(dir.path(), scale)?;
    println!(
        "generated {files} files in {:.2}s under {}",
        t0.elapsed().as_secs_f64(),
        dir.path().display()
    );

    let requests = [
        "add refund support to billing invoices",
        "retry webhook delivery with exponential backoff",
        "fix session token expiry",
        "cache thumbnail renders",
        "rate limiter quota per tenant",
        "export reports as csv",
        "search index sharding by tenant",
        "schedule cron backups of snapshots",
        "notify customers by email when an order ships",
        "add tracing spans to middleware",
        "parser should accept trailing commas in json",
        "permission checks for role changes",
        "speed up feed ranking",
        "audit log for storage bucket access",
        "upload avatar to profile",
        "comment thread votes",
        "docs: explain the replica config",
        "build(deps): bump tokio from 1.37.0 to 1.38.0",
        "add a schema migration for payment metrics",
        "graph route handler timeout",
    ];
    let source = LocalSource::new(dir.path())?;
    let opts = PlannerOptions::default();
    let mut times = Vec::new();
    let mut scanned = 0;
    for r in requests {
        let t = Instant::now();
        let out = plan_repository(&source, r, &opts)?;
        times.push(t.elapsed().as_secs_f64());
        scanned = out.map.stats.files;
        if out.plan.changes.is_empty() {
            return Err(format!("no changes proposed for {r:?}").into());
        }
    }
    times.sort_by(f64::total_cmp);
    let mut map_times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        map_repository(&source, &opts)?;
        map_times.push(t.elapsed().as_secs_f64());
    }
    map_times.sort_by(f64::total_cmp);
    println!(
        "map_only (list + read + import graph + map) median_s={:.3}",
        map_times[2]
    );
    let p95 = times[((times.len() as f64 * 0.95).ceil() as usize).saturating_sub(1)];
    println!(
        "planner_scale files={files} scanned={scanned} requests={} median_s={:.3} p95_s={:.3} max_s={:.3} target_s=2.0 peak_rss_mib={:.1}",
        times.len(),
        times[times.len() / 2],
        p95,
        times[times.len() - 1],
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0
    );
    Ok(())
}
