//! Document formats to plain text: Markdown (parsed by `pulldown-cmark`: markup dropped, ATX and
//! Setext headings kept as the context of the text under them), HTML (a small tag scanner drops
//! tags, scripts, styles and comments; `htmlize` decodes every HTML5 character reference; the
//! `<title>`), CSV (one line per row, each value named by its header). Pure and bounded by the
//! caller's input size; knows nothing of chunks or storage. PDFs are parsed in a child process
//! (`worker`), never here.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// A document's text, and the heading path in force from each byte offset on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The plain text.
    pub text: String,
    /// `(offset, "Heading › Subheading")`, ascending offsets.
    pub sections: Vec<(usize, String)>,
    /// A title the content gives itself (HTML `<title>`, a Markdown document's first level-1
    /// heading, else its front matter's `title`).
    pub title: Option<String>,
}

impl Extracted {
    /// Plain text, no sections.
    pub fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }

    /// The heading path in force at byte `offset` (empty when none).
    pub fn section_at(&self, offset: usize) -> &str {
        let i = self.sections.partition_point(|(at, _)| *at <= offset);
        if i == 0 { "" } else { &self.sections[i - 1].1 }
    }
}

/// The text as it is built, block by block, and the heading path in force. Shared by the
/// Markdown and HTML paths so that HTML blocks inside Markdown join its heading path.
#[derive(Default)]
struct Builder {
    out: Extracted,
    /// `(level, heading)`, outermost first.
    path: Vec<(usize, String)>,
    first_h1: Option<String>,
}

impl Builder {
    fn push(&mut self, s: &str) {
        self.out.text.push_str(s);
    }

    /// A separator between inline runs (table cells, soft breaks) unless one is there already.
    fn space(&mut self) {
        if !self.out.text.is_empty() && !self.out.text.ends_with(char::is_whitespace) {
            self.out.text.push(' ');
        }
    }

    /// Ends the current line (its trailing blanks dropped); nothing at the very start.
    fn line_break(&mut self) {
        let kept = self.out.text.trim_end_matches([' ', '\t']).len();
        self.out.text.truncate(kept);
        if !self.out.text.is_empty() && !self.out.text.ends_with('\n') {
            self.out.text.push('\n');
        }
    }

    /// A blank line: the chunker prefers to cut there.
    fn block_break(&mut self) {
        self.line_break();
        if !self.out.text.is_empty() && !self.out.text.ends_with("\n\n") {
            self.out.text.push('\n');
        }
    }

    /// A heading of `level` (1–6): its own line, and the context of what follows until a
    /// heading of the same or a higher level.
    fn heading(&mut self, level: usize, raw: &str) {
        let heading = collapse(raw);
        if heading.is_empty() {
            return;
        }
        if level == 1 && self.first_h1.is_none() {
            self.first_h1 = Some(heading.clone());
        }
        self.path.retain(|(l, _)| *l < level);
        self.path.push((level, heading.clone()));
        let joined = self.path.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>().join(" › ");
        self.block_break();
        self.out.sections.push((self.out.text.len(), joined));
        self.out.text.push_str(&heading);
        self.block_break();
    }

    fn finish(mut self) -> Extracted {
        let kept = self.out.text.trim_end().len();
        self.out.text.truncate(kept);
        self.out
    }
}

