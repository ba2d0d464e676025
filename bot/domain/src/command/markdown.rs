//! Markdown pre-pass: which bytes of a comment are code, quotes, links or HTML, and where the fenced blocks are.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Most leading spaces a command line may have (four make an indented code block).
const MAX_INDENT: usize = 3;

/// A fenced code block outside any block quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// Byte offset of the opening fence line.
    pub start: usize,
    /// First word of the info string, lowercased (`markdown` for ```` ```markdown title ````).
    pub lang: String,
    /// The block's content, without fences or the fence's indentation.
    pub text: String,
}

/// What the pre-pass learnt about a comment body.
#[derive(Debug, Default)]
pub struct Scan {
    /// Sorted, non-overlapping byte ranges where commands are not read.
    ignored: Vec<Range<usize>>,
    pub fences: Vec<Fence>,
}

impl Scan {
    pub fn is_ignored(&self, offset: usize) -> bool {
        let i = self.ignored.partition_point(|r| r.end <= offset);
        self.ignored.get(i).is_some_and(|r| r.start <= offset)
    }
}

/// GitHub renders comments as GitHub-flavoured markdown; parse them the same way.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_GFM
}

pub fn scan(body: &str) -> Scan {
    let mut ignored: Vec<Range<usize>> = Vec::new();
    let mut fences = Vec::new();
    let mut quote_depth = 0usize;
    // The fence being read, if any: (start, lang, text so far).
    let mut open_fence: Option<(usize, String, String)> = None;

    for (event, range) in Parser::new_ext(body, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_)) => {
                quote_depth += 1;
                ignored.push(range);
            }
            Event::End(TagEnd::BlockQuote(_)) => quote_depth = quote_depth.saturating_sub(1),
            Event::Start(Tag::CodeBlock(kind)) => {
                if let (CodeBlockKind::Fenced(info), 0) = (&kind, quote_depth) {
                    let lang = info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_lowercase();
                    open_fence = Some((range.start, lang, String::new()));
                }
                ignored.push(range);
            }
            Event::Text(text) => {
                if let Some((_, _, content)) = open_fence.as_mut() {
                    content.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((start, lang, text)) = open_fence.take() {
                    fences.push(Fence { start, lang, text });
                }
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::HtmlBlock)
            | Event::Code(_)
            | Event::Html(_)
            | Event::InlineHtml(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_) => ignored.push(range),
            _ => {}
        }
    }
    Scan {
        ignored: merge(ignored),
        fences,
    }
}

fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A line that starts with `/` outside ignored markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlashLine<'a> {
    /// 1-based.
    pub number: usize,
    /// Byte offset of the `/`.
    pub offset: usize,
    /// From after the `/` to the end of the line, without the line ending.
    pub text: &'a str,
}

/// Lines whose first non-space character (after at most three spaces) is `/`, outside
/// code, quotes, links and HTML.
pub fn slash_lines<'a>(body: &'a str, scan: &Scan) -> Vec<SlashLine<'a>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (index, raw) in body.split_inclusive('\n').enumerate() {
        let line_start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let indent = line.bytes().take_while(|b| *b == b' ').count();
        if indent > MAX_INDENT {
            continue;
        }
        let Some(text) = line[indent..].strip_prefix('/') else {
            continue;
        };
        let slash = line_start + indent;
        if scan.is_ignored(slash) {
            continue;
        }
        out.push(SlashLine {
            number: index + 1,
            offset: slash,
            text,
        });
    }
    out
}
