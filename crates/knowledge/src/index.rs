//! The tantivy index under `<data>/kb/index`: the one durable home of everything the knowledge
//! bases hold. Three kinds of tantivy documents share one schema:
//!
//! - `base`: a knowledge base's record (`meta`: its JSON), keyed by `kb`;
//! - `doc`: a document's record (`meta`), keyed by `kb` and `doc`;
//! - `chunk`: one chunk: `title` (document title and heading path) and `body` (the chunk text),
//!   both BM25-indexed, `vec` its embedding (little-endian `f32`s) when one was computed.
//!
//! A write (a base, or a document with all its chunks) is one tantivy commit, so a crash keeps
//! a document whole or not at all; deleting a document deletes its term `doc` (record and
//! chunks together), deleting a base its term `kb`. Text is tokenized by [`KbTokenizer`]:
//! words of letters and digits, lowercased and stemmed (English), and CJK runs as overlapping
//! character bigrams, so Chinese and Japanese text is findable without a dictionary.

use std::collections::HashSet;
use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value as _,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// The tokenizer's name in the index.
const TOKENIZER: &str = "kb";

/// Heap of the one index writer: one indexing thread (writes are serialized anyway, and the
/// machine's cores are for the server), one segment per commit.
const WRITER_HEAP: usize = 32 << 20;

/// The schema's fields.
#[derive(Debug, Clone, Copy)]
struct Fields {
    kind: Field,
    kb: Field,
    doc: Field,
    seq: Field,
    title: Field,
    body: Field,
    meta: Field,
    vec: Field,
}

/// A chunk to write (also as a shared store keeps it, JSON).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NewChunk {
    /// Its number within the document.
    pub seq: u64,
    /// Document title and heading path (indexed with a boost).
    pub title: String,
    /// The chunk text.
    pub body: String,
    /// Its embedding, when one was computed.
    pub vector: Option<Vec<f32>>,
}

/// A chunk found by BM25.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Its base.
    pub kb: String,
    /// Its document.
    pub doc: String,
    /// Its number within the document.
    pub seq: u64,
    /// The chunk text.
    pub body: String,
    /// BM25 score.
    pub score: f32,
}

/// A stored chunk's vector, read back at open.
#[derive(Debug, Clone)]
pub struct StoredVector {
    /// Its base.
    pub kb: String,
    /// Its document.
    pub doc: String,
    /// Its number within the document.
    pub seq: u64,
    /// The embedding.
    pub vector: Vec<f32>,
}

/// Everything read back at open: records of bases and documents, and the vectors.
#[derive(Debug, Default)]
pub struct Loaded {
    /// `(kb, meta JSON)` of every base.
    pub bases: Vec<(String, String)>,
    /// `(kb, doc, meta JSON)` of every document.
    pub docs: Vec<(String, String, String)>,
    /// Every stored chunk vector.
    pub vectors: Vec<StoredVector>,
}

/// The index: one writer (behind a mutex: writes are serialized), a reader reloaded after
/// every commit. All methods block: callers run them on the blocking pool.
pub struct KbIndex {
    writer: std::sync::Mutex<IndexWriter>,
    reader: IndexReader,
    f: Fields,
}

