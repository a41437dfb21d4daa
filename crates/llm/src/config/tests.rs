//! Unit tests of the provider configuration: the file format, the environment, resolution and its errors.

use std::collections::HashMap;
use std::time::Duration;

use super::registry::T;
use super::*;
use crate::types::Usage;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |k: &str| map.get(k).cloned()
}

fn parse(text: &str, env: &[(&str, &str)]) -> Result<LlmConfig, ConfigError> {
    LlmConfig::parse(text, Path::new("boardsmith.toml"), &env_of(env))
}

fn config_error(e: LlmError) -> String {
    match e {
        LlmError::Config { message } => message,
        other => panic!("expected a config error, got {other:?}"),
    }
}

const DEEPSEEK: &str = r#"
        [providers.deepseek]
        kind = "openai"
        base_url = "https://api.deepseek.com/v1/"
        api_key_env = "DEEPSEEK_API_KEY"
        default_model = "deepseek-chat"
        family = "deepseek"
        [[providers.deepseek.models]]
        id = "deepseek-chat"
        context_window = 128000
        max_output = 8192
        input_price = 0.27
        output_price = 1.10
        cache_read_price = 0.07
        tools = true
        reasoning = false
        vision = false

        [llm.timeouts]
        connect = 5
        first_byte = 60.5
        [llm.retry]
        max_retries = 5
        min_delay_ms = 100
        max_delay_ms = 2000

        [agent.llm.interaction-log]
        enabled = false
        mask-sensitive = false
    "#;

#[test]
fn the_documented_file_parses() {
    let c = parse(DEEPSEEK, &[("DEEPSEEK_API_KEY", "sk-deep")]).unwrap();
    let p = c.provider("deepseek").unwrap();
    assert_eq!(p.kind, ProviderKind::Openai);
    assert_eq!(p.base_url, "https://api.deepseek.com/v1", "trailing slash dropped");
    assert_eq!(p.family, Family::Deepseek);
    assert_eq!(p.origin, Origin::File);
    assert!(p.has_key());
    assert_eq!(c.timeouts().connect, Duration::from_secs(5));
    assert_eq!(c.timeouts().first_byte, Duration::from_millis(60_500));
    assert_eq!(c.timeouts().idle, Timeouts::default().idle);
    assert_eq!(c.retry().max_retries, 5);
    assert_eq!(c.retry().min_delay, Duration::from_millis(100));
    assert_eq!(c.retry().max_delay, Duration::from_secs(2));
    assert!(!c.interaction_log().enabled);
    assert!(!c.interaction_log().mask_sensitive);

    let r = c.resolve("deepseek/deepseek-chat").unwrap();
    assert_eq!(r.settings.key, "deepseek");
    assert_eq!(r.settings.api_key.as_ref().map(ApiKey::expose), Some("sk-deep"));
    assert_eq!(r.settings.family, Family::Deepseek);
    assert_eq!(r.settings.transport.retry.max_retries, 5);
    assert_eq!(r.model.input_price, Some(0.27), "the file's price beats the registry's");
    assert_eq!(r.model.output_price, Some(1.10));
    assert_eq!(r.model.cache_read_price, Some(0.07));
    assert!(r.model.known && !r.forced);
    // Empty: the first provider's default model.
    assert_eq!(c.resolve("").unwrap().model.id, "deepseek-chat");
}

#[test]
fn an_unknown_field_names_file_field_and_what_was_expected() {
    let text = "[providers.deepseek]\nkind = \"openai\"\nbase_url = \"https://x/v1\"\n\
                    [[providers.deepseek.models]]\nid = \"m\"\ncontext_windw = 1\n";
    let e = parse(text, &[]).unwrap_err();
    let msg = e.to_string();
    let ConfigError::File { path, field, message } = e else { panic!("{msg}") };
    assert_eq!(path, Path::new("boardsmith.toml"));
    assert_eq!(field, "providers.deepseek.models[0].context_windw", "{msg}");
    assert!(message.contains("unknown field `context_windw`"), "{msg}");
    assert!(message.contains("context_window"), "lists what is expected: {msg}");
    assert!(message.contains("line 6"), "{msg}");
    assert!(msg.starts_with("boardsmith.toml: `providers.deepseek.models[0]"), "{msg}");

    let e = parse("[providers.x]\nkind = \"grpc\"\nbase_url = \"https://x/v1\"\n", &[]);
    let msg = e.unwrap_err().to_string();
    assert!(msg.contains("`providers.x.kind`") && msg.contains("openai"), "{msg}");

    let msg = parse("[llm.timeouts]\nidle = \"long\"\n", &[]).unwrap_err().to_string();
    assert!(msg.contains("`llm.timeouts.idle`"), "{msg}");

    let msg = parse("[agent.llm.interaction-log]\nenabeld = true\n", &[]).unwrap_err();
    assert!(msg.to_string().contains("agent.llm.interaction-log.enabeld"), "{msg}");

    let msg = parse("[providers.x\nkind = 1", &[]).unwrap_err().to_string();
    assert!(msg.starts_with("boardsmith.toml: ") && msg.contains("line 1"), "{msg}");
}

