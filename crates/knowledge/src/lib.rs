//! Knowledge bases: named collections of documents (text, Markdown, HTML pages fetched by URL,
//! CSV, PDF) cut into overlapping chunks ([`chunk`]) and searched by hybrid retrieval: BM25
//! over a tantivy index ([`index`]) always, and, when an embedding model is configured
//! (`[knowledge] embeddingModel`, `BOARDSMITH_KB_EMBEDDING_MODEL`), cosine similarity over the
//! chunks' vectors, the two rankings fused by reciprocal rank fusion.
//!
//! Owns everything under `<data>/kb/`: the index holds the bases' and documents' records, the
//! chunks and their vectors (one commit per write), and is the only durable state; the
//! in-memory catalog and vector table are rebuilt from it at open. With several nodes
//! ([`Knowledge::open_shared`]) the store holds them instead and the index is a cache
//! (`shared`). Vectors come from the
//! provider layer (`llm::Models::embed`); URLs are fetched only through the data layer's
//! outbound policy (`sdk::Sdk::fetch_document`). Knows nothing of HTTP: `server::kb` maps
//! [`KnowledgeError`] once; the agent tool `knowledge_search` is [`tool`].

pub mod chunk;
pub mod eval;
pub mod extract;
pub mod hostile_pdf;
pub mod index;
mod shared;
pub mod tool;
pub mod worker;

pub use shared::{KbCopy, copy_index};

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use base::principal::Principal;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use chunk::ChunkConfig;
use extract::Extracted;
use index::{KbIndex, NewChunk};
use llm::{LlmError, Models};
use sdk::Sdk;

/// Most chunks one document may have (with the default chunk size: ~5 MB of text).
pub const MAX_CHUNKS: usize = 5_000;
/// Most results one search returns.
pub const MAX_K: usize = 50;
/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Reciprocal rank fusion's constant (the usual 60: ranks past the first few weigh little).
const RRF_K: f32 = 60.0;

/// Bounds on what the knowledge bases take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KbLimits {
    /// Most knowledge bases.
    pub max_bases: usize,
    /// Most documents in one base.
    pub max_documents: usize,
    /// Largest document body in bytes: an upload, a fetched page, a JSON `text`/`markdown`
    /// (`BOARDSMITH_KB_MAX_DOCUMENT_BYTES`, default 10 MiB).
    pub max_document_bytes: usize,
    /// Longest wait for a `{url}` document.
    pub fetch_timeout: Duration,
}

impl Default for KbLimits {
    fn default() -> Self {
        Self {
            max_bases: 200,
            max_documents: 10_000,
            max_document_bytes: 10 << 20,
            fetch_timeout: Duration::from_secs(20),
        }
    }
}

/// How the knowledge bases are set up.
#[derive(Debug, Clone)]
pub struct KnowledgeConfig {
    /// The index directory (`<data>/kb`).
    pub dir: PathBuf,
    /// `provider/model` of the embedding model; `None`: BM25 only.
    pub embedding_model: Option<String>,
    /// Chunk size and overlap.
    pub chunk: ChunkConfig,
    /// Bounds.
    pub limits: KbLimits,
    /// The child process that parses PDFs, and its bounds.
    pub parser: worker::ParserConfig,
}

/// The `[knowledge]` section of `boardsmith.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Section {
    #[serde(default)]
    embedding_model: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct FileWithKnowledge {
    #[serde(default)]
    knowledge: Section,
}

/// The variable naming the embedding model (wins over the file).
pub const EMBEDDING_MODEL_VAR: &str = "BOARDSMITH_KB_EMBEDDING_MODEL";

impl KnowledgeConfig {
    /// Defaults under `data_dir`: no embedding model, 1000-byte chunks with 150 of overlap.
    pub fn new(data_dir: &std::path::Path) -> Self {
        Self {
            dir: data_dir.join("kb"),
            embedding_model: None,
            chunk: ChunkConfig::default(),
            limits: KbLimits::default(),
            parser: worker::ParserConfig::default(),
        }
    }

