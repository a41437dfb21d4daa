//! The mock's embeddings: `POST /v1/embeddings` (OpenAI's wire shape) and `POST /api/embed`
//! (Ollama's), answered with [`embed_text`], a deterministic stand-in for a model: a hashed
//! bag of word stems (and CJK bigrams) in [`DIMENSIONS`] dimensions, L2-normalised. Texts
//! sharing words get a high cosine; no weights, no network.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// Dimensions of the mock's vectors.
pub const DIMENSIONS: usize = 256;

/// Most inputs the mock takes in one request (OpenAI's limit is 2048).
const MAX_INPUTS: usize = 2048;

/// The stem a word counts as: lowercase, a few English suffixes dropped.
fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    for suffix in ["ings", "ing", "ies", "ed", "es", "ly", "s"] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            return base.to_owned();
        }
    }
    w
}

/// Words shorter than three letters and the commonest English words carry no meaning here.
const STOP: &[&str] = &[
    "the", "and", "for", "are", "was", "with", "that", "this", "from", "what", "which", "how",
    "does", "did", "its", "into", "than", "their", "about", "when", "where", "who", "why",
];

/// The mock embedding of `text`.
pub fn embed_text(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMENSIONS];
    let mut add = |token: &str| {
        let h = xxhash_rust::xxh3::xxh3_64(token.as_bytes());
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        #[allow(clippy::cast_possible_truncation)]
        let i = (h % DIMENSIONS as u64) as usize;
        v[i] += sign;
    };
    let mut cjk: Vec<char> = Vec::new();
    let flush = |cjk: &mut Vec<char>, add: &mut dyn FnMut(&str)| {
        for pair in cjk.windows(2) {
            add(&pair.iter().collect::<String>());
        }
        if cjk.len() == 1 {
            add(&cjk[0].to_string());
        }
        cjk.clear();
    };
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        for c in word.chars().filter(|c| !c.is_ascii()) {
            if u32::from(c) >= 0x3040 {
                cjk.push(c);
            }
        }
        flush(&mut cjk, &mut add);
        let ascii: String = word.chars().filter(char::is_ascii).collect();
        if ascii.len() >= 3 && !STOP.contains(&ascii.to_lowercase().as_str()) {
            add(&stem(&ascii));
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// The inputs of a request: a string or a list of strings.
fn inputs(body: &Value, field: &str) -> Result<Vec<String>, String> {
    match body.get(field) {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) if items.len() <= MAX_INPUTS => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{field}` items must be strings"))
            })
            .collect(),
        Some(Value::Array(_)) => Err(format!("at most {MAX_INPUTS} inputs")),
        _ => Err(format!("`{field}` is required: a string or a list of strings")),
    }
}

fn refuse(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

/// `POST /v1/embeddings`.
pub(super) async fn openai(Json(body): Json<Value>) -> Response {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("mock-embed").to_owned();
    match inputs(&body, "input") {
        Ok(texts) => {
            let data: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(
                    |(i, t)| json!({"object": "embedding", "index": i, "embedding": embed_text(t)}),
                )
                .collect();
            let tokens: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
            Json(json!({
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }))
            .into_response()
        }
        Err(m) => refuse(m),
    }
}

/// `POST /api/embed` (Ollama).
pub(super) async fn ollama(Json(body): Json<Value>) -> Response {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("mock-embed").to_owned();
    match inputs(&body, "input") {
        Ok(texts) => {
            let embeddings: Vec<Vec<f32>> = texts.iter().map(|t| embed_text(t)).collect();
            Json(json!({"model": model, "embeddings": embeddings})).into_response()
        }
        Err(m) => refuse(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn shared_words_are_close_and_vectors_are_unit_length() {
        let a = embed_text("Treasury yields rose sharply");
        let b = embed_text("yield on treasuries rising");
        let c = embed_text("copper mining output in Chile");
        assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
        assert!(cos(&a, &b) > cos(&a, &c), "{} vs {}", cos(&a, &b), cos(&a, &c));
        assert_eq!(embed_text("x").iter().filter(|v| **v != 0.0).count(), 0, "no words: zero");
        assert_eq!(embed_text("央行降息"), embed_text("央行降息"));
    }
}