#[test]
fn semantic_errors_name_the_field() {
    let cases = [
        ("[providers.local]\nkind = \"openai\"\n", "providers.local.base_url"),
        ("[providers.local]\nbase_url = \"http://x/v1\"\n", "providers.local.kind"),
        (
            "[providers.local]\nkind = \"openai\"\nbase_url = \"localhost:8000/v1\"\n",
            "providers.local.base_url",
        ),
        ("[llm.timeouts]\nconnect = 0\n", "llm.timeouts.connect"),
        ("[llm.retry]\nmin_delay_ms = 10\nmax_delay_ms = 5\n", "llm.retry.min_delay_ms"),
        (
            "[providers.ollama]\n[[providers.ollama.models]]\nid = \"a\"\n\
                 [[providers.ollama.models]]\nid = \"a\"\n",
            "providers.ollama.models[1].id",
        ),
        (
            "[providers.ollama]\n[[providers.ollama.models]]\nid = \"a\"\ninput_price = -1\n",
            "providers.ollama.models[0].input_price",
        ),
        ("[providers.\"a.b\"]\nkind = \"ollama\"\n", "providers.a.b"),
    ];
    for (text, field) in cases {
        let e = parse(text, &[]).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(&e, ConfigError::File { field: f, .. } if f == field), "{msg}");
    }
}

#[test]
fn a_key_in_the_file_is_refused_without_echoing_it() {
    let text = "[providers.openai]\napi_key = \"sk-secret-in-file\"\n";
    let msg = parse(text, &[]).unwrap_err().to_string();
    assert!(msg.contains("providers.openai.api_key") && msg.contains("api_key_env"), "{msg}");
    assert!(!msg.contains("sk-secret-in-file"), "{msg}");
}

#[test]
fn environment_shortcuts_add_providers() {
    let env = [
        ("OPENAI_API_KEY", "sk-o"),
        ("ANTHROPIC_API_KEY", "sk-a"),
        ("DEEPSEEK_API_KEY", "sk-d"),
        ("DASHSCOPE_API_KEY", "sk-q"),
        ("OLLAMA_HOST", "gpu-box:11500"),
    ];
    let c = LlmConfig::load(None, &env_of(&env)).unwrap();
    let got: Vec<(&str, ProviderKind, &str)> =
        c.providers().iter().map(|p| (p.key.as_str(), p.kind, p.base_url.as_str())).collect();
    assert_eq!(
        got,
        [
            ("openai", ProviderKind::Openai, "https://api.openai.com/v1"),
            ("anthropic", ProviderKind::Anthropic, "https://api.anthropic.com"),
            ("deepseek", ProviderKind::Openai, "https://api.deepseek.com/v1"),
            ("qwen", ProviderKind::Openai, "https://dashscope.aliyuncs.com/compatible-mode/v1"),
            ("ollama", ProviderKind::Ollama, "http://gpu-box:11500"),
        ]
    );
    assert!(c.providers().iter().all(|p| p.origin == Origin::Env));
    let families: Vec<Family> = ["openai/gpt-4.1", "deepseek/x", "qwen/qwen-plus"]
        .iter()
        .map(|r| c.resolve(r).unwrap().settings.family)
        .collect();
    assert_eq!(families, [Family::Openai, Family::Deepseek, Family::Qwen]);
    let r = c.resolve("qwen/qwen-plus").unwrap();
    assert_eq!(r.settings.api_key.as_ref().map(ApiKey::expose), Some("sk-q"));
    let r = c.resolve("ollama/llama3.1:8b").unwrap();
    assert!(r.settings.api_key.is_none(), "Ollama needs no key");
    assert_eq!(r.model.id, "llama3.1:8b");
    assert!(r.model.known && r.model.input_price == Some(0.0));
    // The empty reference: the first provider's default model.
    let r = c.resolve("").unwrap();
    assert_eq!((r.settings.key.as_str(), r.model.id.as_str()), ("openai", "gpt-4.1"));
    // Nothing set: no providers, and the error says what to set.
    let none = LlmConfig::load(None, &env_of(&[("OPENAI_API_KEY", "  ")])).unwrap();
    assert!(none.providers().is_empty(), "empty values count as unset");
    assert!(config_error(none.resolve("").unwrap_err()).contains("OPENAI_API_KEY"));
}

