//! Ranking files for a request: BM25 over path, definition and content terms, boosted through the import graph.

pub(crate) mod defined;
pub(crate) mod history;
pub(crate) mod intent;
pub(crate) mod named;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde::Serialize;

use crate::detect::imports::Graph;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::request::query::Query;
use crate::request::Request;
use crate::text;

/// A file with its relevance to the request and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedFile {
    pub path: String,
    /// Relevance in `[0, ~1.5]`: 1.0 is the best lexical match; the import
    /// graph can lift neighbours of strong hits.
    pub score: f64,
    /// The lexical part alone (0 for files found only through the graph).
    pub lexical: f64,
    /// The request's terms this file matched (stemmed).
    pub matched: Vec<String>,
    /// Why the file ranks: matched terms per field, graph links.
    pub reasons: Vec<String>,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;
const W_PATH: f64 = 3.0;
const W_NAME: f64 = 2.0;
const W_DEF: f64 = 2.0;
/// In a short request, the file defining a request word as a whole identifier reaches this share of the best score.
const DEFINED_SHARE: f64 = 0.8;
/// An index file re-exporting an identifier the request names reaches this share of the best score.
const REEXPORT_SHARE: f64 = 0.8;
/// The function implementing the command the request names reaches this share of the best score.
const HANDLER_SHARE: f64 = 1.05;
/// A test that runs that command reaches this share.
const INVOKER_SHARE: f64 = 1.02;
/// Final scores of a command's declaration, implementation and test: above
/// any lexical match plus graph boost (at most 1 + [`GRAPH_BOOST`]), below a
/// path the request names outright.
const NAMED_FLOOR: f64 = 1.46;
const WIRED_FLOOR: f64 = 1.44;
const HANDLER_FLOOR: f64 = 1.42;
const INVOKER_FLOOR: f64 = 1.40;
/// How far (in imports) from the command's declaration its implementation is looked for.
const HANDLER_HOPS: usize = 3;
/// Neighbours of a strong hit gain this share of its score.
const GRAPH_BOOST: f64 = 0.35;
/// Only hits at least this strong (relative to the best) lift neighbours.
const GRAPH_MIN: f64 = 0.3;

/// The request's words that some file declares as a command, in the
/// request's order: `navin ledger history` → `ledger`, `history`.
fn command_chain(words: &[String], wired: &[Vec<String>]) -> Vec<String> {
    words
        .iter()
        .filter(|w| !w.starts_with('-') && wired.iter().any(|names| names.contains(w)))
        .cloned()
        .collect()
}

/// The files implementing `command`: they define a function of that name
/// (`fn history`, `def history`, `func History`) and sit closest in the import
/// graph to a file declaring it, since a name like `history` recurs elsewhere.
fn handlers(
    scanned: &Scanned,
    graph: &Graph,
    wired: &[Vec<String>],
    command: Option<&str>,
) -> Vec<usize> {
    let Some(command) = command else {
        return Vec::new();
    };
    let defines: Vec<usize> = scanned
        .files
        .iter()
        .enumerate()
        .filter(|(i, f)| !f.is_test && wired[*i].is_empty())
        .filter(|(_, f)| {
            f.text.as_deref().is_some_and(|text| {
                crate::detect::symbols::definitions(&f.path, text)
                    .iter()
                    .any(|s| {
                        matches!(s.kind, "fn" | "def" | "func" | "function")
                            && s.name.eq_ignore_ascii_case(command)
                    })
            })
        })
        .map(|(i, _)| i)
        .collect();
    if defines.is_empty() {
        return Vec::new();
    }
    // Breadth-first over imports in both directions from the declaring files.
    let n = scanned.files.len();
    let mut back: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, js) in graph.imports.iter().enumerate() {
        for &j in js {
            back[j].push(i);
        }
    }
    let mut dist = vec![usize::MAX; n];
    let mut frontier: Vec<usize> = (0..n).filter(|&i| !wired[i].is_empty()).collect();
    for &i in &frontier {
        dist[i] = 0;
    }
    for d in 1..=HANDLER_HOPS {
        let mut next = Vec::new();
        for &i in &frontier {
            for &j in graph.imports[i].iter().chain(&back[i]) {
                if dist[j] == usize::MAX {
                    dist[j] = d;
                    next.push(j);
                }
            }
        }
        frontier = next;
    }
    let nearest = defines.iter().map(|&i| dist[i]).min().unwrap_or(usize::MAX);
    if nearest == usize::MAX {
        return Vec::new();
    }
    defines
        .into_iter()
        .filter(|&i| dist[i] == nearest)
        .collect()
}

