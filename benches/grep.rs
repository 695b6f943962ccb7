//! The Grep tool against ripgrep on a large tree, in the same run: a
//! files-with-matches search through `tack run` (scripted model, one Grep
//! call) vs. `rg -l` with the same pattern, and a `tack run` that calls no
//! tool, for the fixed cost of the process. Grep searches hidden files and,
//! for a pattern without capitals, ignores case (as `rg -S`): the call as a
//! model makes it is compared with `rg -l -S --hidden`, and the call with
//! `case_insensitive: false` with `rg -l --hidden`.
//!
//! `cargo bench --bench grep` (tree: TACK_BENCH_TREE, else the cargo
//! registry's sources, copied once into target/grep-bench-tree so that the
//! session files tack writes stay out of it; ripgrep: TACK_BENCH_RG, else
//! `rg` on PATH). Run it on a quiet machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 11;
const PATTERN: &str = r"fn\s+new_with_\w+";

fn tree() -> PathBuf {
    let copy = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/grep-bench-tree");
    if copy.is_dir() {
        return copy;
    }
    let source = std::env::var_os("TACK_BENCH_TREE").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
        let index =
            std::fs::read_dir(home.join("registry/src")).expect("no cargo registry sources; set TACK_BENCH_TREE");
        index.flatten().next().expect("an index folder").path()
    });
    eprintln!("copying {} into {}", source.display(), copy.display());
    let status = Command::new("cp").arg("-r").arg(&source).arg(&copy).status().expect("cp");
    assert!(status.success(), "cannot copy the tree");
    copy
}

fn time(command: &mut Command) -> Duration {
    let started = Instant::now();
    let output = command.stdout(Stdio::piped()).stderr(Stdio::piped()).output().expect("runs");
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{:?} failed: {}", command, String::from_utf8_lossy(&output.stderr));
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Medians of [`RUNS`] runs of each command, taken in turns.
fn medians(commands: &mut [Command]) -> Vec<Duration> {
    let mut times = vec![Vec::new(); commands.len()];
    for _ in 0..RUNS {
        for (command, times) in commands.iter_mut().zip(&mut times) {
            times.push(time(command));
        }
    }
    times.into_iter().map(median).collect()
}

fn main() {
    let tree = tree();
    let rg = std::env::var("TACK_BENCH_RG").unwrap_or_else(|_| "rg".into());
    let scripts = tempfile::tempdir().unwrap();
    let script = |name: &str, texts: serde_json::Value| {
        let path = scripts.path().join(name);
        std::fs::write(&path, texts.to_string()).unwrap();
        path
    };
    let grep = |input: serde_json::Value| serde_json::json!({"tool": "Grep", "input": input}).to_string();
    let smart = script(
        "smart.json",
        serde_json::json!([grep(serde_json::json!({"pattern": PATTERN, "output_mode": "files_with_matches"})), "done"]),
    );
    let exact = script(
        "exact.json",
        serde_json::json!([
            grep(
                serde_json::json!({"pattern": PATTERN, "output_mode": "files_with_matches", "case_insensitive": false})
            ),
            "done"
        ]),
    );
    let idle = script("idle.json", serde_json::json!(["done"]));
    let tack = |script: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tack"));
        command
            .args(["run", "--backend", "scripted", "--permission-mode", "auto_all", "--json-events", "--workspace"])
            .arg(&tree)
            .arg("--script")
            .arg(script)
            .arg("search");
        command
    };
    let ripgrep = |flags: &[&str]| {
        let mut command = Command::new(&rg);
        command.args(flags).arg(PATTERN).arg(&tree);
        command
    };

    // Warm the page cache and check that both find the same files.
    let found = ripgrep(&["-l", "-S", "--hidden"]).output().expect("rg runs");
    let rg_files = String::from_utf8_lossy(&found.stdout).lines().count();
    let output = tack(&smart).output().unwrap();
    let events = String::from_utf8_lossy(&output.stdout);
    let result = events.lines().find(|l| l.contains("\"kind\":\"tool_result\"")).expect("a Grep result");
    let result: serde_json::Value = serde_json::from_str(result).unwrap();
    let tack_files = result["output"].as_str().unwrap().lines().filter(|l| !l.starts_with('(')).count();
    println!("files with matches: rg {rg_files}, tack {tack_files} (tack shows at most 500 lines)");

    let times = medians(&mut [
        tack(&smart),
        ripgrep(&["-l", "-S", "--hidden"]),
        tack(&exact),
        ripgrep(&["-l", "--hidden"]),
        ripgrep(&["-l"]),
        tack(&idle),
    ]);
    let [smart, rg_smart, exact, rg_exact, rg_plain, idle] = times[..] else { unreachable!() };
    println!("medians of {RUNS} runs, tack run without a call {idle:.3?}; rg -l alone {rg_plain:.3?}");
    for (name, t, reference, r) in [
        ("smart case", smart, "rg -l -S --hidden", rg_smart),
        ("case_insensitive false", exact, "rg -l --hidden", rg_exact),
    ] {
        println!(
            "  Grep ({name}) {t:.3?} vs {reference} {r:.3?}: {:.2}x; without tack's fixed cost {:.2}x",
            t.as_secs_f64() / r.as_secs_f64(),
            t.saturating_sub(idle).as_secs_f64() / r.as_secs_f64()
        );
    }
}