#[test]
fn ollama_host_forms() {
    for (host, url) in [
        ("localhost:11434", "http://localhost:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        (":11434", "http://127.0.0.1:11434"),
        ("http://gpu:8080/", "http://gpu:8080"),
        ("https://ollama.example.com", "https://ollama.example.com"),
    ] {
        let c = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", host)])).unwrap();
        assert_eq!(c.provider("ollama").unwrap().base_url, url, "{host}");
    }
    let e = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", "ftp://x")])).unwrap_err();
    assert!(matches!(&e, ConfigError::Env { var, .. } if var == "OLLAMA_HOST"), "{e}");
}

#[test]
fn base_urls_are_overridden_by_name_base_url() {
    let text = "[providers.my-vllm]\nkind = \"openai\"\nbase_url = \"http://file/v1\"\n\
                    requires_key = false\n";
    let env = [
        ("OPENAI_API_KEY", "k"),
        ("OPENAI_BASE_URL", "https://proxy.example.com/v1/"),
        ("MY_VLLM_BASE_URL", "http://10.0.0.5:8000/v1"),
    ];
    let c = parse(text, &env).unwrap();
    assert_eq!(c.provider("openai").unwrap().base_url, "https://proxy.example.com/v1");
    assert_eq!(c.provider("my-vllm").unwrap().base_url, "http://10.0.0.5:8000/v1");
    // A proxy URL no longer says "openai": the family still comes from the provider key.
    assert_eq!(c.resolve("openai/gpt-4o").unwrap().settings.family, Family::Openai);
    let r = c.resolve("my-vllm/Qwen/Qwen3-8B").unwrap();
    assert_eq!(r.model.id, "Qwen/Qwen3-8B", "only the first `/` separates the provider");
    assert!(r.settings.api_key.is_none() && !r.model.known);
    assert_eq!(r.settings.family, Family::Generic);

    let e = parse(text, &[("MY_VLLM_BASE_URL", "not a url")]).unwrap_err();
    assert!(matches!(&e, ConfigError::Env { var, .. } if var == "MY_VLLM_BASE_URL"), "{e}");
}

#[test]
fn file_providers_inherit_builtin_defaults_and_keep_file_order() {
    let text = "[providers.zeta]\nkind = \"anthropic\"\napi_key_env = \"ZETA_KEY\"\n\
                    [providers.deepseek]\ndefault_model = \"deepseek-reasoner\"\n";
    let c = parse(text, &[("DEEPSEEK_API_KEY", "d"), ("ZETA_KEY", "z")]).unwrap();
    let keys: Vec<&str> = c.providers().iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["zeta", "deepseek"], "file order, not alphabetical");
    let d = c.provider("deepseek").unwrap();
    assert_eq!(d.base_url, "https://api.deepseek.com/v1");
    assert_eq!(d.api_key_env.as_deref(), Some("DEEPSEEK_API_KEY"));
    let r = c.resolve("deepseek").unwrap();
    assert_eq!(r.model.id, "deepseek-reasoner", "a provider key alone: its default model");
    assert!(r.model.reasoning);
    let z = c.provider("zeta").unwrap();
    assert_eq!(z.base_url, "https://api.anthropic.com");
    assert!(z.default_model.is_none());
    let msg = config_error(c.resolve("").unwrap_err());
    assert!(msg.contains("provider `zeta` has no default model"), "{msg}");
    assert_eq!(c.resolve("zeta/claude-haiku-4-5").unwrap().model.max_output, 64_000);
}

