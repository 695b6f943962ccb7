//! How a check runs and loads the project: the interpreter that reads it,
//! the line that loads the project (told to the model), and the check the
//! request's own examples make.

use std::path::Path;

use super::examples::Example;
use super::reading::{empty_why, unreadable};
use crate::codemap::{CodeMap, Language};

/// How a check in a language runs: read by its interpreter from stdin, in
/// the workspace's root, so that the project loads as its users load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runner {
    pub language: Language,
    pub(super) program: &'static str,
    pub(super) extension: &'static str,
}

/// The runner for checks of a project in `language`; `None` where a check
/// needs a build (Rust, Go, TypeScript).
pub fn runner(language: Language) -> Option<Runner> {
    let (program, extension) = match language {
        // No bytecode written: a variant of the same size in the same second
        // would otherwise run the stale bytecode of the one before.
        Language::Python => ("python3 -B -", "py"),
        Language::JavaScript => ("node -", "js"),
        Language::Bash => ("bash -s", "sh"),
        Language::TypeScript | Language::Tsx | Language::Rust | Language::Go => return None,
    };
    Some(Runner { language, program, extension })
}

impl Runner {
    /// Why a script that printed `printed` shows no values: it printed an
    /// object itself (`<generator object … at 0x…>`), nothing, or only
    /// empty values the `request` does not speak of (see [`empty_why`]).
    pub fn shows_no_values(&self, printed: &str, request: &str) -> Option<String> {
        match unreadable(printed) {
            Some(line) => {
                Some(format!("it prints an object rather than the values in it (`{line}`){}", self.values_hint()))
            }
            None => empty_why(printed, request),
        }
    }

    /// How a script of the language prints the values an iterator or
    /// object holds, where it printed the object itself.
    fn values_hint(&self) -> &'static str {
        match self.language {
            Language::Python => ": print `list(...)` of an iterator or generator, in a print of its own",
            Language::JavaScript => ": print `JSON.stringify(...)` of the object",
            _ => "",
        }
    }

    /// How a script of the language passes an example's command-line
    /// arguments itself, where it read an empty command line.
    pub fn arguments_hint(&self) -> &'static str {
        match self.language {
            Language::Python => {
                "write the example's arguments into the script as a list, passed where they are parsed \
(`parse_args([...])`, `main([...])`), instead of reading `sys.argv`"
            }
            Language::JavaScript => {
                "write the example's arguments into the script as an array, passed where they are parsed, \
instead of reading `process.argv` (an array as `process.argv` holds them: `['node', 'script', ...the arguments]`)"
            }
            _ => "write the example's arguments into the script itself",
        }
    }

    /// A shell command that prints each of `expressions` on a line of its
    /// own, as the language's print does, each run alone and followed by
    /// a `TACK_VALUE_END` line; one that fails prints nothing before it.
    pub fn printed(&self, expressions: &[String]) -> Option<String> {
        let print = match self.language {
            Language::Python => |e: &str| format!("print({e})"),
            Language::JavaScript => |e: &str| format!("console.log({e})"),
            _ => return None,
        };
        let runs: Vec<String> = expressions
            .iter()
            .map(|e| {
                format!(
                    "printf '%s\\n' {} | {} 2>/dev/null; echo TACK_VALUE_END",
                    crate::tools::mcp::shell_word(&print(e)),
                    self.program
                )
            })
            .collect();
        Some(runs.join("; "))
    }

    /// How a program of the language reads its command line, as its code
    /// writes it; `None` where no check of it is watched for that.
    pub fn command_line(&self) -> Option<&'static str> {
        match self.language {
            Language::Python => Some("sys.argv"),
            Language::JavaScript => Some("process.argv"),
            _ => None,
        }
    }

    /// The language's name as the model is asked to write it.
    pub fn language_name(&self) -> &'static str {
        match self.language {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript (Node.js, CommonJS)",
            _ => "Bash",
        }
    }
}

/// Starts the line of a JavaScript script of the request's examples that
/// puts the required module's names in scope, as the request writes them.
pub const JS_NAMES_IN_SCOPE: &str = "Object.assign(globalThis, ";

