//! The code map on real files of each language, and its incremental refresh.

use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::workspace::buffers::MemoryBuffers;

fn repo_file(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The file's definitions as `kind qualified (first-last)` lines.
fn outline(language: Language, text: &str) -> Vec<String> {
    parse(language, text)
        .definitions
        .iter()
        .map(|d| format!("{} {} ({}-{})", d.kind.name(), d.qualified(language), d.lines.0, d.lines.1))
        .collect()
}

fn find<'m>(map: &'m FileMap, qualified: &str) -> &'m Definition {
    map.definitions
        .iter()
        .find(|d| d.qualified(map.language) == qualified)
        .unwrap_or_else(|| panic!("no definition {qualified} in {:#?}", map.definitions))
}

const PYTHON: &str = r#"import os
from typing import List

RATE = 0.2


class Invoice:
    """A bill of sale."""

    currency = "EUR"

    def __init__(self):
        self.lines = []

    @property
    def total(self):
        """The sum of every line."""
        return sum(line.amount() for line in self.lines) * (1 + RATE)


def helper(x):
    y = x + 1
    return y
"#;

#[test]
fn python_definitions_with_their_ranges_docstrings_and_uses() {
    assert_eq!(
        outline(Language::Python, PYTHON),
        [
            "constant RATE (4-4)",
            "class Invoice (7-18)",
            "constant Invoice.currency (10-10)",
            "method Invoice.__init__ (12-13)",
            "method Invoice.total (15-18)",
            "function helper (21-23)",
        ]
    );
    let map = parse(Language::Python, PYTHON);
    let total = find(&map, "Invoice.total");
    // The decorator goes with the method, the indentation with its line.
    assert!(PYTHON[total.range.clone()].starts_with("    @property\n    def total(self):"));
    assert!(PYTHON[total.range.clone()].ends_with("(1 + RATE)"));
    assert_eq!(total.signature, "def total(self)");
    assert_eq!(total.doc.as_deref(), Some("The sum of every line."));
    assert!(total.uses.contains(&"RATE".to_string()) && total.uses.contains(&"amount".to_string()));
    assert_eq!(find(&map, "Invoice").doc.as_deref(), Some("A bill of sale."));
    // A function's local variable is not a definition.
    assert!(!map.definitions.iter().any(|d| d.name == "y"));
    assert_eq!(map.imports.len(), 2);
    assert!(map.error_lines.is_empty());
}

#[test]
fn a_broken_file_reports_the_line_of_its_error_and_keeps_what_it_can_read() {
    let broken = PYTHON.replace("def helper(x):", "def helper(x:");
    let map = parse(Language::Python, &broken);
    assert!(!map.error_lines.is_empty(), "{map:#?}");
    assert!(map.error_lines.iter().all(|line| (21..=23).contains(line)), "{:?}", map.error_lines);
    assert!(map.definitions.iter().any(|d| d.name == "total"));
}

#[test]
fn real_python_package_module() {
    let text = repo_file("benches/tasks/pkg-bug/workspace/billing/invoice.py");
    let map = parse(Language::Python, &text);
    let total = find(&map, "Invoice.total");
    assert_eq!(total.kind, DefKind::Method);
    assert!(text[total.range.clone()].trim_start().starts_with("def total"));
    assert!(map.error_lines.is_empty());
}

#[test]
fn real_javascript_functions() {
    let text = repo_file("benches/tasks/js-truncate/workspace/text.js");
    let map = parse(Language::JavaScript, &text);
    for name in ["truncate", "wordCount"] {
        let found = find(&map, name);
        assert_eq!(found.kind, DefKind::Function, "{found:?}");
        assert!(text[found.range.clone()].contains(name));
    }
}

#[test]
fn javascript_classes_prototype_methods_and_exports() {
    let text = "/** Parses versions. */\nclass SemVer {\n  constructor (v) { this.v = v }\n  inc (release) {\n    return bump(this, release)\n  }\n}\nSemVer.prototype.compare = function (other) {\n  return 0\n}\nexports.parse = (v) => new SemVer(v)\nconst MAX = 256\nmodule.exports = { SemVer }\n";
    assert_eq!(
        outline(Language::JavaScript, text),
        [
            "class SemVer (1-7)",
            "method SemVer.constructor (3-3)",
            "method SemVer.inc (4-6)",
            "method SemVer.compare (8-10)",
            "function parse (11-11)",
            "constant MAX (12-12)",
        ]
    );
    let map = parse(Language::JavaScript, text);
    assert_eq!(find(&map, "SemVer").doc.as_deref(), Some("Parses versions."));
    assert!(find(&map, "SemVer.inc").uses.contains(&"bump".to_string()));
}

#[test]
fn real_typescript_module() {
    let text = repo_file("editors/vscode/src/extension.ts");
    let map = parse(Language::TypeScript, &text);
    for name in ["activate", "deactivate", "serverPath"] {
        assert_eq!(find(&map, name).kind, DefKind::Function);
    }
    // `export async function activate` is replaced with its export keyword.
    assert!(text[find(&map, "activate").range.clone()].starts_with("export async function activate"));
    assert!(map.imports.len() >= 2, "{:?}", map.imports);
    assert!(map.error_lines.is_empty(), "{:?}", map.error_lines);
}