#[test]
fn llm_default_chooses_the_model_for_an_empty_reference() {
    let text = "[llm]\ndefault = \"anthropic/claude-haiku-4-5\"\n";
    let c = parse(text, &[("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a")]).unwrap();
    let r = c.resolve("").unwrap();
    assert_eq!((r.settings.key.as_str(), r.model.id.as_str()), ("anthropic", "claude-haiku-4-5"));
    assert_eq!(c.resolve("gpt-4o").unwrap().settings.key, "openai");
}

#[test]
fn boardsmith_model_routes_every_lookup() {
    let env = [
        ("OPENAI_API_KEY", "o"),
        ("OLLAMA_HOST", "127.0.0.1:11434"),
        ("BOARDSMITH_MODEL", "ollama/qwen3:8b"),
    ];
    let c = LlmConfig::load(None, &env_of(&env)).unwrap();
    assert_eq!(c.forced_model(), Some("ollama/qwen3:8b"));
    for asked in ["", "openai/gpt-4.1", "gpt-4o", "claude-opus-4-1", "anything"] {
        let r = c.resolve(asked).unwrap();
        assert_eq!(r.settings.key, "ollama", "{asked}");
        assert_eq!(r.model.id, "qwen3:8b", "{asked}");
        assert!(r.forced && r.model.reasoning);
    }
    // A forced model whose provider lacks its key says both what was forced and what to set.
    let c =
        LlmConfig::load(None, &env_of(&[("BOARDSMITH_MODEL", "deepseek/deepseek-chat")])).unwrap();
    let msg = config_error(c.resolve("gpt-4.1").unwrap_err());
    assert!(msg.contains("BOARDSMITH_MODEL=deepseek/deepseek-chat"), "{msg}");
    assert!(msg.contains("set DEEPSEEK_API_KEY"), "{msg}");
}

#[test]
fn a_missing_key_names_the_variable_to_set() {
    // Configured in the file, key variable unset.
    let c = parse(DEEPSEEK, &[]).unwrap();
    let msg = config_error(c.resolve("deepseek/deepseek-chat").unwrap_err());
    assert_eq!(msg, "provider `deepseek` needs an API key: set DEEPSEEK_API_KEY");
    // Not configured at all.
    let c = LlmConfig::load(None, &env_of(&[])).unwrap();
    let msg = config_error(c.resolve("anthropic/claude-sonnet-4-5").unwrap_err());
    assert_eq!(msg, "provider `anthropic` needs an API key: set ANTHROPIC_API_KEY");
    let msg = config_error(c.resolve("ollama/llama3.1").unwrap_err());
    assert!(msg.contains("set OLLAMA_HOST"), "{msg}");
    let msg = config_error(c.resolve("qwen").unwrap_err());
    assert_eq!(msg, "provider `qwen` needs an API key: set DASHSCOPE_API_KEY");
    // A custom provider: <NAME>_API_KEY by convention.
    let text = "[providers.silicon-flow]\nkind = \"openai\"\nbase_url = \"https://sf/v1\"\n";
    let c = parse(text, &[]).unwrap();
    let msg = config_error(c.resolve("silicon-flow/m").unwrap_err());
    assert_eq!(msg, "provider `silicon-flow` needs an API key: set SILICON_FLOW_API_KEY");
    // A bare id served by an unconfigured provider.
    let c = LlmConfig::load(None, &env_of(&[("OPENAI_API_KEY", "o")])).unwrap();
    let msg = config_error(c.resolve("deepseek-chat").unwrap_err());
    assert!(msg.contains("DEEPSEEK_API_KEY"), "{msg}");
}

