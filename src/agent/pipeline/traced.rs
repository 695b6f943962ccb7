//! A question about what one of the project's programs does when run as
//! the request quotes it (`python3 cli.py backup`): the program runs on a
//! copy of the project under Python's own tracer (`python3 -m trace
//! --listfuncs`), and the answer is shown what it printed and which of
//! the project's functions ran. Reading the code, a small model follows
//! names (`backup` to `backup_notes`) where the program goes another way
//! (an alias table); the run shows the way it goes. The copy keeps what
//! the program writes out of the user's project.

use std::path::Path;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Stop, examples};
use crate::agent::Conversation;
use crate::agent::turn::Generation;
use crate::protocol::Block;

/// What the answer is shown of the program's output at most.
const SHOWN_CHARS: usize = 1_500;

/// Functions listed at most: past these, a run says little of the way.
const MAX_FUNCTIONS: usize = 30;

/// Source files a project may have for the run's copy of it: past these,
/// copying the project is no longer a step a question waits on.
const MAX_COPIED_FILES: usize = 2_000;

/// The command line the request quotes that runs one of the project's
/// Python files or modules (`python3 cli.py backup`, `python3 -m markdown
/// -x toc`, between backticks): its words after the interpreter. Its words
/// must be plain (no shell syntax, which would run more than the program),
/// and its file or module one of the workspace's.
pub fn quoted_python_run(request: &str, root: &Path) -> Option<Vec<String>> {
    examples::code_spans(request).into_iter().find_map(|(_, _, span)| {
        let words: Vec<&str> = span.split_whitespace().collect();
        let plain = words.iter().all(|word| word.chars().all(|c| c.is_alphanumeric() || "-_./=:,@%+".contains(c)));
        let inside = |file: &str| {
            !file.starts_with('/')
                && !file.split('/').any(|part| part == "..")
                && file.ends_with(".py")
                && root.join(file).is_file()
        };
        let runs_project = match words.as_slice() {
            // A package runs its `__main__.py`; a module, its own file.
            [_, "-m", module, ..] => {
                let path = module.split('.').collect::<Vec<_>>().join("/");
                module.split('.').all(crate::text::is_identifier)
                    && (inside(&format!("{path}/__main__.py")) || inside(&format!("{path}.py")))
            }
            [_, file, ..] => inside(file),
            _ => false,
        };
        let python = matches!(words.first(), Some(&("python" | "python3")));
        (plain && python && runs_project).then(|| words[1..].iter().map(|word| word.to_string()).collect())
    })
}

/// The Bash command that copies the project (the working folder, less its
/// git history, which can be far larger than its files) to `copy` and runs
/// `words` there under the tracer, with nothing on its input.
fn traced_command(copy: &Path, words: &[String]) -> String {
    let copy = copy.display();
    format!(
        "mkdir -p '{copy}' && tar -cf - --exclude=./.git . | tar -xf - -C '{copy}' && cd '{copy}' && \
limit=$(command -v timeout >/dev/null && echo 'timeout 60'); $limit python3 -B -m trace --listfuncs {} < /dev/null",
        // `-m pkg` runs under the tracer as `--module pkg`.
        match words.split_first() {
            Some((flag, module)) if flag == "-m" => format!("--module {}", module.join(" ")),
            _ => words.join(" "),
        }
    )
}

/// What a traced run printed, and the project's functions it ran (file
/// from the project's root, function), in the tracer's order; `None` where
/// the tracer listed none of the project's (the program never started).
fn read_trace(output: &str, copy: &Path) -> Option<(String, Vec<(String, String)>)> {
    let (printed, listed) = output.split_once("functions called:\n")?;
    let prefix = format!("{}/", copy.display());
    let mut functions: Vec<(String, String)> = Vec::new();
    let mut after = Vec::new();
    for line in listed.lines() {
        let Some(fields) = line.strip_prefix("filename: ") else {
            if !line.starts_with("exit code") && !line.trim().is_empty() {
                after.push(line);
            }
            continue;
        };
        let Some((file, rest)) = fields.split_once(", modulename: ") else { continue };
        let Some((_, function)) = rest.split_once(", funcname: ") else { continue };
        // The program itself is listed by the path it was run by (`cli.py`),
        // the modules it imports by where they lie.
        let file = file.strip_prefix(&prefix).or_else(|| (!file.starts_with(['/', '<'])).then_some(file));
        // `<module>`, `<listcomp>`: a module loading, not a function it ran.
        let Some(file) = file.filter(|_| !function.starts_with('<')) else { continue };
        let found = (file.to_string(), function.to_string());
        if !functions.contains(&found) {
            functions.push(found);
        }
    }
    if functions.is_empty() {
        return None;
    }
    let printed = format!("{}\n{}", printed.trim_end(), after.join("\n"));
    Some((printed.trim().chars().take(SHOWN_CHARS).collect(), functions))
}

