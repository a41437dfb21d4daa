//! Small text measures shared by every layer: a rough token estimate, cutting text to a length
//! for messages, an error with its causes in one line, the "did you mean" match of a
//! misspelt name, and a title as a file name. Knows nothing of the layers that use it.

/// `error: its source: that one's source…`, the way the log shows an internal error.
pub fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let more = cause.to_string();
        // thiserror's `{0}`-style messages often repeat their source verbatim.
        if !text.ends_with(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        next = cause.source();
    }
    text
}

/// Rough token count of `text`: CJK characters count one token each, other text about four
/// characters a token (the ratio of common BPE vocabularies on English and code).
pub fn estimate_tokens(text: &str) -> usize {
    let mut cjk = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk + other.div_ceil(4)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF // hangul
        | 0xF900..=0xFAFF
        | 0xFF00..=0xFFEF
        | 0x3000..=0x303F
        | 0x20000..=0x2FFFF)
}

/// `text` cut to at most `max_chars` characters (never inside a character), with `…` appended
/// when something was cut: how long values are quoted in error messages.
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// Up to three names closest to `wanted` (case-insensitive Jaro-Winkler, plus substring
/// matches), best first.
pub fn closest(wanted: &str, names: &[&str]) -> Vec<String> {
    let w = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = names
        .iter()
        .map(|n| {
            let l = n.to_lowercase();
            let mut s = strsim::jaro_winkler(&w, &l);
            if !w.is_empty() && (l.contains(&w) || w.contains(&l)) {
                s += 0.2;
            }
            (s, *n)
        })
        .filter(|(s, _)| *s >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    // A clear winner is shown alone; near-ties are all shown.
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|(s, _)| *s >= best - 0.1)
        .take(3)
        .map(|(_, n)| n.to_owned())
        .collect()
}

/// `title` as a file name's stem: its ASCII letters and digits, lower-cased, in words joined
/// by `-` (a `Content-Disposition` header takes nothing else plainly); empty when none.
pub fn slug(title: &str) -> String {
    title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tokens_count_cjk_per_char() {
        assert_eq!(estimate_tokens("你好世界"), 4);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("abc你"), 2);
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn clip_cuts_on_characters_and_marks_the_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("黄金价格", 2), "黄金…");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("a", 0), "…");
    }

    proptest! {
        #[test]
        fn clip_keeps_a_prefix_of_at_most_max_chars(s in ".{0,40}", n in 0usize..50) {
            let out = clip(&s, n);
            let kept = out.strip_suffix('…').filter(|_| s.chars().count() > n).unwrap_or(&out);
            prop_assert!(s.starts_with(kept));
            prop_assert_eq!(kept.chars().count(), s.chars().count().min(n));
        }
    }

    #[test]
    fn slugs_are_ascii_words() {
        assert_eq!(super::slug("BTC watch: 24h / perps"), "btc-watch-24h-perps");
        assert_eq!(super::slug("  ---  "), "");
        assert_eq!(super::slug("Überblick Märkte 2026"), "berblick-m-rkte-2026");
    }
}