/// How the check loads the project: told to the model, set up by the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loading {
    /// One sentence for the model: "`import more_itertools` loads the project."
    pub hint: String,
    /// Python's path entry for a `src/` layout.
    pub(super) python_path: Option<String>,
    /// The JavaScript package's name, which `require` finds through a link.
    pub(super) package: Option<String>,
    /// What a script imports or requires to load the project: the Python
    /// package or module, the JavaScript package, else the JavaScript
    /// file by its path from the root (`./text.js`).
    top: Option<String>,
    /// The Python module that holds the code (`more_itertools.recipes`).
    module: Option<String>,
    /// The project's other top-level Python modules and packages: a
    /// script that imports one (`handlers` beside `cli.py`) loads the
    /// project too.
    others: Vec<String>,
    /// The names the project's files give the JavaScript package where it
    /// exports one function (`parse` for minimist's): a request's example
    /// calls it by them.
    called_as: Vec<String>,
}

/// The helper a Python check of the request's examples prints each value
/// through: an iterator as the list it gives.
pub const PYTHON_VALUE: &str = "_value";

impl Loading {
    /// A check that runs the request's own `examples` (see
    /// [`super::expect::request_examples`]) as written, with the project's
    /// names in scope, each printed on a line of its own (what one
    /// assigns, each name with its value); `None` where the project has no
    /// name to load it by.
    pub fn examples_script(&self, language: Language, examples: &[Example]) -> Option<String> {
        let top = self.top.as_deref().filter(|_| !examples.is_empty())?;
        match language {
            Language::Python => {
                let prints =
                    example_lines(examples, |args| format!("print({args})\n"), |v| format!("{PYTHON_VALUE}({v})"), "");
                // The package's name after its names: `markdown.markdown()`
                // is the module's function, not an attribute of the function.
                Some(format!(
                    "from {top} import *\nimport {top}\n\n\ndef {PYTHON_VALUE}(value):\n    \
return list(value) if hasattr(value, \"__next__\") else value\n\n\n{prints}"
                ))
            }
            Language::JavaScript => {
                let name: String =
                    top.rsplit('/').next()?.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
                let prints = example_lines(examples, |args| format!("console.log({args});\n"), str::to_string, ";");
                let called: String = self
                    .called_as
                    .iter()
                    .filter(|c| **c != name)
                    .map(|c| format!("globalThis.{c} = {name};\n"))
                    .collect();
                Some(format!("const {name} = require('{top}');\n{JS_NAMES_IN_SCOPE}{name});\n{called}{prints}"))
            }
            _ => None,
        }
    }

    /// A check that runs the doctests of the Python definition `qualified`
    /// (`partition`, `Markdown.convert`): the examples its docstring gives
    /// with what they print, the project's own word on what it does. It
    /// prints doctest's report of each example that fails and exits 1 where
    /// any does. `None` outside a Python module.
    pub fn doctest_script(&self, qualified: &str) -> Option<String> {
        let module = self.module.as_deref()?;
        Some(format!(
            "import doctest as _doctest\nimport importlib as _importlib\n\n_module = _importlib.import_module('{module}')\n\
_found = _module\nfor _name in '{qualified}'.split('.'):\n    _found = getattr(_found, _name)\n_failed = 0\n\
for _test in _doctest.DocTestFinder(recurse=False).find(_found, '{qualified}', globs=dict(vars(_module))):\n    \
_runner = _doctest.DocTestRunner(optionflags=_doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE)\n    \
_failed += _runner.run(_test).failed\nraise SystemExit(1 if _failed else 0)\n"
        ))
    }

    /// Whether the project's own files call the package, which exports
    /// one function, `name`.
    pub fn called_as(&self, name: &str) -> bool {
        self.called_as.iter().any(|called| called == name)
    }

    /// The package or module a script loads the project by.
    pub fn top(&self) -> Option<&str> {
        self.top.as_deref()
    }

