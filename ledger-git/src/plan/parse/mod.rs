//! Parses plan markdown into a typed [`Plan`], checking every rule as it reads and stopping at the first problem.

mod changes;
mod questions;

use super::error::{PlanError, PlanErrorKind};
use super::model::{FileChange, HandoffContract, Plan, Question, Stage};
use super::rules;
use super::section::Section;
use super::text::{self, Comments, Line};
use std::collections::HashMap;

/// Reads a plan document. Accepts what [`super::render`] writes and the usual
/// variations of people and models: extra blank lines, `*`/`+` bullets, any
/// heading case, CRLF, trailing spaces, numbered headings, code fences in
/// free-text sections (whose `#` lines are text, not headings). Every rule of
/// [`super::validate`] is checked on the way, so a plan that parses is valid;
/// the error names the first problem's line and section.
pub fn parse(input: &str) -> Result<Plan, PlanError> {
    let scan = text::scan(input);
    let mut parser = Parser {
        lines: &scan.lines,
        unclosed: scan.unclosed_fence,
        draft: Draft::default(),
    };
    parser.run()?;
    Ok(parser.draft.finish())
}

#[derive(Debug, Default)]
struct Draft {
    title: String,
    free: [String; 7],
    changes: Vec<FileChange>,
    /// Each proposed path and the line of its `### File:` heading.
    paths: HashMap<String, usize>,
    new_dependencies: Vec<String>,
    risks: Vec<String>,
    next_steps: Vec<String>,
    questions: Vec<Question>,
    handoff: Option<HandoffContract>,
    stages: Vec<Stage>,
}

impl Draft {
    fn finish(self) -> Plan {
        let [persona, goal, architecture, capabilities, data_flow, target_state, impact_isolation] =
            self.free;
        Plan {
            title: self.title,
            persona,
            goal,
            architecture,
            capabilities,
            data_flow,
            target_state,
            impact_isolation,
            changes: self.changes,
            new_dependencies: self.new_dependencies,
            risks: self.risks,
            next_steps: self.next_steps,
            questions: self.questions,
            handoff: self.handoff,
            stages: self.stages,
        }
    }
}

struct Parser<'s, 'a> {
    lines: &'s [Line<'a>],
    unclosed: Option<usize>,
    draft: Draft,
}

/// The section being read: which one, its heading line, where its body starts.
type Open = Option<(Section, usize, usize)>;

