//! The request, read once: its kind, words, identifiers, paths and the new things it names, so ranking and composing read one typed value instead of re-reading the text.

pub(crate) mod query;

use crate::text;
pub(crate) use query::Kind;
use query::Query;

/// Words that open a request for something new.
pub(crate) const CREATE_VERBS: &[&str] = &[
    "add",
    "adds",
    "added",
    "re-add",
    "readd",
    "new",
    "introduce",
    "implement",
    "create",
    "support",
];

/// A request as the planner reads it. Built once per plan by [`Request::parse`].
#[derive(Debug, Clone)]
pub struct Request {
    text: String,
    /// Search terms, weights, the conventional-commit kind and scope.
    pub query: Query,
    /// Lowercased words: `--flags` and identifiers whole, stopwords out.
    pub words: Vec<String>,
    /// Stemmed terms, as ranking counts them.
    pub terms: Vec<String>,
    /// Identifiers spelled as code (`HTTPError`, `json()`, `max_retries`).
    pub identifiers: Vec<String>,
    /// The `--flags` it spells, in order.
    pub flags: Vec<String>,
    /// Words as packages are spelled (`serde_json`, `@types/node`, `golang.org/x/net`),
    /// lowercased: where dependencies are read.
    pub package_words: Vec<String>,
    /// Words with their dots kept (`1.71`, `3.8`), lowercased: where versions are read.
    pub version_words: Vec<String>,
    /// Words split at spaces and `:()!,`, unquoted, lowercased: where verbs are read
    /// (`fix(cli):` gives `fix`, `cli`).
    pub verb_words: Vec<String>,
    /// Identifier-like names as spelled (`max_retries`, `getUser`, a `--flag_name`
    /// without its dashes): what a doc page might name.
    pub names: Vec<String>,
    /// The whole request, lowercased, for phrases ("get rid of").
    pub lower: String,
    /// Words that look like paths or file names, lowercased.
    pub paths: Vec<String>,
    /// The first sentence's words, after any `type(scope):` prefix.
    pub sentence: Vec<Word>,
    /// The new artefacts the request names.
    pub new: NewThings,
}

/// What a request asks to create by name. Each is only a candidate: composing
/// checks the repository (an existing file or definition means an edit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewThings {
    /// File names or paths, as spelled (`CONTRIBUTING.md`, `src/cache.rs`).
    pub files: Vec<String>,
    /// Modules: "a new `priority` module", "module named priority".
    pub modules: Vec<String>,
    /// Types: "a `Priority` type", "struct Priority".
    pub types: Vec<String>,
    /// The request asks for tests with what it creates.
    pub tests: bool,
}

impl Request {
    pub fn parse(text: &str) -> Request {
        let text = text.trim().to_string();
        let sentence = sentence_words(&text);
        let new = new_things(&text, &sentence);
        let mut query = query::parse(&text);
        // Asking only for documents ("add a CONTRIBUTING.md") is documentation work.
        let doc = |f: &String| {
            let lower = f.to_ascii_lowercase();
            [".md", ".markdown", ".rst", ".adoc", ".txt"]
                .iter()
                .any(|e| lower.ends_with(e))
                || BARE_FILES[..2].iter().any(|b| b.eq_ignore_ascii_case(f))
        };
        if !new.files.is_empty()
            && new.files.iter().all(doc)
            && new.modules.is_empty()
            && new.types.is_empty()
        {
            query.docs = true;
        }
        Request {
            query,
            words: request_words(&text),
            terms: text::terms(&text),
            identifiers: spelled_identifiers(&text),
            paths: mentioned_paths(&text),
            flags: flags(&text),
            package_words: package_words(&text),
            version_words: text
                .split(|c: char| !(c.is_alphanumeric() || c == '.'))
                .map(|w| w.trim_matches('.').to_ascii_lowercase())
                .filter(|w| !w.is_empty())
                .collect(),
            verb_words: text
                .split(|c: char| c.is_whitespace() || matches!(c, ':' | '(' | ')' | ',' | '!'))
                .map(|w| w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '.')))
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect(),
            names: text
                .split(|c: char| {
                    c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | '(' | ')')
                })
                .map(|w| w.trim_end_matches(['.', ':', ';']).trim_start_matches('-'))
                .filter(|w| {
                    w.len() >= MIN_NAME_LEN
                        && (w.contains('_') || w.chars().skip(1).any(|c| c.is_ascii_uppercase()))
                })
                .map(str::to_string)
                .collect(),
            lower: text.to_lowercase(),
            sentence,
            new,
            text,
        }
    }

    /// The request as the person wrote it (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn kind(&self) -> Kind {
        self.query.kind
    }
}

