//! What a language's own tools find wrong with a source file before it
//! runs: a syntax error, and in Python a name the code reads that nothing
//! binds (the 0.5B's `paginate(ARTICLES, page, per_page)` in a file with no
//! `per_page`). The harness holds a model's change to it: a change that
//! brings either breaks the file. Python's compiler (`symtable`) and
//! node's parser (`node --check`) find them, as exactly as the language
//! does; where neither runs, the check says nothing.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::code_text::uses_word;

/// Reads a module on stdin; prints `! LINE` for a syntax error, else each
/// name some scope reads as a global that the module never binds and that
/// is no builtin. A star import binds names no table shows: it prints
/// nothing.
const SCRIPT: &str = r#"
import builtins, symtable, sys
src = sys.stdin.read()
if "import *" in src:
    sys.exit(0)
try:
    top = symtable.symtable(src, "<file>", "exec")
except (SyntaxError, ValueError) as e:
    print("!", getattr(e, "lineno", 0) or 0)
    sys.exit(0)
known = set(dir(builtins)) | {"__file__", "__path__", "__builtins__"}
known |= {s.get_name() for s in top.get_symbols()
          if s.is_assigned() or s.is_imported() or s.is_namespace() or s.is_parameter()}
unbound = set()
def walk(table):
    for s in table.get_symbols():
        free = table is top or (s.is_global() and not s.is_declared_global())
        if s.is_referenced() and free and s.get_name() not in known:
            unbound.add(s.get_name())
    for child in table.get_children():
        walk(child)
walk(top)
print("\n".join(sorted(unbound)))
"#;

/// A check that takes longer than this has gone wrong (python3 starts in
/// well under a second, a few on a loaded machine); the file is let be.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What a language finds wrong with a file's text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Faults {
    /// The line of the first syntax error.
    syntax_error: Option<usize>,
    /// Names read that nothing binds.
    unbound: BTreeSet<String>,
}

/// What the file at `path` gets wrong as `after` that it did not as
/// `before`, in words: a syntax error the change brings, or names it reads
/// unbound that `before` never mentions. A file that did not parse before
/// is not judged by its change; nor is a name the change stopped binding
/// but still reads (an import moved over to a replacement before its call
/// is), which the caller asks to finish. `None` too for a language without
/// a checker here.
pub(super) fn fault_brought(path: &str, before: &str, after: &str) -> Option<String> {
    let extension = path.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase())?;
    let faults: fn(&str) -> Option<Faults> = match extension.as_str() {
        "py" => python_faults,
        "js" | "cjs" => node_faults,
        _ => return None,
    };
    if faults(before)?.syntax_error.is_some() {
        return None;
    }
    let now = faults(after)?;
    if let Some(line) = now.syntax_error {
        return Some(format!("has a syntax error on line {line}"));
    }
    let new: Vec<&str> = now.unbound.iter().map(String::as_str).filter(|name| !uses_word(before, name)).collect();
    (!new.is_empty()).then(|| format!("uses {}, which nothing in it defines", new.join(", ")))
}

/// A linter's finding on one line of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Finding {
    /// The line it is on, from 1.
    pub line: usize,
    /// What the linter says, with the linter's name: "shellcheck: Double
    /// quote to prevent globbing and word splitting."
    pub message: String,
}

/// What the language's linter finds in the file at `path`: shellcheck's
/// findings on a shell script (`.sh`, `.bash`, or a `sh`/`bash` shebang),
/// which name the classic faults a small model cannot see (an unquoted
/// `$f` that splits a file name at its spaces). Empty where no linter for
/// the language runs here.
pub(super) fn findings(path: &str, text: &str) -> Vec<Finding> {
    let extension = path.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase()).unwrap_or_default();
    let shebang = text.lines().next().filter(|line| line.starts_with("#!")).unwrap_or_default();
    // `#!/usr/bin/env bash`, `#!/bin/sh -e`: the program run, past env.
    let interpreter = shebang
        .trim_start_matches("#!")
        .split_whitespace()
        .map(|word| word.rsplit('/').next().unwrap_or(word))
        .find(|word| *word != "env" && !word.starts_with('-'))
        .unwrap_or_default();
    let shell = ["sh", "bash", "dash", "ksh"].contains(&interpreter);
    let by_extension = shebang.is_empty() && ["sh", "bash"].contains(&extension.as_str());
    if !(shell || by_extension) {
        return Vec::new();
    }
    // Without a shebang a script is read as bash, as the extension says
    // at most; SC2148 only asks for one.
    let dialect = if shell { interpreter } else { "bash" };
    let mut shellcheck = Command::new("shellcheck");
    shellcheck.args(["--format=gcc", "--exclude=SC2148", "--shell", dialect, "-"]);
    let Some((_, out, _)) = checked(&mut shellcheck, text) else { return Vec::new() };
    // "-:12:15: note: Double quote to prevent globbing and word splitting. [SC2086]"
    out.lines()
        .filter_map(|line| {
            let mut fields = line.strip_prefix("-:")?.splitn(4, ':');
            let line = fields.next()?.parse().ok()?;
            let (_column, _level) = (fields.next()?, fields.next()?);
            let said = fields.next()?.trim();
            let said = said.rsplit_once(" [SC").map_or(said, |(said, _)| said);
            Some(Finding { line, message: format!("shellcheck: {said}") })
        })
        .collect()
}

/// Python's verdict on a module.
fn python_faults(text: &str) -> Option<Faults> {
    let (passed, out, _) = checked(Command::new("python3").args(["-I", "-c", SCRIPT]), text)?;
    if !passed {
        return None;
    }
    let mut found = Faults::default();
    for line in out.lines().map(str::trim).filter(|line| !line.is_empty()) {
        match line.strip_prefix('!') {
            Some(at) => found.syntax_error = Some(at.trim().parse().unwrap_or(0)),
            None => {
                found.unbound.insert(line.to_string());
            }
        }
    }
    Some(found)
}

