//! A bounded summary of the repository, from the built-in planner's map and ranking, for external sources to plan against.

use std::path::Path;

use navin_ledger::plan::Operation;
use serde::Serialize;

use super::error::ExternalError;
use crate::{plan_repository, LocalSource, PlannerOptions, PlannerOutput};

const MAX_ITEM_CHARS: usize = 240;
const MAX_LANGUAGES: usize = 8;
const MAX_MANIFESTS: usize = 12;
const MAX_DEPS_PER_MANIFEST: usize = 12;
const MAX_MODULES: usize = 25;
const MAX_SHORT_LIST: usize = 10;
const MAX_RANKED: usize = 25;
const MAX_REASONS: usize = 3;

/// What an external planner needs to plan against the real repository
/// rather than guess: its shape (languages, manifests, modules, commands)
/// and the files the built-in ranking found most relevant to the request.
/// Every list is capped, so the summary of a huge repository stays small.
/// It is sent as text in the model prompt and as JSON to a plan command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoSummary {
    pub files: usize,
    /// True when the scan hit a file-count or byte budget.
    pub scan_truncated: bool,
    pub languages: Vec<String>,
    /// Files ranked for the request, best first.
    pub ranked_files: Vec<SummaryFile>,
    /// What the built-in planner would change, as a starting point.
    pub builtin_changes: Vec<String>,
    pub modules: Vec<String>,
    pub manifests: Vec<String>,
    pub entry_points: Vec<String>,
    pub frameworks: Vec<String>,
    pub commands: Vec<String>,
    pub test_conventions: Vec<String>,
    pub ci: Vec<String>,
    pub migration_dirs: Vec<String>,
    pub most_imported: Vec<String>,
}

/// One ranked file: path, relevance and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryFile {
    pub path: String,
    pub score: f64,
    pub reasons: Vec<String>,
}