/// Markdown (CommonMark with GitHub's tables, task lists, strikethrough and footnotes) to text:
/// headings become their own lines and the context of what follows; emphasis, list markers,
/// link targets and footnote marks are dropped; code keeps its text, images their alt text,
/// table cells are separated by spaces; HTML blocks go through [`html`]'s path, inline tags
/// are dropped (the text between them stays). Front matter is not text.
pub fn markdown(source: &str) -> Extracted {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
        | Options::ENABLE_GFM;
    let mut b = Builder::default();
    // Text of the heading being read, with its level.
    let mut heading: Option<(usize, String)> = None;
    // The lines of the HTML block being read; the front matter being read.
    let mut html_block: Option<String> = None;
    let mut front_matter: Option<String> = None;
    let mut front_title: Option<String> = None;
    // Inside an inline `<script>`/`<style>`: its content is not text.
    let mut inline_raw: Option<&'static str> = None;
    for event in Parser::new_ext(source, options) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Heading { level, .. } => heading = Some((level as usize, String::new())),
                Tag::HtmlBlock => {
                    b.block_break();
                    html_block = Some(String::new());
                }
                Tag::MetadataBlock(_) => front_matter = Some(String::new()),
                Tag::Paragraph
                | Tag::CodeBlock(_)
                | Tag::BlockQuote(_)
                | Tag::List(_)
                | Tag::Table(_)
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList => b.block_break(),
                Tag::Item
                | Tag::TableHead
                | Tag::TableRow
                | Tag::DefinitionListTitle
                | Tag::DefinitionListDefinition => b.line_break(),
                Tag::TableCell => b.space(),
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Heading(_) => {
                    if let Some((level, text)) = heading.take() {
                        b.heading(level, &text);
                    }
                }
                TagEnd::HtmlBlock => {
                    if let Some(block) = html_block.take() {
                        html_into(&block, &mut b);
                        b.block_break();
                    }
                }
                TagEnd::MetadataBlock(_) => {
                    front_title = front_matter.take().as_deref().and_then(front_matter_title);
                }
                TagEnd::Paragraph
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::List(_)
                | TagEnd::Table
                | TagEnd::FootnoteDefinition => b.block_break(),
                TagEnd::Item | TagEnd::TableHead | TagEnd::TableRow => b.line_break(),
                _ => {}
            },
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                } else if let Some(m) = front_matter.as_mut() {
                    m.push_str(&t);
                } else if inline_raw.is_none() {
                    b.push(&t);
                }
            }
            Event::Html(t) => match html_block.as_mut() {
                Some(block) => block.push_str(&t),
                // Raw HTML outside a block (in a list item, say): the same path.
                None => {
                    html_into(&t, &mut b);
                }
            },
            Event::InlineHtml(t) => {
                let tag = t.trim_start_matches('<').to_ascii_lowercase();
                match inline_raw {
                    Some(name) if tag.strip_prefix('/').is_some_and(|t| t.starts_with(name)) => {
                        inline_raw = None;
                    }
                    Some(_) => {}
                    None => {
                        inline_raw = ["script", "style"].into_iter().find(|n| {
                            tag.starts_with(n)
                                && !t.to_ascii_lowercase().contains(&format!("</{n}"))
                        });
                    }
                }
            }
            Event::SoftBreak => match heading.as_mut() {
                Some((_, h)) => h.push(' '),
                None => b.space(),
            },
            Event::HardBreak => match heading.as_mut() {
                Some((_, h)) => h.push(' '),
                None => b.line_break(),
            },
            Event::Rule => b.block_break(),
            Event::FootnoteReference(_) | Event::TaskListMarker(_) => {}
        }
    }
    let title = b.first_h1.take().or(front_title);
    let mut out = b.finish();
    out.title = title;
    out
}