#[test]
fn bare_model_ids_find_their_provider() {
    let text = "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8000/v1\"\n\
                    requires_key = false\n[[providers.local.models]]\nid = \"my-finetune\"\n\
                    context_window = 16384\n";
    let env = [("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a"), ("DEEPSEEK_API_KEY", "d")];
    let c = parse(text, &env).unwrap();
    let key_of = |r: &str| c.resolve(r).unwrap().settings.key;
    assert_eq!(key_of("my-finetune"), "local", "listed in the config");
    assert_eq!(key_of("gpt-4.1-mini"), "openai", "the registry's provider");
    assert_eq!(key_of("deepseek-reasoner"), "deepseek");
    assert_eq!(key_of("claude-sonnet-4-5-20250929"), "anthropic", "date suffix ignored");
    let r = c.resolve("claude-sonnet-4-5-20250929").unwrap();
    assert_eq!(r.model.id, "claude-sonnet-4-5-20250929", "the id asked for is sent");
    assert_eq!(r.model.context_window, 200_000);
    let r = c.resolve("gpt-4o-2024-08-06").unwrap();
    assert_eq!((r.settings.key.as_str(), r.model.output_price), ("openai", Some(10.0)));
    let r = c.resolve("my-finetune").unwrap();
    assert_eq!((r.model.context_window, r.model.known), (16_384, true));
    // Unknown to everyone with several providers: ask for provider/model.
    let msg = config_error(c.resolve("mystery-model").unwrap_err());
    assert!(msg.contains("local/mystery-model") || msg.contains("<provider>/mystery-model"));
    assert!(msg.contains("local, openai, anthropic, deepseek"), "{msg}");
    // With one provider, an unknown bare id goes to it, with conservative defaults.
    let c = LlmConfig::load(None, &env_of(&[("OLLAMA_HOST", "localhost")])).unwrap();
    let r = c.resolve("deepseek-r1:7b").unwrap();
    assert_eq!(r.settings.key, "ollama");
    assert_eq!(r.model, ModelInfo::unknown("deepseek-r1:7b"));
    assert!(!r.model.known);
    assert_eq!(r.model.context_window, UNKNOWN_CONTEXT_WINDOW);
}

#[test]
fn config_entries_override_and_extend_the_registry() {
    let text = "[providers.openai]\n[[providers.openai.models]]\nid = \"gpt-4o\"\n\
                    input_price = 2.0\n[[providers.openai.models]]\nid = \"gpt-9\"\n\
                    context_window = 2000000\nmax_output = 100000\nreasoning = true\n\
                    vision = true\ninput_price = 5\noutput_price = 20\n";
    let c = parse(text, &[("OPENAI_API_KEY", "o")]).unwrap();
    let m = c.resolve("openai/gpt-4o").unwrap().model;
    assert_eq!(m.input_price, Some(2.0), "overridden");
    assert_eq!(m.output_price, Some(10.0), "kept from the registry");
    assert_eq!((m.context_window, m.max_output, m.vision), (128_000, 16_384, true));
    let m = c.resolve("gpt-9").unwrap().model;
    assert_eq!(
        m,
        ModelInfo {
            id: "gpt-9".into(),
            context_window: 2_000_000,
            max_output: 100_000,
            input_price: Some(5.0),
            output_price: Some(20.0),
            cache_read_price: None,
            tools: true,
            reasoning: true,
            vision: true,
            known: true,
        }
    );
    // Untouched registry entries still apply.
    assert_eq!(c.model_info("openai", "o4-mini").max_output, 100_000);
    assert_eq!(c.model_info("nowhere", "claude-opus-4-1").input_price, Some(15.0));
    assert!(!c.model_info("openai", "gpt-2").known);
}

#[test]
fn the_registry_is_consistent() {
    for (i, e) in REGISTRY.iter().enumerate() {
        assert!(builtin(e.provider).is_some(), "{}: unknown provider {}", e.id, e.provider);
        assert!(e.max_output <= e.context_window && e.max_output > 0, "{}", e.id);
        assert!(e.input_price >= 0.0 && e.output_price >= e.input_price, "{}", e.id);
        assert!(e.cache_read_price.is_none_or(|c| c <= e.input_price), "{}", e.id);
        assert!(e.caps & T != 0, "{}: the agent needs tools", e.id);
        let dup = REGISTRY[..i].iter().any(|o| o.id == e.id && o.provider == e.provider);
        assert!(!dup, "{} listed twice", e.id);
    }
    for b in BUILTINS {
        let c = LlmConfig::load(None, &env_of(&[(b.enable_env, "localhost")])).unwrap();
        let m = c.resolve(b.key).unwrap().model;
        assert!(m.known, "{}'s default model {} is in the registry", b.key, m.id);
    }
}

