//! `boardsmith bench kb`: knowledge-base ingestion and search over 10,000 chunks (BM25, and
//! hybrid with the in-process mock model's embeddings), and recall@5 of both on the labeled
//! set (`tests/kb/`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::knowledge::eval::LabeledSet;
use crate::knowledge::{Knowledge, KnowledgeConfig, NewDocument};
use crate::llm::Models;
use crate::llm::config::LlmConfig;
use crate::llm::mock::{MockLlm, Script};

/// Words the synthetic chunks are made of (finance vocabulary, so BM25 has real postings).
const WORDS: &[&str] = &[
    "rates",
    "yield",
    "curve",
    "inflation",
    "equity",
    "credit",
    "spread",
    "duration",
    "bond",
    "treasury",
    "dollar",
    "euro",
    "yen",
    "gold",
    "oil",
    "copper",
    "earnings",
    "margin",
    "revenue",
    "guidance",
    "default",
    "liquidity",
    "volatility",
    "option",
    "future",
    "swap",
    "basis",
    "central",
    "bank",
    "policy",
    "growth",
    "recession",
    "payrolls",
    "wages",
    "housing",
    "mortgage",
    "dividend",
    "buyback",
    "valuation",
    "momentum",
    "sector",
    "energy",
    "semiconductor",
    "retail",
    "consumer",
    "china",
    "india",
    "europe",
    "japan",
    "emerging",
];

fn chunk_text(seed: usize) -> String {
    // ~110 words ≈ 800 bytes: one chunk at the default size.
    let mut x = seed as u64 * 2_654_435_761 + 1;
    (0..110)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs the benchmark: `chunks` chunks in documents of `per_doc` chunks each.
#[base::boxed]
pub async fn kb(
    chunks: usize,
    per_doc: usize,
    labeled: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let mock = MockLlm::start(Script::default(), 0).await?;
    let llm = LlmConfig::parse(
        &format!(
            "[providers.mock]\nkind = \"openai\"\nbase_url = \"http://{}/v1\"\nrequires_key = false\ndefault_model = \"m\"\n",
            mock.addr
        ),
        std::path::Path::new("bench.toml"),
        &|_| None,
    )?;
    let sdk = Arc::new(crate::sdk::Sdk::new(crate::sdk::SdkConfig::default())?);
    crate::outln!("{:<48} {:>14} {:>14}", "knowledge bases", "bm25", "hybrid");
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut recall = Vec::new();
    let mut ingest = Vec::new();
    let mut latency = Vec::new();
    for embedding in [None, Some("mock/mock-embed".to_owned())] {
        let dir = super::temp_dir("kb")?;
        let mut config = KnowledgeConfig::new(&dir.0);
        config.embedding_model = embedding;
        let models = Arc::new(Models::new(llm.clone()));
        let k = Knowledge::open(config, models, sdk.clone()).await?;
        let kb = k.create("bench", "", None, Default::default()).await?.id;
        let docs = chunks.div_ceil(per_doc.max(1));
        let started = Instant::now();
        for d in 0..docs {
            let text =
                (0..per_doc).map(|c| chunk_text(d * per_doc + c)).collect::<Vec<_>>().join("\n\n");
            k.add(&kb, NewDocument::Text { title: format!("doc {d}"), text }).await?;
        }
        let took = started.elapsed();
        let n = k.chunk_count().await;
        ingest.push((n, took));
        let mut times = Vec::new();
        for q in 0..200 {
            let query = format!(
                "{} {} {}",
                WORDS[q % WORDS.len()],
                WORDS[(q * 7) % WORDS.len()],
                WORDS[(q * 13) % WORDS.len()]
            );
            let t = Instant::now();
            k.search(std::slice::from_ref(&kb), &query, 5).await?;
            times.push(t.elapsed());
        }
        latency.push(super::percentiles(times));
        match LabeledSet::load(labeled) {
            Ok(set) => {
                let lkb = k.create("labeled", "", None, Default::default()).await?.id;
                let slugs = set.ingest(&k, &lkb).await?;
                recall.push(format!("{:.3}", set.recall(&k, &lkb, &slugs, 5).await?.0));
            }
            Err(e) => recall.push(format!("n/a ({e})")),
        }
    }
    let rate = |(n, t): (u64, Duration)| format!("{:.0}", n as f64 / t.as_secs_f64());
    rows.push((
        format!("ingestion: chunks/s ({} chunks)", ingest[0].0),
        rate(ingest[0]),
        rate(ingest[1]),
    ));
    rows.push((
        "ingestion: total".into(),
        format!("{:.2} s", ingest[0].1.as_secs_f64()),
        format!("{:.2} s", ingest[1].1.as_secs_f64()),
    ));
    rows.push((
        "search latency p50 (k = 5)".into(),
        super::fmt(latency[0].0),
        super::fmt(latency[1].0),
    ));
    rows.push((
        "search latency p99 (k = 5)".into(),
        super::fmt(latency[0].1),
        super::fmt(latency[1].1),
    ));
    rows.push(("recall@5 on the labeled set".into(), recall[0].clone(), recall[1].clone()));
    for (name, a, b) in rows {
        crate::outln!("{name:<48} {a:>14} {b:>14}");
    }
    Ok(ExitCode::SUCCESS)
}