/// `text` runs the command chain: its words in order as consecutive arguments
/// (`["ledger", "history"]`, `SetArgs([]string{"ledger", "history"})`); prose
/// that merely names the command (`"ledger history"`) does not count.
fn invokes(text: &str, chain: &[String]) -> bool {
    let Some((first, rest)) = chain.split_first() else {
        return false;
    };
    text.match_indices(first.as_str()).any(|(at, _)| {
        let mut tail = &text[at + first.len()..];
        rest.iter().all(|word| {
            let gap = tail
                .find(|c: char| !(c.is_whitespace() || matches!(c, '"' | '\'' | ',')))
                .unwrap_or(tail.len());
            let ok = (1..=4).contains(&gap)
                && tail[..gap].contains(',')
                && tail[gap..].starts_with(word.as_str());
            if ok {
                tail = &tail[gap + word.len()..];
            }
            ok
        })
    })
}

/// Files whose job is to gather and re-export a package's items.
fn is_index_file(path: &str) -> bool {
    matches!(
        lang::file_name(path),
        "__init__.py"
            | "lib.rs"
            | "mod.rs"
            | "index.ts"
            | "index.js"
            | "index.mjs"
            | "index.d.ts"
            | "mod.ts"
    )
}

/// `text` re-exports `name`: `pub use …name`, `export { name }`, `from .x import name`, `__all__`.
fn reexports(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let l = line.trim_start();
        (l.starts_with("pub use")
            || l.starts_with("export")
            || l.starts_with("from ")
            || l.starts_with('"')
            || l.starts_with('\''))
            && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == name)
    })
}

#[derive(Clone, Default)]
struct Counts {
    /// Weighted term frequency per query term.
    tf: Vec<f64>,
    path_hit: u64,
    def_hit: u64,
    content: Vec<u32>,
    len: f64,
}

fn is_definition(line: &str) -> bool {
    let indent = line.len() - line.trim_start().len();
    let mut words = line.split_whitespace();
    for _ in 0..4 {
        let Some(w) = words.next() else { return false };
        let w = w.split('(').next().unwrap_or(w);
        match w {
            "fn" | "struct" | "enum" | "trait" | "impl" | "type" | "def" | "class" | "func"
            | "function" | "interface" | "module" | "defmodule" | "defp" | "macro_rules!"
            | "union" | "record" => return true,
            "const" | "static" | "var" | "let" => return indent == 0,
            "pub" | "pub(crate)" | "pub(super)" | "export" | "default" | "async" | "public"
            | "private" | "protected" | "abstract" | "final" | "unsafe" | "extern" | "inline"
            | "virtual" | "override" | "sealed" | "data" | "open" | "internal" => {}
            _ => return false,
        }
    }
    false
}

/// Query terms with a cheap prefilter (first byte, length) in front of the
/// hash lookup, since almost every token of a file is not a query term.
struct Lookup<'a> {
    first: [bool; 256],
    lens: u64,
    map: HashMap<&'a str, usize>,
}

impl<'a> Lookup<'a> {
    fn new(terms: &'a [String]) -> Self {
        let mut first = [false; 256];
        let mut lens = 0u64;
        let mut map = HashMap::new();
        for (i, t) in terms.iter().enumerate() {
            if let Some(&b) = t.as_bytes().first() {
                first[b as usize] = true;
            }
            lens |= 1u64 << t.len().min(63);
            map.insert(t.as_str(), i);
        }
        Self { first, lens, map }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn get(&self, t: &str) -> Option<&usize> {
        let b = *t.as_bytes().first()?;
        if !self.first[b as usize] || self.lens & (1u64 << t.len().min(63)) == 0 {
            return None;
        }
        self.map.get(t)
    }
}

/// `line` without its `"…"` string literals, written into `buf`.
fn without_strings<'b>(line: &str, buf: &'b mut String) -> &'b str {
    buf.clear();
    let mut quoted = false;
    let mut escaped = false;
    for c in line.chars() {
        match (quoted, escaped, c) {
            (true, false, '\\') => escaped = true,
            (true, true, _) => escaped = false,
            (_, false, '"') => quoted = !quoted,
            (false, _, c) => buf.push(c),
            _ => {}
        }
    }
    buf
}