#[test]
fn interaction_log_switches_come_from_file_then_environment() {
    let c = LlmConfig::load(None, &env_of(&[])).unwrap();
    assert!(c.interaction_log().enabled && c.interaction_log().mask_sensitive);
    let env = [
        ("AGENT_LLM_INTERACTION_LOG_ENABLED", "true"),
        ("AGENT_LLM_INTERACTION_LOG_MASK_SENSITIVE", "0"),
    ];
    let text = "[agent.llm.interaction-log]\nenabled = false\n";
    let c = parse(text, &env).unwrap();
    assert!(c.interaction_log().enabled, "the environment wins");
    assert!(!c.interaction_log().mask_sensitive);
    let e = parse(text, &[("AGENT_LLM_INTERACTION_LOG_ENABLED", "maybe")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "environment variable AGENT_LLM_INTERACTION_LOG_ENABLED: expected true or false, \
             got `maybe`"
    );
    let c = parse("[agent.llm.interaction_log]\nmask_sensitive = false\n", &[]).unwrap();
    assert!(!c.interaction_log().mask_sensitive, "snake_case spellings are accepted");
}

#[test]
fn provider_timeouts_override_the_global_ones() {
    let text = "[llm.timeouts]\nfirst_byte = 30\n[providers.ollama]\n\
                    [providers.ollama.timeouts]\nfirst_byte = 600\n";
    let c = parse(text, &[("OPENAI_API_KEY", "o")]).unwrap();
    let o = c.resolve("ollama/qwen3").unwrap().settings.transport;
    assert_eq!(o.timeouts.first_byte, Duration::from_secs(600));
    assert_eq!(o.timeouts.idle, Timeouts::default().idle);
    let g = c.resolve("openai/gpt-4.1").unwrap().settings.transport;
    assert_eq!(g.timeouts.first_byte, Duration::from_secs(30));
}

#[test]
fn keys_never_appear_in_debug_output() {
    let env = [
        ("DEEPSEEK_API_KEY", "sk-deep-SECRET"),
        ("OPENAI_API_KEY", "sk-open-SECRET"),
        ("ANTHROPIC_API_KEY", "sk-ant-SECRET"),
    ];
    let c = parse(DEEPSEEK, &env).unwrap();
    let resolved = c.resolve("deepseek/deepseek-chat").unwrap();
    let anthropic = c.resolve("claude-haiku-4-5").unwrap();
    for shown in [
        format!("{c:?}"),
        format!("{c:#?}"),
        format!("{resolved:?}"),
        format!("{anthropic:#?}"),
        format!("{:?}", c.providers()),
    ] {
        assert!(!shown.contains("SECRET"), "{shown}");
    }
    assert!(format!("{resolved:?}").contains("ApiKey(***)"));
}

#[test]
fn load_reads_the_file_and_reports_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llm.toml");
    std::fs::write(&path, DEEPSEEK).unwrap();
    let c = LlmConfig::load(Some(&path), &env_of(&[("DEEPSEEK_API_KEY", "k")])).unwrap();
    assert_eq!(c.source(), Some(path.as_path()));
    assert!(c.resolve("deepseek-chat").is_ok());
    let missing = dir.path().join("nope.toml");
    let e = LlmConfig::load(Some(&missing), &env_of(&[])).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }));
    assert!(e.to_string().contains("nope.toml"), "{e}");
}

#[test]
fn cost_uses_cache_prices() {
    let m = REGISTRY.iter().find(|e| e.id == "deepseek-chat").unwrap().info("deepseek-chat");
    let usage = Usage {
        input_tokens: 1_000_000,
        cache_read_tokens: 500_000,
        output_tokens: 1_000_000,
        ..Usage::default()
    };
    let cost = m.cost(&usage).unwrap();
    assert!((cost - (0.5 * 0.28 + 0.5 * 0.028 + 0.42)).abs() < 1e-9, "{cost}");
    assert_eq!(ModelInfo::unknown("x").cost(&usage), None);
}

#[test]
fn model_id_candidates() {
    assert_eq!(id_candidates("gpt-4o"), ["gpt-4o"]);
    assert_eq!(id_candidates("llama3.1:8b"), ["llama3.1:8b", "llama3.1"]);
    assert_eq!(id_candidates("qwen3:latest"), ["qwen3:latest", "qwen3"]);
    assert_eq!(id_candidates("qwen-plus-latest"), ["qwen-plus-latest", "qwen-plus"]);
    assert_eq!(
        id_candidates("claude-opus-4-1-20250805"),
        ["claude-opus-4-1-20250805", "claude-opus-4-1"]
    );
    assert_eq!(id_candidates("gpt-4.1-2025-04-14"), ["gpt-4.1-2025-04-14", "gpt-4.1"]);
    assert_eq!(id_candidates("o4-mini"), ["o4-mini"]);
}

