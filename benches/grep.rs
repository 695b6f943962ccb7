//! The Grep tool against ripgrep on a large tree, in the same run: a
//! files-with-matches search through `tack run` (scripted model, one Grep
//! call) vs. `rg -l` with the same pattern, and a `tack run` that calls no
//! tool, for the fixed cost of the process.
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

fn main() {
    let tree = tree();
    let rg = std::env::var("TACK_BENCH_RG").unwrap_or_else(|_| "rg".into());
    let scripts = tempfile::tempdir().unwrap();
    let grep = serde_json::json!({"tool": "Grep", "input": {"pattern": PATTERN, "output_mode": "files_with_matches"}});
    let search = scripts.path().join("grep.json");
    std::fs::write(&search, serde_json::json!([grep.to_string(), "done"]).to_string()).unwrap();
    let idle = scripts.path().join("idle.json");
    std::fs::write(&idle, serde_json::json!(["done"]).to_string()).unwrap();
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
    let mut ripgrep = Command::new(&rg);
    ripgrep.args(["-l", PATTERN]).arg(&tree);

    // Warm the page cache and check that both find the same files.
    let found = Command::new(&rg).args(["-l", PATTERN]).arg(&tree).output().expect("rg runs");
    let rg_files = String::from_utf8_lossy(&found.stdout).lines().count();
    let output = tack(&search).output().unwrap();
    let events = String::from_utf8_lossy(&output.stdout);
    let result = events.lines().find(|l| l.contains("\"kind\":\"tool_result\"")).expect("a Grep result");
    let result: serde_json::Value = serde_json::from_str(result).unwrap();
    let tack_files = result["output"].as_str().unwrap().lines().filter(|l| !l.starts_with('(')).count();
    println!("files with matches: rg {rg_files}, tack {tack_files} (tack shows at most 500 lines)");

    let (mut tack_times, mut rg_times, mut idle_times) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        tack_times.push(time(&mut tack(&search)));
        rg_times.push(time(&mut ripgrep));
        idle_times.push(time(&mut tack(&idle)));
    }
    let (t, r, i) = (median(tack_times), median(rg_times), median(idle_times));
    println!("medians of {RUNS} runs: tack run with Grep {t:.3?}, rg -l {r:.3?}, tack run without a call {i:.3?}");
    println!(
        "ratio tack/rg: {:.2}x; without tack's fixed cost: {:.2}x",
        t.as_secs_f64() / r.as_secs_f64(),
        t.saturating_sub(i).as_secs_f64() / r.as_secs_f64()
    );
}
