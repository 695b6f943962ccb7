//! What Python itself finds wrong with a Python file before it runs: a
//! syntax error, or a name the code reads that nothing binds (the 0.5B's
//! `paginate(ARTICLES, page, per_page)` in a file with no `per_page`). The
//! harness holds a model's change to it: a change that brings either in
//! breaks the file. Python's own compiler finds them (`symtable`), so the
//! check is as exact as Python; where no python3 runs it says nothing.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::whole_file::uses_word;

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

/// A check that takes longer than this has gone wrong; the file is let be.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What Python finds wrong with a module's text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct PythonFaults {
    /// The line of the first syntax error.
    pub syntax_error: Option<usize>,
    /// Names read that nothing binds.
    pub unbound: BTreeSet<String>,
}

impl PythonFaults {
    /// What `after` gets wrong that `before` did not: a syntax error it
    /// brings, or names it reads unbound that `before` never mentions, in
    /// words. A module that did not compile before is not judged by its
    /// change; nor is a name the change stopped binding but still reads
    /// (an import moved over to a replacement before its call is), which
    /// the caller asks to finish.
    pub fn brought(before: &str, after: &str) -> Option<String> {
        let was = faults(before)?;
        if was.syntax_error.is_some() {
            return None;
        }
        let now = faults(after)?;
        if let Some(line) = now.syntax_error {
            return Some(format!("has a syntax error on line {line}"));
        }
        let new: Vec<&str> = now.unbound.iter().map(String::as_str).filter(|name| !uses_word(before, name)).collect();
        (!new.is_empty()).then(|| format!("uses {}, which nothing in it defines", new.join(", ")))
    }
}

/// Python's verdict on `text`; `None` where python3 cannot be run or does
/// not answer.
fn faults(text: &str) -> Option<PythonFaults> {
    let mut child = Command::new("python3")
        .args(["-I", "-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // A module larger than the pipe's buffer is written while python3
    // reads; the write ends before the wait begins either way.
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
    if !status.success() || !matches!(written, Some(Ok(()))) {
        return None;
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    let mut found = PythonFaults::default();
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

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "from pager import paginate\n\n\ndef show(page):\n    rows = paginate(ITEMS, page)\n    return [str(row) for row in rows]\n\n\nITEMS = list(range(50))\n";

    #[test]
    fn a_name_nothing_binds_is_found_where_python_finds_it() {
        let after = APP.replace("paginate(ITEMS, page)", "paginate(ITEMS, page, per_page)");
        assert_eq!(PythonFaults::brought(APP, &after).as_deref(), Some("uses per_page, which nothing in it defines"));
        // Bound anywhere in the module, by an import, a parameter, a loop
        // or a later assignment, a name is no fault; nor is a builtin.
        let bound = APP.replace("def show(page):", "def show(page, per_page=20):");
        let bound = bound.replace("paginate(ITEMS, page)", "paginate(ITEMS, page, per_page)");
        assert_eq!(PythonFaults::brought(APP, &bound), None);
        let builtin = APP.replace("[str(row) for row in rows]", "sorted(map(repr, rows), key=len)");
        assert_eq!(PythonFaults::brought(APP, &builtin), None);
        let imported = format!("import math\n{}", APP.replace("list(range(50))", "list(range(math.floor(50.5)))"));
        assert_eq!(PythonFaults::brought(APP, &imported), None);
    }

    #[test]
    fn a_syntax_error_a_change_brings_is_found_and_one_it_found_is_not_its_fault() {
        let broken = APP.replace("def show(page):\n", "def show(page):\ndef shown(page):\n");
        assert_eq!(PythonFaults::brought(APP, &broken).as_deref(), Some("has a syntax error on line 5"));
        assert_eq!(PythonFaults::brought(&broken, APP), None);
        assert_eq!(PythonFaults::brought(&broken, &broken), None);
        // A name already unbound before is not the change's doing.
        let typo = APP.replace("paginate(ITEMS", "paginate(ITEM");
        assert_eq!(PythonFaults::brought(&typo, &typo), None);
        assert_eq!(PythonFaults::brought(&typo, APP), None);
        // An import dropped before the call that needs it is changed is a
        // change half made, not a name made up.
        let unimported = APP.replace("from pager import paginate\n", "");
        assert_eq!(PythonFaults::brought(APP, &unimported), None);
    }
}