    /// Whether `script` loads the project at all: a small model's check
    /// often defines its own copy of the function the request is about,
    /// which shows nothing of the project's.
    pub fn loaded_by(&self, script: &str) -> bool {
        let Some(top) = &self.top else { return true };
        let quoted = |line: &str| {
            ['\'', '"', '`'].iter().any(|q| {
                line.contains(&format!("{q}{top}{q}"))
                    || line.contains(&format!("{q}{top}/"))
                    || line.contains(&format!("{q}./"))
                    || line.contains(&format!("{q}../"))
            })
        };
        script.lines().any(|line| {
            let words: Vec<&str> =
                line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
            match self.package.is_some() || top.starts_with("./") {
                true => (line.contains("require(") || words.contains(&"import")) && quoted(line),
                false => {
                    matches!(words.first(), Some(&"import" | &"from"))
                        && words.iter().any(|word| *word == top || self.others.iter().any(|other| other == word))
                }
            }
        })
    }
}

/// A check that runs the project's failing Python `tests` alone, as
/// pytest names them (`test_pricing.py::test_from_100`,
/// `tests/test_slug.py::TestSlug::test_empty`): it fails as they do, and
/// passes once they all pass. `None` where one is no plain function or
/// method of a test case (a parametrized case, say), which it cannot call.
pub fn tests_script(tests: &[String]) -> Option<String> {
    let mut calls = String::new();
    for test in tests {
        let mut parts = test.split("::");
        let module = parts.next()?.strip_suffix(".py")?.replace('/', ".");
        let names: Vec<&str> = parts.collect();
        if !module.split('.').chain(names.iter().copied()).all(crate::text::is_identifier) {
            return None;
        }
        let loaded = format!("_importlib.import_module({module:?})");
        calls.push_str(&match names.as_slice() {
            [function] => format!("{loaded}.{function}()\n"),
            // `debug` runs the case with its setUp and tearDown, and lets its failure through.
            [case, method] => format!("{loaded}.{case}({method:?}).debug()\n"),
            _ => return None,
        });
    }
    (!calls.is_empty()).then(|| format!("import importlib as _importlib\n\n{calls}"))
}

/// The lines that run each example: printed by `line` as `value` shows
/// it, or run (ended by `end`) and each name it assigns printed after it,
/// by name.
fn example_lines(
    examples: &[Example],
    line: impl Fn(&str) -> String,
    value: impl Fn(&str) -> String,
    end: &str,
) -> String {
    let named = |name: &String| line(&format!("{name:?}, \"=\", {}", value(name)));
    examples
        .iter()
        .map(|e| match e.assigns.as_slice() {
            [] => line(&value(&e.code)),
            names => format!("{}{end}\n{}", e.code, names.iter().map(named).collect::<String>()),
        })
        .collect()
}

