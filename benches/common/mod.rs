//! The scripted turn the harness and LSP benchmarks share: on a file of
//! `let value_N = ...` bindings, each iteration reads 50 lines and renames one
//! binding, then the model answers.

/// The file the turn works on, `lines` long.
pub fn rename_file(lines: usize) -> String {
    (0..lines).map(|i| format!("    let value_{i} = compute({i}, \"line {i}\");\n")).collect()
}

/// The model's completions: `iterations` Read + Edit pairs, then the answer.
pub fn rename_script(iterations: usize) -> Vec<String> {
    let mut completions: Vec<String> = (0..iterations)
        .map(|i| {
            let line = i * 200 + 7;
            let read =
                serde_json::json!({"tool": "Read", "input": {"file_path": "big.rs", "offset": line, "limit": 50}});
            let edit = serde_json::json!({"tool": "Edit", "input": {
                "file_path": "big.rs",
                "old_string": format!("let value_{line} = "),
                "new_string": format!("let renamed_{line} = "),
            }});
            format!("Reading around line {line}, then renaming.\n{read}\n{edit}\n")
        })
        .collect();
    completions.push(format!("Renamed {iterations} bindings."));
    completions
}