    /// [`Self::new`] with `[knowledge] embeddingModel` from the config file and the
    /// environment over it (`BOARDSMITH_KB_EMBEDDING_MODEL`, `BOARDSMITH_KB_MAX_DOCUMENT_BYTES`).
    pub fn from_env(data_dir: &std::path::Path) -> Result<Self, String> {
        let mut c = Self::new(data_dir);
        if let Some(path) = base::config_file::path() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            let file: FileWithKnowledge = toml::from_str(&text)
                .map_err(|e| format!("{} [knowledge]: {}", path.display(), e.message()))?;
            c.embedding_model = file.knowledge.embedding_model.filter(|m| !m.trim().is_empty());
        }
        if let Ok(m) = std::env::var(EMBEDDING_MODEL_VAR) {
            c.embedding_model = Some(m).filter(|m| !m.trim().is_empty());
        }
        if let Some(n) = std::env::var("BOARDSMITH_KB_MAX_DOCUMENT_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            c.limits.max_document_bytes = n;
        }
        Ok(c)
    }
}

/// Why a knowledge-base operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    /// Bad input; `field` names it.
    #[error("`{field}`: {message}")]
    Invalid {
        /// The field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No such base or document.
    #[error("{0}")]
    NotFound(String),
    /// A name already taken.
    #[error("{0}")]
    Conflict(String),
    /// Over a size or count limit.
    #[error("{what} is over the limit of {limit}")]
    TooLarge {
        /// What.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A format that cannot be read.
    #[error("{0}")]
    Unsupported(String),
    /// The document ran into one of its parser's bounds (nesting, memory, CPU time...).
    #[error("{message}")]
    ParserLimit {
        /// Which bound.
        limit: worker::ParseLimit,
        /// What happened, for the analyst.
        message: String,
    },
    /// A `{url}` the outbound policy refused.
    #[error("{0}")]
    Refused(String),
    /// A `{url}` that could not be fetched.
    #[error("fetching the page failed: {0}")]
    Fetch(String),
    /// The embedding model failed.
    #[error("embedding failed: {0}")]
    Embedding(#[source] LlmError),
    /// The index failed.
    #[error("knowledge index: {0}")]
    Index(String),
}

impl KnowledgeError {
    fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid { field: field.to_owned(), message: message.into() }
    }
}

impl From<tantivy::TantivyError> for KnowledgeError {
    fn from(e: tantivy::TantivyError) -> Self {
        Self::Index(e.to_string())
    }
}

/// A knowledge base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeBase {
    /// `kb_…`.
    pub id: String,
    /// Unique name (agents list bases by name or id).
    pub name: String,
    /// What it holds.
    #[serde(default)]
    pub description: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// Its documents (not stored: counted).
    #[serde(default)]
    pub documents: usize,
    /// Its chunks (not stored: counted).
    #[serde(default)]
    pub chunks: usize,
    /// Who made it (absent: made before accounts, the first admin's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Who else reads and searches it (and whose agents do).
    #[serde(default)]
    pub visibility: KbVisibility,
}

/// Who besides its owner and admins may read and search a knowledge base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum KbVisibility {
    /// Nobody else.
    #[default]
    Private,
    /// Every signed-in person, and the agents and workflows that run for them.
    Team,
}

impl KnowledgeBase {
    /// Whether `who` may read and search it: admins (and the server token, and keys from
    /// before accounts) every base; a person their own and the team's.
    pub fn readable_by(&self, who: &Principal) -> bool {
        self.visibility == KbVisibility::Team || self.writable_by(who)
    }

    /// Whether `who` may change it (documents, visibility) and delete it: its owner and admins.
    pub fn writable_by(&self, who: &Principal) -> bool {
        who.is_admin()
            || who.person().is_none()
            || who.user_id().is_some_and(|me| self.owner.as_deref() == Some(me.as_str()))
    }
}

/// What a document was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DocKind {
    /// `{title, text}` or a `.txt` file.
    Text,
    /// `{title, markdown}` or a `.md` file.
    Markdown,
    /// A fetched HTML page (`{url}`, or a `.html` file).
    Html,
    /// A `.csv` file.
    Csv,
    /// A `.pdf` file.
    Pdf,
}

/// A document of a base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInfo {
    /// `doc_…`.
    pub id: String,
    /// Its base.
    pub kb_id: String,
    /// Its title.
    pub title: String,
    /// What it was made from.
    pub kind: DocKind,
    /// Where it was fetched from (`{url}` documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Bytes of extracted text.
    pub bytes: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Whether its chunks have vectors (an embedding model was configured at ingestion).
    pub embedded: bool,
    /// When it was added.
    pub created_at: DateTime<Utc>,
}

