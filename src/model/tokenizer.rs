//! Exact token counts from a Hugging Face `tokenizer.json`, for backends that
//! have no tokenizer of their own (remote servers, the scripted backend).

use std::path::Path;

#[derive(Debug, thiserror::Error)]
#[error("cannot load tokenizer {path}: {message}")]
pub struct TokenizerError {
    path: String,
    message: String,
}

pub struct HfTokenizer {
    inner: tokenizers::Tokenizer,
}

impl HfTokenizer {
    pub fn from_file(path: &Path) -> Result<HfTokenizer, TokenizerError> {
        let error = |message: String| TokenizerError { path: path.display().to_string(), message };
        if !path.is_file() {
            return Err(error("no such file".into()));
        }
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| error(e.to_string()))?;
        Ok(HfTokenizer { inner })
    }

    /// Tokens of `text`, without special tokens. Text the tokenizer cannot
    /// encode falls back to the estimate rather than failing a turn.
    pub fn count(&self, text: &str) -> usize {
        match self.inner.encode(text, false) {
            Ok(encoding) => encoding.len(),
            Err(error) => {
                tracing::warn!(%error, "tokenizer failed; estimating");
                estimate_tokens(text)
            }
        }
    }
}

/// About four bytes a token, as BPE tokenizers average on English and code.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}