impl<'a> Parser<'_, 'a> {
    /// Walks the `#`/`##` headings in order, reading each section's body as
    /// soon as the next heading closes it, so problems surface in reading order.
    fn run(&mut self) -> Result<(), PlanError> {
        let lines = self.lines;
        let title_index = self.title()?;
        let mut next = 0;
        let mut open: Open = None;
        let body_start = title_index + 1;
        for (i, line) in lines.iter().enumerate().skip(body_start) {
            if line.fence {
                continue;
            }
            let Some((level, name)) = text::heading(line.text) else {
                continue;
            };
            if level > 2 {
                continue;
            }
            self.close(open, body_start, i)?;
            if level == 1 {
                return Err(PlanError::structural(
                    line.no,
                    PlanErrorKind::StrayTitle {
                        found: text::quote(line.text),
                    },
                ));
            }
            let found = Section::from_heading(name);
            let position = found.and_then(Section::position);
            match (found, position) {
                (Some(section), Some(pos)) if pos == next => {
                    open = Some((section, line.no, i + 1));
                    next += 1;
                }
                (Some(_), Some(pos)) if pos > next => {
                    return Err(PlanError::structural(
                        line.no,
                        PlanErrorKind::MissingSection {
                            missing: Section::ORDER[next],
                            after: previous(next),
                        },
                    ));
                }
                (Some(section), _) => {
                    return Err(PlanError::structural(
                        line.no,
                        PlanErrorKind::DuplicateSection { section },
                    ));
                }
                (None, _) => {
                    return Err(PlanError::structural(
                        line.no,
                        PlanErrorKind::UnknownSection {
                            found: text::quote(name),
                            expected: Section::ORDER.get(next).copied(),
                        },
                    ));
                }
            }
        }
        self.close(open, body_start, lines.len())?;
        if next < Section::REQUIRED {
            let last = lines.last().map_or(1, |l| l.no);
            return Err(PlanError::structural(
                last,
                PlanErrorKind::MissingSection {
                    missing: Section::ORDER[next],
                    after: previous(next),
                },
            ));
        }
        Ok(())
    }

    /// Finds `# Plan: <title>`, allowing blank lines and HTML comments before it.
    fn title(&mut self) -> Result<usize, PlanError> {
        let mut comments = Comments::default();
        for (i, line) in self.lines.iter().enumerate() {
            if !line.fence && (comments.skip(line.text) || line.text.trim().is_empty()) {
                continue;
            }
            let title = match text::heading(line.text) {
                Some((1, h)) if !line.fence => strip_prefix_ignore_case(h, "plan:"),
                _ => None,
            };
            let Some(title) = title else {
                return Err(PlanError::structural(
                    line.no,
                    PlanErrorKind::MissingTitle {
                        found: text::quote(line.text),
                    },
                ));
            };
            let title = title.trim();
            rules::check_title(title).map_err(|k| PlanError::at(line.no, Section::Title, k))?;
            self.draft.title = title.to_owned();
            return Ok(i);
        }
        let last = self.lines.last().map_or(1, |l| l.no);
        Err(PlanError::structural(last, PlanErrorKind::EmptyDocument))
    }

    /// Reads the body `lines[start..end]` of the open section, or checks that
    /// nothing but blank lines and comments precedes the first section.
    fn close(&mut self, open: Open, preamble_start: usize, end: usize) -> Result<(), PlanError> {
        let lines = self.lines;
        match open {
            None => {
                let mut comments = Comments::default();
                for line in &lines[preamble_start..end] {
                    let skip =
                        !line.fence && (comments.skip(line.text) || line.text.trim().is_empty());
                    if !skip {
                        return Err(PlanError::structural(
                            line.no,
                            PlanErrorKind::TextBeforeFirstSection {
                                found: text::quote(line.text),
                            },
                        ));
                    }
                }
                Ok(())
            }
            Some((section, heading, start)) => self.section(section, heading, &lines[start..end]),
        }
    }

    fn section(
        &mut self,
        section: Section,
        heading: usize,
        body: &[Line<'a>],
    ) -> Result<(), PlanError> {
        if let Some(slot) = Section::FREE_TEXT.iter().position(|s| *s == section) {
            self.draft.free[slot] = self.free_text(section, heading, body)?;
            return Ok(());
        }
        match section {
            Section::ProposedChanges => self.changes(body),
            Section::NewDependencies => {
                let items = bullets(section, body, "dependency", true, None)?;
                self.draft.new_dependencies = items.into_iter().map(|b| b.text).collect();
                Ok(())
            }
            Section::Risks => {
                let items = bullets(section, body, "risk", false, Some(rules::MAX_RISKS))?;
                rules::check_risk_count(items.len())
                    .map_err(|k| PlanError::at(heading, section, k))?;
                self.draft.risks = items.into_iter().map(|b| b.text).collect();
                Ok(())
            }
            Section::ActionableNextSteps => {
                let items = bullets(section, body, "step", false, None)?;
                if items.is_empty() {
                    return Err(PlanError::at(heading, section, PlanErrorKind::NoNextSteps));
                }
                let mut steps = Vec::with_capacity(items.len());
                for item in items {
                    let step = strip_checkbox(&item.text);
                    rules::check_item("step", step)
                        .map_err(|k| PlanError::at(item.line, section, k))?;
                    steps.push(step.to_owned());
                }
                self.draft.next_steps = steps;
                Ok(())
            }
            Section::RisksAndAssumptions => self.questions(body),
            Section::OptionalGoalHandoffContract => self.handoff(heading, body),
            Section::Stages => self.stages(body),
            _ => Ok(()),
        }
    }

    fn free_text(
        &self,
        section: Section,
        heading: usize,
        body: &[Line<'a>],
    ) -> Result<String, PlanError> {
        if let Some(opened_at) = self.unclosed {
            if body.iter().any(|l| l.no == opened_at) {
                return Err(PlanError::at(
                    opened_at,
                    section,
                    PlanErrorKind::UnclosedFence { opened_at },
                ));
            }
        }
        let text = text::normalise_block(body.iter().copied());
        if text.is_empty() {
            return Err(PlanError::at(heading, section, PlanErrorKind::EmptySection));
        }
        Ok(text)
    }
}

fn previous(next: usize) -> Section {
    next.checked_sub(1)
        .map_or(Section::Title, |i| Section::ORDER[i])
}

fn strip_prefix_ignore_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// "[ ] Run tests" / "[x] Run tests" → "Run tests".
fn strip_checkbox(step: &str) -> &str {
    for box_ in ["[ ]", "[x]", "[X]"] {
        if let Some(rest) = step.strip_prefix(box_) {
            if rest.is_empty() || rest.starts_with([' ', '\t']) {
                return rest.trim_start();
            }
        }
    }
    step
}

/// One list entry and the line it starts on.
#[derive(Debug)]
pub(super) struct Bullet {
    pub text: String,
    pub line: usize,
}

impl Bullet {
    pub(super) fn append(&mut self, more: &str) {
        append(&mut self.text, more);
    }
}

/// Joins a wrapped continuation line onto a one-line value.
pub(super) fn append(value: &mut String, more: &str) {
    let more = more.trim();
    if more.is_empty() {
        return;
    }
    if !value.is_empty() {
        value.push(' ');
    }
    value.push_str(more);
}

/// Reads a bullet (or numbered) list. Wrapped lines and nested bullets join
/// the item above them; "None." stands for an empty list. `max` stops at the
/// first item past the limit, so the error points at it.
fn bullets(
    section: Section,
    body: &[Line<'_>],
    what: &'static str,
    none_allowed: bool,
    max: Option<usize>,
) -> Result<Vec<Bullet>, PlanError> {
    let mut items: Vec<Bullet> = Vec::new();
    let mut open = false;
    let mut blank = false;
    let mut comments = Comments::default();
    let check_last = |items: &[Bullet]| match items.last() {
        Some(last) => {
            rules::check_item(what, &last.text).map_err(|k| PlanError::at(last.line, section, k))
        }
        None => Ok(()),
    };
    for line in body {
        if line.fence {
            check_last(&items)?;
            return Err(PlanError::at(
                line.no,
                section,
                PlanErrorKind::CodeBlockNotAllowed,
            ));
        }
        if comments.skip(line.text) {
            continue;
        }
        if line.text.trim().is_empty() {
            blank = true;
            continue;
        }
        if text::heading(line.text).is_some() {
            check_last(&items)?;
            return Err(unexpected_heading(section, line));
        }
        if let Some(item) = text::list_item(line.text) {
            match items.last_mut() {
                Some(last) if open && item.indent >= 2 => last.append(item.content),
                _ => {
                    check_last(&items)?;
                    if max == Some(items.len()) {
                        let found = count_top_level_items(body);
                        return Err(PlanError::at(
                            line.no,
                            section,
                            PlanErrorKind::RiskCount { found },
                        ));
                    }
                    items.push(Bullet {
                        text: item.content.to_owned(),
                        line: line.no,
                    });
                    open = true;
                }
            }
            blank = false;
            continue;
        }
        let continues = open && (!blank || text::indent_width(line.text) >= 2);
        let none = items.is_empty() && text::is_none_marker(line.text);
        match items.last_mut() {
            Some(last) if continues => last.append(line.text),
            _ if none => open = false,
            _ => {
                check_last(&items)?;
                return Err(PlanError::at(
                    line.no,
                    section,
                    PlanErrorKind::ExpectedListItem {
                        found: text::quote(line.text),
                        none_allowed,
                    },
                ));
            }
        }
        blank = false;
    }
    check_last(&items)?;
    Ok(items)
}

fn count_top_level_items(body: &[Line<'_>]) -> usize {
    body.iter()
        .filter(|l| !l.fence)
        .filter_map(|l| text::list_item(l.text))
        .filter(|item| item.indent < 2)
        .count()
}

pub(super) fn unexpected_heading(section: Section, line: &Line<'_>) -> PlanError {
    PlanError::at(
        line.no,
        section,
        PlanErrorKind::UnexpectedHeading {
            found: text::quote(line.text),
        },
    )
}
