//! What in a plan's verification text can be run: commands come only from code spans
//! and fenced blocks (or a whole item that is one), and only when their program belongs
//! to the repository's toolchain; the rest is prose a person checks.
//!
//! Plans are written by people and models: "existing tests pass" or "`pytest` passes"
//! must not become a command line that cannot run (`existing`, `` `pytest` ``), or a step
//! could never be proven and `navin/verify` never turn green.

use std::collections::BTreeSet;

/// The programs (and repository scripts) a repository's verification may run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolchain {
    /// Program names (`cargo`, `pytest`, `npm`) and repository paths of scripts
    /// (`scripts/test.sh`, `./gradlew`, with the `./` dropped).
    pub programs: BTreeSet<String>,
}

/// Build and test programs most repositories reach through their manifests: what a
/// plan's command may run when the repository's own toolchain is not known.
pub const COMMON_PROGRAMS: &[&str] = &[
    "cargo", "rustc", "npm", "npx", "yarn", "pnpm", "node", "deno", "bun", "python", "python3",
    "pytest", "tox", "nox", "uv", "poetry", "hatch", "pip", "go", "gofmt", "make", "just", "cmake",
    "ctest", "bundle", "rake", "ruby", "rspec", "mvn", "gradle", "dotnet", "mix", "elixir",
    "swift", "php", "composer", "phpunit", "bazel", "meson", "ninja",
];

impl Toolchain {
    /// The well-known programs of [`COMMON_PROGRAMS`].
    pub fn common() -> Self {
        Toolchain {
            programs: COMMON_PROGRAMS.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    /// Whether `program` (a command line's first word) is one this repository runs.
    pub fn runs(&self, program: &str) -> bool {
        let program = program.strip_prefix("./").unwrap_or(program);
        self.programs.contains(program)
    }
}

/// A verification text split into what runs and what a person judges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// Command lines, in the order written.
    pub commands: Vec<String>,
    /// The text, when it holds no command: what a person checks.
    pub prose: Option<String>,
}

/// The program a command line runs: its first word after `NAME=value` assignments.
pub fn program_of(line: &str) -> Option<&str> {
    line.split_whitespace()
        .find(|w| !is_assignment(w))
        .filter(|w| !w.is_empty())
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// Splits one verification text (a stage's `Verification:` or one handoff item).
///
/// Code in fenced blocks (one command per non-empty line, `$ ` prompts dropped) and
/// inline code spans are the candidates; a text with no code at all is one candidate
/// as a whole (the handoff's items lose their code marks when parsed). A candidate is
/// kept when its program is in `toolchain`; when none is kept, the text is prose.
pub fn split(text: &str, toolchain: &Toolchain) -> Split {
    let text = text.trim();
    let mut candidates = code_in(text);
    if candidates.is_empty() {
        candidates.push(text.to_owned());
    }
    let commands: Vec<String> = candidates
        .into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| program_of(c).is_some_and(|p| toolchain.runs(p)))
        .fold(Vec::new(), |mut kept, c| {
            if !kept.contains(&c) {
                kept.push(c);
            }
            kept
        });
    let prose = (commands.is_empty() && !text.is_empty()).then(|| text.to_owned());
    Split { commands, prose }
}

/// The code of `text`: each fenced block's lines, then each inline span, in order.
fn code_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut outside = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &fence {
            Some(open) if trimmed.starts_with(open.as_str()) => fence = None,
            Some(_) => {
                let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed).trim();
                if !command.is_empty() && !command.starts_with('#') {
                    found.push(command.to_owned());
                }
            }
            None if trimmed.starts_with("```") || trimmed.starts_with("~~~") => {
                let marks: String = trimmed
                    .chars()
                    .take_while(|c| *c == '`' || *c == '~')
                    .collect();
                fence = Some(marks);
            }
            None => {
                outside.push_str(line);
                outside.push('\n');
            }
        }
    }
    found.extend(spans(&outside));
    found
}

/// Inline code spans: a run of backticks, the code, the same run closing it.
fn spans(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let open = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let start = i + open;
        let mut j = start;
        let mut closed = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let run = bytes[j..].iter().take_while(|b| **b == b'`').count();
                if run == open {
                    closed = Some(j);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                let code = text[start..end].trim();
                if !code.is_empty() {
                    found.push(code.to_owned());
                }
                i = end + open;
            }
            None => i = start,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(text: &str) -> Split {
        split(text, &Toolchain::common())
    }

    #[test]
    fn a_code_span_is_a_command_and_its_code_marks_go() {
        assert_eq!(common("`pytest`").commands, ["pytest"]);
        assert_eq!(
            common("`cargo test -p navin-ledger` passes").commands,
            ["cargo test -p navin-ledger"]
        );
        assert_eq!(common("`pytest`").prose, None);
    }

    #[test]
    fn prose_is_prose_even_when_its_first_word_could_be_mistaken_for_a_program() {
        let split = common("existing tests pass");
        assert!(split.commands.is_empty());
        assert_eq!(split.prose.as_deref(), Some("existing tests pass"));
        let manual = common("manual review of the diff (no test command detected)");
        assert!(manual.commands.is_empty());
        assert!(manual.prose.is_some());
    }

    #[test]
    fn a_bare_item_whose_program_is_known_stays_a_command() {
        assert_eq!(common("cargo test").commands, ["cargo test"]);
        assert_eq!(
            common("RUST_LOG=debug cargo test").commands,
            ["RUST_LOG=debug cargo test"]
        );
    }

    #[test]
    fn a_fenced_block_gives_one_command_per_line_without_prompts_or_comments() {
        let text =
            "Run:\n```sh\n# the unit tests\n$ npm test\nnpm run lint\n```\nand `npm test` again";
        assert_eq!(common(text).commands, ["npm test", "npm run lint"]);
    }

    #[test]
    fn a_program_outside_the_repositorys_toolchain_is_not_run() {
        let toolchain = Toolchain {
            programs: ["go".to_owned(), "scripts/check.sh".to_owned()].into(),
        };
        let split = split(
            "`pytest` and `go test ./...` and `./scripts/check.sh`",
            &toolchain,
        );
        assert_eq!(split.commands, ["go test ./...", "./scripts/check.sh"]);
        let none = super::split("`existing` tests pass", &toolchain);
        assert!(none.commands.is_empty());
        assert_eq!(none.prose.as_deref(), Some("`existing` tests pass"));
    }

    #[test]
    fn double_backtick_spans_and_unclosed_marks_are_read_as_markdown_reads_them() {
        assert_eq!(common("``make check`` then").commands, ["make check"]);
        assert!(common("a stray ` mark").commands.is_empty());
    }
}
