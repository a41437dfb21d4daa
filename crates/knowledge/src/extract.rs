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
    Start(&'a str),
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
        let name = match markup {
            Markup::Ignored => continue,
            Markup::End(name) => {
                page.end_tag(name);
                continue;
            }
            Markup::Start(name) => name,
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
    source: &str,
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
            Some((Markup::Start(name), tag_end(bytes, lt + 1 + name.len(), &mut scan.quotes)?))
        }
        _ => None,
    }
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
            if BLOCKS.contains(&name) || LINES.contains(&name) {
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

    #[test]
    fn markdown_keeps_text_and_headings_as_context() {
        let md = "# Rates\n\nIntro with **bold** and [a link](https://x.example).\n\n## Fed\n\n- \
                  cut by 25bp\n- ![chart](c.png) next `meeting`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let e = markdown(md);
        assert_eq!(e.title.as_deref(), Some("Rates"));
        assert!(e.text.contains("Intro with bold and a link."), "{}", e.text);
        assert!(e.text.contains("cut by 25bp"));
        assert!(e.text.contains(" next meeting"));
        assert!(!e.text.contains("c.png") && !e.text.contains("https://"));
        let at = e.text.find("cut by").unwrap();
        assert_eq!(e.section_at(at), "Rates › Fed");
        assert_eq!(e.section_at(0), "Rates");
    }

    #[test]
    fn html_drops_scripts_and_decodes_entities() {
        let h = "<html><head><title>Q3 &amp; outlook</title><style>p{}</style></head><body>\
                 <h1>Outlook</h1><p>Growth &gt; 2%<br>inflation&nbsp;cooling</p>\
                 <script>alert(1)</script><!-- hidden --><table><tr><td>a</td><td>b</td></tr></table></body></html>";
        let e = html(h);
        assert_eq!(e.title.as_deref(), Some("Q3 & outlook"));
        assert_eq!(e.text, "Outlook\n\nGrowth > 2%\ninflation cooling\n\na b");
        assert_eq!(e.section_at(e.text.find("Growth").unwrap()), "Outlook");
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
}