fn creates(sentence: &[Word]) -> bool {
    let lower = |w: &Word| w.text.to_ascii_lowercase();
    sentence.first().is_some_and(|w| {
        CREATE_VERBS.contains(&lower(w).as_str())
            || matches!(lower(w).as_str(), "write" | "scaffold" | "start")
    }) || sentence.iter().any(|w| lower(w) == "new")
}

/// Names shorter than this are words, not identifiers a page would name.
const MIN_NAME_LEN: usize = 4;

/// Words as packages are spelled: split at anything but letters, digits and
/// `-_@/.`, trimmed of what cannot end a package name, lowercased.
fn package_words(text: &str) -> Vec<String> {
    let clean = |word: &str| {
        word.trim_matches(|c: char| {
            !(c.is_alphanumeric() || matches!(c, '-' | '_' | '@' | '/' | '.'))
        })
        .trim_end_matches('.')
        .to_ascii_lowercase()
    };
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '@' | '/' | '.')))
        .map(clean)
        .filter(|w| !w.is_empty())
        .collect()
}

/// The `--flags` a request spells (`--format`, `--max-count`).
fn flags(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | ',' | '(' | ')' | '"' | '\''))
        .map(|w| w.trim_end_matches(['.', ';', ':', '!', '?']));
    for w in words {
        let flag = w.len() > 2
            && w.starts_with("--")
            && w[2..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if flag && !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// Extensions a named new file may have; anything else is a version, a domain
/// or a method call.
const FILE_EXTENSIONS: &[&str] = &[
    "md", "markdown", "rst", "txt", "adoc", "rs", "py", "pyi", "go", "ts", "tsx", "js", "jsx",
    "mjs", "cjs", "json", "toml", "yml", "yaml", "rb", "java", "kt", "c", "h", "cc", "cpp", "hpp",
    "cs", "swift", "sh", "cfg", "ini", "sql", "html", "css", "proto",
];

/// Files named by convention, without an extension.
const BARE_FILES: &[&str] = &[
    "LICENSE",
    "CODEOWNERS",
    "Dockerfile",
    "Makefile",
    "Justfile",
    ".editorconfig",
    ".gitignore",
    ".gitattributes",
];

/// Nouns naming a kind of type.
const TYPE_NOUNS: &[&str] = &[
    "type",
    "struct",
    "class",
    "enum",
    "trait",
    "interface",
    "record",
    "dataclass",
];

/// The file a word names, as spelled, when it looks like one.
fn file_name(raw: &str) -> Option<String> {
    let w = raw
        .trim_matches(|c: char| {
            matches!(
                c,
                '`' | '\'' | '"' | ',' | ';' | ':' | '(' | ')' | '!' | '?'
            )
        })
        .trim_end_matches('.')
        .trim_start_matches("./");
    // Only a path the plan format accepts: relative, `/`-separated, no empty or dot part.
    if w.is_empty()
        || w.starts_with("http")
        || w.starts_with(['/', '~'])
        || w.contains([':', '\\'])
        || w.split('/')
            .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return None;
    }
    if BARE_FILES.iter().any(|b| b.eq_ignore_ascii_case(w)) {
        return Some(w.to_string());
    }
    let name = w.rsplit('/').next().unwrap_or(w);
    let (stem, ext) = name.rsplit_once('.')?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    (stem.len() >= 2
        && FILE_EXTENSIONS.contains(&ext)
        && w.chars().all(|c| plain(c) || c == '/')
        && stem.chars().any(|c| c.is_ascii_alphabetic()))
    .then(|| w.to_string())
}

/// A module or type name: an identifier, not an article or filler word.
fn item_name(w: &Word) -> Option<String> {
    let t = w.text.as_str();
    let lower = t.to_ascii_lowercase();
    let ok = t.len() >= 2
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && !text::is_stopword(&lower)
        && !CREATE_VERBS.contains(&lower.as_str())
        && !matches!(
            lower.as_str(),
            "a" | "an"
                | "the"
                | "new"
                | "named"
                | "called"
                | "its"
                | "own"
                | "small"
                | "test"
                | "tests"
                | "file"
        );
    ok.then(|| t.to_string())
}

/// The new things a create request names (see [`NewThings`]).
fn new_things(text: &str, sentence: &[Word]) -> NewThings {
    let mut out = NewThings::default();
    if !creates(sentence) {
        return out;
    }
    for raw in text.lines().next().unwrap_or("").split_whitespace() {
        if let Some(f) = file_name(raw) {
            if !out.files.contains(&f) {
                out.files.push(f);
            }
        }
    }
    let lower: Vec<String> = sentence
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    let at = |i: usize| lower.get(i).map(String::as_str).unwrap_or("");
    for i in 0..sentence.len() {
        let noun = at(i);
        let is_module = matches!(noun, "module" | "submodule");
        let is_type = TYPE_NOUNS.contains(&noun);
        if !is_module && !is_type {
            continue;
        }
        // `<name> module`: quoted, or after "new" ("a new priority module"); a type
        // name before its noun must look like one (`Priority type`).
        let before = i.checked_sub(1).and_then(|j| sentence.get(j));
        let before_name = before.and_then(|w| {
            let name = item_name(w)?;
            // "a new priority module", "a priority module": an article or "new" first.
            let after_new = i >= 2 && matches!(at(i - 2), "new" | "a" | "an");
            let typed = is_type && name.starts_with(|c: char| c.is_ascii_uppercase());
            (w.quoted || after_new || typed).then_some(name)
        });
        // `module <name>`, `module named <name>`, `struct Priority`.
        let mut j = i + 1;
        if matches!(at(j), "named" | "called") {
            j += 1;
        }
        let after_name = sentence.get(j).and_then(|w| {
            let name = item_name(w)?;
            let typed = is_type && name.starts_with(|c: char| c.is_ascii_uppercase());
            (w.quoted
                || typed
                || j > i + 1
                || is_module && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .then_some(name)
        });
        let Some(name) = before_name.or(after_name) else {
            continue;
        };
        let list = if is_module {
            &mut out.modules
        } else {
            &mut out.types
        };
        if !list.contains(&name) {
            list.push(name);
        }
    }
    out.tests = lower
        .iter()
        .any(|w| matches!(w.as_str(), "test" | "tests" | "unit-tests" | "specs"));
    out
}

/// Words of the request that look like file names or paths (`config.py`, `src/app.ts`).
fn mentioned_paths(request: &str) -> Vec<String> {
    request
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ',' | '(' | ')' | ':'))
        .map(|w| {
            w.trim_end_matches(['.', ';', '!', '?'])
                .trim_start_matches("./")
        })
        .filter(|w| w.len() >= 4 && (w.contains('/') || w.contains('.')) && !w.starts_with("http"))
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

/// The identifiers a request spells out as code: backticked words, calls (`json()`),
/// paths (`ListenerExt::limit_connections` gives both parts) and names no sentence
/// word has (`HTTPError`, `getUser`, `max_retries`).
fn spelled_identifiers(request: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if w.len() >= 3
            && !w.chars().next().is_some_and(|c| c.is_ascii_digit())
            && !out.iter().any(|o| o == w)
        {
            out.push(w.to_string());
        }
    };
    for raw in request.split_whitespace() {
        let code = raw.starts_with('`')
            || raw.contains("()")
            || raw.contains("::")
            || raw.starts_with('.');
        let word = raw.trim_matches(|c: char| {
            matches!(
                c,
                '`' | ',' | ';' | ':' | '"' | '\'' | '(' | ')' | '.' | '!' | '?'
            )
        });
        if word.starts_with('-') || word.contains('/') || word.contains('-') {
            continue;
        }
        for part in word.split("::").flat_map(|p| p.split('.')) {
            let part = part.split('(').next().unwrap_or_default();
            let upper_inside = part.chars().skip(1).any(|c| c.is_ascii_uppercase())
                && part.chars().any(|c| c.is_ascii_lowercase());
            let snake = part.contains('_') && part.chars().all(|c| c.is_alphanumeric() || c == '_');
            if code || upper_inside || snake {
                push(part);
            }
        }
    }
    out
}