/// A document to add.
#[derive(Debug, Clone)]
pub enum NewDocument {
    /// Plain text.
    Text {
        /// Title.
        title: String,
        /// Body.
        text: String,
    },
    /// Markdown (markup stripped, headings kept as chunk context).
    Markdown {
        /// Title; empty: the first `#` heading.
        title: String,
        /// Body.
        markdown: String,
    },
    /// A page to fetch (HTML, Markdown, plain text, CSV or PDF by its type).
    Url {
        /// The URL.
        url: String,
        /// Title; `None`: the page's own.
        title: Option<String>,
    },
    /// An uploaded file (`.txt`, `.md`, `.csv`, `.pdf`, `.html`).
    File {
        /// Its name (the extension decides the format).
        name: String,
        /// Its bytes.
        bytes: bytes::Bytes,
        /// Title; `None`: the file name.
        title: Option<String>,
    },
}

/// Which retrieval answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 alone (no embedding model, or it failed for this query).
    Bm25,
    /// BM25 and vectors fused.
    Hybrid,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// The document.
    pub document_id: String,
    /// Its base.
    pub kb_id: String,
    /// The document's title.
    pub title: String,
    /// Where the document came from, for `{url}` documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The chunk's number in its document.
    pub chunk_index: u64,
    /// The chunk text.
    pub chunk: String,
    /// BM25 score (mode `bm25`) or fused RRF score (mode `hybrid`); higher is better.
    pub score: f32,
}

/// A search's answer, best first.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    /// The results.
    pub results: Vec<SearchResult>,
    /// Which retrieval answered.
    pub mode: SearchMode,
}

/// A stored vector in memory.
#[derive(Debug, Clone)]
struct VecEntry {
    kb: String,
    doc: String,
    seq: u64,
    vector: Vec<f32>,
}

#[derive(Debug, Default)]
struct Catalog {
    bases: BTreeMap<String, KnowledgeBase>,
    docs: BTreeMap<String, DocumentInfo>,
}

/// The knowledge bases.
pub struct Knowledge {
    index: Arc<KbIndex>,
    config: KnowledgeConfig,
    models: Arc<Models>,
    sdk: Arc<Sdk>,
    catalog: RwLock<Catalog>,
    vectors: Arc<RwLock<Vec<VecEntry>>>,
    /// Writes one at a time: a document is never added to a base being deleted.
    writes: tokio::sync::Mutex<()>,
    /// Parses PDFs in child processes.
    parser: worker::DocParser,
    /// With several nodes: the store holding the bases (the index is then this node's cache
    /// of it, see `shared`).
    shared: Option<Arc<store::Store>>,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge").field("dir", &self.config.dir).finish_non_exhaustive()
    }
}

fn json_of(value: &impl Serialize) -> Result<String, KnowledgeError> {
    serde_json::to_string(value).map_err(|e| KnowledgeError::Index(e.to_string()))
}

fn shared_err(e: store::StoreError) -> KnowledgeError {
    KnowledgeError::Index(format!("shared store: {e}"))
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::now_v7().simple())
}

/// Runs index work on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, KnowledgeError> + Send + 'static,
) -> Result<T, KnowledgeError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| KnowledgeError::Index(e.to_string()))?
}

fn check_text(field: &str, value: &str, max_chars: usize) -> Result<String, KnowledgeError> {
    let v = value.trim();
    if v.chars().count() > max_chars {
        return Err(KnowledgeError::invalid(field, format!("at most {max_chars} characters")));
    }
    if v.chars().any(char::is_control) {
        return Err(KnowledgeError::invalid(field, "must not contain control characters"));
    }
    Ok(v.to_owned())
}

impl Knowledge {
    /// Opens (or creates) the index and rebuilds the catalog and vectors from it.
    #[base::boxed]
    pub async fn open(
        config: KnowledgeConfig,
        models: Arc<Models>,
        sdk: Arc<Sdk>,
    ) -> Result<Arc<Self>, KnowledgeError> {
        Self::open_in(config, models, sdk, None).await
    }