fn count_file(path: &str, content: Option<&str>, q: &Lookup<'_>) -> Counts {
    let n = q.len();
    let mut c = Counts {
        tf: vec![0.0; n],
        content: vec![0; n],
        ..Counts::default()
    };
    let mut path_len = 0usize;
    text::for_each_term(path, |t| {
        path_len += 1;
        if let Some(&i) = q.get(t) {
            c.tf[i] += W_PATH;
            c.path_hit |= 1 << i;
        }
    });
    text::for_each_term(lang::stem(path), |t| {
        if let Some(&i) = q.get(t) {
            c.tf[i] += W_NAME;
        }
    });
    let mut content_len = 0usize;
    if let Some(body) = content {
        // In a Rust file's `#[cfg(test)]` module, string literals are test data:
        // a request quoted there ("add a --since option…") says nothing about the
        // code. Its code still counts: inline tests change with the file.
        let rust = path.ends_with(".rs");
        let mut in_tests = false;
        let mut unquoted = String::new();
        for line in body.lines() {
            in_tests |= rust && line.trim_start().starts_with("#[cfg(test)]");
            let line = if in_tests {
                without_strings(line, &mut unquoted)
            } else {
                line
            };
            let def = is_definition(line);
            text::for_each_term(line, |t| {
                content_len += 1;
                if let Some(&i) = q.get(t) {
                    c.tf[i] += if def { 1.0 + W_DEF } else { 1.0 };
                    c.content[i] += 1;
                    if def {
                        c.def_hit |= 1 << i;
                    }
                }
            });
        }
    }
    c.len = W_PATH * path_len as f64 + content_len as f64;
    c
}

/// A prior on where edits land: code over docs, fixtures and data, unless
/// the request is about docs, CI or tests.
fn prior(path: &str, language: Option<&str>, is_test: bool, q: &Query) -> f64 {
    let lower = path.to_ascii_lowercase();
    let mut p = 1.0;
    if lang::is_doc_path(path) {
        p *= if q.docs { 1.2 } else { 0.45 };
    } else if lang::ci_system(path).is_some() || lower.starts_with(".github/") {
        p *= if q.ci { 1.2 } else { 0.7 };
    } else if !language.is_some_and(lang::is_code_language) {
        p *= 0.7;
    } else if q.docs {
        p *= 0.8;
    }
    if q.in_area(&lower) {
        p *= 1.6;
    } else if q.area_resolved {
        // The scope names a package or directory: the change lies there.
        p *= 0.6;
    }
    // Fixture-like directories rank low unless the request names them.
    let fixture = lower.split('/').any(|c| {
        matches!(
            c,
            "testdata"
                | "fixtures"
                | "fixture"
                | "snapshots"
                | "__snapshots__"
                | "examples"
                | "example"
                | "benches"
                | "bench"
                | "benchmarks"
                | "vendor"
                | "sandbox"
        ) && !q.terms.iter().any(|t| c.starts_with(t.as_str()))
    });
    if fixture {
        p *= 0.6;
    } else if is_test {
        p *= if q.tests { 1.2 } else { 0.85 };
    }
    p
}