impl RepoSummary {
    /// Condenses a built-in planner run.
    pub fn from_output(output: &PlannerOutput) -> Self {
        let map = &output.map;
        let langs = map
            .languages
            .iter()
            .take(MAX_LANGUAGES)
            .map(|l| clip(&format!("{} ({} files)", l.language, l.files)));
        let manifests = map.manifests.iter().take(MAX_MANIFESTS).map(|m| {
            let mut line = format!("{} [{}]", m.path, m.tool);
            if let Some(name) = &m.name {
                line.push_str(&format!(" name={name}"));
            }
            if !m.dependencies.is_empty() {
                let deps: Vec<&str> = m
                    .dependencies
                    .iter()
                    .take(MAX_DEPS_PER_MANIFEST)
                    .map(String::as_str)
                    .collect();
                let more = m.dependencies.len().saturating_sub(deps.len());
                line.push_str(&format!(" deps: {}", deps.join(", ")));
                if more > 0 {
                    line.push_str(&format!(" (+{more} more)"));
                }
            }
            clip(&line)
        });
        let modules = map.modules.iter().take(MAX_MODULES).map(|m| {
            let path = if m.path.is_empty() { "." } else { &m.path };
            let lang = m.language.as_deref().unwrap_or("mixed");
            clip(&format!(
                "{path}: {} ({}, {lang}, {} files)",
                m.name, m.kind, m.files
            ))
        });
        let ranked = output.ranked.iter().take(MAX_RANKED).map(|r| SummaryFile {
            path: clip(&r.path),
            score: (r.score * 100.0).round() / 100.0,
            reasons: r
                .reasons
                .iter()
                .take(MAX_REASONS)
                .map(|s| clip(s))
                .collect(),
        });
        let builtin = output.plan.changes.iter().take(MAX_SHORT_LIST).map(|c| {
            let op = match c.operation {
                Operation::Edit => "edit",
                Operation::Create => "create",
                Operation::Delete => "delete",
            };
            clip(&format!("{op} {}: {}", c.path, c.change))
        });
        Self {
            files: map.stats.files,
            scan_truncated: map.stats.truncated,
            languages: langs.collect(),
            ranked_files: ranked.collect(),
            builtin_changes: builtin.collect(),
            modules: modules.collect(),
            manifests: manifests.collect(),
            entry_points: short(
                map.entry_points
                    .iter()
                    .map(|e| format!("{} ({})", e.path, e.kind)),
            ),
            frameworks: short(
                map.frameworks
                    .iter()
                    .map(|f| format!("{} ({}, from {})", f.name, f.category, f.evidence)),
            ),
            commands: short(map.commands.iter().map(|c| {
                let kind = serde_json::to_value(c.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("{kind}: {} (from {})", c.command, c.source)
            })),
            test_conventions: short(map.test_conventions.iter().map(|t| {
                format!(
                    "{}: {} ({} files, e.g. {})",
                    t.language, t.pattern, t.files, t.example
                )
            })),
            ci: short(map.ci.iter().map(|c| format!("{} ({})", c.path, c.system))),
            migration_dirs: short(map.migration_dirs.iter().cloned()),
            most_imported: short(
                map.most_imported
                    .iter()
                    .map(|h| format!("{} (imported by {})", h.path, h.imported_by)),
            ),
        }
    }

    /// Plain-text form for a prompt, at most `max_bytes` long. Lists come in
    /// order of use to a planner (ranked files first), so a tight budget
    /// drops the least useful lines.
    pub fn to_text(&self, max_bytes: usize) -> String {
        let mut lines = vec![format!(
            "Files: {}{}",
            self.files,
            if self.scan_truncated {
                " (scan stopped early: a budget was reached)"
            } else {
                ""
            }
        )];
        if !self.languages.is_empty() {
            lines.push(format!("Languages: {}", self.languages.join(", ")));
        }
        let ranked: Vec<String> = self
            .ranked_files
            .iter()
            .map(|f| {
                if f.reasons.is_empty() {
                    format!("{} (score {:.2})", f.path, f.score)
                } else {
                    format!(
                        "{} (score {:.2}; {})",
                        f.path,
                        f.score,
                        f.reasons.join("; ")
                    )
                }
            })
            .collect();
        let lists: [(&str, &[String]); 11] = [
            ("Files most relevant to the request, best first", &ranked),
            (
                "Changes the built-in planner would propose",
                &self.builtin_changes,
            ),
            ("Modules", &self.modules),
            ("Manifests", &self.manifests),
            ("Entry points", &self.entry_points),
            ("Frameworks", &self.frameworks),
            ("Verification commands the project declares", &self.commands),
            ("Test conventions", &self.test_conventions),
            ("CI", &self.ci),
            ("Migration directories", &self.migration_dirs),
            ("Most imported files", &self.most_imported),
        ];
        for (title, items) in lists {
            if items.is_empty() {
                continue;
            }
            lines.push(String::new());
            lines.push(format!("{title}:"));
            lines.extend(items.iter().map(|item| format!("- {item}")));
        }
        fit_lines(&lines, max_bytes)
    }
}

/// Maps the checkout at `repo_path` with the built-in planner (read-only)
/// and condenses the result. Blocking: it reads the files.
pub fn summarize(repo_path: &Path, request: &str) -> Result<RepoSummary, ExternalError> {
    let source = LocalSource::new(repo_path)?;
    let output = plan_repository(&source, request, &PlannerOptions::default())?;
    Ok(RepoSummary::from_output(&output))
}

const TRUNCATED: &str = "… (summary truncated)";

/// Joins whole lines while they fit in `max_bytes`, marking a cut.
fn fit_lines(lines: &[String], max_bytes: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let rest_needed = if i + 1 < lines.len() {
            TRUNCATED.len() + 1
        } else {
            0
        };
        if out.len() + line.len() + 1 + rest_needed > max_bytes {
            if out.len() + TRUNCATED.len() < max_bytes {
                out.push_str(TRUNCATED);
                out.push('\n');
            }
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn short(items: impl Iterator<Item = String>) -> Vec<String> {
    items.take(MAX_SHORT_LIST).map(|s| clip(&s)).collect()
}

fn clip(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= MAX_ITEM_CHARS {
        return one_line;
    }
    let mut out: String = one_line.chars().take(MAX_ITEM_CHARS).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_summary() -> RepoSummary {
        let many = |prefix: &str| -> Vec<String> {
            (0..40)
                .map(|i| format!("{prefix}/{i}/{}", "x".repeat(200)))
                .collect()
        };
        RepoSummary {
            files: 50_000,
            scan_truncated: true,
            languages: vec!["Rust (40000 files)".to_owned()],
            ranked_files: (0..25)
                .map(|i| SummaryFile {
                    path: format!("src/file_{i}.rs"),
                    score: 1.0,
                    reasons: vec!["path matches \"config\"".to_owned()],
                })
                .collect(),
            builtin_changes: many("edit"),
            modules: many("mod"),
            manifests: many("manifest"),
            entry_points: many("entry"),
            frameworks: many("fw"),
            commands: many("cmd"),
            test_conventions: many("test"),
            ci: many("ci"),
            migration_dirs: many("mig"),
            most_imported: many("hub"),
        }
    }

    #[test]
    fn text_stays_within_the_budget_and_keeps_ranked_files_first() {
        let text = big_summary().to_text(4000);
        assert!(text.len() <= 4000, "{} bytes", text.len());
        assert!(text.contains("src/file_0.rs (score 1.00; path matches"));
        assert!(text.ends_with("… (summary truncated)\n"));
        assert!(!text.contains("hub/"));
    }

    #[test]
    fn small_summary_is_not_marked_truncated() {
        let mut s = big_summary();
        s.builtin_changes.clear();
        s.modules = vec!["bot: navin-bot (crate, Rust, 10 files)".to_owned()];
        for list in [
            &mut s.manifests,
            &mut s.entry_points,
            &mut s.frameworks,
            &mut s.commands,
            &mut s.test_conventions,
            &mut s.ci,
            &mut s.migration_dirs,
            &mut s.most_imported,
        ] {
            list.clear();
        }
        let text = s.to_text(24 * 1024);
        assert!(!text.contains("truncated)"));
        assert!(text.contains("Modules:\n- bot: navin-bot"));
    }

    #[test]
    fn clip_keeps_items_on_one_bounded_line() {
        let long = format!("a\nb{}", "y".repeat(500));
        let out = clip(&long);
        assert!(!out.contains('\n'));
        assert_eq!(out.chars().count(), MAX_ITEM_CHARS + 1);
    }
}