    async fn open_in(
        config: KnowledgeConfig,
        models: Arc<Models>,
        sdk: Arc<Sdk>,
        shared: Option<Arc<store::Store>>,
    ) -> Result<Arc<Self>, KnowledgeError> {
        // A shared store's cache lives apart from an embedded node's own index, so bringing
        // it up to date from the store can never delete the node's own bases.
        let dir = config.dir.join(if shared.is_some() { "shared-index" } else { "index" });
        let (index, loaded) = blocking(move || {
            let index = KbIndex::open(&dir)?;
            let loaded = index.load()?;
            Ok((index, loaded))
        })
        .await?;
        let mut catalog = Catalog::default();
        for (_, meta) in loaded.bases {
            if let Ok(b) = serde_json::from_str::<KnowledgeBase>(&meta) {
                catalog.bases.insert(b.id.clone(), b);
            }
        }
        for (_, _, meta) in loaded.docs {
            if let Ok(d) = serde_json::from_str::<DocumentInfo>(&meta) {
                if let Some(b) = catalog.bases.get_mut(&d.kb_id) {
                    b.documents += 1;
                    b.chunks += d.chunks;
                }
                catalog.docs.insert(d.id.clone(), d);
            }
        }
        let vectors = loaded
            .vectors
            .into_iter()
            .map(|v| VecEntry { kb: v.kb, doc: v.doc, seq: v.seq, vector: v.vector })
            .collect();
        Ok(Arc::new(Self {
            index: Arc::new(index),
            parser: worker::DocParser::new(config.parser.clone()),
            config,
            models,
            sdk,
            catalog: RwLock::new(catalog),
            vectors: Arc::new(RwLock::new(vectors)),
            writes: tokio::sync::Mutex::new(()),
            shared,
        }))
    }

    /// The configured embedding model, if any.
    pub fn embedding_model(&self) -> Option<&str> {
        self.config.embedding_model.as_deref()
    }

