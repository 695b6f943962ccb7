//! Builds the backend that the settings name: the scripted replayer, or a
//! local GGUF model found from the settings, `TACK_MODEL`, or the default
//! model's install location, or an OpenAI-compatible server. Front ends share it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;

use super::ModelBackend;
use super::llama::{LOOKUP_DRAFT_TOKENS, LlamaBackend, LlamaSettings, LoadProgress, MODEL_DRAFT_TOKENS};
use super::openai::{OpenAiBackend, OpenAiSettings};
use super::scripted::ScriptedBackend;
use super::tokenizer::HfTokenizer;
use super::worker::WorkerBackend;
use crate::config::{BackendKind, Settings};

/// Where the default model, Qwen2.5-Coder-0.5B-Instruct, lands when
/// `scripts/fetch-model` assembles it.
fn default_model_path() -> Option<PathBuf> {
    Some(crate::config::cache_dir()?.join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))
}

/// The model to run: the config or `--model`, then `TACK_MODEL`, then the
/// default model if it has been fetched.
fn find_model(settings: &Settings) -> anyhow::Result<PathBuf> {
    if let Some(path) = &settings.model.path {
        return Ok(path.clone());
    }
    if let Some(path) = std::env::var_os("TACK_MODEL").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    match default_model_path() {
        Some(path) if path.is_file() => Ok(path),
        _ => bail!("no model to run: pass --model PATH (a GGUF file), set TACK_MODEL, or run scripts/fetch-model"),
    }
}

fn llama_settings(settings: &Settings, path: PathBuf) -> LlamaSettings {
    let model = &settings.model;
    let mut llama = LlamaSettings::new(path);
    llama.context_size = model.context_size;
    llama.threads = model.threads;
    llama.batch_size = model.batch_size.unwrap_or(llama.batch_size);
    llama.gpu_layers = model.gpu_layers.unwrap_or(llama.gpu_layers);
    llama.max_tokens = model.max_tokens.unwrap_or(llama.max_tokens);
    llama.grammar = model.grammar.unwrap_or(llama.grammar);
    llama.stop = model.stop.clone();
    llama.max_calls_per_reply = model.max_calls_per_reply.unwrap_or(llama.max_calls_per_reply).max(1);
    llama.lookup = match model.speculative.unwrap_or_default() {
        crate::config::Speculative::Off => 0,
        crate::config::Speculative::Lookup => model.draft_tokens.unwrap_or(LOOKUP_DRAFT_TOKENS),
        crate::config::Speculative::Draft => model.draft_tokens.unwrap_or(MODEL_DRAFT_TOKENS),
    };
    if model.speculative == Some(crate::config::Speculative::Draft) {
        llama.draft_model = model.draft_model.clone();
    }
    llama.flash_attention = model.flash_attention.unwrap_or_default();
    llama.saved_prompts_bytes = model.prompt_memory.unwrap_or(512) as usize * 1024 * 1024;
    if model.prompt_cache.unwrap_or(true) {
        llama.prompt_cache = crate::config::cache_dir().map(|dir| dir.join("prompt-cache"));
    }
    let sampling = &mut llama.sampling;
    sampling.temperature = model.temperature.unwrap_or(sampling.temperature);
    sampling.top_p = model.top_p.unwrap_or(sampling.top_p);
    sampling.top_k = model.top_k.unwrap_or(sampling.top_k);
    sampling.min_p = model.min_p.unwrap_or(sampling.min_p);
    sampling.seed = model.seed.unwrap_or(sampling.seed);
    llama
}

fn openai_settings(settings: &Settings) -> anyhow::Result<OpenAiSettings> {
    let model = &settings.model;
    let Some(base_url) = &model.base_url else {
        bail!(
            "the openai backend needs the server's address: pass --base-url URL or set model.baseUrl (e.g. http://127.0.0.1:8080/v1)"
        );
    };
    let mut openai = OpenAiSettings::new(base_url.clone());
    openai.model = model.model.clone();
    openai.api_key_env = model.api_key_env.clone();
    openai.headers = model.headers.clone();
    openai.tool_calls = model.tool_calls.unwrap_or_default();
    openai.grammar = model.grammar.unwrap_or_default();
    openai.temperature = model.temperature;
    openai.top_p = model.top_p;
    openai.top_k = model.top_k;
    openai.min_p = model.min_p;
    openai.seed = model.seed;
    openai.max_tokens = model.max_tokens;
    openai.stop = model.stop.clone();
    openai.max_calls_per_reply = model.max_calls_per_reply.unwrap_or(1).max(1) as usize;
    openai.context_window = model.context_window;
    openai.tokenizer = model.tokenizer.clone();
    if let Some(limit) = model.max_concurrent_requests {
        openai.max_concurrent_requests = limit.max(1) as usize;
    }
    if let Some(ms) = model.connect_timeout_ms {
        openai.connect_timeout = Duration::from_millis(ms.max(1));
    }
    if let Some(ms) = model.idle_timeout_ms {
        openai.idle_timeout = Duration::from_millis(ms.max(1));
    }
    Ok(openai)
}

/// The backend the settings name, loaded. `progress` hears how far a local
/// model has loaded.
pub async fn load_backend(
    settings: &Settings,
    progress: Option<LoadProgress>,
) -> anyhow::Result<Arc<dyn ModelBackend>> {
    match settings.model.backend {
        BackendKind::Scripted => {
            let Some(script) = &settings.model.script else {
                bail!(
                    "the scripted backend needs a script: pass --script FILE or set model.script in .tack/config.toml"
                );
            };
            let mut backend = ScriptedBackend::from_file(script)?;
            if let Some(path) = &settings.model.tokenizer {
                backend = backend.with_tokenizer(Arc::new(HfTokenizer::from_file(path)?));
            }
            Ok(Arc::new(backend))
        }
        BackendKind::Llama => {
            let mut llama = llama_settings(settings, find_model(settings)?);
            if settings.model.speculative == Some(crate::config::Speculative::Draft) && llama.draft_model.is_none() {
                bail!(
                    "speculative = \"draft\" needs a draft model: set model.draft_model to a smaller GGUF of the same vocabulary"
                );
            }
            llama.progress = progress;
            if settings.model.worker.unwrap_or(true) {
                let program = std::env::current_exe()
                    .map_err(|e| anyhow::anyhow!("cannot find tack's own binary to run the model in: {e}"))?;
                return Ok(Arc::new(WorkerBackend::start(program, llama).await?));
            }
            let backend = tokio::task::spawn_blocking(move || LlamaBackend::load(llama)).await??;
            Ok(Arc::new(backend))
        }
        BackendKind::Openai => Ok(Arc::new(OpenAiBackend::connect(openai_settings(settings)?).await?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlashAttention;

    #[test]
    fn the_attention_setting_reaches_the_model_and_a_misspelt_one_is_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".tack")).unwrap();
        let file = root.path().join(".tack/config.toml");
        let attention = || {
            let settings = Settings::load(None, root.path(), &[]).unwrap();
            llama_settings(&settings, PathBuf::from("model.gguf")).flash_attention
        };
        assert_eq!(attention(), FlashAttention::Auto);
        std::fs::write(&file, "[model]\nflash_attention = \"off\"\n").unwrap();
        assert_eq!(attention(), FlashAttention::Off);
        std::fs::write(&file, "[model]\nflashAttention = \"of\"\n").unwrap();
        let err = Settings::load(None, root.path(), &[]).unwrap_err().to_string();
        assert!(err.contains("config.toml") && err.contains("`of`"), "{err}");
    }
}
