//! Builders of PDFs, honest and hostile, for the tests' hostile-document corpus and the
//! `bench hardening` figures: deep arrays and dictionaries, flate and text bombs, page
//! amplification, xref garbage, a page tree that contains itself. Never used by the server.
//!
//! Each builder writes a well-formed file structure (header, numbered objects, a correct
//! cross-reference table, trailer) around its payload, so what a parser meets is the hostile
//! part and not a broken envelope (unless that is the point).

use std::io::Write as _;

/// A PDF of the given objects (object `i + 1` is `objects[i]`, without `obj`/`endobj`);
/// object 1 must be the catalog.
pub fn assemble(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A stream object with `data` as its body.
fn stream(dict_extra: &str, data: &[u8]) -> Vec<u8> {
    let mut s = format!("<< /Length {}{dict_extra} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

fn deflate(chunks: impl Iterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for c in chunks {
        // Writing to a Vec cannot fail.
        let _ = z.write_all(&c);
    }
    z.finish().unwrap_or_default()
}

const FONT: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

/// Catalog, pages tree of `page_count` pages all drawn by content object `content` (an object
/// number), a font: objects 1..=3, the pages from 5 on (4 is left for the content).
fn pages_sharing(page_count: usize, content: Vec<u8>) -> Vec<u8> {
    pages_with_catalog(page_count, content, "")
}

/// [`pages_sharing`] with `catalog_extra` added to the catalog dictionary.
fn pages_with_catalog(page_count: usize, content: Vec<u8>, catalog_extra: &str) -> Vec<u8> {
    let kids: Vec<String> = (0..page_count).map(|i| format!("{} 0 R", i + 5)).collect();
    let mut objects = vec![
        format!("<< /Type /Catalog /Pages 2 0 R{catalog_extra} >>").into_bytes(),
        format!("<< /Type /Pages /Kids [{}] /Count {page_count} >>", kids.join(" ")).into_bytes(),
        FONT.to_vec(),
        content,
    ];
    for _ in 0..page_count {
        objects.push(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
                .to_vec(),
        );
    }
    assemble(&objects)
}

/// One page saying `text` (ASCII, no parentheses or backslashes).
pub fn text(text: &str) -> Vec<u8> {
    let ops = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    pages_sharing(1, stream("", ops.as_bytes()))
}

/// A valid one-page PDF whose catalog holds an array nested `depth` deep.
pub fn deep_array(depth: usize) -> Vec<u8> {
    nested(depth, "[", "]")
}

/// A valid one-page PDF whose catalog holds a dictionary nested `depth` deep.
pub fn deep_dictionary(depth: usize) -> Vec<u8> {
    nested(depth, "<< /A ", ">>")
}

fn nested(depth: usize, open: &str, close: &str) -> Vec<u8> {
    let mut deep = open.repeat(depth);
    deep.push_str(&close.repeat(depth));
    let ops = b"BT /F1 12 Tf 72 720 Td (deep) Tj ET";
    pages_with_catalog(1, stream("", ops), &format!(" /Deep {deep}"))
}

/// A page whose FlateDecode content stream inflates to about `inflated` zero bytes, at the
/// format's 1032 : 1 ceiling (1 GiB in 1 MiB).
pub fn flate_bomb(inflated: usize) -> Vec<u8> {
    pages_sharing(1, stream(" /Filter /FlateDecode", &zlib_zeros(inflated)))
}

/// Bits into bytes, least significant first (DEFLATE's order).
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, len: u32) {
        self.acc |= value << self.n;
        self.n += len;
        while self.n >= 8 {
            self.out.push((self.acc & 0xff) as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code: its bits go most significant first.
    fn code(&mut self, code: u64, len: u32) {
        let reversed = (0..len).fold(0, |r, i| (r << 1) | ((code >> i) & 1));
        self.put(reversed, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push((self.acc & 0xff) as u8);
        }
        self.out
    }
}

/// A zlib stream of about `len` zero bytes: one dynamic-Huffman DEFLATE block whose codes are
/// literal 0 = `10`, end = `11`, length 258 = `0` and distance 1 = `0`, so each 258 zeros
/// after the first cost two bits (the format's 1032:1 ceiling). Written by hand: no encoder
/// would choose these codes, and it takes no time to write 1 GiB's worth.
fn zlib_zeros(len: usize) -> Vec<u8> {
    let runs = len.saturating_sub(1) / 258;
    let total = 1 + runs * 258;
    let mut b = Bits::default();
    b.put(1, 1); // last block
    b.put(2, 2); // dynamic Huffman
    b.put(29, 5); // HLIT: 286 literal/length codes
    b.put(0, 5); // HDIST: 1 distance code
    b.put(14, 4); // HCLEN: 18 code-length codes
    // Code-length code lengths, in the format's order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2
    // 14 1: symbol 18 (runs of zeros) gets 1 bit, symbols 1 and 2 get 2.
    for l in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] {
        b.put(l, 3);
    }
    // Canonical codes of that code: 18 = `0`, 1 = `10`, 2 = `11`.
    let zeros = |b: &mut Bits, n: u64| {
        b.code(0, 1);
        b.put(n - 11, 7);
    };
    // Literal/length lengths: 0 → 2, 1..=255 → 0, 256 → 2, 257..=284 → 0, 285 → 1; then the
    // one distance code's length, 1.
    b.code(3, 2);
    zeros(&mut b, 138);
    zeros(&mut b, 117);
    b.code(3, 2);
    zeros(&mut b, 28);
    b.code(2, 2);
    b.code(2, 2);
    // The data: one literal zero, then (length 258, distance 1) repeated, then the end.
    b.code(2, 2);
    for _ in 0..runs {
        b.put(0, 2);
    }
    b.code(3, 2);
    let mut out = vec![0x78, 0x01];
    out.extend_from_slice(&b.finish());
    // Adler-32 of `total` zeros: a stays 1, b adds 1 per byte.
    let adler = (((total % 65_521) as u32) << 16) | 1;
    out.extend_from_slice(&adler.to_be_bytes());
    out
}

/// `pages` pages, each with its own compressed content of `lines` lines of 100 letters: a
/// small file of a great deal of text (one page of many lines is a memory bomb for the
/// parser's content decoding as well).
pub fn text_bomb(pages: usize, lines: usize) -> Vec<u8> {
    let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {pages} >>", kids.join(" ")).into_bytes(),
        FONT.to_vec(),
    ];
    for i in 0..pages {
        // Each page's letters differ, so no two pages share a content stream.
        let letter = char::from(b'A' + (i % 26) as u8);
        let line = format!("({}) Tj T*\n", letter.to_string().repeat(100)).into_bytes();
        let body = std::iter::once(b"BT /F1 12 Tf 14 TL 72 720 Td\n".to_vec())
            .chain(std::iter::repeat_n(line, lines))
            .chain(std::iter::once(format!("(page {i}) Tj ET").into_bytes()));
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ).into_bytes());
        objects.push(stream(" /Filter /FlateDecode", &deflate(body)));
    }
    assemble(&objects)
}