#[test]
fn real_rust_module_with_impl_methods_and_doc_comments() {
    let text = repo_file("src/codemap/mod.rs");
    let map = parse(Language::Rust, &text);
    let refresh = find(&map, "CodeMap::refresh");
    assert_eq!(refresh.kind, DefKind::Method);
    // The doc comment above a method is part of its range.
    assert!(text[refresh.range.clone()].trim_start().starts_with("/// Brings the map up to date"));
    assert_eq!(
        refresh.doc.as_deref(),
        Some(
            "Brings the map up to date with the workspace's files (gitignore honoured), open editor buffers standing in \
for their files."
        )
    );
    assert!(refresh.uses.contains(&"parse".to_string()));
    assert_eq!(find(&map, "CodeMap").kind, DefKind::Type);
    assert_eq!(find(&map, "MAX_FILE_BYTES").kind, DefKind::Constant);
    assert_eq!(find(&map, "relative").kind, DefKind::Function);
    assert!(map.error_lines.is_empty());
}

#[test]
fn real_go_file() {
    let text = repo_file("benches/tasks/go-comments/workspace/config.go");
    let map = parse(Language::Go, &text);
    let parse_config = find(&map, "parseConfig");
    assert_eq!(parse_config.kind, DefKind::Function);
    assert_eq!(parse_config.doc.as_deref(), Some("parseConfig reads \"key = value\" lines."));
    assert!(parse_config.uses.contains(&"TrimSpace".to_string()));
    assert_eq!(map.imports.len(), 1);
}

#[test]
fn go_methods_types_and_constants() {
    let text = "package p\n\nconst Limit = 3\n\ntype Stack struct {\n\titems []int\n}\n\n// Push adds one.\nfunc (s *Stack) Push(v int) {\n\ts.items = append(s.items, v)\n}\n";
    assert_eq!(outline(Language::Go, text), ["constant Limit (3-3)", "type Stack (5-7)", "method Stack.Push (9-12)"]);
}

#[test]
fn bash_functions_and_top_level_variables() {
    let text = "#!/bin/sh\nLIMIT=3\n\n# Counts lines.\ncount() {\n  local n=0\n  wc -l < \"$1\"\n}\n";
    assert_eq!(outline(Language::Bash, text), ["constant LIMIT (2-2)", "function count (5-8)"]);
    let map = parse(Language::Bash, text);
    assert_eq!(find(&map, "count").doc.as_deref(), Some("Counts lines."));
    assert!(find(&map, "count").uses.contains(&"wc".to_string()));
    let real = repo_file("benches/tasks/sh-spaces/workspace/linecount.sh");
    let map = parse(Language::Bash, &real);
    assert!(map.definitions.iter().any(|d| d.name == "total"), "{:#?}", map.definitions);
    assert!(map.error_lines.is_empty());
}

#[test]
fn the_map_parses_again_only_what_changed_on_disk_or_in_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def one():\n    return 1\n").unwrap();
    std::fs::write(dir.path().join("b.py"), "def two():\n    return 2\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not code").unwrap();
    let buffers = Arc::new(MemoryBuffers::default());
    let workspace = Workspace::open(dir.path()).unwrap().with_overlay(buffers.clone());
    let mut map = CodeMap::new();
    assert_eq!(map.refresh(&workspace), Refreshed { files: 2, parsed: 2, removed: 0 });
    assert_eq!(map.refresh(&workspace), Refreshed { files: 2, parsed: 0, removed: 0 });

    // An editor's unsaved text stands in for the file, and only it is parsed.
    let abs = workspace.root().join("a.py");
    buffers.set(abs, "def one():\n    return 1\n\ndef three():\n    return 3\n");
    assert_eq!(map.refresh(&workspace), Refreshed { files: 2, parsed: 1, removed: 0 });
    let names: Vec<&str> = map.definitions().map(|f| f.definition.name.as_str()).collect();
    assert_eq!(names, ["one", "three", "two"]);

    // A file changed on disk, and one deleted.
    std::fs::write(dir.path().join("b.py"), "def two():\n    return 2\n\n\nclass Four:\n    pass\n").unwrap();
    std::fs::remove_file(dir.path().join("a.py")).unwrap();
    let refreshed = map.refresh(&workspace);
    assert_eq!((refreshed.parsed, refreshed.removed), (1, 1));
    let names: Vec<&str> = map.definitions().map(|f| f.definition.name.as_str()).collect();
    assert_eq!(names, ["two", "Four"]);
}

#[test]
fn a_docstring_s_summary_is_its_first_sentence_over_its_wrapped_lines() {
    let text = "def divide(n, iterable):\n    \"\"\"Divide the items (e.g. a list) into\n    *n* parts of 1.5 \
kinds, keeping order. The last may be short.\n\n    >>> divide(2, [1])\n    \"\"\"\n";
    let map = parse(Language::Python, text);
    assert_eq!(
        find(&map, "divide").doc.as_deref(),
        Some("Divide the items (e.g. a list) into *n* parts of 1.5 kinds, keeping order.")
    );
    let text = "/**\n * Makes a thing\n * @param x the x\n */\nfunction make(x) {}\n";
    let map = parse(Language::JavaScript, text);
    assert_eq!(find(&map, "make").doc.as_deref(), Some("Makes a thing"));
}