/// How a check loads the project whose file `path` (relative) holds the
/// code to change; `map`, the project's code map, tells the names its
/// files call a package by that exports one function.
pub fn loading(root: &Path, map: &CodeMap, language: Language, path: &str) -> Loading {
    let parts: Vec<&str> = path.split('/').collect();
    match language {
        Language::Python => {
            // The outermost folder with an `__init__.py` is the package;
            // `src/` layouts put it one level down, and their tests import
            // it from there too.
            let (python_path, start) = match parts.first() {
                Some(&"src") if root.join("src").join(parts.get(1).unwrap_or(&"")).join("__init__.py").exists() => {
                    (Some("src".to_string()), 1)
                }
                _ if crate::agent::tests_run::is_src_layout(root) => (Some("src".to_string()), 0),
                _ => (None, 0),
            };
            let module: Vec<&str> = parts[start..]
                .iter()
                .enumerate()
                .take_while(|(i, _)| {
                    *i + 1 == parts.len() - start
                        || root.join(parts[..=start + i].join("/")).join("__init__.py").exists()
                })
                .map(|(_, part)| part.trim_end_matches(".py"))
                .filter(|part| *part != "__init__")
                .collect();
            let hint = match module.as_slice() {
                [] => "The check runs in the project's root folder.".to_string(),
                // Told `import checksum` alone, the 1.5B called the module
                // (`checksum('orders.csv')`): its functions and classes are named.
                [one] => match module_names(&root.join(path)).as_slice() {
                    [] => format!("`import {one}` loads the code."),
                    names => format!("`from {one} import {}` loads the code.", names.join(", ")),
                },
                [package, ..] => {
                    format!("`import {package}` loads the project; the code is in the module `{}`.", module.join("."))
                }
            };
            let top = module.first().map(|m| m.to_string());
            let module = (!module.is_empty()).then(|| module.join("."));
            let others = python_modules(&root.join(python_path.as_deref().unwrap_or_default()))
                .into_iter()
                .filter(|other| Some(other) != top.as_ref())
                .collect();
            Loading { hint, python_path, package: None, top, module, others, called_as: Vec::new() }
        }
        Language::JavaScript => {
            let package = std::fs::read_to_string(root.join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
            let name = package
                .as_ref()
                .and_then(|json| json.get("name")?.as_str().map(str::to_string))
                .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || "@/._-".contains(c)));
            let main = package.as_ref().and_then(|json| json.get("main")?.as_str().map(str::to_string));
            let main = main.unwrap_or_else(|| "index.js".into());
            let main = normalized_main(root, &main);
            // What the package exports: a small model guesses an old API otherwise.
            let exported = std::fs::read_to_string(root.join(&main)).map(|text| exports(&text)).unwrap_or_default();
            // A package that exports one function is called by the names
            // its own files load it as (`var parse = require('../')`).
            let called_as: Vec<String> = match map.file(&main) {
                Some(file) if file.definitions.iter().any(|d| d.is_whole_export(file.language)) => {
                    crate::codemap::rank::bound_names(map, &main)
                }
                _ => Vec::new(),
            };
            // The line that loads it, written out to be copied: told the
            // names alone, the 1.5B still wrote `const program = require(...)`.
            // Past a few names, the package is loaded whole and named.
            const NAMED: usize = 10;
            const LISTED: usize = 12;
            let hint = match (&name, exported.as_slice()) {
                (Some(name), []) => match called_as.first() {
                    Some(called) => format!(
                        "`const {called} = require('{name}');` loads the project: it exports one function, which \
its own files call `{called}`."
                    ),
                    None => format!("`require('{name}')` loads the project."),
                },
                (Some(name), names) if names.len() <= NAMED => {
                    format!("`const {{ {} }} = require('{name}');` loads the project.", names.join(", "))
                }
                (Some(name), names) => {
                    let whole: String = name
                        .rsplit('/')
                        .next()
                        .unwrap_or(name)
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    let listed = names.iter().take(LISTED).cloned().collect::<Vec<_>>().join(", ");
                    format!(
                        "`const {whole} = require('{name}');` loads the project. It exports {listed} and {} more.",
                        names.len().saturating_sub(LISTED)
                    )
                }
                (None, _) => format!("`require('./{path}')` loads the code."),
            };
            // Without a package, the file itself, required by its path from
            // the root, where the check runs.
            let top = name.clone().or_else(|| Some(format!("./{path}")));
            Loading { hint, python_path: None, top, package: name, module: None, others: Vec::new(), called_as }
        }
        _ => Loading {
            hint: "The check runs in the project's root folder.".to_string(),
            python_path: None,
            package: None,
            top: None,
            module: None,
            others: Vec::new(),
            called_as: Vec::new(),
        },
    }
}

/// A package's `main` as the path of a file from the root: `./lib` as
/// `lib/index.js`, `index` as `index.js`.
fn normalized_main(root: &Path, main: &str) -> String {
    let main = main.trim_start_matches("./").trim_end_matches('/');
    [String::new(), ".js".to_string(), "/index.js".to_string()]
        .iter()
        .map(|ending| format!("{main}{ending}"))
        .find(|candidate| root.join(candidate).is_file())
        .unwrap_or_else(|| main.to_string())
}

/// The functions and classes a Python module defines at its top, where
/// they are few enough to import by name (ten at most); none otherwise.
fn module_names(file: &Path) -> Vec<String> {
    const MAX: usize = 10;
    use crate::codemap::DefKind;
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let map = crate::codemap::parse(Language::Python, &text);
    let names: Vec<String> = map
        .definitions
        .iter()
        .filter(|d| !d.local && d.container.is_none() && matches!(d.kind, DefKind::Function | DefKind::Class))
        .filter(|d| !d.name.starts_with('_'))
        .map(|d| d.name.clone())
        .collect();
    if names.len() > MAX { Vec::new() } else { names }
}