/// The test file conventionally paired with a source file, and vice versa:
/// treated as graph neighbours, since a change to one usually touches the other.
fn test_pairs(scanned: &Scanned) -> Vec<(usize, usize)> {
    let mut by_stem: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (i, f) in scanned.files.iter().enumerate() {
        if f.is_test || f.language.is_none_or(|l| !lang::is_code_language(l)) {
            continue;
        }
        let key = (
            f.language.unwrap_or("").to_string(),
            lang::stem(&f.path).to_ascii_lowercase(),
        );
        by_stem.entry(key).or_default().push(i);
    }
    let mut out = Vec::new();
    for (i, f) in scanned.files.iter().enumerate() {
        if !f.is_test {
            continue;
        }
        let Some(l) = f.language else { continue };
        let stem = lang::stem(&f.path).to_ascii_lowercase();
        let base = stem
            .strip_prefix("test_")
            .or_else(|| stem.strip_suffix("_test"))
            .or_else(|| stem.strip_suffix(".test"))
            .or_else(|| stem.strip_suffix(".spec"))
            .or_else(|| stem.strip_suffix("_spec"))
            .or_else(|| stem.strip_suffix("tests"))
            .or_else(|| stem.strip_suffix("test"))
            .unwrap_or(&stem);
        if base.len() < 3 {
            continue;
        }
        if let Some(cands) = by_stem.get(&(l.to_string(), base.to_string())) {
            // Prefer the candidate sharing the longest directory prefix.
            let best = cands.iter().max_by_key(|&&j| {
                let common = f
                    .path
                    .split('/')
                    .zip(scanned.files[j].path.split('/'))
                    .take_while(|(a, b)| a == b)
                    .count();
                (common, std::cmp::Reverse(j))
            });
            if let Some(&j) = best {
                out.push((i, j));
            }
        }
    }
    // One test per source file: the one closest to it, outside examples.
    let closeness = |t: usize, s: usize| {
        let tp = &scanned.files[t].path;
        let common = tp
            .split('/')
            .zip(scanned.files[s].path.split('/'))
            .take_while(|(a, b)| a == b)
            .count();
        let example = tp.split('/').any(|c| c.starts_with("example"));
        (
            !example,
            common,
            std::cmp::Reverse(tp.matches('/').count()),
            std::cmp::Reverse(t),
        )
    };
    let mut best: HashMap<usize, usize> = HashMap::new();
    for &(t, s) in &out {
        let keep = match best.get(&s) {
            Some(&cur) => closeness(t, s) > closeness(cur, s),
            None => true,
        };
        if keep {
            best.insert(s, t);
        }
    }
    let mut pairs: Vec<(usize, usize)> = best.into_iter().map(|(s, t)| (t, s)).collect();
    pairs.sort_unstable();
    pairs
}

