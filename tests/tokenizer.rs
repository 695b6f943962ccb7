//! Exact token counts through a real Hugging Face tokenizer (Llama 3's,
//! installed by scripts/test), in the library and through `tack run`.

use std::path::PathBuf;

use tack::model::tokenizer::HfTokenizer;

fn llama3_tokenizer() -> PathBuf {
    let path = std::env::var_os("TACK_TEST_TOKENIZER")
        .expect("TACK_TEST_TOKENIZER is not set: run the tests with ./scripts/test, which installs the test assets");
    PathBuf::from(path)
}

#[test]
fn a_real_tokenizer_counts_exactly() {
    let tokenizer = HfTokenizer::from_file(&llama3_tokenizer()).unwrap();
    // Llama 3: "Hello" "," " world" "!"
    assert_eq!(tokenizer.count("Hello, world!"), 4);
    assert_eq!(tokenizer.count(""), 0);
    let code = "fn main() {\n    println!(\"héllo 🌍\");\n}\n";
    let count = tokenizer.count(code);
    assert!(count > 8 && count < code.len(), "{count}");
}

#[test]
fn a_missing_or_broken_tokenizer_is_a_clear_error() {
    let error = HfTokenizer::from_file(std::path::Path::new("/no/such/tokenizer.json")).err().unwrap().to_string();
    assert_eq!(error, "cannot load tokenizer /no/such/tokenizer.json: no such file");
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("tokenizer.json");
    std::fs::write(&broken, "{\"not\": \"a tokenizer\"}").unwrap();
    let error = HfTokenizer::from_file(&broken).err().unwrap().to_string();
    assert!(error.starts_with(&format!("cannot load tokenizer {}: ", broken.display())), "{error}");
}

#[test]
fn tack_run_reports_exact_prompt_tokens_with_a_configured_tokenizer() {
    let workspace = tempfile::tempdir().unwrap();
    let script = workspace.path().join("script.json");
    std::fs::write(&script, r#"["Hello, world!"]"#).unwrap();
    std::fs::create_dir_all(workspace.path().join(".tack")).unwrap();
    std::fs::write(
        workspace.path().join(".tack/config.toml"),
        format!("[model]\ntokenizer = {:?}\n", llama3_tokenizer().display().to_string()),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["run", "--backend", "scripted", "--script", script.to_str().unwrap(), "--json-events", "hi"])
        .current_dir(workspace.path())
        .env("XDG_CONFIG_HOME", workspace.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let usage = &events.iter().find(|e| e["kind"] == "usage").unwrap()["usage"];
    assert_eq!(usage["completionTokens"], 4, "\"Hello, world!\" is 4 Llama 3 tokens");
    assert!(usage["promptTokens"].as_u64().unwrap() > 100);
}
