//! Architecture invariants that review alone would let slip: every source
//! file says what it is for, and the heavy outside crates stay in their layer.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn every_rust_file_starts_with_a_module_doc_comment() {
    let missing: Vec<String> =
        sources().into_iter().filter(|(_, text)| !text.starts_with("//!")).map(|(path, _)| path).collect();
    assert!(missing.is_empty(), "files without a leading //! comment: {missing:?}");
}

/// (crate path as written in code, the only directory allowed to use it)
const LAYERS: [(&str, &str); 4] =
    [("lsp_types", "src/lsp/"), ("ls_types", "src/lsp/"), ("tower_lsp", "src/lsp/"), ("llama_cpp_2", "src/model/")];

#[test]
fn outside_crates_stay_in_their_layer() {
    let mut violations = Vec::new();
    for (path, text) in sources().into_iter().filter(|(p, _)| p.starts_with("src/")) {
        for (krate, home) in LAYERS {
            if !path.starts_with(home) && text.lines().any(|line| line.contains(&format!("{krate}::"))) {
                violations.push(format!("{path} uses {krate} outside {home}"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_agent_core_knows_no_front_end() {
    let mut violations = Vec::new();
    for (path, text) in sources().into_iter().filter(|(p, _)| p.starts_with("src/agent/")) {
        for forbidden in ["crate::cli", "crate::lsp", "std::io::stdin", "std::io::stdout", "println!"] {
            if text.contains(forbidden) {
                violations.push(format!("{path} mentions {forbidden}"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}
