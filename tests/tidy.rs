//! Architecture invariants that review alone would let slip: every source
//! file says what it is for, the heavy outside crates stay in their layer,
//! and the crate's own modules import one another one way only.

use std::path::{Path, PathBuf};

/// The benchmark's task projects: other projects' code, vendored as it ships.
const VENDORED: [&str; 2] = ["benches/tasks", "benches/projects"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if VENDORED.iter().any(|vendored| path == root.join(vendored)) {
            continue;
        }
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
        for forbidden in ["crate::cli", "crate::lsp", "crate::acp", "std::io::stdin", "std::io::stdout", "println!"] {
            if text.contains(forbidden) {
                violations.push(format!("{path} mentions {forbidden}"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

/// Which top-level modules each may import, lowest first: the plain types
/// several layers share live in `protocol` (the agent's vocabulary) and
/// `config` (the settings, plain data), so no import points back up. A
/// module's own tests (`#[cfg(test)] mod tests`) may use any layer.
const IMPORTS: [(&str, &[&str]); 12] = [
    ("text", &[]),
    ("protocol", &["text"]),
    ("workspace", &["text", "protocol"]),
    ("codemap", &["text", "protocol", "workspace"]),
    ("permissions", &["text", "protocol"]),
    ("config", &["text", "protocol", "permissions"]),
    ("tools", &["text", "protocol", "config", "permissions", "workspace"]),
    ("model", &["text", "protocol", "config"]),
    ("agent", &["text", "protocol", "config", "permissions", "workspace", "codemap", "tools", "model"]),
    ("lsp", &["text", "protocol", "config", "permissions", "workspace", "tools", "model", "agent"]),
    ("acp", &["text", "protocol", "config", "permissions", "workspace", "tools", "model", "agent"]),
    (
        "cli",
        &["text", "protocol", "config", "permissions", "workspace", "codemap", "tools", "model", "agent", "lsp", "acp"],
    ),
];

/// The top-level modules a source names as `crate::name`, outside its tests.
fn imported_modules(text: &str) -> Vec<String> {
    let shipped = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut found = Vec::new();
    for (at, _) in shipped.match_indices("crate::") {
        let name: String =
            shipped[at + "crate::".len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let before = shipped[..at].chars().next_back();
        // `tack::crate::x` does not occur; `$crate::` is a macro's own path.
        if before != Some('$') && !found.contains(&name) {
            found.push(name);
        }
    }
    found
}

#[test]
fn modules_import_one_another_one_way() {
    let mut violations = Vec::new();
    for (path, text) in sources().into_iter().filter(|(p, _)| p.starts_with("src/")) {
        let rest = &path["src/".len()..];
        let module = rest.split(['/', '.']).next().unwrap_or_default();
        let Some((_, allowed)) = IMPORTS.iter().find(|(name, _)| *name == module) else {
            // lib.rs and main.rs sit above every module.
            assert!(matches!(module, "lib" | "main"), "{path}: a top-level module missing from IMPORTS");
            continue;
        };
        for imported in imported_modules(&text) {
            if imported != module && !allowed.contains(&imported.as_str()) {
                violations.push(format!("{path} imports crate::{imported}, which `{module}` may not"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_import_table_has_no_circle() {
    let position = |name: &str| IMPORTS.iter().position(|(n, _)| *n == name).unwrap();
    for (at, (name, allowed)) in IMPORTS.iter().enumerate() {
        for imported in *allowed {
            assert!(position(imported) < at, "{name} may import {imported}, which comes later");
        }
    }
}

/// The steps of the whole-file way, each on those before it: a step names
/// the ones it builds on (`use super::{handed::*, …}`), never a later one.
const WHOLE_FILE_LAYERS: [&str; 8] = ["handed", "asking", "reply", "judge", "selection", "changes", "line", "asks"];

#[test]
fn the_whole_file_steps_build_on_earlier_ones_only() {
    let mut violations = Vec::new();
    for (at, layer) in WHOLE_FILE_LAYERS.iter().enumerate() {
        let path = format!("src/agent/whole_file/{layer}.rs");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
        for line in text.lines().filter(|line| line.starts_with("use super::")) {
            for (later, name) in WHOLE_FILE_LAYERS.iter().enumerate().skip(at) {
                if line.contains(&format!("{name}::")) {
                    violations.push(format!("{path} builds on {name}, layer {later}: {line}"));
                }
            }
        }
        // A step no longer than a reader takes in at once.
        assert!(text.lines().count() <= 600, "{path} is over 600 lines");
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The agent runs programs only as tool calls the user sees (and the user's
/// own command hooks, in `hooks.rs`): no `Command` of its own elsewhere.
#[test]
fn the_agent_starts_no_program_itself() {
    let mut found = Vec::new();
    for (path, text) in sources().into_iter().filter(|(p, _)| p.starts_with("src/agent/") && !p.ends_with("/hooks.rs"))
    {
        let shipped = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in shipped.lines().enumerate() {
            if line.contains("Command::new(") || line.contains("CommandWrap::") {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "programs started outside a tool call: {found:#?}");
}
