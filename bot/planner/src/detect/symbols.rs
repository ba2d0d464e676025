//! Definitions per file (functions, types, modules, command-line flags) for Rust, Python, Go and JS/TS, found line by line.
//!
//! A line scanner rather than a parser: it must cope with any file in any
//! state, cost next to nothing on a 10k-file repository, and answer "where
//! is `ledger history` defined, where is `--since` wired". Flags are indexed
//! under their `--long` spelling so a request naming a flag finds the file
//! that declares it (clap, argparse/click, cobra, commander/yargs).

use serde::Serialize;

use crate::lang::language_of;

/// One definition: what it is called, what kind of thing it is, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub name: String,
    /// `fn`, `struct`, `enum`, `trait`, `type`, `mod`, `const`, `macro`,
    /// `class`, `def`, `func`, `interface`, `flag`, `command`.
    pub kind: &'static str,
    /// 1-based.
    pub line: u32,
}

/// Longest line considered: minified bundles define nothing a plan names.
const MAX_LINE: usize = 400;

/// Every definition in `text`, in file order. Unknown languages give none.
pub fn definitions(path: &str, text: &str) -> Vec<Symbol> {
    let Some(lang) = language_of(path) else {
        return Vec::new();
    };
    let scan: fn(&str, &mut Pending) -> Vec<(String, &'static str)> = match lang {
        "Rust" => rust_line,
        "Python" => python_line,
        "Go" => go_line,
        "JavaScript" | "TypeScript" => js_line,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut pending = Pending::default();
    for (i, line) in text.lines().enumerate() {
        if line.len() > MAX_LINE {
            continue;
        }
        for (name, kind) in scan(line, &mut pending) {
            out.push(Symbol {
                name,
                kind,
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            });
        }
    }
    out
}

/// State carried between lines: a clap `#[arg(long)]` names the field on a later line.
#[derive(Default)]
struct Pending {
    long_flag: bool,
    subcommand: bool,
    /// A `#[derive(..Subcommand..)]` was seen and its enum not yet opened.
    derive_subcommand: bool,
    /// Inside a clap `Subcommand` enum: its variants are commands.
    in_commands: bool,
    depth: i32,
}

fn ident(s: &str) -> Option<String> {
    let name: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// `word` stands alone in `line` (`long` in `#[arg(long)]`, not in `after_long_help`).
fn has_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// The first `"..."` (or `'...'`) literal after `from`.
fn first_literal(s: &str) -> Option<&str> {
    let start = s.find(['"', '\''])?;
    let quote = s[start..].chars().next()?;
    let rest = &s[start + 1..];
    let end = rest.find(quote)?;
    Some(&rest[..end])
}

/// `--since <date>` or `-s, --since` → `--since`.
fn long_flag_in(literal: &str) -> Option<String> {
    literal
        .split([' ', ',', '=', '|'])
        .find(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(['<', '[']).to_owned())
}

/// `LedgerHistory` → `ledger-history`, as clap names a variant's command.
fn kebab_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('-');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn kebab(field: &str) -> String {
    field.trim_start_matches("r#").replace('_', "-")
}

fn strip_rust_prefixes(mut s: &str) -> &str {
    loop {
        let before = s;
        if s.starts_with("pub(") {
            if let Some(i) = s.find(") ") {
                s = s[i + 2..].trim_start();
            }
        }
        for p in ["pub ", "async ", "unsafe ", "extern \"C\" ", "default "] {
            s = s.strip_prefix(p).map(str::trim_start).unwrap_or(s);
        }
        // `const fn f` is a function, `const F: u8` a constant.
        if let Some(rest) = s.strip_prefix("const ") {
            if rest.trim_start().starts_with("fn ") {
                s = rest.trim_start();
            }
        }
        if s == before {
            return s;
        }
    }
}

fn rust_line(line: &str, pending: &mut Pending) -> Vec<(String, &'static str)> {
    let t = line.trim_start();
    let mut out = Vec::new();
    let before = pending.depth;
    pending.depth += t.matches('{').count() as i32 - t.matches('}').count() as i32;
    if pending.in_commands {
        if pending.depth <= 0 {
            pending.in_commands = false;
            pending.depth = 0;
        } else if before == 1 {
            // A variant of a clap subcommand enum: `History {`, `Show,`, `Run(Args),`
            // is the command `history`, `show`, `run` (clap's kebab-case).
            if let Some(name) =
                ident(t).filter(|n| n.chars().next().is_some_and(char::is_uppercase))
            {
                out.push((kebab_case(&name), "command"));
            }
        }
    }
    if t.starts_with("#[derive(") && t.contains("Subcommand") {
        pending.derive_subcommand = true;
    }
    if t.starts_with("#[arg(") || t.starts_with("#[clap(") || t.starts_with("#[command(") {
        if let Some(i) = t.find("long = ") {
            if let Some(lit) = first_literal(&t[i..]) {
                out.push((format!("--{lit}"), "flag"));
            }
        } else if has_word(t, "long") {
            pending.long_flag = true;
        }
        if t.starts_with("#[command(") && t.contains("subcommand") {
            pending.subcommand = true;
        }
        return out;
    }
    if t.starts_with("//") || t.starts_with("#[") {
        return out;
    }
    for call in [".long(\"", "Arg::new(\"", "Command::new(\""] {
        if let Some(i) = t.find(call) {
            if let Some(lit) = first_literal(&t[i..]) {
                let kind = if call == "Command::new(\"" {
                    "command"
                } else {
                    "flag"
                };
                let name = if kind == "flag" {
                    format!("--{lit}")
                } else {
                    lit.to_owned()
                };
                out.push((name, kind));
            }
        }
    }
    let s = strip_rust_prefixes(t);
    if pending.derive_subcommand && s.starts_with("enum ") {
        pending.derive_subcommand = false;
        pending.in_commands = true;
        pending.depth = t.matches('{').count() as i32;
    }
    for (kw, kind) in [
        ("fn ", "fn"),
        ("struct ", "struct"),
        ("enum ", "enum"),
        ("trait ", "trait"),
        ("type ", "type"),
        ("mod ", "mod"),
        ("const ", "const"),
        ("static ", "const"),
        ("union ", "struct"),
        ("macro_rules! ", "macro"),
    ] {
        if let Some(rest) = s.strip_prefix(kw) {
            if let Some(name) = ident(rest.trim_start().trim_start_matches("mut ")) {
                out.push((name, kind));
            }
            pending.long_flag = false;
            return out;
        }
    }
    if pending.long_flag {
        // The field after `#[arg(long)]`: `since: Option<String>,`.
        if let Some((field, _)) = s.split_once(':') {
            // Only a field (`since`, `r#type`): an attribute's text continued
            // on this line (`navin mcp --mode x  # in .mcp.json: …`) is not one.
            let field = field.trim().trim_start_matches("r#");
            if let Some(name) = ident(field).filter(|n| n.len() == field.len()) {
                out.push((format!("--{}", kebab(&name)), "flag"));
            }
            pending.long_flag = false;
        }
    }
    if pending.subcommand {
        // An enum variant under `#[command(subcommand)]`-style attributes is a command.
        if let Some(name) = ident(s) {
            if name.chars().next().is_some_and(char::is_uppercase) {
                out.push((name, "command"));
                pending.subcommand = false;
            }
        }
    }
    out
}

fn python_line(line: &str, _: &mut Pending) -> Vec<(String, &'static str)> {
    let t = line.trim_start();
    let mut out = Vec::new();
    for call in ["add_argument(", "click.option(", "add_parser("] {
        if let Some(i) = t.find(call) {
            let args = &t[i + call.len()..];
            if call == "add_parser(" {
                if let Some(lit) = first_literal(args) {
                    out.push((lit.to_owned(), "command"));
                }
                continue;
            }
            let flag = args
                .split(',')
                .filter_map(first_literal)
                .find_map(long_flag_in);
            if let Some(flag) = flag {
                out.push((flag, "flag"));
            }
        }
    }
    let s = t.strip_prefix("async ").unwrap_or(t);
    if let Some(rest) = s.strip_prefix("def ") {
        out.extend(ident(rest).map(|n| (n, "def")));
    } else if let Some(rest) = s.strip_prefix("class ") {
        out.extend(ident(rest).map(|n| (n, "class")));
    }
    out
}

fn go_line(line: &str, _: &mut Pending) -> Vec<(String, &'static str)> {
    let t = line.trim_start();
    let mut out = Vec::new();
    if t.contains("Flags().") {
        if let Some(i) = t.find("Flags().") {
            if let Some(lit) = first_literal(&t[i..]) {
                out.push((format!("--{lit}"), "flag"));
            }
        }
    }
    if let Some(rest) = t.strip_prefix("func ") {
        // `func (s *Server) Name(` or `func Name(`.
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')').map(|(_, after)| after.trim_start()),
            None => Some(rest),
        };
        out.extend(rest.and_then(ident).map(|n| (n, "func")));
    } else if let Some(rest) = t.strip_prefix("type ") {
        out.extend(ident(rest).map(|n| (n, "type")));
    }
    out
}