/// `title: …` (YAML) or `title = "…"` (TOML) in front matter.
fn front_matter_title(block: &str) -> Option<String> {
    block.lines().find_map(|line| {
        let rest = line.strip_prefix("title")?.trim_start();
        let value = rest.strip_prefix(':').or_else(|| rest.strip_prefix('='))?.trim();
        let value = value.trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// HTML to text: `<script>`, `<style>`, `<noscript>`, `<template>`, `<svg>`, `<iframe>` and
/// comments dropped; block elements become line breaks, `<h1>`–`<h6>` sections; character
/// references decoded; whitespace collapsed except in `<pre>`. A `<` that starts no tag
/// (`a < b`, `x<3`) is text, as in a browser.
pub fn html(source: &str) -> Extracted {
    let mut b = Builder::default();
    let title = html_into(source, &mut b);
    let mut out = b.finish();
    out.title = title;
    out
}

/// Every HTML5 character reference (named, numeric, the legacy ones without `;`) decoded as in
/// text content; anything that is not one is left as written.
pub fn decode_entities(s: &str) -> String {
    htmlize::unescape(s).into_owned()
}

/// Elements whose content is never shown as text.
const HIDDEN: [&str; 8] =
    ["script", "style", "noscript", "template", "svg", "iframe", "noembed", "noframes"];

/// Elements that end a paragraph (a blank line, where the chunker prefers to cut).
const BLOCKS: [&str; 24] = [
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "table",
    "ul",
    "ol",
    "dl",
    "blockquote",
    "hr",
    "figure",
    "address",
    "details",
    "form",
    "fieldset",
    "body",
    "center",
    "menu",
    "hgroup",
];

/// Elements that end a line.
const LINES: [&str; 10] =
    ["br", "li", "tr", "dt", "dd", "figcaption", "caption", "summary", "legend", "option"];

/// One piece of markup found at a `<`, and the byte after it.
enum Markup<'a> {
    /// A comment, doctype or processing instruction: dropped.
    Ignored,
    /// A start tag's name and its attributes' text.
    Start(&'a str, &'a str),
    End(&'a str),
}

/// Appends `source`'s text to `b`; returns its `<title>`.
fn html_into(source: &str, b: &mut Builder) -> Option<String> {
    let lower = source.to_ascii_lowercase();
    let mut page = Page { b, line: String::new(), heading: None, pre: 0 };
    let mut title = None;
    let mut scan = Scan { last_gt: source.rfind('>'), quotes: true };
    let mut text_from = 0;
    let mut i = 0;
    while let Some(p) = source[i..].find('<') {
        let lt = i + p;
        let Some((markup, end)) = markup_at(source, &lower, lt, &mut scan) else {
            i = lt + 1;
            continue;
        };
        page.text(&source[text_from..lt]);
        (i, text_from) = (end, end);
        let (name, attrs) = match markup {
            Markup::Ignored => continue,
            Markup::End(name) => {
                page.end_tag(name);
                continue;
            }
            Markup::Start(name, attrs) => (name, attrs),
        };
        if HIDDEN.contains(&name) || name == "title" || name == "textarea" {
            // Raw text up to the matching end tag (or the end, as a browser reads it).
            let close = find_end_tag(&lower, end, name);
            let content = &source[end..close.map_or(source.len(), |(at, _)| at)];
            match name {
                "title" if title.is_none() => {
                    title = Some(collapse(&decode_entities(content))).filter(|t| !t.is_empty());
                }
                "textarea" => page.text(content),
                _ => {}
            }
            let after = close.map_or(source.len(), |(_, after)| after);
            (i, text_from) = (after, after);
            continue;
        }
        if name == "img"
            && let Some(alt) = attribute(attrs, "alt")
        {
            page.text(&format!(" {alt} "));
        }
        page.start_tag(name);
    }
    page.text(&source[text_from..]);
    page.flush();
    page.close_heading();
    title
}

/// What the tag scanner knows of the whole document.
struct Scan {
    /// No tag can end past the last `>`: a `<` after it is text.
    last_gt: Option<usize>,
    /// Whether quotes in tags are still trusted: after one unclosed quote, the first `>` ends
    /// every tag (else each later tag would scan to the end again: quadratic).
    quotes: bool,
}

/// What starts at `source[lt]` (a `<`), if it is markup, and the byte after it. `lower` is
/// `source` ASCII-lowercased (same offsets).
fn markup_at<'a>(
    source: &'a str,
    lower: &'a str,
    lt: usize,
    scan: &mut Scan,
) -> Option<(Markup<'a>, usize)> {
    let bytes = source.as_bytes();
    let rest = &lower[lt..];
    if rest.starts_with("<!--") {
        // `<!-->` and `<!--->` are (empty) comments too; an unclosed one runs to the end.
        let end = lower[lt + 2..].find("-->").map_or(source.len(), |p| lt + 2 + p + 3);
        return Some((Markup::Ignored, end));
    }
    if scan.last_gt.is_none_or(|gt| gt < lt) {
        return None;
    }
    let next = bytes.get(lt + 1).copied().unwrap_or(b' ');
    let gt = |from: usize| lower[from..].find('>').map(|p| from + p + 1);
    match next {
        // `<!DOCTYPE …>`, `<![CDATA[…]]>`, `<?xml …?>`: not text.
        b'!' | b'?' => Some((Markup::Ignored, gt(lt + 1)?)),
        b'/' => match bytes.get(lt + 2) {
            Some(c) if c.is_ascii_alphabetic() => {
                let name = tag_name(lower, lt + 2);
                Some((Markup::End(name), tag_end(bytes, lt + 2 + name.len(), &mut scan.quotes)?))
            }
            // `</>` is nothing; `</ …>` a bogus comment.
            _ => Some((Markup::Ignored, gt(lt + 2)?)),
        },
        c if c.is_ascii_alphabetic() => {
            let name = tag_name(lower, lt + 1);
            let attrs_at = lt + 1 + name.len();
            let end = tag_end(bytes, attrs_at, &mut scan.quotes)?;
            Some((Markup::Start(name, &source[attrs_at..end - 1]), end))
        }
        _ => None,
    }
}

/// The raw value of attribute `name` (lowercase) in a start tag's attribute text.
fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    // Same offsets as `attrs`: only ASCII letters change.
    let lower = attrs.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        let starts_name = at == 0
            || matches!(
                lower.as_bytes()[at - 1],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'"' | b'\''
            );
        let rest = lower[from..].trim_start();
        if !starts_name || !rest.starts_with('=') {
            continue;
        }
        let value = attrs[attrs.len() - rest.len() + 1..].trim_start();
        return match value.as_bytes().first() {
            Some(&q @ (b'"' | b'\'')) => value[1..].split(char::from(q)).next(),
            _ => value.split(|c: char| c.is_ascii_whitespace()).next(),
        };
    }
    None
}

/// A tag's name: up to whitespace, `/` or `>`.
fn tag_name(lower: &str, from: usize) -> &str {
    let len = lower[from..]
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .unwrap_or(lower.len() - from);
    &lower[from..from + len]
}