/// Ranks every file for the request, best first, ties broken by path. Files
/// with no lexical or graph relevance are left out.
pub fn rank(scanned: &Scanned, graph: &Graph, request: &Request) -> Vec<RankedFile> {
    let mut query = request.query.clone();
    query.narrow_to_area(scanned.files.iter().map(|f| f.path.as_str()));
    let terms = &query.terms;
    let q = Lookup::new(terms);
    let counts: Vec<Counts> = scanned
        .files
        .iter()
        .map(|f| count_file(&f.path, f.text.as_deref(), &q))
        .collect();
    let n = counts.len().max(1) as f64;
    let avgdl = (counts.iter().map(|c| c.len).sum::<f64>() / n).max(1.0);
    // A scope that resolved to a directory where the request's own words
    // match something has done its work through the prior: its words would
    // only match every file there by path.
    let body_in_area = query.area_resolved
        && counts.iter().zip(&scanned.files).any(|(c, f)| {
            (0..terms.len()).any(|t| !query.scope_only[t] && c.tf[t] > 0.0)
                && query.in_area(&f.path.to_ascii_lowercase())
        });
    let live: Vec<bool> = (0..terms.len())
        .map(|t| !(body_in_area && query.scope_only[t]))
        .collect();
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            if !live[t] {
                return 0.0;
            }
            let df = counts.iter().filter(|c| c.tf[t] > 0.0).count() as f64;
            query.weights[t] * (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mentions = &request.paths;

    let mut base: Vec<f64> = vec![0.0; counts.len()];
    for (i, c) in counts.iter().enumerate() {
        let f = &scanned.files[i];
        let mut s = 0.0;
        let mut matched = 0;
        for (&tf, &idf) in c.tf.iter().zip(&idf) {
            if tf > 0.0 && idf > 0.0 {
                matched += 1;
                s += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * c.len / avgdl));
            }
        }
        // Covering more of the request beats repeating one word.
        if matched > 1 {
            s *= 1.0 + 0.15 * (matched - 1) as f64;
        }
        base[i] = s * prior(&f.path, f.language, f.is_test, &query);
    }
    // A file that declares a command or flag the request names is where the
    // change is wired (clap, argparse, cobra, commander): it leads the ranking.
    // So does the file defining an identifier the request spells out
    // (`HTTPError`, `.json()`, `ListenerExt::limit_connections`); the index
    // that re-exports it follows.
    let words = &request.words;
    let spelled = &request.identifiers;
    let mut wired: Vec<Vec<String>> = vec![Vec::new(); counts.len()];
    let mut owns: Vec<Vec<String>> = vec![Vec::new(); counts.len()];
    let mut exports: Vec<Vec<String>> = vec![Vec::new(); counts.len()];
    let mut defines: Vec<Vec<String>> = vec![Vec::new(); counts.len()];
    let short = spelled.is_empty()
        && (0..terms.len()).filter(|&t| idf[t] > 0.0).count() <= defined::SHORT_TERMS;
    for (i, f) in scanned.files.iter().enumerate() {
        let Some(text) = f.text.as_deref().filter(|_| base[i] > 0.0 && !f.is_test) else {
            continue;
        };
        let symbols = crate::detect::symbols::definitions(&f.path, text);
        if short && !lang::is_doc_path(&f.path) {
            defines[i] = defined::terms_defined(&symbols, terms, &live);
        }
        for sym in symbols {
            if matches!(sym.kind, "command" | "flag")
                && words.contains(&sym.name)
                && !wired[i].contains(&sym.name)
            {
                wired[i].push(sym.name);
            } else if !matches!(sym.kind, "command" | "flag" | "mod")
                && spelled.contains(&sym.name)
                && !owns[i].contains(&sym.name)
            {
                owns[i].push(sym.name);
            }
        }
        if owns[i].is_empty() && is_index_file(&f.path) {
            for name in spelled {
                if reexports(text, name) && !exports[i].contains(name) {
                    exports[i].push(name.clone());
                }
            }
        }
    }
    defined::keep_owned(&mut defines);
    let top = base.iter().copied().fold(0.0, f64::max);
    let commands = command_chain(words, &wired);
    let handlers = handlers(scanned, graph, &wired, commands.last().map(String::as_str));
    let invokers: Vec<bool> = scanned
        .files
        .iter()
        .map(|f| {
            f.is_test && commands.len() >= 2 && invokes(f.text.as_deref().unwrap_or(""), &commands)
        })
        .collect();
    for (i, w) in wired.iter().enumerate() {
        if !w.is_empty() {
            base[i] = (base[i] * 1.6).max(top * (1.0 + 0.1 * w.len() as f64));
        } else if !owns[i].is_empty() {
            base[i] = (base[i] * 1.6).max(top * (1.0 + 0.05 * owns[i].len() as f64));
        } else if !exports[i].is_empty() {
            base[i] = base[i].max(top * REEXPORT_SHARE);
        } else if !defines[i].is_empty() {
            base[i] = (base[i] * 1.3).max(top * DEFINED_SHARE);
        }
        // The command's implementation and the test running it follow the wiring.
        if handlers.contains(&i) {
            base[i] = top * HANDLER_SHARE;
        } else if invokers[i] {
            base[i] = top * INVOKER_SHARE;
        }
    }
    let mut max = base.iter().copied().fold(0.0, f64::max);
    // A file the request names outright is the best match.
    let lower_paths: Vec<String> = if mentions.is_empty() {
        Vec::new()
    } else {
        scanned
            .files
            .iter()
            .map(|f| f.path.to_ascii_lowercase())
            .collect()
    };
    let mut named = vec![false; counts.len()];
    for m in mentions {
        for (i, p) in lower_paths.iter().enumerate() {
            if p == m || p.ends_with(&format!("/{m}")) {
                named[i] = true;
                base[i] = base[i].max(max.max(1.0) * 1.2);
            }
        }
    }
    max = base.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return Vec::new();
    }
    let norm: Vec<f64> = base.iter().map(|s| s / max).collect();

    let mut neighbours: Vec<Vec<(usize, &'static str)>> = vec![Vec::new(); counts.len()];
    for i in 0..counts.len() {
        for j in graph.imports[i].iter().copied() {
            neighbours[i].push((j, "imports"));
            neighbours[j].push((i, "is imported by"));
        }
    }
    for (t, s) in test_pairs(scanned) {
        neighbours[t].push((s, "tests"));
        neighbours[s].push((t, "is tested by"));
    }

    let pinned = !handlers.is_empty() || invokers.contains(&true);
    let mut out: Vec<RankedFile> = Vec::new();
    for (i, c) in counts.iter().enumerate() {
        let f = &scanned.files[i];
        let own_prior = prior(&f.path, f.language, f.is_test, &query);
        let mut boost = 0.0;
        let mut via: Option<(usize, &str)> = None;
        for &(j, how) in &neighbours[i] {
            let s = norm[j];
            if s >= GRAPH_MIN && s * GRAPH_BOOST * own_prior > boost {
                boost = s * GRAPH_BOOST * own_prior;
                via = Some((j, how));
            }
        }
        // A command request reads top-down: its declaration, its
        // implementation, the test running it; no graph neighbour cuts in.
        let floor = if !pinned {
            0.0
        } else if named[i] {
            NAMED_FLOOR
        } else if !wired[i].is_empty() {
            WIRED_FLOOR
        } else if handlers.contains(&i) {
            HANDLER_FLOOR
        } else if invokers[i] {
            INVOKER_FLOOR
        } else {
            0.0
        };
        let score = (norm[i] + boost).max(floor);
        if score <= 0.0 {
            continue;
        }
        let mut reasons = Vec::new();
        if named[i] {
            reasons.push("named in the request".to_string());
        }
        if !wired[i].is_empty() {
            let list: Vec<String> = wired[i].iter().map(|n| format!("`{n}`")).collect();
            reasons.push(format!("declares {}", list.join(", ")));
        }
        if !owns[i].is_empty() {
            let list: Vec<String> = owns[i].iter().map(|n| format!("`{n}`")).collect();
            reasons.push(format!(
                "defines {}, which the request names",
                list.join(", ")
            ));
        }
        if !exports[i].is_empty() {
            let list: Vec<String> = exports[i].iter().map(|n| format!("`{n}`")).collect();
            reasons.push(format!("re-exports {}", list.join(", ")));
        }
        if !defines[i].is_empty() {
            let list: Vec<String> = defines[i].iter().map(|n| format!("`{n}`")).collect();
            reasons.push(format!("defines {} itself", list.join(", ")));
        }
        if let (true, Some(cmd)) = (handlers.contains(&i), commands.last()) {
            reasons.push(format!("implements the `{cmd}` command"));
        }
        if invokers[i] {
            reasons.push(format!("runs `{}`", commands.join(" ")));
        }
        let pick = |mask: u64| -> Vec<&str> {
            (0..terms.len())
                .filter(|&t| mask & (1 << t) != 0 && live[t])
                .map(|t| terms[t].as_str())
                .collect()
        };
        let path_terms = pick(c.path_hit);
        if !path_terms.is_empty() {
            reasons.push(format!("path matches {}", quote_list(&path_terms)));
        }
        let def_terms = pick(c.def_hit & !c.path_hit);
        if !def_terms.is_empty() {
            reasons.push(format!(
                "defines items named after {}",
                quote_list(&def_terms)
            ));
        }
        let content_terms: Vec<String> = (0..terms.len())
            .filter(|&t| c.content[t] > 0 && live[t] && (c.path_hit | c.def_hit) & (1 << t) == 0)
            .map(|t| format!("`{}` ×{}", terms[t], c.content[t]))
            .collect();
        if !content_terms.is_empty() {
            reasons.push(format!("mentions {}", content_terms.join(", ")));
        }
        if let Some((j, how)) = via {
            reasons.push(format!("{how} `{}`", scanned.files[j].path));
        }
        let matched: Vec<String> = (0..terms.len())
            .filter(|&t| c.tf[t] > 0.0 && live[t])
            .map(|t| terms[t].clone())
            .collect();
        out.push(RankedFile {
            matched,
            path: scanned.files[i].path.clone(),
            score: round4(score),
            lexical: round4(norm[i]),
            reasons,
        });
    }
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

fn quote_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rounded so that output is stable text and ties compare equal.
fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