/// The Python modules and packages at the top of `dir` (`cli` of
/// `cli.py`, `shop` of `shop/__init__.py`), by name, the first hundred.
fn python_modules(dir: &Path) -> Vec<String> {
    const MAX: usize = 100;
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let path = entry.path();
            let module = match name.strip_suffix(".py") {
                Some(stem) if path.is_file() => stem.to_string(),
                _ if path.join("__init__.py").is_file() => name,
                _ => return None,
            };
            (crate::text::is_identifier(&module) && module != "__init__").then_some(module)
        })
        .take(MAX)
        .collect();
    names.sort();
    names
}

/// The names a CommonJS module exports (`exports.name =`,
/// `module.exports = { a, b }`), the first hundred.
fn exports(text: &str) -> Vec<String> {
    const MAX: usize = 100;
    let identifier =
        |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect() };
    let mut names: Vec<String> = Vec::new();
    let mut in_object = false;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("exports.").or_else(|| line.strip_prefix("module.exports.")) {
            names.push(identifier(rest));
        } else if line.starts_with("module.exports = {") {
            in_object = true;
        } else if in_object {
            if line.starts_with('}') {
                in_object = false;
            } else {
                names.push(identifier(line));
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names.dedup();
    names.truncate(MAX);
    names
}

/// The project's own tests, where how to run them is plain: the Python
/// test files of a `tests/` (or `test/`) folder, run as the handed tests
/// run (pytest where it imports, else the plain runner, which reads
/// pytest's plain functions too and needs no `__init__.py` in the folder),
/// or a JavaScript package's `npm test` when its dependencies are installed.
pub fn project_tests(root: &Path, language: Language) -> Option<String> {
    /// Test files named at most: past this, the command line grows long
    /// and the run would take the turn's time.
    const MAX_FILES: usize = 200;
    match language {
        // A flat project keeps its tests beside its code (`test_parse.py`).
        Language::Python => ["tests", "test", ""].into_iter().find_map(|dir| {
            let mut files: Vec<String> = ignore::WalkBuilder::new(root.join(dir))
                .require_git(false)
                .max_depth(dir.is_empty().then_some(1))
                .build()
                .flatten()
                .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
                .filter_map(|entry| {
                    let name = entry.file_name().to_str()?;
                    let test = name.ends_with(".py") && (name.starts_with("test") || name.ends_with("_test.py"));
                    let rel = entry.path().strip_prefix(root).ok()?.to_str()?.to_string();
                    (test && rel.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))).then_some(rel)
                })
                .collect();
            if files.is_empty() || files.len() > MAX_FILES {
                return None;
            }
            files.sort();
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let command = crate::agent::tests_run::python_tests_command(&files);
            Some(match root.join("src").is_dir() {
                true => format!("export PYTHONPATH=src; {command}"),
                false => command,
            })
        }),
        Language::JavaScript => {
            let text = std::fs::read_to_string(root.join("package.json")).ok()?;
            let json: serde_json::Value = serde_json::from_str(&text).ok()?;
            let has_test = json.get("scripts")?.get("test")?.as_str().is_some();
            (has_test && root.join("node_modules").is_dir()).then(|| "npm test --silent".to_string())
        }
        // Every test target, each reporting (no stop at the first that
        // fails); the doctests left out, as each is a build of its own.
        Language::Rust => root
            .join("Cargo.toml")
            .is_file()
            .then(|| "RUST_BACKTRACE=0 cargo test --offline --quiet --no-fail-fast --tests".to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project with a Python package in each of the folders `packages`.
    fn with_packages(packages: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for package in packages {
            std::fs::create_dir_all(root.path().join(package)).unwrap();
            std::fs::write(root.path().join(package).join("__init__.py"), "").unwrap();
        }
        root
    }

    #[test]
    fn a_script_that_defines_its_own_copy_of_the_code_does_not_load_the_project() {
        let root = with_packages(&["markdown", "markdown/extensions"]);
        let python = loading(root.path(), &CodeMap::new(), Language::Python, "markdown/extensions/toc.py");
        assert!(python.loaded_by("import markdown\nprint(markdown.markdown('# a'))\n"));
        assert!(python.loaded_by("from markdown.extensions.toc import unique\n"));
        assert!(
            !python
                .loaded_by("import re\ndef unique(id, ids):\n    return id  # markdown\nprint(unique('a', set()))\n")
        );
        // Beside the module of the code, a flat project's other modules load it too.
        let cli = "import sys\n\ndef main(argv):\n    pass\n\nclass Parser:\n    pass\n\ndef _helper():\n    pass\n";
        std::fs::write(root.path().join("cli.py"), cli).unwrap();
        std::fs::write(root.path().join("handlers.py"), "").unwrap();
        let flat = loading(root.path(), &CodeMap::new(), Language::Python, "cli.py");
        // A module's own functions and classes are named, for a script to call them and not the module.
        assert_eq!(flat.hint, "`from cli import main, Parser` loads the code.");
        assert!(flat.loaded_by("import handlers\nprint(handlers.export_notes)\n"));
        assert!(flat.loaded_by("from markdown import markdown\n"));
        assert!(!flat.loaded_by("import os\nprint(os.sep)  # handlers\n"));
        std::fs::write(root.path().join("package.json"), r#"{"name": "semver"}"#).unwrap();
        let js = loading(root.path(), &CodeMap::new(), Language::JavaScript, "functions/diff.js");
        assert!(js.loaded_by("const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '2.0.0'));\n"));
        assert!(js.loaded_by("const diff = require('./functions/diff');\n"));
        assert!(!js.loaded_by("function diff(a, b) { return 'major' }\nconsole.log(diff('semver', 'x'));\n"));
    }

    #[test]
    fn expressions_print_as_the_language_prints_them_and_one_that_fails_prints_nothing() {
        let run = |language: Language, expressions: &[&str]| {
            let expressions: Vec<String> = expressions.iter().map(|e| e.to_string()).collect();
            let command = runner(language).unwrap().printed(&expressions).unwrap();
            let out = std::process::Command::new("bash").arg("-c").arg(command).output().unwrap();
            String::from_utf8_lossy(&out.stdout).to_string()
        };
        assert_eq!(
            run(Language::JavaScript, &["1.5 * Math.pow(1024, 5)", "parse('1pb')", "'it''s'"]),
            "1688849860263936\nTACK_VALUE_END\nTACK_VALUE_END\nTACK_VALUE_END\n"
        );
        assert_eq!(run(Language::Python, &["2 ** 20", "1 << 3"]), "1048576\nTACK_VALUE_END\n8\nTACK_VALUE_END\n");
    }

    #[test]
    fn a_python_package_loads_by_its_folders_and_a_js_one_by_its_name() {
        let root = with_packages(&["pkg", "pkg/sub"]);
        let python = loading(root.path(), &CodeMap::new(), Language::Python, "pkg/sub/core.py");
        assert_eq!(python.hint, "`import pkg` loads the project; the code is in the module `pkg.sub.core`.");
        std::fs::write(root.path().join("package.json"), r#"{"name": "semver"}"#).unwrap();
        let js = loading(root.path(), &CodeMap::new(), Language::JavaScript, "classes/range.js");
        assert_eq!(js.hint, "`require('semver')` loads the project.");
        std::fs::write(root.path().join("index.js"), "exports.program = new Command();\nexports.Option = Option;\n")
            .unwrap();
        let js = loading(root.path(), &CodeMap::new(), Language::JavaScript, "lib/command.js");
        assert_eq!(js.hint, "`const { program, Option } = require('semver');` loads the project.");
        let many: String = (0..14).map(|i| format!("exports.f{i} = f{i};\n")).collect();
        std::fs::write(root.path().join("index.js"), many).unwrap();
        let js = loading(root.path(), &CodeMap::new(), Language::JavaScript, "lib/command.js");
        assert_eq!(
            js.hint,
            "`const semver = require('semver');` loads the project. It exports f0, f1, f2, f3, f4, f5, f6, f7, f8, \
f9, f10, f11 and 2 more."
        );
    }

    /// Run by a real python3: the script fails while a named test fails,
    /// a plain function's or a test case's, and passes once both pass.
    #[test]
    fn the_failing_tests_script_fails_as_they_do_and_passes_with_them() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tests")).unwrap();
        let write = |path: &str, text: &str| std::fs::write(root.path().join(path), text).unwrap();
        write("pricing.py", "def discount(total):\n    return 0.1 if total > 100 else 0\n");
        write(
            "test_pricing.py",
            "from pricing import discount\n\ndef test_from_100():\n    assert discount(100) == 0.1\n",
        );
        write(
            "tests/test_cases.py",
            "import unittest\nfrom pricing import discount\n\nclass TestDiscount(unittest.TestCase):\n    \
             def setUp(self):\n        self.total = 100\n\n    def test_at(self):\n        \
             self.assertEqual(discount(self.total), 0.1)\n",
        );
        let tests = ["test_pricing.py::test_from_100".to_string(), "tests/test_cases.py::TestDiscount::test_at".into()];
        let script = tests_script(&tests).unwrap();
        let run = || {
            let mut child = std::process::Command::new("python3")
                .arg("-")
                .current_dir(root.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), script.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        };
        let failing = run();
        assert!(!failing.status.success());
        assert!(String::from_utf8_lossy(&failing.stderr).contains("assert discount(100) == 0.1"));
        write("pricing.py", "def discount(total):\n    return 0.1 if total >= 100 else 0\n");
        let passing = run();
        assert!(passing.status.success(), "{}", String::from_utf8_lossy(&passing.stderr));
        // A parametrized case cannot be called alone.
        assert_eq!(tests_script(&["test_pricing.py::test_from[100]".to_string()]), None);
    }

    #[test]
    fn the_project_s_tests_are_found_where_how_to_run_them_is_plain() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(project_tests(root.path(), Language::Python), None);
        // pytest's usual layout: a `tests/` folder with no `__init__.py`,
        // a plain test function beside a unittest case, a package in `src/`.
        let write = |path: &str, text: &str| {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("src/shop/__init__.py", "def total(prices):\n    return sum(prices[1:])\n");
        write("tests/test_total.py", "from shop import total\n\ndef test_total():\n    assert total([1, 2]) == 3\n");
        write(
            "tests/unit/test_empty.py",
            "import unittest\nfrom shop import total\n\nclass TestEmpty(unittest.TestCase):\n    \
             def test_empty(self):\n        self.assertEqual(total([]), 0)\n",
        );
        write("tests/helpers.py", "raise SystemExit('not a test file')\n");
        let tests = project_tests(root.path(), Language::Python).unwrap();
        assert!(tests.contains("tests/test_total.py tests/unit/test_empty.py"), "{tests}");
        let failures = || {
            let output =
                std::process::Command::new("bash").arg("-c").arg(&tests).current_dir(root.path()).output().unwrap();
            let printed = String::from_utf8_lossy(&output.stdout).to_string();
            (super::super::reading::failures(&printed, output.status.success()), printed)
        };
        let (failing, printed) = failures();
        assert_eq!(failing, Some(1), "{printed}");
        write("src/shop/__init__.py", "def total(prices):\n    return sum(prices)\n");
        let (failing, printed) = failures();
        assert_eq!(failing, Some(0), "{printed}");
        // A JavaScript package's tests need its dependencies installed.
        std::fs::write(root.path().join("package.json"), r#"{"scripts": {"test": "tap"}}"#).unwrap();
        assert_eq!(project_tests(root.path(), Language::JavaScript), None);
        std::fs::create_dir_all(root.path().join("node_modules")).unwrap();
        assert_eq!(project_tests(root.path(), Language::JavaScript).as_deref(), Some("npm test --silent"));
        // A flat project's tests stand beside its module; a folder's are not looked for there.
        let flat = tempfile::tempdir().unwrap();
        std::fs::write(flat.path().join("parse.py"), "def parse(s):\n    return s\n").unwrap();
        std::fs::write(flat.path().join("test_parse.py"), "from parse import parse\n").unwrap();
        std::fs::create_dir_all(flat.path().join("docs")).unwrap();
        std::fs::write(flat.path().join("docs/test_docs.py"), "").unwrap();
        let tests = project_tests(flat.path(), Language::Python).unwrap();
        assert!(tests.contains(" test_parse.py") && !tests.contains("docs/"), "{tests}");
    }
}
