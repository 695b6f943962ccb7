//! What a source file gets wrong before it runs, as its language would
//! refuse it: a syntax error (the parse has an ERROR or MISSING node), in
//! Python a name the code reads that nothing binds (the 0.5B's
//! `paginate(ARTICLES, page, per_page)` in a file with no `per_page`), in
//! JavaScript a name declared twice. The harness holds a model's change to
//! it: a change that brings one breaks the file. All of it is read from
//! the syntax tree in-process; the one program here is the linter, which
//! runs as a Bash call the user sees (see `findings_command`).

use crate::codemap::{Language, parse, redeclared, unbound_names};

use super::code_text::uses_word;
use crate::tools::mcp::shell_word;

/// What the file at `path` gets wrong as `after` that it did not as
/// `before`, in words: a syntax error the change brings, a name declared
/// twice, or names it reads unbound that `before` never mentions. A file
/// that did not parse before is not judged by its change; nor is a name
/// the change stopped binding but still reads (an import moved over to a
/// replacement before its call is), which the caller asks to finish.
/// `None` too for a language the code map does not read.
pub(super) fn fault_brought(path: &str, before: &str, after: &str) -> Option<String> {
    let language = Language::of_path(path)?;
    if !parse(language, before).error_lines.is_empty() {
        return None;
    }
    if let Some(line) = parse(language, after).error_lines.first() {
        return Some(format!("has a syntax error on line {line}"));
    }
    let before_twice = redeclared(language, before);
    let twice: Vec<String> =
        redeclared(language, after).into_iter().filter(|name| !before_twice.contains(name)).collect();
    if !twice.is_empty() {
        return Some(format!("declares {} twice", twice.join(", ")));
    }
    let unbound = unbound_names(language, after)?;
    let new: Vec<&str> = unbound.iter().map(String::as_str).filter(|name| !uses_word(before, name)).collect();
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

/// The command that runs the language's linter on the file at `path`
/// (`text`, as handed over): shellcheck on a shell script (`.sh`, `.bash`,
/// or a `sh`/`bash` shebang), whose findings name the classic faults a
/// small model cannot see (an unquoted `$f` that splits a file name at its
/// spaces). `None` where the language has no linter, or it is not
/// installed.
pub(super) fn findings_command(path: &str, text: &str) -> Option<String> {
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
    if !(shell || by_extension) || !on_path("shellcheck") {
        return None;
    }
    // Without a shebang a script is read as bash, as the extension says
    // at most; SC2148 only asks for one.
    let dialect = if shell { interpreter } else { "bash" };
    Some(format!("shellcheck --format=gcc --exclude=SC2148 --shell {dialect} -- {}", shell_word(path)))
}

/// The findings in what the linter printed on the file at `path`:
/// "path:12:15: note: Double quote to prevent globbing and word splitting. [SC2086]".
pub(super) fn findings(path: &str, printed: &str) -> Vec<Finding> {
    printed
        .lines()
        .filter_map(|line| {
            let mut fields = line.strip_prefix(path)?.strip_prefix(':')?.splitn(4, ':');
            let line = fields.next()?.parse().ok()?;
            let (_column, _level) = (fields.next()?, fields.next()?);
            let said = fields.next()?.trim();
            let said = said.rsplit_once(" [SC").map_or(said, |(said, _)| said);
            Some(Finding { line, message: format!("shellcheck: {said}") })
        })
        .collect()
}

/// Whether `program` is an executable file in a folder of `PATH`: looked
/// up, not run.
pub(super) fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&path).any(|folder| {
        std::fs::metadata(folder.join(program))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "from pager import paginate\n\n\ndef show(page):\n    rows = paginate(ITEMS, page)\n    return [str(row) for row in rows]\n\n\nITEMS = list(range(50))\n";

    #[test]
    fn a_name_nothing_binds_is_found_as_python_would_find_it() {
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
        let broken = APP.replace("paginate(ITEMS, page)", "paginate(ITEMS, page");
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
    fn shellcheck_runs_on_a_shell_script_and_finds_an_unquoted_variable_on_its_line() {
        let script = "#!/usr/bin/env bash\nset -eu\nfor f in \"$@\"; do\n  n=$(wc -l < $f)\n  echo \"$f: $n\"\ndone\n";
        let command = findings_command("my tools/count.sh", script).expect("shellcheck is installed");
        assert_eq!(command, "shellcheck --format=gcc --exclude=SC2148 --shell bash -- 'my tools/count.sh'");
        // A script without a shebang is read as bash; other files are not shell.
        assert!(findings_command("count.sh", script.split_once('\n').unwrap().1).unwrap().contains("--shell bash"));
        assert!(
            findings_command("count", &script.replace("/usr/bin/env bash", "/bin/sh -e"))
                .unwrap()
                .contains("--shell sh")
        );
        assert_eq!(findings_command("tools/count", "echo $1\n"), None);
        assert_eq!(findings_command("count.py", "import os\nprint(os.sep)\n"), None);
        // What it prints, run for real, read back.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("count.sh"), script).unwrap();
        let run = |text: &str| {
            std::fs::write(dir.path().join("count.sh"), text).unwrap();
            let printed = std::process::Command::new("sh")
                .arg("-c")
                .arg(findings_command("count.sh", text).unwrap())
                .current_dir(dir.path())
                .output()
                .unwrap();
            findings("count.sh", &String::from_utf8_lossy(&printed.stdout))
        };
        let said = "shellcheck: Double quote to prevent globbing and word splitting.";
        assert_eq!(run(script), [Finding { line: 4, message: said.into() }]);
        assert_eq!(run(&script.replace("< $f", "< \"$f\"")), []);
    }

    #[test]
    fn a_script_that_cannot_load_is_found_and_other_languages_are_let_be() {
        let signup = "'use strict';\nconst { passwordErrors } = require('./validate');\n\nmodule.exports = { passwordErrors };\n";
        // The 0.5B's helper of the same name as the import: JavaScript
        // refuses to parse the file.
        let shadowed = format!("{signup}\nfunction passwordErrors(password) {{\n  return [];\n}}\n");
        assert_eq!(fault_brought("signup.js", signup, &shadowed).as_deref(), Some("declares passwordErrors twice"));
        let added = format!("{signup}\nfunction check(password) {{\n  return passwordErrors(password);\n}}\n");
        assert_eq!(fault_brought("signup.js", signup, &added), None);
        assert_eq!(fault_brought("signup.ts", signup, &shadowed).as_deref(), Some("declares passwordErrors twice"));
        let broken = format!("{signup}\nfunction check(password) {{\n  return passwordErrors(password;\n}}\n");
        assert!(fault_brought("signup.js", signup, &broken).unwrap().starts_with("has a syntax error on line"));
        assert_eq!(fault_brought("notes.md", "# A\n", "# B (\n"), None, "no language read here");
    }
}
