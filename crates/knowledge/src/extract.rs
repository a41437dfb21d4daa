//! Document formats to plain text: Markdown (markup stripped, headings kept as the context of
//! the text under them), HTML (tags and scripts dropped, entities decoded, the `<title>`),
//! CSV (one line per row, each value named by its header). Pure and bounded by the caller's
//! input size; knows nothing of chunks or storage. PDFs are parsed in a child process
//! (`worker`), never here.

/// A document's text, and the heading path in force from each byte offset on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The plain text.
    pub text: String,
    /// `(offset, "Heading › Subheading")`, ascending offsets.
    pub sections: Vec<(usize, String)>,
    /// A title the content gives itself (HTML `<title>`, a Markdown document's first `#`).
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

/// Markdown to text: headings become their own lines and the context of what follows; list
/// markers, emphasis, code fences, link targets, images and HTML tags are dropped; table pipes
/// become spaces.
pub fn markdown(source: &str) -> Extracted {
    let mut out = Extracted::default();
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            out.text.push_str(line);
            out.text.push('\n');
            continue;
        }
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with([' ', '\t']) {
            let heading = inline(trimmed[hashes..].trim().trim_end_matches('#').trim());
            if hashes == 1 && out.title.is_none() {
                out.title = Some(heading.clone());
            }
            path.retain(|(level, _)| *level < hashes);
            path.push((hashes, heading.clone()));
            let joined = path.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>().join(" › ");
            if !out.text.is_empty() && !out.text.ends_with("\n\n") {
                out.text.push('\n');
            }
            out.sections.push((out.text.len(), joined));
            out.text.push_str(&heading);
            out.text.push('\n');
            continue;
        }
        // Setext underlines and horizontal rules carry no text.
        if !trimmed.is_empty() && trimmed.chars().all(|c| matches!(c, '=' | '-' | '*' | '_' | ' '))
        {
            continue;
        }
        let body = strip_list_marker(trimmed.trim_start_matches('>').trim_start());
        let body = if body.contains('|') {
            body.replace('|', " ").trim().to_owned()
        } else {
            body.to_owned()
        };
        out.text.push_str(&inline(&body));
        out.text.push('\n');
    }
    out.text = out.text.trim_end().to_owned();
    out
}

fn strip_list_marker(line: &str) -> &str {
    for m in ["- [ ] ", "- [x] ", "- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(m) {
            return rest;
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0
        && digits < 4
        && let Some(rest) =
            line[digits..].strip_prefix(". ").or_else(|| line[digits..].strip_prefix(") "))
    {
        return rest;
    }
    line
}

/// Inline Markdown to text: `![alt](src)` dropped, `[text](url)` → text, emphasis and code
/// markers and inline tags removed.
fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => {
                // An image: skip `![alt](src)` whole.
                if let Some(end) = link_end(&chars, i + 1) {
                    i = end;
                    continue;
                }
                out.push(c);
            }
            '[' => {
                if let Some(end) = link_end(&chars, i) {
                    let close = chars[i..].iter().position(|&c| c == ']').map_or(i, |p| i + p);
                    out.extend(&chars[i + 1..close]);
                    i = end;
                    continue;
                }
                out.push(c);
            }
            '*' | '`' => {}
            '_' if i == 0
                || !chars[i - 1].is_alphanumeric()
                || chars.get(i + 1).is_none_or(|n| !n.is_alphanumeric()) => {}
            '<' => {
                // An inline tag (`<br>`, `<span ...>`): dropped; a lone `<` stays.
                match chars[i..].iter().position(|&c| c == '>') {
                    Some(p)
                        if p < 200
                            && chars
                                .get(i + 1)
                                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '/') =>
                    {
                        i += p + 1;
                        continue;
                    }
                    _ => out.push(c),
                }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// For `[text](target)` starting at `open` (the `[`): the index after `)`.
fn link_end(chars: &[char], open: usize) -> Option<usize> {
    let close = open + chars[open..].iter().position(|&c| c == ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let paren = close + 1 + chars[close + 1..].iter().position(|&c| c == ')')?;
    Some(paren + 1)
}

/// HTML to text: `<script>`, `<style>`, `<noscript>`, `<template>` and comments dropped, block
/// elements become line breaks, headings sections, entities decoded, whitespace collapsed.
pub fn html(source: &str) -> Extracted {
    let mut out = Extracted::default();
    let lower = source.to_ascii_lowercase();
    let mut i = 0;
    let mut line = String::new();
    let mut heading: Option<(usize, String)> = None;
    let flush = |line: &mut String, out: &mut Extracted| {
        let t = collapse(&decode_entities(line));
        if !t.is_empty() {
            out.text.push_str(&t);
            out.text.push('\n');
        }
        line.clear();
    };
    while i < source.len() {
        if lower[i..].starts_with("<!--") {
            i = lower[i..].find("-->").map_or(source.len(), |p| i + p + 3);
            continue;
        }
        if source.as_bytes()[i] == b'<' {
            let Some(close) = source[i..].find('>') else { break };
            let tag = &lower[i + 1..i + close];
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let closing = tag.starts_with('/');
            i += close + 1;
            if !closing
                && matches!(
                    name.as_str(),
                    "script" | "style" | "noscript" | "template" | "title" | "svg"
                )
            {
                let end_tag = format!("</{name}");
                let end = lower[i..].find(&end_tag).map_or(source.len(), |p| i + p);
                if name == "title" {
                    let t = collapse(&decode_entities(&source[i..end]));
                    if !t.is_empty() {
                        out.title = Some(t);
                    }
                }
                i = lower[end..].find('>').map_or(source.len(), |p| end + p + 1);
                continue;
            }
            let heading_level = matches!(name.as_str(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
            let block = heading_level
                || matches!(
                    name.as_str(),
                    "p" | "div"
                        | "br"
                        | "li"
                        | "tr"
                        | "section"
                        | "article"
                        | "header"
                        | "footer"
                        | "table"
                        | "ul"
                        | "ol"
                        | "pre"
                        | "blockquote"
                        | "hr"
                        | "dd"
                        | "dt"
                        | "main"
                        | "nav"
                        | "aside"
                        | "figure"
                        | "figcaption"
                );
            if name == "td" || name == "th" {
                line.push(' ');
            }
            if block {
                flush(&mut line, &mut out);
                if heading_level && !closing {
                    heading = Some((out.text.len(), String::new()));
                } else if heading_level
                    && closing
                    && let Some((start, h)) = heading.take()
                {
                    let h = collapse(&decode_entities(&h));
                    if !h.is_empty() {
                        out.sections.push((start, h));
                    }
                }
            }
            continue;
        }
        let next = source[i..].find('<').map_or(source.len(), |p| i + p);
        line.push_str(&source[i..next]);
        if let Some((_, h)) = heading.as_mut() {
            h.push_str(&source[i..next]);
        }
        i = next;
    }
    flush(&mut line, &mut out);
    out.text = out.text.trim_end().to_owned();
    out
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#39;`, `&nbsp;`, `&#NNN;`, `&#xHH;`; anything
/// else is left as written.
pub fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..semi];
        let decoded = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
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
        assert_eq!(e.text, "Outlook\nGrowth > 2%\ninflation cooling\na b");
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