/// Node's verdict on a CommonJS script: its syntax only.
fn node_faults(text: &str) -> Option<Faults> {
    let (passed, _, err) = checked(Command::new("node").args(["--check", "-"]), text)?;
    if passed {
        return Some(Faults::default());
    }
    // "[stdin]:3" heads the report of a syntax error; any other failure
    // is the checker's, not the file's.
    if !err.contains("SyntaxError") {
        return None;
    }
    let line = err.lines().find_map(|line| line.strip_prefix("[stdin]:")?.trim().parse().ok());
    Some(Faults { syntax_error: Some(line.unwrap_or(0)), ..Faults::default() })
}

/// `command` run on `text` as its stdin: whether it succeeded, its stdout
/// and its stderr; `None` where it cannot be run or does not finish.
fn checked(command: &mut Command, text: &str) -> Option<(bool, String, String)> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().ok()?;
    // A file larger than the pipe's buffer is written while the checker
    // reads; the write ends before the wait begins either way. Their
    // reports are a few lines, which the pipes hold until read.
    let written = child.stdin.take().map(|mut stdin| stdin.write_all(text.as_bytes()));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < TIMEOUT => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    if !matches!(written, Some(Ok(()))) {
        return None;
    }
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    child.stderr.take()?.read_to_string(&mut err).ok()?;
    Some((status.success(), out, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "from pager import paginate\n\n\ndef show(page):\n    rows = paginate(ITEMS, page)\n    return [str(row) for row in rows]\n\n\nITEMS = list(range(50))\n";

    #[test]
    fn a_name_nothing_binds_is_found_where_python_finds_it() {
        let after = APP.replace("paginate(ITEMS, page)", "paginate(ITEMS, page, per_page)");
        assert_eq!(fault_brought("app.py", APP, &after).as_deref(), Some("uses per_page, which nothing in it defines"));
        // Bound anywhere in the module, by an import, a parameter, a loop
        // or a later assignment, a name is no fault; nor is a builtin.
        let bound = APP.replace("def show(page):", "def show(page, per_page=20):");
        let bound = bound.replace("paginate(ITEMS, page)", "paginate(ITEMS, page, per_page)");
        assert_eq!(fault_brought("app.py", APP, &bound), None);
        let builtin = APP.replace("[str(row) for row in rows]", "sorted(map(repr, rows), key=len)");
        assert_eq!(fault_brought("app.py", APP, &builtin), None);
        let imported = format!("import math\n{}", APP.replace("list(range(50))", "list(range(math.floor(50.5)))"));
        assert_eq!(fault_brought("app.py", APP, &imported), None);
    }

    #[test]
    fn a_syntax_error_a_change_brings_is_found_and_one_it_found_is_not_its_fault() {
        let broken = APP.replace("def show(page):\n", "def show(page):\ndef shown(page):\n");
        assert_eq!(fault_brought("app.py", APP, &broken).as_deref(), Some("has a syntax error on line 5"));
        assert_eq!(fault_brought("app.py", &broken, APP), None);
        assert_eq!(fault_brought("app.py", &broken, &broken), None);
        // A name already unbound before is not the change's doing.
        let typo = APP.replace("paginate(ITEMS", "paginate(ITEM");
        assert_eq!(fault_brought("app.py", &typo, &typo), None);
        assert_eq!(fault_brought("app.py", &typo, APP), None);
        // An import dropped before the call that needs it is changed is a
        // change half made, not a name made up.
        let unimported = APP.replace("from pager import paginate\n", "");
        assert_eq!(fault_brought("app.py", APP, &unimported), None);
    }

    #[test]
    fn shellcheck_finds_an_unquoted_variable_on_its_line() {
        let script = "#!/usr/bin/env bash\nset -eu\nfor f in \"$@\"; do\n  n=$(wc -l < $f)\n  echo \"$f: $n\"\ndone\n";
        let found = findings("count.sh", script);
        assert_eq!(
            found,
            [Finding { line: 4, message: "shellcheck: Double quote to prevent globbing and word splitting.".into() }]
        );
        assert_eq!(findings("count.sh", &script.replace("< $f", "< \"$f\"")), []);
        // A script without a shebang is read as bash; other files are not shell.
        assert_eq!(findings("tools/count", &script.replace("< $f", "< \"$f\"")), []);
        assert_eq!(findings("count.sh", script.split_once('\n').unwrap().1).len(), 1);
        assert_eq!(findings("count.py", "import os\nprint(os.sep)\n"), []);
        assert_eq!(findings("count", &script.replace("/usr/bin/env bash", "/bin/sh -e")).len(), 1);
    }

    #[test]
    fn a_script_that_node_cannot_parse_is_found_and_other_languages_are_let_be() {
        let signup = "'use strict';\nconst { passwordErrors } = require('./validate');\n\nmodule.exports = { passwordErrors };\n";
        // The 0.5B's helper of the same name as the import: JavaScript
        // refuses to parse the file.
        let shadowed = format!("{signup}\nfunction passwordErrors(password) {{\n  return [];\n}}\n");
        assert_eq!(fault_brought("signup.js", signup, &shadowed).as_deref(), Some("has a syntax error on line 6"));
        let added = format!("{signup}\nfunction check(password) {{\n  return passwordErrors(password);\n}}\n");
        assert_eq!(fault_brought("signup.js", signup, &added), None);
        assert_eq!(fault_brought("signup.ts", signup, &shadowed), None, "no checker for TypeScript here");
    }
}
