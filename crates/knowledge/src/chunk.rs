//! Chunking with overlap: a text cut into byte ranges of at most `max` bytes, each cut at the
//! strongest boundary available (paragraph, line, sentence, word, then any character), each
//! next chunk starting up to `overlap` bytes before the previous one ended (at a word start
//! when there is one), so a passage that straddles a cut is whole in one of the two chunks.
//!
//! Pure: knows nothing of documents or the index. The guarantees, checked by property tests:
//! every byte of the text is in some chunk, no chunk is longer than `max`, consecutive chunks
//! overlap by at most `overlap` bytes, and chunks advance.

use std::ops::Range;

/// How texts are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Longest chunk in bytes.
    pub max: usize,
    /// Most bytes a chunk repeats of the previous one.
    pub overlap: usize,
}

impl Default for ChunkConfig {
    /// ~1000 bytes (≈ 200 English words, a few paragraphs) with 150 bytes of overlap.
    fn default() -> Self {
        Self { max: 1000, overlap: 150 }
    }
}

/// The byte ranges of `text`'s chunks, in order. Empty for an empty text. `overlap` is clamped
/// below `max / 2` so chunks always advance by at least half a chunk.
pub fn chunks(text: &str, config: ChunkConfig) -> Vec<Range<usize>> {
    let max = config.max.max(8);
    let overlap = config.overlap.min(max / 2);
    let len = text.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let end = if len - start <= max { len } else { cut(text, start, start + max, max) };
        out.push(start..end);
        if end >= len {
            break;
        }
        start = next_start(text, start, end, overlap);
    }
    out
}

/// Where to end a chunk that starts at `start` and may reach `limit` (< text length): the last
/// paragraph break, else line break, else sentence end, else word break in the second half of
/// the window; else the last character boundary.
fn cut(text: &str, start: usize, limit: usize, max: usize) -> usize {
    let limit = floor_char(text, limit);
    let window = &text[start..limit];
    let min = max / 2;
    let after = |pat: &str| {
        window.rmatch_indices(pat).map(|(i, m)| i + m.len()).find(|&i| i >= min && i > 0)
    };
    let sentence = || {
        window
            .char_indices()
            .rev()
            .find(|&(i, c)| {
                i >= min
                    && c.is_whitespace()
                    && window[..i].ends_with(['.', '!', '?', '。', '！', '？', ';'])
            })
            .map(|(i, c)| i + c.len_utf8())
    };
    let word = || {
        window
            .char_indices()
            .rev()
            .find(|&(i, c)| i >= min && c.is_whitespace())
            .map(|(i, c)| i + c.len_utf8())
    };
    let cjk_stop = || {
        // CJK text has no spaces: a full stop or comma is the next best boundary.
        window
            .char_indices()
            .rev()
            .find(|&(i, c)| i >= min && matches!(c, '。' | '！' | '？' | '，' | '；' | '、'))
            .map(|(i, c)| i + c.len_utf8())
    };
    let at = after("\n\n")
        .or_else(|| after("\n"))
        .or_else(sentence)
        .or_else(cjk_stop)
        .or_else(word)
        .unwrap_or(window.len());
    let end = start + at;
    if end > start { end } else { ceil_char(text, start + 1) }
}

/// Where the chunk after `start..end` begins: `overlap` bytes before `end`, moved forward to
/// the next word start within the overlap (so the chunk does not begin mid-word), never at or
/// before `start`.
fn next_start(text: &str, start: usize, end: usize, overlap: usize) -> usize {
    if overlap == 0 {
        return end;
    }
    let from = ceil_char(text, end.saturating_sub(overlap).max(start + 1));
    if from >= end {
        return end;
    }
    let window = &text[from..end];
    // At a word start already (the byte before is whitespace): keep it.
    if text[..from].ends_with(char::is_whitespace) {
        return from;
    }
    match window.char_indices().find(|&(_, c)| c.is_whitespace()) {
        Some((i, c)) if from + i + c.len_utf8() < end => from + i + c.len_utf8(),
        _ => from,
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn check(text: &str, config: ChunkConfig) -> Result<(), TestCaseError> {
        let got = chunks(text, config);
        let max = config.max.max(8);
        let overlap = config.overlap.min(max / 2);
        if text.is_empty() {
            prop_assert!(got.is_empty());
            return Ok(());
        }
        prop_assert_eq!(got.first().unwrap().start, 0);
        prop_assert_eq!(got.last().unwrap().end, text.len());
        for r in &got {
            prop_assert!(r.end > r.start, "empty chunk {r:?}");
            // A single character longer than the limit is the only exception.
            let one_char = text[r.clone()].chars().count() == 1;
            prop_assert!(r.len() <= max || one_char, "chunk {r:?} over {max}");
            prop_assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        }
        for pair in got.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            prop_assert!(b.start > a.start, "no progress: {a:?} {b:?}");
            prop_assert!(b.start <= a.end, "gap between {a:?} and {b:?}: bytes lost");
            prop_assert!(a.end - b.start <= overlap, "overlap {a:?} {b:?} over {overlap}");
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn every_byte_is_covered_and_chunks_are_bounded(
            text in "(\\PC{0,12}[ .\n]{0,3}){0,200}",
            max in 8usize..400,
            overlap in 0usize..200,
        ) {
            check(&text, ChunkConfig { max, overlap })?;
        }

        #[test]
        fn cjk_and_mixed_text_is_cut_on_char_boundaries(
            text in "([一-龥]{0,30}[。，]?[a-z ]{0,5}){0,80}",
            max in 8usize..200,
        ) {
            check(&text, ChunkConfig { max, overlap: max / 3 })?;
        }
    }

    #[test]
    fn paragraphs_are_preferred_over_words() {
        let text = format!("{}\n\n{}", "alpha ".repeat(30), "beta ".repeat(30));
        let got = chunks(&text, ChunkConfig { max: 200, overlap: 0 });
        assert_eq!(&text[got[0].clone()], format!("{}\n\n", "alpha ".repeat(30)));
        assert!(text[got[1].clone()].starts_with("beta"));
    }

    #[test]
    fn overlap_starts_at_a_word() {
        let text = "one two three four five six seven eight nine ten ".repeat(10);
        let got = chunks(&text, ChunkConfig { max: 100, overlap: 30 });
        assert!(got.len() > 3);
        for r in &got[1..] {
            assert!(text[..r.start].ends_with(' '), "{:?}", &text[r.clone()]);
            assert!(r.start < got[0].end || r.start > 0);
        }
    }
}