fn js_line(line: &str, _: &mut Pending) -> Vec<(String, &'static str)> {
    let t = line.trim_start();
    let mut out = Vec::new();
    if let Some(i) = t.find(".option(") {
        if let Some(flag) = first_literal(&t[i..]).and_then(long_flag_in) {
            out.push((flag, "flag"));
        }
    }
    if let Some(i) = t.find(".command(") {
        if let Some(lit) = first_literal(&t[i..]) {
            if let Some(name) = lit.split_whitespace().next() {
                out.push((name.to_owned(), "command"));
            }
        }
    }
    // `res.send = function send(body) {`, `exports.render = async (x) => {`:
    // CommonJS and prototype methods, how Express-style code defines its API.
    if let Some((lhs, rhs)) = t.split_once(" = ") {
        let rhs = rhs.trim_start();
        let callable = rhs.starts_with("function")
            || rhs.starts_with("async")
            || rhs.starts_with('(') && rhs.contains("=>");
        if callable && lhs.contains('.') && !lhs.contains(' ') {
            if let Some(name) = lhs.rsplit('.').next().and_then(ident) {
                if name != "exports" {
                    out.push((name, "fn"));
                    return out;
                }
            }
        }
    }
    let mut s = t;
    for p in ["export ", "default ", "declare ", "abstract ", "async "] {
        s = s.strip_prefix(p).unwrap_or(s);
    }
    for (kw, kind) in [
        ("function* ", "fn"),
        ("function ", "fn"),
        ("class ", "class"),
        ("interface ", "interface"),
        ("enum ", "enum"),
        ("type ", "type"),
    ] {
        if let Some(rest) = s.strip_prefix(kw) {
            out.extend(ident(rest.trim_start()).map(|n| (n, kind)));
            return out;
        }
    }
    for kw in ["const ", "let ", "var "] {
        if let Some(rest) = s.strip_prefix(kw) {
            // Only bindings to functions or classes define something a plan names.
            if let Some((name, value)) = rest.split_once('=') {
                let v = value.trim_start();
                let callable = v.starts_with("function")
                    || v.starts_with("async")
                    || v.starts_with("class")
                    || v.starts_with('(') && v.contains("=>")
                    || v.split_whitespace().nth(1) == Some("=>");
                if callable {
                    out.extend(ident(name.trim()).map(|n| (n, "fn")));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str, text: &str) -> Vec<(String, &'static str)> {
        definitions(path, text)
            .into_iter()
            .map(|s| (s.name, s.kind))
            .collect()
    }

    fn has(list: &[(String, &'static str)], name: &str, kind: &str) -> bool {
        list.iter().any(|(n, k)| n == name && *k == kind)
    }

    #[test]
    fn rust_definitions_and_clap_flags_are_indexed() {
        let text = "pub(crate) async fn do_teardown_request(x: u8) {}\nconst fn limit() -> u8 { 1 }\npub struct ResponseAxumBodyLayer;\nenum Mode { A }\nmacro_rules! clip { () => {} }\npub mod history;\n#[derive(clap::Args)]\nstruct HistoryArgs {\n    /// Only newer entries.\n    #[arg(long)]\n    since_date: Option<String>,\n    #[arg(short, long = \"max-count\")]\n    limit: usize,\n}\nlet a = Arg::new(\"verbose\").long(\"verbose\");\n";
        let got = names("src/cli.rs", text);
        for (n, k) in [
            ("do_teardown_request", "fn"),
            ("limit", "fn"),
            ("ResponseAxumBodyLayer", "struct"),
            ("Mode", "enum"),
            ("clip", "macro"),
            ("history", "mod"),
            ("HistoryArgs", "struct"),
            ("--since-date", "flag"),
            ("--max-count", "flag"),
            ("--verbose", "flag"),
        ] {
            assert!(has(&got, n, k), "missing {k} {n} in {got:?}");
        }
        assert!(!has(&got, "--limit", "flag"), "{got:?}");
        let lines: Vec<u32> = definitions("src/cli.rs", text)
            .iter()
            .filter(|s| s.name == "--since-date")
            .map(|s| s.line)
            .collect();
        assert_eq!(lines, vec![11]);
    }

    #[test]
    fn a_help_text_attribute_is_not_a_long_flag() {
        let text = "#[command(after_long_help = \"Examples:\n  navin mcp --mode agent  # in .mcp.json: {}\")]\nMcp {\n    #[arg(long)]\n    r#type: String,\n}\n";
        let got = names("src/cli/args.rs", text);
        let flags: Vec<&str> = got
            .iter()
            .filter(|(_, k)| *k == "flag")
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(flags, ["--type"], "{got:?}");
    }

    #[test]
    fn variants_of_a_clap_subcommand_enum_are_commands() {
        let text = "#[derive(Debug, Subcommand)]\npub enum LedgerCommand {\n    /// Start.\n    Init {\n        #[arg(long)]\n        goal: String,\n    },\n    Show,\n    LedgerHistory {\n        limit: usize,\n    },\n}\nenum Other {\n    NotACommand,\n}\n";
        let got = names("src/cli/mod.rs", text);
        for n in ["init", "show", "ledger-history"] {
            assert!(has(&got, n, "command"), "missing {n} in {got:?}");
        }
        assert!(has(&got, "--goal", "flag"), "{got:?}");
        assert!(!has(&got, "not-a-command", "command"), "{got:?}");
    }

    #[test]
    fn python_go_and_js_definitions_and_flags_are_indexed() {
        let py = "class Ctx:\n    async def do_teardown_request(self):\n        pass\nparser.add_argument('-s', '--since', help='x')\nsub.add_parser('history')\n@click.option(\"--dry-run\", is_flag=True)\n";
        let got = names("app/ctx.py", py);
        assert!(has(&got, "Ctx", "class"));
        assert!(has(&got, "do_teardown_request", "def"));
        assert!(has(&got, "--since", "flag"), "{got:?}");
        assert!(has(&got, "--dry-run", "flag"));
        assert!(has(&got, "history", "command"));
        let go = "func (s *Server) Serve(l net.Listener) error {\nfunc main() {\ntype Config struct {\ncmd.Flags().StringVar(&since, \"since\", \"\", \"x\")\n";
        let got = names("cmd/root.go", go);
        assert!(has(&got, "Serve", "func") && has(&got, "main", "func"));
        assert!(has(&got, "Config", "type") && has(&got, "--since", "flag"));
        let js = "res.send = function send(body) {\nexports.render = async (v) => v;\nexport default async function merge(a, b) {}\nexport class Router {}\nconst utilsMerge = (a) => a;\nconst x = 3;\nprogram.option('-s, --since <date>', 'x').command('history [id]');\ninterface Opts {}\n";
        let got = names("lib/index.ts", js);
        assert!(has(&got, "merge", "fn") && has(&got, "Router", "class"));
        assert!(has(&got, "utilsMerge", "fn") && !has(&got, "x", "fn"));
        assert!(has(&got, "--since", "flag") && has(&got, "history", "command"));
        assert!(has(&got, "Opts", "interface"));
        assert!(
            has(&got, "send", "fn") && has(&got, "render", "fn"),
            "{got:?}"
        );
    }

    #[test]
    fn unknown_languages_and_huge_lines_define_nothing() {
        assert!(definitions("README.md", "fn main() {}").is_empty());
        let long = format!("fn {}() {{}}", "a".repeat(500));
        assert!(definitions("src/x.rs", &long).is_empty());
    }
}