impl Conversation {
    /// Runs `words` (a Python file of the project and its arguments) on a
    /// copy of the project under the tracer, as the harness's Bash call:
    /// what it printed and the project's functions it ran, as a question's
    /// answer is shown them; `None` where the tracer listed none, or the
    /// turn may run no command, or the project is too large to copy.
    pub(super) async fn traced_run(
        &mut self,
        words: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<String>, Stop> {
        let small = self.code_map.files().count() <= MAX_COPIED_FILES;
        let runs = self.may_run_commands() && self.check_runner(crate::codemap::Language::Python).is_some();
        if !small || !runs {
            return Ok(None);
        }
        let Ok(scratch) = tempfile::tempdir() else { return Ok(None) };
        let copy = scratch.path().join("project");
        let quoted = format!("python3 {}", words.join(" "));
        self.notify(&format!("[running `{quoted}` on a copy of the project, following the functions it runs…]"));
        let mut generation = Generation::default();
        generation
            .blocks
            .push(Block::Text { text: format!("`{quoted}`, run on a copy of the project under Python's tracer.") });
        let input = json!({ "command": traced_command(&copy, words), "timeout_ms": 90_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let Some((printed, functions)) = read_trace(&output, &copy) else {
            self.notify("[the tracer lists none of the project's functions]");
            return Ok(None);
        };
        let listed: Vec<String> =
            functions.iter().take(MAX_FUNCTIONS).map(|(file, function)| format!("`{function}` in {file}")).collect();
        Ok(Some(format!(
            "Run on a copy of the project, `{quoted}` prints:\n```\n{printed}\n```\nThe project's functions it runs, as \
Python's tracer lists them: {}.\n",
            listed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_python_command_of_the_project_is_found_and_plain() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("cli.py"), "").unwrap();
        let found = |request: &str| quoted_python_run(request, root.path());
        assert_eq!(
            found("When someone runs `python3 cli.py backup`, which function does the work?"),
            Some(vec!["cli.py".to_string(), "backup".to_string()])
        );
        assert_eq!(found("What does `python cli.py` print?"), Some(vec!["cli.py".to_string()]));
        std::fs::create_dir(root.path().join("tool")).unwrap();
        std::fs::write(root.path().join("tool/__main__.py"), "").unwrap();
        assert_eq!(found("What does `python3 -m tool -v` print?").map(|w| w.join(" ")).as_deref(), Some("-m tool -v"));
        assert_eq!(found("What does `python3 -m json.tool` print?"), None, "not the project's");
        // Shell syntax, a file the project lacks, a path out of it: not run.
        assert_eq!(found("What does `python3 cli.py backup; rm -rf ~` do?"), None);
        assert_eq!(found("What does `python3 other.py` print?"), None);
        assert_eq!(found("What does `python3 ../cli.py` print?"), None);
        assert_eq!(found("What does `node cli.py` print?"), None);
    }

    /// `words` run in `root` as the harness runs them, copied to `copy`:
    /// what the trace reads.
    fn traced(root: &Path, copy: &Path, words: &[String]) -> (String, Vec<(String, String)>) {
        let run = std::process::Command::new("bash")
            .arg("-c")
            .arg(traced_command(copy, words))
            .current_dir(root)
            .output()
            .unwrap();
        let output = String::from_utf8_lossy(&run.stdout).to_string();
        read_trace(&output, copy).expect(&output)
    }

    #[test]
    fn the_tracer_s_listing_gives_the_project_s_functions_it_ran() {
        // A real run of Python's tracer on a copy, as the harness runs it.
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("handlers.py"),
            "def write_bundle(args):\n    print('wrote', len(args))\n\n\ndef backup_notes(args):\n    pass\n",
        )
        .unwrap();
        std::fs::write(
            root.path().join("cli.py"),
            "import sys\nimport handlers\nALIASES = {'backup': 'export'}\nCOMMANDS = {'export': handlers.write_bundle}\n\
\n\ndef main(name):\n    COMMANDS[ALIASES.get(name, name)](sys.argv[2:])\n\n\n\
main(sys.argv[1])\nopen('bundle.json', 'w').write('{}')\n",
        )
        .unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let copy = scratch.path().join("project");
        let words = vec!["cli.py".to_string(), "backup".to_string(), "a".to_string()];
        let (printed, functions) = traced(root.path(), &copy, &words);
        assert_eq!(printed, "wrote 1");
        let names: Vec<String> = functions.iter().map(|(file, function)| format!("{function} in {file}")).collect();
        assert_eq!(names, ["write_bundle in handlers.py", "main in cli.py"]);
        assert!(!root.path().join("bundle.json").exists(), "what the program writes stays in the copy");
        assert!(copy.join("handlers.py").is_file() && !copy.join(".git").exists(), "the copy is the files alone");
        assert!(read_trace("exit code 1\n", &copy).is_none());

        // A package run as a module: its `__main__.py`.
        std::fs::create_dir(root.path().join("tool")).unwrap();
        std::fs::write(root.path().join("tool/__main__.py"), "from handlers import write_bundle\nwrite_bundle([])\n")
            .unwrap();
        let copy = scratch.path().join("module");
        let words = vec!["-m".to_string(), "tool".to_string()];
        let (printed, functions) = traced(root.path(), &copy, &words);
        assert_eq!(printed, "wrote 0");
        assert_eq!(functions, [("handlers.py".to_string(), "write_bundle".to_string())]);
    }
}