/// The byte after the `>` that closes a tag whose attributes start at `from`; a `>` inside a
/// quoted attribute value does not close it. With an unclosed quote, the first `>` does (and
/// from then on `quotes` is false: quotes are ignored).
fn tag_end(bytes: &[u8], from: usize, quotes: &mut bool) -> Option<usize> {
    let mut j = from;
    while *quotes && j < bytes.len() {
        match bytes[j] {
            b'>' => return Some(j + 1),
            b'=' => {
                let value =
                    j + 1 + bytes[j + 1..].iter().take_while(|c| c.is_ascii_whitespace()).count();
                match bytes.get(value) {
                    Some(&q @ (b'"' | b'\'')) => {
                        match bytes[value + 1..].iter().position(|&c| c == q) {
                            Some(p) => j = value + 1 + p + 1,
                            None => *quotes = false,
                        }
                    }
                    _ => j = value,
                }
            }
            _ => j += 1,
        }
    }
    *quotes = false;
    bytes[from..].iter().position(|&c| c == b'>').map(|p| from + p + 1)
}

/// `</name` (followed by whitespace, `/` or `>`) from `from` on: where it starts and the byte
/// after its `>`.
fn find_end_tag(lower: &str, from: usize, name: &str) -> Option<(usize, usize)> {
    let needle = format!("</{name}");
    let mut at = from;
    while let Some(p) = lower[at..].find(&needle) {
        let start = at + p;
        let after_name = start + needle.len();
        match lower.as_bytes().get(after_name) {
            None => return Some((start, lower.len())),
            Some(c) if c.is_ascii_whitespace() || *c == b'/' || *c == b'>' => {
                let end = lower[after_name..].find('>').map_or(lower.len(), |p| after_name + p + 1);
                return Some((start, end));
            }
            Some(_) => at = after_name,
        }
    }
    None
}

/// The HTML text being gathered into a [`Builder`].
struct Page<'b> {
    b: &'b mut Builder,
    /// Decoded text since the last line break.
    line: String,
    /// The heading being read: level and decoded text.
    heading: Option<(usize, String)>,
    /// `<pre>` depth: whitespace is kept inside.
    pre: usize,
}

impl Page<'_> {
    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let text = htmlize::unescape(raw);
        match self.heading.as_mut() {
            Some((_, h)) => h.push_str(&text),
            None => self.line.push_str(&text),
        }
    }

    fn flush(&mut self) {
        if self.pre > 0 {
            let lines: Vec<&str> = self.line.lines().map(str::trim_end).collect();
            let kept = lines.join("\n");
            let kept = kept.trim_matches('\n');
            if !kept.trim().is_empty() {
                self.b.push(kept);
            }
        } else {
            let line = collapse(&self.line);
            if !line.is_empty() {
                self.b.space();
                self.b.push(&line);
            }
        }
        self.line.clear();
    }

    fn close_heading(&mut self) {
        if let Some((level, text)) = self.heading.take() {
            self.b.heading(level, &text);
        }
    }

    fn start_tag(&mut self, name: &str) {
        if let Some(level) = heading_level(name) {
            self.flush();
            self.close_heading();
            self.heading = Some((level, String::new()));
        } else if name == "pre" {
            self.flush();
            self.b.block_break();
            self.pre += 1;
        } else if name == "th" || name == "td" {
            self.line.push(' ');
        } else {
            self.break_at(name);
        }
    }

    fn end_tag(&mut self, name: &str) {
        if heading_level(name).is_some() {
            self.close_heading();
        } else if name == "pre" {
            self.flush();
            self.pre = self.pre.saturating_sub(1);
            self.b.block_break();
        } else {
            self.break_at(name);
        }
    }

    /// Block elements end the line (or the paragraph); inline ones change nothing.
    fn break_at(&mut self, name: &str) {
        if let Some((_, h)) = self.heading.as_mut() {
            // A block after the heading's text ends it (a missing `</h2>` must not make the rest
            // of the page a heading); before it (`<h1><div>Logo</div></h1>`) it is part of it.
            if BLOCKS.contains(&name) && !h.trim().is_empty() {
                self.close_heading();
                self.b.block_break();
            } else if BLOCKS.contains(&name) || LINES.contains(&name) {
                h.push(' ');
            }
        } else if BLOCKS.contains(&name) {
            self.flush();
            self.b.block_break();
        } else if LINES.contains(&name) {
            self.flush();
            self.b.line_break();
        }
    }
}