/// `pages` pages all drawn by one compressed content stream of `lines` short lines of text:
/// page amplification.
pub fn shared_stream_pages(pages: usize, lines: usize) -> Vec<u8> {
    let body = std::iter::once(b"BT /F1 12 Tf 14 TL 72 720 Td\n".to_vec())
        .chain((0..lines).map(|i| format!("(line {i}) Tj T*\n").into_bytes()))
        .chain(std::iter::once(b"ET".to_vec()));
    pages_sharing(pages, stream(" /Filter /FlateDecode", &deflate(body)))
}

/// A header followed by garbage where the objects and cross-references should be.
pub fn xref_garbage(len: usize) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..len {
        // xorshift: the same garbage every run.
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push((x & 0xff) as u8);
    }
    out.extend_from_slice(
        b"\nxref\n0 99999999\ntrailer\n<< /Root 1 0 R /Size 99999999 >>\nstartxref\n9\n%%EOF\n",
    );
    out
}

/// A page tree that is its own kid, and a page that is its own parent.
pub fn cyclic_pages() -> Vec<u8> {
    assemble(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Page /Parent 3 0 R /Contents 3 0 R >>".to_vec(),
    ])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_honest_builder_makes_a_pdf_lopdf_reads() {
        let pdf = text("Rates held at five percent");
        let doc = lopdf::Document::load_mem(&pdf).unwrap();
        assert_eq!(doc.get_pages().len(), 1);
        assert!(doc.extract_text(&[1]).unwrap().contains("Rates held at five percent"));
    }

    #[test]
    fn the_bomb_inflates_to_zeros_of_the_size_asked() {
        let pdf = flate_bomb(1 << 20);
        assert!(pdf.len() < 3000, "{} bytes", pdf.len());
        let doc = lopdf::Document::load_mem(&pdf).unwrap();
        let page = *doc.get_pages().values().next().unwrap();
        // The stream itself: a page's content (lopdf ≥ 0.47) ends each stream with a newline.
        let stream = doc.get_page_contents(page)[0];
        let content =
            doc.get_object(stream).unwrap().as_stream().unwrap().decompressed_content().unwrap();
        assert_eq!(content.len(), 1 + ((1 << 20) - 1) / 258 * 258);
        assert!(content.iter().all(|b| *b == 0));
    }

    #[test]
    fn bombs_are_small() {
        assert!(flate_bomb(64 << 20).len() < 200 << 10);
        assert!(text_bomb(4, 10_000).len() < 64 << 10);
    }
}