impl std::fmt::Debug for KbIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KbIndex").finish_non_exhaustive()
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let f = Fields {
        kind: b.add_text_field("kind", STRING),
        kb: b.add_text_field("kb", STRING | STORED),
        doc: b.add_text_field("doc", STRING | STORED),
        seq: b.add_u64_field("seq", STORED),
        title: b.add_text_field("title", text.clone()),
        body: b.add_text_field("body", text),
        meta: b.add_text_field("meta", STORED),
        vec: b.add_bytes_field("vec", STORED),
    };
    (b.build(), f)
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(KbTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

impl KbIndex {
    /// Opens the index in `dir`, creating it when absent.
    pub fn open(dir: &Path) -> tantivy::Result<Self> {
        // tantivy's own files follow the umask (`fs_private::restrict_umask`).
        base::fs_private::create_dir_all(dir)?;
        let (schema, f) = schema();
        let directory = tantivy::directory::MmapDirectory::open(dir)?;
        let index = Index::open_or_create(directory, schema)?;
        index.tokenizers().register(TOKENIZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_HEAP)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(Self { writer: std::sync::Mutex::new(writer), reader, f })
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn commit(&self, writer: &mut IndexWriter) -> tantivy::Result<()> {
        writer.commit()?;
        self.reader.reload()
    }

    /// Writes (or replaces) a base's record.
    pub fn put_base(&self, kb: &str, meta: &str) -> tantivy::Result<()> {
        let mut w = self.writer();
        w.delete_query(Box::new(self.record_query("base", kb, None)))?;
        let mut d = TantivyDocument::default();
        d.add_text(self.f.kind, "base");
        d.add_text(self.f.kb, kb);
        d.add_text(self.f.meta, meta);
        w.add_document(d)?;
        self.commit(&mut w)
    }

    /// Deletes a base and everything in it.
    pub fn delete_base(&self, kb: &str) -> tantivy::Result<()> {
        let mut w = self.writer();
        w.delete_term(Term::from_field_text(self.f.kb, kb));
        self.commit(&mut w)
    }

    /// Writes a document's record and chunks in one commit.
    pub fn put_document(
        &self,
        kb: &str,
        doc: &str,
        meta: &str,
        chunks: &[NewChunk],
    ) -> tantivy::Result<()> {
        let mut w = self.writer();
        let mut d = TantivyDocument::default();
        d.add_text(self.f.kind, "doc");
        d.add_text(self.f.kb, kb);
        d.add_text(self.f.doc, doc);
        d.add_text(self.f.meta, meta);
        w.add_document(d)?;
        for c in chunks {
            let mut d = TantivyDocument::default();
            d.add_text(self.f.kind, "chunk");
            d.add_text(self.f.kb, kb);
            d.add_text(self.f.doc, doc);
            d.add_u64(self.f.seq, c.seq);
            d.add_text(self.f.title, &c.title);
            d.add_text(self.f.body, &c.body);
            if let Some(v) = &c.vector {
                d.add_bytes(self.f.vec, &encode(v));
            }
            w.add_document(d)?;
        }
        self.commit(&mut w)
    }

    /// Deletes a document's record and all its chunks.
    pub fn delete_document(&self, doc: &str) -> tantivy::Result<()> {
        let mut w = self.writer();
        w.delete_term(Term::from_field_text(self.f.doc, doc));
        self.commit(&mut w)
    }

    fn record_query(&self, kind: &str, kb: &str, doc: Option<&str>) -> BooleanQuery {
        let term = |f: Field, v: &str| -> (Occur, Box<dyn Query>) {
            (
                Occur::Must,
                Box::new(TermQuery::new(Term::from_field_text(f, v), IndexRecordOption::Basic)),
            )
        };
        let mut parts = vec![term(self.f.kind, kind), term(self.f.kb, kb)];
        if let Some(d) = doc {
            parts.push(term(self.f.doc, d));
        }
        BooleanQuery::new(parts)
    }

    /// Reads every record and vector back (at open).
    pub fn load(&self) -> tantivy::Result<Loaded> {
        let searcher = self.reader.searcher();
        let mut out = Loaded::default();
        for segment in searcher.segment_readers() {
            let store = segment.get_store_reader(64)?;
            let alive = segment.alive_bitset();
            for id in 0..segment.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(id)) {
                    continue;
                }
                let d: TantivyDocument = store.get(id)?;
                let text = |f: Field| {
                    d.get_first(f).and_then(|v| v.as_str()).unwrap_or_default().to_owned()
                };
                let kb = text(self.f.kb);
                let doc = text(self.f.doc);
                let meta = d.get_first(self.f.meta).and_then(|v| v.as_str());
                if let Some(meta) = meta {
                    if doc.is_empty() {
                        out.bases.push((kb, meta.to_owned()));
                    } else {
                        out.docs.push((kb, doc, meta.to_owned()));
                    }
                } else if let Some(bytes) = d.get_first(self.f.vec).and_then(|v| v.as_bytes()) {
                    let seq = d.get_first(self.f.seq).and_then(|v| v.as_u64()).unwrap_or(0);
                    out.vectors.push(StoredVector { kb, doc, seq, vector: decode(bytes) });
                }
            }
        }
        Ok(out)
    }

    /// The `limit` best chunks of the bases `kbs` for `query` by BM25 (title matches count
    /// 1.5×). A query with no searchable token finds nothing.
    pub fn search(&self, kbs: &[String], query: &str, limit: usize) -> tantivy::Result<Vec<Hit>> {
        let mut analyzer = analyzer();
        let mut terms: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        let mut stream = analyzer.token_stream(query);
        while stream.advance() {
            let t = stream.token().text.clone();
            if seen.insert(t.clone()) {
                terms.push(t);
            }
        }
        if terms.is_empty() || kbs.is_empty() {
            return Ok(Vec::new());
        }
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in terms.iter().take(64) {
            for (field, boost) in [(self.f.body, 1.0), (self.f.title, 1.5)] {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqsAndPositions,
                );
                should.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let in_kbs: Vec<(Occur, Box<dyn Query>)> = kbs
            .iter()
            .map(|kb| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.f.kb, kb),
                    IndexRecordOption::Basic,
                ));
                (Occur::Should, q)
            })
            .collect();
        let query = BooleanQuery::new(vec![
            (Occur::Must, Box::new(BooleanQuery::new(should))),
            (Occur::Must, Box::new(BooleanQuery::new(in_kbs))),
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.f.kind, "chunk"),
                    IndexRecordOption::Basic,
                )),
            ),
        ]);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit.max(1)))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            let text =
                |f: Field| d.get_first(f).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            hits.push(Hit {
                kb: text(self.f.kb),
                doc: text(self.f.doc),
                seq: d.get_first(self.f.seq).and_then(|v| v.as_u64()).unwrap_or(0),
                body: text(self.f.body),
                score,
            });
        }
        Ok(hits)
    }

    /// Every chunk of `doc` as written, by seq (for copying an index elsewhere).
    pub fn chunks(&self, doc: &str) -> tantivy::Result<Vec<NewChunk>> {
        let searcher = self.reader.searcher();
        let top = searcher.search(&self.chunks_of(doc), &TopDocs::with_limit(super::MAX_CHUNKS))?;
        let mut out = Vec::with_capacity(top.len());
        for (_, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            let text = |f: Field| d.get_first(f).and_then(|v| v.as_str()).unwrap_or_default();
            out.push(NewChunk {
                seq: d.get_first(self.f.seq).and_then(|v| v.as_u64()).unwrap_or(0),
                title: text(self.f.title).to_owned(),
                body: text(self.f.body).to_owned(),
                vector: d.get_first(self.f.vec).and_then(|v| v.as_bytes()).map(decode),
            });
        }
        out.sort_by_key(|c| c.seq);
        Ok(out)
    }

    /// The query for the chunks of `doc`.
    fn chunks_of(&self, doc: &str) -> BooleanQuery {
        BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.f.doc, doc),
                    IndexRecordOption::Basic,
                )) as Box<dyn Query>,
            ),
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.f.kind, "chunk"),
                    IndexRecordOption::Basic,
                )),
            ),
        ])
    }

    /// The text of chunk `seq` of `doc` (for vector hits, which carry no text in memory).
    pub fn chunk_text(&self, doc: &str, seq: u64) -> tantivy::Result<Option<String>> {
        let searcher = self.reader.searcher();
        // A document has at most MAX_CHUNKS chunks: read them all and pick the one.
        let top = searcher.search(&self.chunks_of(doc), &TopDocs::with_limit(super::MAX_CHUNKS))?;
        for (_, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            if d.get_first(self.f.seq).and_then(|v| v.as_u64()) == Some(seq) {
                return Ok(d.get_first(self.f.body).and_then(|v| v.as_str()).map(str::to_owned));
            }
        }
        Ok(None)
    }

    /// Number of chunks in the index (all bases).
    pub fn chunk_count(&self) -> u64 {
        let q =
            TermQuery::new(Term::from_field_text(self.f.kind, "chunk"), IndexRecordOption::Basic);
        self.reader.searcher().search(&q, &tantivy::collector::Count).map_or(0, |n| n as u64)
    }
}

fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// Whether `c` is written without spaces between words (Han, kana, Hangul).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0x20000..=0x2FFFF)
}

/// Words of letters and digits (what tantivy's default tokenizer makes), except that a run of
/// CJK characters becomes its overlapping bigrams (a lone character stays a unigram).
#[derive(Debug, Clone, Copy, Default)]
pub struct KbTokenizer;

/// The tokens of one text, made up front (texts are a chunk or a query).
pub struct KbTokenStream {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokenizer for KbTokenizer {
    type TokenStream<'a> = KbTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> KbTokenStream {
        KbTokenStream { tokens: tokenize(text), at: 0 }
    }
}

impl TokenStream for KbTokenStream {
    fn advance(&mut self) -> bool {
        self.at += 1;
        self.at <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at - 1]
    }
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let push = |out: &mut Vec<Token>, from: usize, to: usize| {
        let position = out.len();
        out.push(Token {
            offset_from: from,
            offset_to: to,
            position,
            text: text[from..to].to_owned(),
            position_length: 1,
        });
    };
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_cjk(c) {
            let mut run = vec![(i, c)];
            while let Some(&(j, d)) = chars.peek() {
                if !is_cjk(d) {
                    break;
                }
                run.push((j, d));
                chars.next();
            }
            let end_of = |k: usize| run[k].0 + run[k].1.len_utf8();
            if run.len() == 1 {
                push(&mut out, run[0].0, end_of(0));
            }
            for k in 1..run.len() {
                push(&mut out, run[k - 1].0, end_of(k));
            }
        } else if c.is_alphanumeric() {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_alphanumeric() || is_cjk(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            push(&mut out, i, end);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        let mut a = analyzer();
        let mut stream = a.token_stream(s);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn words_are_lowercased_and_stemmed_and_cjk_is_bigrammed() {
        assert_eq!(
            texts("Rates RISING, yields-fell 2024"),
            ["rate", "rise", "yield", "fell", "2024"]
        );
        assert_eq!(texts("美联储降息"), ["美联", "联储", "储降", "降息"]);
        assert_eq!(texts("A股 上涨"), ["a", "股", "上涨"]);
    }

    #[test]
    fn documents_round_trip_and_delete_whole() {
        let dir = tempfile::tempdir().unwrap();
        let ix = KbIndex::open(dir.path()).unwrap();
        ix.put_base("kb1", "{\"name\":\"x\"}").unwrap();
        let chunk = |seq, body: &str| NewChunk {
            seq,
            title: "Doc".into(),
            body: body.into(),
            vector: Some(vec![1.0, 0.5]),
        };
        ix.put_document(
            "kb1",
            "d1",
            "{}",
            &[chunk(0, "bond yields rose"), chunk(1, "equities fell")],
        )
        .unwrap();
        ix.put_document("kb1", "d2", "{}", &[chunk(0, "央行宣布降息")]).unwrap();
        let hits = ix.search(&["kb1".into()], "yield", 5).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].doc.as_str(), hits[0].seq), ("d1", 0));
        assert_eq!(ix.search(&["kb1".into()], "降息", 5).unwrap()[0].doc, "d2");
        assert!(ix.search(&["other".into()], "yield", 5).unwrap().is_empty());
        assert_eq!(ix.chunk_text("d1", 1).unwrap().as_deref(), Some("equities fell"));
        let loaded = ix.load().unwrap();
        assert_eq!(loaded.bases.len(), 1);
        assert_eq!(loaded.docs.len(), 2);
        assert_eq!(loaded.vectors.len(), 3);
        assert_eq!(loaded.vectors[0].vector, [1.0, 0.5]);
        ix.delete_document("d1").unwrap();
        assert!(ix.search(&["kb1".into()], "yield", 5).unwrap().is_empty());
        assert_eq!(ix.chunk_count(), 1);
        drop(ix);
        let ix = KbIndex::open(dir.path()).unwrap();
        assert_eq!(ix.load().unwrap().docs.len(), 1, "durable across reopen");
        ix.delete_base("kb1").unwrap();
        let loaded = ix.load().unwrap();
        assert!(loaded.bases.is_empty() && loaded.docs.is_empty() && loaded.vectors.is_empty());
    }
}