fn heading_level(name: &str) -> Option<usize> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(usize::from(d - b'0')),
        _ => None,
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// CSV to text: one line per row, `header: value` pairs joined by `; ` (empty values left
/// out), so a row found by search reads on its own. At most `max_rows` rows.
pub fn csv(bytes: &[u8], max_rows: usize) -> Result<Extracted, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("not CSV: {e}"))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let mut text = String::new();
    for (n, row) in reader.records().enumerate() {
        if n >= max_rows {
            return Err(format!("more than {max_rows} rows"));
        }
        let row = row.map_err(|e| format!("row {}: {e}", n + 2))?;
        let parts: Vec<String> = row
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.trim().is_empty())
            .map(|(i, v)| match headers.get(i).filter(|h| !h.is_empty()) {
                Some(h) => format!("{h}: {}", v.trim()),
                None => v.trim().to_owned(),
            })
            .collect();
        if !parts.is_empty() {
            text.push_str(&parts.join("; "));
            text.push('\n');
        }
    }
    Ok(Extracted::plain(text.trim_end()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The section in force where `needle` first occurs.
    fn section_of<'a>(e: &'a Extracted, needle: &str) -> &'a str {
        let at = e.text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in {:?}", e.text));
        e.section_at(at)
    }

    #[test]
    fn markdown_keeps_text_and_headings_as_context() {
        let md = "# Rates\n\nIntro with **bold** and [a link](https://x.example).\n\n## Fed\n\n- \
                  cut by 25bp\n- ![chart](c.png) next `meeting`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let e = markdown(md);
        assert_eq!(e.title.as_deref(), Some("Rates"));
        assert_eq!(
            e.text,
            "Rates\n\nIntro with bold and a link.\n\nFed\n\ncut by 25bp\nchart next meeting\n\na b\n1 2"
        );
        assert_eq!(section_of(&e, "cut by"), "Rates › Fed");
        assert_eq!(e.section_at(0), "Rates");
    }

    #[test]
    fn markdown_setext_headings_are_sections() {
        let e =
            markdown("Title\n=====\n\nIntro.\n\nSub\n---\n\nBody text.\n\n### Deep\n\nDeeper.\n");
        assert_eq!(e.title.as_deref(), Some("Title"));
        assert_eq!(e.text, "Title\n\nIntro.\n\nSub\n\nBody text.\n\nDeep\n\nDeeper.");
        assert_eq!(section_of(&e, "Intro."), "Title");
        assert_eq!(section_of(&e, "Body"), "Title › Sub");
        assert_eq!(section_of(&e, "Deeper"), "Title › Sub › Deep");
    }

    #[test]
    fn markdown_code_and_html_blocks() {
        let md = "Intro\n\n```rust\nlet x = a < b;\n```\n\n<div align=\"center\">\n<img alt=\"Logo\" \
                  src=\"l.png\"><br><b>Fast</b> &amp; small\n</div>\n\n<script>\ntrack();\n</script>\n\n\
                  Text with <kbd>Ctrl</kbd>+<kbd>C</kbd> &rsquo;quoted&rsquo;. <!-- note -->\n";
        let e = markdown(md);
        assert_eq!(
            e.text,
            "Intro\n\nlet x = a < b;\n\nLogo\nFast & small\n\nText with Ctrl+C ’quoted’."
        );
    }

    #[test]
    fn markdown_front_matter_is_not_text_but_may_title() {
        let e = markdown("---\ntitle: \"Desk notes\"\nowner: ops\n---\n\nSome notes.\n");
        assert_eq!((e.title.as_deref(), e.text.as_str()), (Some("Desk notes"), "Some notes."));
        let e = markdown("+++\ntitle = 'Hugo page'\n+++\n\nBody.\n");
        assert_eq!((e.title.as_deref(), e.text.as_str()), (Some("Hugo page"), "Body."));
    }

    #[test]
    fn html_drops_scripts_and_decodes_entities() {
        let h = "<html><head><title>Q3 &amp; outlook</title><style>p{}</style></head><body>\
                 <h1>Outlook</h1><p>Growth &gt; 2%<br>inflation&nbsp;cooling</p>\
                 <script>alert(1)</script><!-- hidden --><table><tr><td>a</td><td>b</td></tr></table></body></html>";
        let e = html(h);
        assert_eq!(e.title.as_deref(), Some("Q3 & outlook"));
        assert_eq!(e.text, "Outlook\n\nGrowth > 2%\ninflation cooling\n\na b");
        assert_eq!(section_of(&e, "Growth"), "Outlook");
    }

    #[test]
    fn html_every_entity_is_decoded() {
        let e = html(
            "<p>It&rsquo;s &mdash; &hellip; &#8217;&#x2014;&#X2014; &euro;5 &frac12; &notin; &copy 2024</p>",
        );
        assert_eq!(e.text, "It’s — … ’—— €5 ½ ∉ © 2024");
    }

    #[test]
    fn html_a_bare_less_than_is_text() {
        let e = html("<p>if a < b and x<3 or y <= 2, <3 and a<>b</p><p>kept</p>");
        assert_eq!(e.text, "if a < b and x<3 or y <= 2, <3 and a<>b\n\nkept");
        // A `<` with no `>` after it cannot start a tag.
        assert_eq!(html("<p>price <b>up</b> if q<r").text, "price up if q<r");
        // `>` in a quoted attribute does not end the tag.
        assert_eq!(html("<a title=\"a > b\" href='x>y'>link</a> after").text, "link after");
    }

    #[test]
    fn html_hidden_elements_and_comments_are_dropped() {
        let h = "a<script>if (x</b) {}</script>b<STYLE type=x>p>q{}</STYLE >c<noscript>no</noscript>\
                 d<!-- <p>gone</p> -->e<!---->f<![CDATA[x]]>g<?php y ?>h<template><p>t</p></template>i";
        assert_eq!(html(h).text, "abcdefghi");
        // An unclosed comment hides the rest, as in a browser.
        assert_eq!(html("<p>seen</p><!-- never closed <p>hidden").text, "seen");
    }

    #[test]
    fn html_headings_nest_and_pre_keeps_lines() {
        let h = "<h1>A</h1><p>one</p><h3>C</h3><p>three</p><h2>B</h2><p>two</p>\
                 <pre>\nx  = 1\n  y = 2\n</pre>";
        let e = html(h);
        assert_eq!(e.text, "A\n\none\n\nC\n\nthree\n\nB\n\ntwo\n\nx  = 1\n  y = 2");
        assert_eq!(section_of(&e, "three"), "A › C");
        assert_eq!(section_of(&e, "two"), "A › B");
        assert_eq!(e.title, None, "only <title> titles HTML");
        // An unclosed heading ends at the next block; a block before its text is part of it.
        let e = html("<h2>Rates<p>Held.</p><h1><div>Logo</div></h1><p>Body</p>");
        assert_eq!(e.text, "Rates\n\nHeld.\n\nLogo\n\nBody");
        assert_eq!((section_of(&e, "Held"), section_of(&e, "Body")), ("Rates", "Logo"));
    }

    #[test]
    fn csv_rows_become_named_lines() {
        let e = csv(b"symbol,price,note\nAAPL,190.5,\nMSFT,410,cloud\n", 10).unwrap();
        assert_eq!(e.text, "symbol: AAPL; price: 190.5\nsymbol: MSFT; price: 410; note: cloud");
        assert!(csv(b"a\n1\n2\n3\n", 2).unwrap_err().contains("more than 2 rows"));
    }

    #[test]
    fn entities_that_are_not_entities_stay() {
        assert_eq!(decode_entities("AT&T &#65;&#x42; &bogus; &"), "AT&T AB &bogus; &");
    }

    #[test]
    fn fixture_readme_markdown() {
        let e = markdown(include_str!("../../../tests/fixtures/kb-docs/ledger-sync-README.md"));
        assert_eq!(e.title.as_deref(), Some("Ledger Sync"));
        let text = &e.text;
        for line in [
            "Ledger Sync\n\nBuild status crates.io\n\nLedger Sync logo\nReconcile broker statements \
             with your general ledger, nightly.\n\n",
            "See the user guide or the changelog for details.\n",
            "cargo install ledger-sync --locked\nledger-sync --version\n",
            "Or download a prebuilt binary from the releases page.",
            "Setting Default Meaning\ntolerance 0.01 Largest break, in the account currency, that \
             is not reported\n",
            "export LEDGER_SYNC_IBKR_KEY=...\nexport LEDGER_SYNC_SAXO_KEY=...\n",
            "Note: a feed that fails three nights in a row is disabled until you run ledger-sync \
             feeds enable NAME.",
            "Trades are matched on ISIN, trade date and quantity.\nPrices may differ",
            "Fees are matched separately.\n\nBroker fees are booked to account 6420",
            "Interactive Brokers and Saxo feeds\nFIX drop-copy sessions\n",
            "Dual-licensed under MIT or Apache-2.0, at your option. MIT",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        for gone in ["https://", "[x]", "[^fees]", "ci-badge", "```", "|", "====", "----", "<p"] {
            assert!(!text.contains(gone), "{gone:?} in\n{text}");
        }
        let sections: Vec<&str> = e.sections.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(
            sections,
            [
                "Ledger Sync",
                "Ledger Sync › Installation",
                "Ledger Sync › Configuration",
                "Ledger Sync › Configuration › Broker feeds",
                "Ledger Sync › Configuration › Matching rules",
                "Ledger Sync › Roadmap",
                "Ledger Sync › License",
            ]
        );
        assert_eq!(section_of(&e, "cargo install"), "Ledger Sync › Installation");
        assert_eq!(section_of(&e, "cutoff 17:00"), "Ledger Sync › Configuration");
        assert_eq!(section_of(&e, "Broker fees"), "Ledger Sync › Configuration › Matching rules");
    }

    #[test]
    fn fixture_playbook_markdown() {
        let e = markdown(include_str!("../../../tests/fixtures/kb-docs/treasury-playbook.md"));
        assert_eq!(e.title.as_deref(), Some("Cash management playbook"), "the H1 wins");
        let text = &e.text;
        assert!(text.starts_with("Cash management playbook\n\nThis page describes"), "{text}");
        for line in [
            "at least 90 days of operating expenses in cash & equivalents. Questions go to the \
             #treasury channel.",
            "Balances above €2\u{a0}million are swept overnight",
            "Why 18:00?\n\nMost counterparties settle by 17:30;",
            "Payroll weeks: the threshold rises to €5 million.\n",
            "Counterparty limits\n\nNo more than 20% of cash may sit with one bank",
            "Tenor Max share Notes\n1 month 40% rolling\n3 months 30% laddered\n",
            "def within_limit(exposure, total):\n    # a < b keeps the share strictly under the \
             cap\n    return exposure / total < 0.20\n",
            "Ask the treasury desk or see the intranet page.",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        for gone in ["finance-ops", "mailto:", "intranet.example", "<details>", "```", "&euro;"] {
            assert!(!text.contains(gone), "{gone:?} in\n{text}");
        }
        assert_eq!(
            section_of(&e, "Payroll weeks"),
            "Cash management playbook › Sweep accounts › Exceptions"
        );
        assert_eq!(
            section_of(&e, "No more than 20%"),
            "Cash management playbook › Investment policy › Counterparty limits"
        );
        // A Setext (`---`) heading is level 2: it ends "Investment policy".
        assert_eq!(section_of(&e, "1 month 40%"), "Cash management playbook › Term deposits");
        assert_eq!(section_of(&e, "Ask the treasury"), "Cash management playbook › Contacts");
    }

    #[test]
    fn fixture_news_article_html() {
        let e = html(include_str!("../../../tests/fixtures/kb-docs/fed-holds-rates.html"));
        assert_eq!(
            e.title.as_deref(),
            Some("Fed holds rates steady as inflation cools — Markets Daily")
        );
        let text = &e.text;
        for line in [
            "\n\nBy Dana Whitfield • March 20, 2024, 2:31 p.m. ET\n\n",
            "\n\nWASHINGTON — The Federal Reserve left its benchmark rate unchanged at 5.25%–5.5% on \
             Wednesday, and officials’ median projection still shows three cuts this year.\n\n",
            "\n\n“We’re not far from the point where it’ll be appropriate to dial back,” Chair Jerome \
             Powell told reporters… adding that the committee wants “greater confidence” first.\n\n",
            "Jerome Powell at the press conference\nJerome Powell speaks after the two-day meeting. \
             Photo: Pool",
            "The statement dropped the phrase ‘further policy firming’. Core PCE inflation ran at \
             2.8%, so the gap a < b between inflation and the target is narrowing, though if x<3 per \
             cent holds for months the debate will shift.",
            "Year Median rate\n2024 4.6%\n2025 3.9%",
            "the S&P 500 closed at a record 5,224. Futures now price a cut by June with odds of 74%.",
            "Two-year yield   4.59%  -0.06\nTen-year yield   4.27%  -0.02",
            "© 2024 Markets Daily. All rights reserved.",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        for gone in [
            "dataLayer",
            "font-size",
            "renderAd",
            "NewsArticle",
            "site header",
            "JavaScript",
            "&mdash;",
            "&nbsp;",
            "&#",
        ] {
            assert!(!text.contains(gone), "{gone:?} in\n{text}");
        }
        let sections: Vec<&str> = e.sections.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(
            sections,
            [
                "Fed holds rates steady as inflation cools",
                "Fed holds rates steady as inflation cools › What changed in the statement",
                "Fed holds rates steady as inflation cools › What changed in the statement › The dot plot",
                "Fed holds rates steady as inflation cools › Market reaction",
            ]
        );
        assert_eq!(section_of(&e, "Home | Markets"), "", "before the first heading");
        assert_eq!(section_of(&e, "2025 3.9%"), sections[2]);
        assert_eq!(section_of(&e, "Two-year yield"), sections[3]);
    }

    #[test]
    fn fixture_old_style_html() {
        let e = html(include_str!("../../../tests/fixtures/kb-docs/glossary.html"));
        assert_eq!(e.title.as_deref(), Some("Glossary of fixed-income terms | Learn"));
        let text = &e.text;
        assert!(
            text.starts_with("Fixed-income glossary\n\nTerms used in our bond research"),
            "{text}"
        );
        for line in [
            "Last reviewed 2023\u{2011}11\u{2011}30.\n",
            "The curvature of a bond’s price–yield relationship. When convexity is positive and \
             yields fall by Δy, the price rises",
            "Macaulay duration\nThe weighted average time to the cash flows, in years.\nModified \
             duration\nMacaulay duration ÷ (1 + y/k); it measures price sensitivity.",
            "i.e. −8.5% × notional when the rate change is small (Δy<0.5%).",
            "quoted in basis points (1 bp = 0.01%). Note that 5 <= 7 and 3 <> 4 are not tags.",
            "Spreads widen when credit risk rises: see the chart.\n",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        assert!(text.ends_with("© Learn & Invest, 1999–2023 ©"), "{text}");
        for gone in ["browser is old", "not shown", "nor this", "spreads.html", "500bp"] {
            assert!(!text.contains(gone), "{gone:?} in\n{text}");
        }
        assert_eq!(section_of(&e, "Modified duration"), "Fixed-income glossary › Duration");
        assert_eq!(section_of(&e, "basis points"), "Fixed-income glossary › Spread");
    }

    #[test]
    fn adversarial_html_is_scanned_in_linear_time() {
        // Each of these made a naive scanner rescan to the end at every `<` (quadratic: minutes
        // at this size); all finish at once here.
        let n = 100_000;
        for (source, kept) in [
            ("<a".repeat(n), true),
            ("<a =\">\" ".repeat(n), true),
            (format!("{}>", "<a x='".repeat(n)), false),
            ("</a".repeat(n), true),
            ("<!".repeat(n), true),
            (format!("<p>{}</p>", "x<3 ".repeat(n)), true),
        ] {
            let started = std::time::Instant::now();
            let e = html(&source);
            assert_eq!(!e.text.is_empty(), kept, "{}", &source[..20]);
            assert!(started.elapsed() < std::time::Duration::from_secs(20), "{}", &source[..20]);
        }
        let md = format!("{}\n\n{}", "> ".repeat(n / 10), "[a](".repeat(n));
        let _ = markdown(&md);
    }

    /// Markup that hides no text around it, for the survival property.
    const MARKDOWN_BITS: [&str; 24] = [
        "#",
        "##",
        "\n",
        "\n\n",
        "**",
        "_",
        "`",
        ">",
        "-",
        "1.",
        "|",
        "\n---\n",
        "\n===\n",
        "```",
        "~~~",
        "    ",
        "[",
        "](http://x.example)",
        "![",
        "<b>",
        "</b>",
        "<div>",
        "&amp;",
        "<",
    ];
    const HTML_BITS: [&str; 24] = [
        "<p>",
        "</p>",
        "<br/>",
        "<h2>",
        "</h2>",
        "<div class=\"a > b\">",
        "</div>",
        "<td>",
        "<tr>",
        "<!-- gone -->",
        "<script>var s = '</p>';</script>",
        "<style>p{}</style>",
        "<pre>",
        "</pre>",
        "&amp;",
        "&rsquo;",
        "&#8217;",
        "<",
        "x<3",
        "a < b",
        "<=",
        "\n",
        "<img alt=\"pic\">",
        "&",
    ];

    fn doc(bits: &'static [&'static str]) -> impl Strategy<Value = (String, Vec<String>)> {
        prop::collection::vec(("[a-z]{3,8}", prop::sample::select(bits)), 0..40).prop_map(|parts| {
            let words: Vec<String> = parts.iter().map(|(w, _)| w.clone()).collect();
            let mut doc = String::from("Start");
            for (w, bit) in &parts {
                doc.push(' ');
                doc.push_str(bit);
                doc.push(' ');
                doc.push_str(w);
            }
            (doc, words)
        })
    }

    fn well_formed(e: &Extracted) {
        let mut last = None;
        for (at, section) in &e.sections {
            assert!(*at < e.text.len() && e.text.is_char_boundary(*at), "{at} in {:?}", e.text);
            assert!(last.is_none_or(|l| l < *at), "offsets ascend");
            assert!(!section.is_empty());
            last = Some(*at);
        }
    }

    proptest! {
        #[test]
        fn no_input_panics(s in "\\PC*", bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            for e in [markdown(&s), html(&s), html(&String::from_utf8_lossy(&bytes))] {
                well_formed(&e);
            }
            let _ = csv(&bytes, 100);
        }

        #[test]
        fn markup_like_input_does_not_panic(
            parts in prop::collection::vec(prop::sample::select(
                ["<", ">", "</", "<!--", "-->", "\"", "'", "=", "&", "#", ";", "<a", "<h1>", "</h1>",
                 "<pre>", "<script>", "</script", "`", "```", "*", "\n", "|", "---", "[", "]", "(", ")"]
                 .to_vec()), 0..60)
        ) {
            let s = parts.concat();
            well_formed(&markdown(&s));
            well_formed(&html(&s));
        }

        #[test]
        fn markdown_text_outside_markup_survives((source, words) in doc(&MARKDOWN_BITS)) {
            let e = markdown(&source);
            well_formed(&e);
            for w in &words {
                prop_assert!(e.text.contains(w.as_str()), "{w:?} lost from {source:?}: {:?}", e.text);
            }
        }

        #[test]
        fn html_text_outside_markup_survives((source, words) in doc(&HTML_BITS)) {
            let e = html(&source);
            well_formed(&e);
            for w in &words {
                prop_assert!(e.text.contains(w.as_str()), "{w:?} lost from {source:?}: {:?}", e.text);
            }
        }
    }
}