#[test]
fn served_models_list_callable_providers_once_each() {
    let text = format!(
        "{DEEPSEEK}\n[providers.local]\nkind = \"ollama\"\nbase_url = \"http://127.0.0.1:11434\"\n\
         default_model = \"llama3.1:8b\"\n[providers.nokey]\nkind = \"openai\"\n\
         base_url = \"http://127.0.0.1:1/v1\"\ndefault_model = \"x\"\n"
    );
    let config = parse(&text, &[("DEEPSEEK_API_KEY", "k")]).unwrap();
    let served: Vec<String> =
        config.served_models().iter().map(|(p, m)| format!("{p}/{}", m.id)).collect();
    // The default first, then the registry's other deepseek models; never twice.
    assert_eq!(served.first().map(String::as_str), Some("deepseek/deepseek-chat"));
    assert!(served.contains(&"deepseek/deepseek-reasoner".to_owned()), "{served:?}");
    assert_eq!(served.iter().filter(|s| *s == "deepseek/deepseek-chat").count(), 1);
    assert!(served.contains(&"local/llama3.1:8b".to_owned()), "{served:?}");
    // A provider whose key variable is unset cannot be called: not listed.
    assert!(!served.iter().any(|s| s.starts_with("nokey/")), "{served:?}");
    let (_, chat) = &config.served_models()[0];
    assert_eq!(chat.context_window, 128_000);

    let forced = parse(&text, &[("DEEPSEEK_API_KEY", "k"), ("BOARDSMITH_MODEL", "local")]).unwrap();
    let served: Vec<String> =
        forced.served_models().iter().map(|(p, m)| format!("{p}/{}", m.id)).collect();
    assert_eq!(served, ["local/llama3.1:8b"]);
}

#[test]
fn an_explicit_provider_is_never_silently_replaced() {
    let config = parse(DEEPSEEK, &[("DEEPSEEK_API_KEY", "k"), ("DASHSCOPE_API_KEY", "q")]).unwrap();
    let e = config_error(config.resolve_with_provider("nowhere", "qwen-plus").unwrap_err());
    assert!(e.contains("`nowhere` is not configured") && e.contains("deepseek"), "{e}");
    // The Java gateway's name for DashScope is an alias of `qwen`.
    let r = config.resolve_with_provider("bailian", "qwen-plus").unwrap();
    assert_eq!((r.settings.key.as_str(), r.model.id.as_str()), ("qwen", "qwen-plus"));
    let r = config.resolve_with_provider("deepseek", "").unwrap();
    assert_eq!(r.model.id, "deepseek-chat", "an empty model is the provider's default");
    // A built-in provider without its key says which variable to set.
    let e = config_error(config.resolve_with_provider("claude", "claude-sonnet-4-5").unwrap_err());
    assert!(e.contains("ANTHROPIC_API_KEY"), "{e}");
}

#[test]
fn fallback_models_name_configured_providers() {
    let text = r#"
        [llm]
        fallback = ["deepseek/deepseek-chat", "claude/claude-x", "deepseek/deepseek-chat"]
    "#;
    let env = [("DEEPSEEK_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")];
    let c = parse(text, &env).unwrap();
    // Aliases are accepted; the list is kept as written, without repeats.
    assert_eq!(c.fallback_models(), ["deepseek/deepseek-chat", "claude/claude-x"]);
    let e = parse("[llm]\nfallback = [\"nowhere/m\"]", &env).unwrap_err().to_string();
    assert!(e.contains("llm.fallback[0]") && e.contains("nowhere"), "{e}");
    assert!(e.contains("configured: ") && e.contains("deepseek") && e.contains("anthropic"), "{e}");
    let e = parse("[llm]\nfallback = [\"deepseek-chat\"]", &env).unwrap_err().to_string();
    assert!(e.contains("provider/model"), "{e}");
    assert!(parse("", &env).unwrap().fallback_models().is_empty());
}