/// The request's words, lowercased: `--flags` whole, identifiers whole, stopwords out.
pub(crate) fn request_words(request: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in request.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':'))) {
        let w = raw.trim_matches(|c: char| c == ':' || c == '-' && !raw.starts_with("--"));
        let lower = w.to_lowercase();
        if lower.len() < 3 || text::is_stopword(&lower) || out.contains(&lower) {
            continue;
        }
        out.push(lower);
    }
    out
}

/// One word of the request, with whether it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub(crate) text: String,
    pub(crate) quoted: bool,
}

/// The words of the request's first sentence, after any conventional-commit prefix.
fn sentence_words(request: &str) -> Vec<Word> {
    let first = request.lines().next().unwrap_or("");
    // A conventional-commit prefix (`feat(fmt):`) is not part of the sentence.
    let body = match first.split_once(": ") {
        Some((head, rest)) if !head.contains(' ') => rest,
        _ => first,
    };
    body.split_whitespace()
        .filter_map(|raw| {
            let quoted = raw.starts_with(['`', '\'', '"']);
            let t = raw.trim_matches(|c: char| {
                matches!(
                    c,
                    '`' | '\'' | '"' | ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')'
                )
            });
            (!t.is_empty()).then(|| Word {
                text: t.to_string(),
                quoted,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_request_names_its_files_modules_types_and_tests() {
        let r = Request::parse("add a CONTRIBUTING.md");
        assert_eq!(r.new.files, ["CONTRIBUTING.md"]);
        let r = Request::parse("Add a new priority module with a `Priority` type and a test file");
        assert_eq!(r.new.modules, ["priority"]);
        assert_eq!(r.new.types, ["Priority"]);
        assert!(r.new.tests);
        let r = Request::parse("create module named cache with struct LruCache");
        assert_eq!(r.new.modules, ["cache"]);
        assert_eq!(r.new.types, ["LruCache"]);
        let r = Request::parse("add docs/usage.md and tests/test_export.py");
        assert_eq!(r.new.files, ["docs/usage.md", "tests/test_export.py"]);
        // Nothing outside the repository, and nothing the plan format refuses.
        let r = Request::parse("add /tmp/notes.md, ~/x.md, ../up.md, a//b.md and C:\\win.md");
        assert!(r.new.files.is_empty(), "{:?}", r.new.files);
    }

    #[test]
    fn an_edit_request_names_nothing_new() {
        for text in [
            "fix typo in README.md",
            "Release 1.0.150",
            "add --format json to todo export",
            "add the regex crate",
            "update the module docs",
            "add a type check to parse()",
            "Add tests for export",
        ] {
            let r = Request::parse(text);
            assert!(
                r.new.files.is_empty() && r.new.modules.is_empty() && r.new.types.is_empty(),
                "{text}: {:?}",
                r.new
            );
        }
    }
}