    /// The bounds in force.
    pub fn limits(&self) -> KbLimits {
        self.config.limits
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Catalog> {
        self.catalog.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every base, by name.
    pub fn list(&self) -> Vec<KnowledgeBase> {
        let mut all: Vec<_> = self.read().bases.values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// One base.
    pub fn get(&self, id: &str) -> Result<KnowledgeBase, KnowledgeError> {
        self.read()
            .bases
            .get(id)
            .cloned()
            .ok_or_else(|| KnowledgeError::NotFound(format!("no knowledge base `{id}`")))
    }

    /// The base whose id or name is `key`.
    pub fn find(&self, key: &str) -> Option<KnowledgeBase> {
        let c = self.read();
        c.bases.get(key).or_else(|| c.bases.values().find(|b| b.name == key)).cloned()
    }

    /// The bases `who` may read and search, by name.
    pub fn list_for(&self, who: &Principal) -> Vec<KnowledgeBase> {
        self.list().into_iter().filter(|b| b.readable_by(who)).collect()
    }

    /// [`Knowledge::find`] among the bases `who` may read: another's private base is not there.
    pub fn find_for(&self, key: &str, who: &Principal) -> Option<KnowledgeBase> {
        self.find(key).filter(|b| b.readable_by(who))
    }

    /// Sets who else may read a base.
    #[base::boxed]
    pub async fn set_visibility(
        &self,
        id: &str,
        visibility: KbVisibility,
    ) -> Result<KnowledgeBase, KnowledgeError> {
        let _w = self.writes.lock().await;
        let mut base = self.get(id)?;
        base.visibility = visibility;
        if let Some(store) = &self.shared {
            let meta = json_of(&base)?;
            store.kb_put_base(&base.id, &meta).await.map_err(shared_err)?;
        }
        self.apply_base(base.clone()).await?;
        Ok(base)
    }

    /// Makes a base; names are unique.
    #[base::boxed]
    pub async fn create(
        &self,
        name: &str,
        description: &str,
        owner: Option<String>,
        visibility: KbVisibility,
    ) -> Result<KnowledgeBase, KnowledgeError> {
        let name = check_text("name", name, 100)?;
        if name.is_empty() {
            return Err(KnowledgeError::invalid("name", "must not be empty"));
        }
        let description = check_text("description", description, 2_000)?;
        let _w = self.writes.lock().await;
        {
            let c = self.read();
            if c.bases.values().any(|b| b.name == name) {
                return Err(KnowledgeError::Conflict(format!(
                    "a knowledge base named `{name}` exists"
                )));
            }
            if c.bases.len() >= self.config.limits.max_bases {
                return Err(KnowledgeError::TooLarge {
                    what: "the number of knowledge bases".into(),
                    limit: self.config.limits.max_bases as u64,
                });
            }
        }
        let base = KnowledgeBase {
            id: new_id("kb_"),
            name,
            description,
            created_at: Utc::now(),
            documents: 0,
            chunks: 0,
            owner,
            visibility,
        };
        if let Some(store) = &self.shared {
            let meta = json_of(&base)?;
            store.kb_put_base(&base.id, &meta).await.map_err(shared_err)?;
        }
        self.apply_base(base.clone()).await?;
        Ok(base)
    }

    /// Writes a base into the index and the catalog (its counts kept if it was there).
    async fn apply_base(&self, mut base: KnowledgeBase) -> Result<(), KnowledgeError> {
        if let Some(held) = self.read().bases.get(&base.id) {
            (base.documents, base.chunks) = (held.documents, held.chunks);
        }
        let meta = json_of(&base)?;
        let (index, id) = (self.index.clone(), base.id.clone());
        blocking(move || Ok(index.put_base(&id, &meta)?)).await?;
        self.write().bases.insert(base.id.clone(), base);
        Ok(())
    }

    /// Deletes a base with all its documents, chunks and vectors.
    #[base::boxed]
    pub async fn delete(&self, id: &str) -> Result<KnowledgeBase, KnowledgeError> {
        let _w = self.writes.lock().await;
        let base = self.get(id)?;
        if let Some(store) = &self.shared {
            store.kb_delete_base(id).await.map_err(shared_err)?;
        }
        self.apply_delete_base(id).await?;
        Ok(base)
    }

    /// Removes a base with its documents from the index and the catalog.
    async fn apply_delete_base(&self, id: &str) -> Result<(), KnowledgeError> {
        let (index, kb) = (self.index.clone(), id.to_owned());
        blocking(move || Ok(index.delete_base(&kb)?)).await?;
        let mut c = self.write();
        c.bases.remove(id);
        c.docs.retain(|_, d| d.kb_id != id);
        drop(c);
        self.vectors.write().unwrap_or_else(PoisonError::into_inner).retain(|v| v.kb != id);
        Ok(())
    }

    /// A base's documents, oldest first.
    pub fn documents(&self, kb: &str) -> Result<Vec<DocumentInfo>, KnowledgeError> {
        self.get(kb)?;
        let c = self.read();
        let mut docs: Vec<_> = c.docs.values().filter(|d| d.kb_id == kb).cloned().collect();
        docs.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(docs)
    }

    /// Adds a document: extracts its text, chunks it, embeds the chunks (when a model is
    /// configured) and commits record and chunks at once.
    #[base::boxed]
    pub async fn add(&self, kb: &str, new: NewDocument) -> Result<DocumentInfo, KnowledgeError> {
        self.get(kb)?;
        let max = self.config.limits.max_document_bytes;
        let (kind, title, url, extracted) = self.extract(new, max).await?;
        if extracted.text.trim().is_empty() {
            return Err(KnowledgeError::invalid("text", "the document has no text"));
        }
        let title = if title.is_empty() {
            extracted.title.clone().unwrap_or_else(|| "Untitled".to_owned())
        } else {
            title
        };
        let title = check_text("title", &title, 300)?;
        let ranges = chunk::chunks(&extracted.text, self.config.chunk);
        if ranges.len() > MAX_CHUNKS {
            return Err(KnowledgeError::TooLarge {
                what: format!("the document ({} chunks)", ranges.len()),
                limit: MAX_CHUNKS as u64,
            });
        }
        let mut chunks: Vec<NewChunk> = ranges
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let section = extracted.section_at(r.start);
                NewChunk {
                    seq: i as u64,
                    title: if section.is_empty() {
                        title.clone()
                    } else {
                        format!("{title} › {section}")
                    },
                    body: extracted.text[r.clone()].to_owned(),
                    vector: None,
                }
            })
            .collect();
        if let Some(model) = &self.config.embedding_model {
            // The heading path gives a chunk its context for the vector too.
            let inputs: Vec<String> =
                chunks.iter().map(|c| format!("{}\n{}", c.title, c.body)).collect();
            let vectors =
                self.models.embed(model, &inputs).await.map_err(KnowledgeError::Embedding)?;
            for (c, v) in chunks.iter_mut().zip(vectors) {
                c.vector = Some(v);
            }
        }
        let info = DocumentInfo {
            id: new_id("doc_"),
            kb_id: kb.to_owned(),
            title,
            kind,
            url,
            bytes: extracted.text.len(),
            chunks: chunks.len(),
            embedded: self.config.embedding_model.is_some(),
            created_at: Utc::now(),
        };
        let _w = self.writes.lock().await;
        // Checked again under the write lock: the base may have gone while we worked.
        self.get(kb)?;
        let count = self.read().docs.values().filter(|d| d.kb_id == kb).count();
        if count >= self.config.limits.max_documents {
            return Err(KnowledgeError::TooLarge {
                what: "the number of documents in this base".into(),
                limit: self.config.limits.max_documents as u64,
            });
        }
        if let Some(store) = &self.shared {
            let (meta, stored) = (json_of(&info)?, json_of(&chunks)?);
            store.kb_put_document(kb, &info.id, &meta, &stored).await.map_err(shared_err)?;
        }
        self.apply_document(info.clone(), chunks).await?;
        Ok(info)
    }

    /// Writes a document with its chunks into the index, the catalog and the vectors.
    async fn apply_document(
        &self,
        info: DocumentInfo,
        chunks: Vec<NewChunk>,
    ) -> Result<(), KnowledgeError> {
        let meta = json_of(&info)?;
        let kb = info.kb_id.clone();
        let entries: Vec<VecEntry> = chunks
            .iter()
            .filter_map(|c| {
                Some(VecEntry {
                    kb: kb.clone(),
                    doc: info.id.clone(),
                    seq: c.seq,
                    vector: c.vector.clone()?,
                })
            })
            .collect();
        let (index, kb_id, doc_id) = (self.index.clone(), kb.clone(), info.id.clone());
        blocking(move || Ok(index.put_document(&kb_id, &doc_id, &meta, &chunks)?)).await?;
        {
            let mut c = self.write();
            if let Some(b) = c.bases.get_mut(&kb) {
                b.documents += 1;
                b.chunks += info.chunks;
            }
            c.docs.insert(info.id.clone(), info);
        }
        self.vectors.write().unwrap_or_else(PoisonError::into_inner).extend(entries);
        Ok(())
    }

    /// Deletes a document of base `kb` with its chunks and vectors.
    #[base::boxed]
    pub async fn delete_document(
        &self,
        kb: &str,
        doc: &str,
    ) -> Result<DocumentInfo, KnowledgeError> {
        let _w = self.writes.lock().await;
        let info =
            self.read().docs.get(doc).filter(|d| d.kb_id == kb).cloned().ok_or_else(|| {
                KnowledgeError::NotFound(format!("no document `{doc}` in `{kb}`"))
            })?;
        if let Some(store) = &self.shared {
            store.kb_delete_document(doc).await.map_err(shared_err)?;
        }
        self.apply_delete_document(&info).await?;
        Ok(info)
    }

    /// Removes a document from the index, the catalog and the vectors.
    async fn apply_delete_document(&self, info: &DocumentInfo) -> Result<(), KnowledgeError> {
        let (index, id) = (self.index.clone(), info.id.clone());
        blocking(move || Ok(index.delete_document(&id)?)).await?;
        {
            let mut c = self.write();
            c.docs.remove(&info.id);
            if let Some(b) = c.bases.get_mut(&info.kb_id) {
                b.documents = b.documents.saturating_sub(1);
                b.chunks = b.chunks.saturating_sub(info.chunks);
            }
        }
        self.vectors.write().unwrap_or_else(PoisonError::into_inner).retain(|v| v.doc != info.id);
        Ok(())
    }

    async fn extract(
        &self,
        new: NewDocument,
        max: usize,
    ) -> Result<(DocKind, String, Option<String>, Extracted), KnowledgeError> {
        let too_large =
            |what: &str| KnowledgeError::TooLarge { what: what.into(), limit: max as u64 };
        Ok(match new {
            NewDocument::Text { title, text } => {
                if text.len() > max {
                    return Err(too_large("`text`"));
                }
                (DocKind::Text, title, None, Extracted::plain(text))
            }
            NewDocument::Markdown { title, markdown } => {
                if markdown.len() > max {
                    return Err(too_large("`markdown`"));
                }
                (DocKind::Markdown, title, None, extract::markdown(&markdown))
            }
            NewDocument::Url { url, title } => {
                let parsed = reqwest::Url::parse(url.trim())
                    .map_err(|e| KnowledgeError::invalid("url", format!("not a URL: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(KnowledgeError::invalid("url", "must be an http(s) URL"));
                }
                let fetched = self
                    .sdk
                    .fetch_document(parsed.as_str(), max, self.config.limits.fetch_timeout)
                    .await
                    .map_err(|e| match e {
                        sdk::http::Error::Refused(r) => KnowledgeError::Refused(r.to_string()),
                        other => KnowledgeError::Fetch(other.to_string()),
                    })?;
                let mime = fetched.content_type.as_deref().unwrap_or("").to_ascii_lowercase();
                let path = reqwest::Url::parse(&fetched.url)
                    .map(|u| u.path().to_owned())
                    .unwrap_or_default();
                let format = if mime.contains("html") {
                    Format::Html
                } else if mime.contains("pdf") {
                    Format::Pdf
                } else if mime.contains("csv") {
                    Format::Csv
                } else if mime.contains("markdown") {
                    Format::Markdown
                } else if mime.starts_with("text/") || mime.is_empty() {
                    Format::by_name(&path).unwrap_or(Format::Text)
                } else {
                    return Err(KnowledgeError::Unsupported(format!(
                        "the page's type `{mime}` cannot be read; HTML, text, Markdown, CSV and PDF can"
                    )));
                };
                let (kind, e) = self.read_format(format, fetched.bytes).await?;
                (kind, title.unwrap_or_default(), Some(fetched.url), e)
            }
            NewDocument::File { name, bytes, title } => {
                if bytes.len() > max {
                    return Err(too_large("the file"));
                }
                let format = Format::by_name(&name).ok_or_else(|| {
                    KnowledgeError::Unsupported(format!(
                        "`{name}`: unsupported file type; .txt, .md, .csv, .pdf and .html are"
                    ))
                })?;
                let (kind, e) = self.read_format(format, bytes).await?;
                let stem = std::path::Path::new(&name)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let fallback = e.title.clone().unwrap_or(stem);
                (kind, title.unwrap_or(fallback), None, e)
            }
        })
    }

    /// The text of `bytes` in `format`: CSV on the blocking pool, PDF in a document worker
    /// (a hostile file costs its own child process, never the server), at most as much text
    /// as [`MAX_CHUNKS`] chunks can hold.
    async fn read_format(
        &self,
        format: Format,
        bytes: bytes::Bytes,
    ) -> Result<(DocKind, Extracted), KnowledgeError> {
        let utf8 = |b: &[u8]| {
            String::from_utf8(b.to_vec())
                .map_err(|_| KnowledgeError::Unsupported("the text is not UTF-8".into()))
        };
        Ok(match format {
            Format::Text => (DocKind::Text, Extracted::plain(utf8(&bytes)?)),
            Format::Markdown => (DocKind::Markdown, extract::markdown(&utf8(&bytes)?)),
            Format::Html => (DocKind::Html, extract::html(&String::from_utf8_lossy(&bytes))),
            Format::Csv => {
                let e = blocking(move || {
                    extract::csv(&bytes, 200_000).map_err(KnowledgeError::Unsupported)
                })
                .await?;
                (DocKind::Csv, e)
            }
            Format::Pdf => {
                // Past MAX_CHUNKS chunks of the largest size the text could not be stored.
                let max_text = MAX_CHUNKS.saturating_mul(self.config.chunk.max);
                let e = self.parser.pdf(&bytes, max_text).await.map_err(|e| match e {
                    worker::ParseError::Limit { limit, message } => {
                        KnowledgeError::ParserLimit { limit, message }
                    }
                    worker::ParseError::Unreadable(m) => KnowledgeError::Unsupported(m),
                    worker::ParseError::Internal(m) => {
                        KnowledgeError::Index(format!("document worker: {m}"))
                    }
                })?;
                (DocKind::Pdf, e)
            }
        })
    }

    /// The `k` best chunks for `query` in the bases `kbs` (ids), best first: BM25, fused with
    /// vector similarity when an embedding model is configured. An embedding failure falls
    /// back to BM25 (the answer's `mode` says so).
    #[base::boxed]
    pub async fn search(
        &self,
        kbs: &[String],
        query: &str,
        k: usize,
    ) -> Result<SearchAnswer, KnowledgeError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(KnowledgeError::invalid("query", "must not be empty"));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(KnowledgeError::invalid(
                "query",
                format!("at most {MAX_QUERY_CHARS} characters"),
            ));
        }
        if !(1..=MAX_K).contains(&k) {
            return Err(KnowledgeError::invalid("k", format!("must be from 1 to {MAX_K}")));
        }
        for kb in kbs {
            self.get(kb)?;
        }
        let pool = (k * 4).max(40);
        let vector = match &self.config.embedding_model {
            Some(model) => match self.models.embed(model, &[query.to_owned()]).await {
                Ok(mut v) => v.pop(),
                Err(e) => {
                    tracing::warn!(error = %e, "query embedding failed; answering with BM25 alone");
                    None
                }
            },
            None => None,
        };
        let index = self.index.clone();
        let vectors = self.vectors.clone();
        let (kbs, q) = (kbs.to_vec(), query.to_owned());
        let (mode, ranked) = blocking(move || {
            let bm25 = index.search(&kbs, &q, pool)?;
            let Some(qv) = vector else {
                let ranked = bm25
                    .into_iter()
                    .take(k)
                    .map(|h| (h.doc, h.seq, h.score, Some(h.body)))
                    .collect::<Vec<_>>();
                return Ok((SearchMode::Bm25, ranked));
            };
            let nearest =
                nearest(&vectors.read().unwrap_or_else(PoisonError::into_inner), &kbs, &qv, pool);
            let mut fused: HashMap<(String, u64), (f32, Option<String>)> = HashMap::new();
            for (rank, h) in bm25.into_iter().enumerate() {
                let e = fused.entry((h.doc, h.seq)).or_insert((0.0, None));
                e.0 += 1.0 / (RRF_K + rank as f32 + 1.0);
                e.1 = Some(h.body);
            }
            for (rank, (doc, seq, _)) in nearest.into_iter().enumerate() {
                fused.entry((doc, seq)).or_insert((0.0, None)).0 +=
                    1.0 / (RRF_K + rank as f32 + 1.0);
            }
            let mut all: Vec<_> = fused.into_iter().collect();
            all.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
            let mut ranked = Vec::with_capacity(k);
            for ((doc, seq), (score, body)) in all.into_iter().take(k) {
                let body = match body {
                    Some(b) => Some(b),
                    None => index.chunk_text(&doc, seq)?,
                };
                ranked.push((doc, seq, score, body));
            }
            Ok((SearchMode::Hybrid, ranked))
        })
        .await?;
        let c = self.read();
        let results = ranked
            .into_iter()
            .filter_map(|(doc, seq, score, body)| {
                let info = c.docs.get(&doc)?;
                Some(SearchResult {
                    document_id: doc,
                    kb_id: info.kb_id.clone(),
                    title: info.title.clone(),
                    url: info.url.clone(),
                    chunk_index: seq,
                    chunk: body?,
                    score,
                })
            })
            .collect();
        Ok(SearchAnswer { results, mode })
    }

    /// Chunks in the index (all bases).
    #[base::boxed]
    pub async fn chunk_count(&self) -> u64 {
        let index = self.index.clone();
        blocking(move || Ok(index.chunk_count())).await.unwrap_or(0)
    }
}

/// The `limit` vectors of bases `kbs` most similar to `q` (cosine; stored vectors of another
/// dimension are skipped), best first.
fn nearest(all: &[VecEntry], kbs: &[String], q: &[f32], limit: usize) -> Vec<(String, u64, f32)> {
    let qn = q.iter().map(|x| x * x).sum::<f32>().sqrt();
    if qn == 0.0 {
        return Vec::new();
    }
    let mut scored: Vec<(f32, &VecEntry)> = all
        .iter()
        .filter(|e| e.vector.len() == q.len() && kbs.contains(&e.kb))
        .map(|e| {
            let dot: f32 = e.vector.iter().zip(q).map(|(a, b)| a * b).sum();
            let n = e.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            (if n == 0.0 { 0.0 } else { dot / (n * qn) }, e)
        })
        .collect();
    let limit = limit.min(scored.len());
    if limit == 0 {
        return Vec::new();
    }
    scored.select_nth_unstable_by(limit - 1, |a, b| b.0.total_cmp(&a.0));
    scored.truncate(limit);
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(s, e)| (e.doc.clone(), e.seq, s)).collect()
}

/// A body's format.
#[derive(Debug, Clone, Copy)]
enum Format {
    Text,
    Markdown,
    Html,
    Csv,
    Pdf,
}

impl Format {
    fn by_name(name: &str) -> Option<Self> {
        let ext = std::path::Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "text" => Self::Text,
            "md" | "markdown" => Self::Markdown,
            "html" | "htm" => Self::Html,
            "csv" => Self::Csv,
            "pdf" => Self::Pdf,
            _ => return None,
        })
    }
}
