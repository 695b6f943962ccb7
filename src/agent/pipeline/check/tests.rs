use super::*;
use crate::agent::pipeline::loading::{loading, runner};
use crate::agent::pipeline::reading::{calls, failures, passed, shows_nothing, spectrum, tries_stopped};

#[test]
fn the_request_s_examples_run_with_the_project_s_names_in_scope() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    // A function named as its package (`markdown.markdown`) does not hide the package.
    let code = "def pairs(xs):\n    return iter(zip(xs, xs[1:]))\n\n\ndef halves(xs):\n    return iter(xs[:1]), xs[1:]\n\n\n\
def pkg():\n    return 'the function'\n";
    std::fs::write(root.join("pkg/__init__.py"), code).unwrap();
    std::fs::write(root.join("package.json"), r#"{ "name": "@scope/lib", "main": "index.js" }"#).unwrap();
    std::fs::write(root.join("index.js"), "exports.double = (x) => x * 2;\n").unwrap();
    let run = |language: Language, path: &str, examples: &[&str]| {
        let loads = loading(root, language, path);
        let request: Vec<String> = examples.iter().map(|e| format!(">>> {e}")).collect();
        let examples = super::super::examples::request_examples(language, &request.join("\n"), |_| true);
        let script = loads.examples_script(language, &examples).unwrap();
        let check = Check::new(runner(language).unwrap(), loads, &script).unwrap();
        let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
        String::from_utf8_lossy(&out.unwrap().stdout).to_string()
    };
    // An iterator's items are printed, as a request shows them.
    let python = ["pairs([1, 2, 3])", "pkg.pairs([])", "first, rest = halves([1, 2, 3])"];
    assert_eq!(run(Language::Python, "pkg/__init__.py", &python), "[(1, 2), (2, 3)]\n[]\nfirst = [1]\nrest = [2, 3]\n");
    let js = ["lib.double(2)", "double(3)", "const d = double(5)"];
    assert_eq!(run(Language::JavaScript, "index.js", &js), "4\n6\nd = 10\n");
}

#[test]
fn the_project_s_tests_failures_are_counted_as_the_shell_counts_them() {
    assert_eq!(failures("Ran 3 tests\nOK\nexit code 0", true), Some(0));
    assert_eq!(failures("Ran 817 tests\nFAILED (failures=2, errors=1, skipped=1)\nexit code 1", false), Some(3));
    assert_eq!(failures("ImportError: no module\nexit code 1", false), None);
    let pytest = "FAILED tests/test_a.py::test_b - assert 1 == 2\n== 2 failed, 5 passed, 1 error in 0.12s ==";
    assert_eq!(failures(&format!("{pytest}\nexit code 1"), false), Some(3));
    let score = format!(
        "printf '%s\\n' '{pytest}' | grep -Eo '{COUNTS_PATTERN}' | tr -dc '0-9\\n' | awk '{{s+=$1}} END {{print s}}'"
    );
    let summed = std::process::Command::new("bash").arg("-c").arg(&score).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&summed.stdout).trim(), "3", "the shell reads the counts as Rust does");
}

#[test]
fn a_js_check_gets_the_assert_it_forgot() {
    assert!(tidy(Language::JavaScript, "assert(f() === 1)").starts_with("const assert = require('assert');"));
    let already = "const assert = require('assert')\nassert(f())";
    assert_eq!(tidy(Language::JavaScript, already), already);
    assert_eq!(tidy(Language::Python, "assert f() == 1"), "assert f() == 1");
}

#[test]
fn the_doctests_of_a_definition_fail_where_its_code_does_not_do_what_they_show() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
    let code = |body: &str| {
        format!(
            "class Pair:\n    def swap(self, a, b):\n        \"\"\"Swaps.\n\n        >>> Pair().swap(1, 2)\n        \
(2, 1)\n        \"\"\"\n        return {body}\n"
        )
    };
    let run = |body: &str| {
        std::fs::write(root.join("pkg/pairs.py"), code(body)).unwrap();
        let loading = loading(root, Language::Python, "pkg/pairs.py");
        let script = loading.doctest_script("Pair.swap").unwrap();
        let check = Check::new(runner(Language::Python).unwrap(), loading, &script).unwrap();
        let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
        let out = out.unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string())
    };
    let (passed, printed) = run("a, b");
    assert!(!passed && printed.contains("Failed example:") && printed.contains("(1, 2)"), "{printed}");
    assert_eq!(run("b, a"), (true, String::new()));
    assert_eq!(loading(root, Language::JavaScript, "index.js").doctest_script("f"), None);
}

#[test]
fn a_script_that_prints_nothing_shows_the_call_it_ends_on() {
    let ends = "import markdown\n\ntext = 'Hi'\nmarkdown.markdown(text)\n";
    assert_eq!(tidy(Language::Python, ends), "import markdown\n\ntext = 'Hi'\nprint(markdown.markdown(text))");
    assert_eq!(
        tidy(Language::JavaScript, "const s = require('semver');\ns.valid('1.2.3');"),
        "const s = require('semver');\nconsole.log(s.valid('1.2.3'))"
    );
    // A script that prints, or ends on an assignment or a name, is left as it is.
    for kept in ["x = f()\nprint(x)\nf()", "x = f()", "f()\nx", "def f():\n    g()"] {
        assert_eq!(tidy(Language::Python, kept), kept);
    }
}

/// The check runs for real: on the project as it is, then against two
/// candidates in a scratch copy, where only the second passes, and the
/// workspace's own file is never touched.
#[test]
fn the_calls_command_names_the_project_s_functions_the_check_runs_and_no_others() {
    let bash = |root: &Path, command: &str| {
        let out = std::process::Command::new("bash").arg("-c").arg(command).current_dir(root).output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
    let code = "def outer(x):\n    if x > 5:\n        return 0\n    return inner(x) + 1\n\n\ndef inner(x):\n    \
return x\n\n\ndef unused():\n    pass\n";
    std::fs::write(root.join("pkg/core.py"), code).unwrap();
    let loads = loading(root, Language::Python, "pkg/core.py");
    // A check that fails still reports what it ran.
    let script = "import json\nfrom pkg.core import outer\nprint(json.dumps(outer(1)))\nassert outer(1) == 3\n";
    let check = Check::new(runner(Language::Python).unwrap(), loads, script).unwrap();
    let called = calls(&bash(root, &check.calls_command().unwrap()));
    assert_eq!(called, vec![("pkg/core.py".to_string(), 1), ("pkg/core.py".to_string(), 7)]);
    // The branch the run never took; of a function never called, nothing is claimed.
    assert_eq!(check.unrun().get("pkg/core.py").map(|lines| lines.iter().copied().collect()), Some(vec![3]));

    std::fs::write(root.join("package.json"), r#"{ "name": "lib", "main": "index.js" }"#).unwrap();
    let code = "function outer(x) {\n  if (x > 5) {\n    return 0\n  }\n  return inner(x) + 1\n}\n\n\
function inner(x) {\n  return x\n}\n\nfunction unused() {}\n\nmodule.exports = { outer, unused }\n";
    std::fs::write(root.join("index.js"), code).unwrap();
    let loads = loading(root, Language::JavaScript, "index.js");
    let check = Check::new(
        runner(Language::JavaScript).unwrap(),
        loads,
        "const { outer } = require('lib')\nconsole.log(outer(1))\n",
    )
    .unwrap();
    let called = calls(&bash(root, &check.calls_command().unwrap()));
    assert_eq!(called, vec![("index.js".to_string(), 1), ("index.js".to_string(), 8)]);
    let unrun = check.unrun().remove("index.js").unwrap_or_default();
    assert!(unrun.contains(&3) && unrun.contains(&12), "{unrun:?}");
    assert!(!unrun.contains(&2) && !unrun.contains(&5) && !unrun.contains(&9), "{unrun:?}");
}

#[test]
fn a_check_that_reads_its_empty_command_line_is_told_and_runs_once_given_the_example_s_arguments() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    std::fs::create_dir_all(root.join("cli")).unwrap();
    std::fs::write(root.join("cli/__init__.py"), "").unwrap();
    // The project's parser reads the command line when given no list.
    let code = "import argparse\n\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser()\n    \
parser.add_argument('--loud', action='store_true')\n    return parser.parse_args(argv).loud\n";
    std::fs::write(root.join("cli/app.py"), code).unwrap();
    let ran_with = |language: Language, path: &str, script: &str, arguments: &[&str]| {
        let mut check = Check::new(runner(language).unwrap(), loading(root, language, path), script).unwrap();
        if !arguments.is_empty() {
            check.run_with(arguments.iter().map(|a| a.to_string()).collect());
        }
        let out = std::process::Command::new("bash").arg("-c").arg(check.now_command()).current_dir(root).output();
        let printed = String::from_utf8_lossy(&out.unwrap().stdout).trim().to_string();
        let why = check.arguments_why();
        (printed, why.map(|why| why.split(", and it runs").next().unwrap_or_default().to_string()))
    };
    let ran = |language: Language, path: &str, script: &str| ran_with(language, path, script, &[]);
    let reads = "from cli.app import main\nprint(main())\n";
    let read_by = |line: &str| Some(format!("its line `{line}` reads the command-line arguments"));
    assert_eq!(ran(Language::Python, "cli/app.py", reads), ("False".to_string(), read_by("print(main())")));
    // argparse reads the program's name for its own: that is no argument.
    let passes = "from cli.app import main\nprint(main(['--loud']))\n";
    assert_eq!(ran(Language::Python, "cli/app.py", passes), ("True".to_string(), None));
    // Given the example's command line, the script that reads it runs the example.
    assert_eq!(ran_with(Language::Python, "cli/app.py", reads, &["--loud"]), ("True".to_string(), None));

    std::fs::write(root.join("package.json"), r#"{ "name": "cli", "main": "index.js" }"#).unwrap();
    let code = "exports.parse = (argv = process.argv) => argv.slice(2).includes('--loud')\n";
    std::fs::write(root.join("index.js"), code).unwrap();
    let reads = "const cli = require('cli')\nconsole.log(cli.parse())\n";
    assert_eq!(
        ran(Language::JavaScript, "index.js", reads),
        ("false".to_string(), read_by("console.log(cli.parse())"))
    );
    let passes = "console.log(require('cli').parse(['node', 'script', '--loud']))\n";
    assert_eq!(ran(Language::JavaScript, "index.js", passes), ("true".to_string(), None));
    assert_eq!(ran_with(Language::JavaScript, "index.js", reads, &["--loud", "it's"]), ("true".to_string(), None));
}

#[test]
fn the_lines_only_the_failing_tests_run_score_best() {
    let root = tempfile::tempdir().unwrap();
    for dir in ["pkg", "tests"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
        std::fs::write(root.path().join(dir).join("__init__.py"), "").unwrap();
    }
    // Negative numbers take the wrong branch: only the failing test runs its line.
    let code = "def magnitude(x):\n    if x < 0:\n        return x\n    return x\n";
    std::fs::write(root.path().join("pkg/core.py"), code).unwrap();
    // A unittest case and pytest's plain functions alike.
    let tests = "import unittest\nfrom pkg.core import magnitude\n\nclass TestMagnitude(unittest.TestCase):\n    \
def test_positive(self):\n        self.assertEqual(magnitude(3), 3)\n\ndef test_zero():\n    assert magnitude(0) == 0\n\n\
def test_negative():\n    assert magnitude(-2) == 2\n";
    std::fs::write(root.path().join("tests/test_core.py"), tests).unwrap();
    let runner = runner(Language::Python).unwrap();
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut check = Check::new(runner, loads, "print(1)\n").unwrap();
    assert!(check.spectrum_command().is_none(), "a check of no tests has no spectrum");
    check.made_of_tests("true".into(), 1, vec!["tests/test_core.py".into()]);
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(check.spectrum_command().unwrap())
        .current_dir(root.path())
        .output()
        .unwrap();
    let output = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let (failing, passing, scored) = spectrum(&output).unwrap();
    assert_eq!((failing, passing), (1, 2), "{output}");
    assert_eq!(scored[0], (1.0, "pkg/core.py".to_string(), 3), "{output}");
    // The lines every test runs score less; the tests' own lines not at all.
    assert!(scored[1..].iter().all(|(score, file, _)| *score < 1.0 && file == "pkg/core.py"), "{output}");
}

#[test]
fn the_tries_command_finds_the_candidate_that_passes_and_leaves_the_workspace_alone() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("pkg")).unwrap();
    std::fs::write(root.path().join("pkg/__init__.py"), "").unwrap();
    let now = "def double(x):\n    return x + 1\n";
    std::fs::write(root.path().join("pkg/core.py"), now).unwrap();
    let runner = runner(Language::Python).unwrap();
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut check = Check::new(runner, loads, "from pkg.core import double\nassert double(3) == 6\n").unwrap();
    let bash = |command: &str| {
        let out = std::process::Command::new("bash").arg("-c").arg(command).current_dir(root.path()).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let (ok, output) = bash(&check.now_command());
    assert!(!ok && output.contains("AssertionError"), "{output}");
    assert_eq!(shows_nothing(&output, !ok), None);
    check.prepare_scratch(root.path()).unwrap();
    let tries = [("pkg/core.py", now.replace("x + 1", "x - 1")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (ok, output) = bash(&check.tries_command(600).unwrap());
    assert!(ok, "{output}");
    assert_eq!(passed(&output), Some(2));
    assert_eq!(std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(), now);
    // With no seconds left, no candidate starts, and the tries say where they stopped.
    let (ok, output) = bash(&check.tries_command(0).unwrap());
    assert!(!ok && passed(&output).is_none(), "{output}");
    assert_eq!(tries_stopped(&output), Some(1), "{output}");
    assert_eq!(std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(), now);

    // A printing check passes when it prints what is expected.
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut check = Check::new(runner, loads, "from pkg.core import double\nprint(double(3))  \n").unwrap();
    let (ok, output) = bash(&check.now_command());
    assert!(ok, "{output}");
    assert_eq!(normalized(&check.now_output()), "4");
    check.expect("6\n\n").unwrap();
    check.prepare_scratch(root.path()).unwrap();
    let tries = [("pkg/core.py", now.replace("x + 1", "x + 2")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&check.tries_command(600).unwrap());
    assert_eq!(passed(&output), Some(2), "{output}");

    // Each expected line must be printed as often as it is expected,
    // blanks aside: `x + 3` prints [6] once, not twice.
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let script = "from pkg.core import double\nprint([double(3)])\nprint([double(1)])\n";
    let mut check = Check::new(runner, loads, script).unwrap();
    let (ok, output) = bash(&check.now_command());
    assert!(ok && normalized(&check.now_output()) == "[4]\n[2]", "{output}");
    check.expect("[ 6 ]\n[6]").unwrap();
    check.prepare_scratch(root.path()).unwrap();
    let tries = [("pkg/core.py", now.replace("x + 1", "x + 3")), ("pkg/core.py", now.replace("x + 1", "6"))];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&check.tries_command(600).unwrap());
    assert_eq!(passed(&output), Some(2), "{output}");

    // A layout that must change is expected in order: a blank line
    // between the two lines, not a blank line anywhere.
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let script = "from pkg.core import double\nprint('a', double(0), sep='')\nprint('b')\n";
    let mut check = Check::new(runner, loads, script).unwrap();
    let (ok, output) = bash(&check.now_command());
    assert!(ok && normalized(&check.now_output()) == "a1\nb", "{output}");
    check.expect_in_order("a1\n\nb").unwrap();
    check.prepare_scratch(root.path()).unwrap();
    let tries = [("pkg/core.py", now.replace("x + 1", "'1\\nb\\n'")), ("pkg/core.py", now.replace("x + 1", "'1\\n'"))];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&check.tries_command(600).unwrap());
    assert_eq!(passed(&output), Some(2), "{output}");

    // A program's own report of an error, on its error stream as it
    // exits, counts as printed where it is what must change.
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let script = "import sys\nfrom pkg.core import double\nsys.exit(f'did you mean {double(3)}?')\n";
    let mut check = Check::new(runner, loads, script).unwrap();
    let (ok, output) = bash(&check.now_command());
    assert!(!ok && output.contains("did you mean 4?"), "{output}");
    assert_eq!(check.now_output(), "");
    check.count_errors_as_printed();
    assert_eq!(check.now_output(), "did you mean 4?\n");
    check.expect("did you mean 6?").unwrap();
    check.prepare_scratch(root.path()).unwrap();
    let tries = [("pkg/core.py", now.replace("x + 1", "x + 2")), ("pkg/core.py", now.replace("x + 1", "x * 2"))];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&check.tries_command(600).unwrap());
    assert_eq!(passed(&output), Some(2), "{output}");

    // A probe of other uses guards: `x * 2` prints 6 for double(3), as
    // `x + x` does, but only `x + x` leaves double(-1) as it printed.
    std::fs::write(root.path().join("pkg/core.py"), "def double(x):\n    return 2 * x if x < 0 else x + 1\n").unwrap();
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut check = Check::new(runner, loads, "from pkg.core import double\nprint(double(3))\n").unwrap();
    let (ok, output) = bash(&check.now_command());
    assert!(ok && check.now_output() == "4\n", "{output}");
    check.expect("6").unwrap();
    // The request's case, and uses that all print what it must print once fixed.
    assert_eq!(check.request_cases(), [("print(double(3))".to_string(), "4".to_string())]);
    // A line printed as it must read but for its blanks is no case, as the tries read it.
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut spaced =
        Check::new(runner, loads, "from pkg.core import double\nprint([1, 2])\nprint(double(3))\n").unwrap();
    let (ok, output) = bash(&spaced.now_command());
    assert!(ok && spaced.now_output() == "[1, 2]\n4\n", "{output}");
    spaced.expect("[1,2]\n6").unwrap();
    assert_eq!(spaced.request_cases(), [("print(double(3))".to_string(), "4".to_string())]);
    // A value of its own is no likely change's everywhere; a truth value is.
    assert_eq!(check.fixed_alike("6\n6\n"), None);
    check.expect("True").unwrap();
    assert_eq!(check.fixed_alike("True\nTrue\n").as_deref(), Some("True"));
    assert_eq!(check.fixed_alike("True\nFalse\n"), None);
    assert_eq!(check.fixed_alike("False\nFalse\n"), None);
    assert_eq!(check.fixed_alike("True\n"), None);
    check.expect("6").unwrap();
    check.prepare_scratch(root.path()).unwrap();
    let (ok, output) = bash(&check.probe_command("from pkg.core import double\nprint(double(-1))").unwrap());
    assert!(ok, "{output}");
    assert!(check.guard_with_probe(&[]).unwrap());
    let now = "def double(x):\n    return 2 * x if x < 0 else x + 1\n";
    let tries = [
        ("pkg/core.py", "def double(x):\n    return x * 2 if x > 0 else x\n".to_string()),
        ("pkg/core.py", "def double(x):\n    return x + x\n".to_string()),
    ];
    check.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&check.tries_command(600).unwrap());
    assert_eq!(passed(&output), Some(2), "{output}");

    // A use of the request's shape that prints its truth value now may
    // be its case again or a use that works: a change that alters only
    // such uses passes where none leaves them as they are.
    std::fs::write(root.path().join("pkg/core.py"), "def same(a, b):\n    return a[0] == b[0]\n").unwrap();
    let loads = loading(root.path(), Language::Python, "pkg/core.py");
    let mut same = Check::new(runner, loads, "from pkg.core import same\nprint(same('a1', 'a2'))\n").unwrap();
    let (ok, output) = bash(&same.now_command());
    assert!(ok && same.now_output() == "True\n", "{output}");
    same.expect("False").unwrap();
    same.prepare_scratch(root.path()).unwrap();
    let probe = "from pkg.core import same\nprint(same('a1', 'a1'))\nprint(same('a1', 'a3'))\nprint(same('b1', 'a1'))";
    let (ok, output) = bash(&same.probe_command(probe).unwrap());
    assert!(ok && same.probe_printed() == "True\nTrue\nFalse\n", "{output}");
    let cases = same.request_cases();
    let doubtful = super::super::expect::doubtful_prints(Language::Python, probe, &same.probe_printed(), &cases);
    assert_eq!(doubtful, [0, 1]);
    assert!(same.guard_with_probe(&doubtful).unwrap());
    let now = "def same(a, b):\n    return a[0] == b[0]\n";
    let tries = [
        ("pkg/core.py", "def same(a, b):\n    return a[0] != b[0]\n".to_string()),
        ("pkg/core.py", "def same(a, b):\n    return a == b\n".to_string()),
        // Every use now prints what the check must: broken, not fixed.
        ("pkg/core.py", "def same(a, b):\n    return False\n".to_string()),
        ("pkg/core.py", "def same(a, b):\n    return b == a\n".to_string()),
        ("pkg/core.py", "def same(a, b):\n    return a[:] == b\n".to_string()),
        ("pkg/core.py", "def same(a, b):\n    return a == b[:]\n".to_string()),
    ];
    same.stage(&tries, &[("pkg/core.py", now)]).unwrap();
    let (_, output) = bash(&same.tries_command(600).unwrap());
    // As many as pass strictly at most.
    assert_eq!(super::super::reading::all_passed(&output), [2, 4, 5], "{output}");
    // Held strictly, none does: each changes what the probe printed.
    same.strictly();
    let (_, output) = bash(&same.tries_command(600).unwrap());
    assert!(super::super::reading::all_passed(&output).is_empty(), "{output}");

    // Why one version fails, as the model is told it: the use it
    // changes, what the check prints instead, or the error.
    let told = |version: &str| {
        same.stage(&[("pkg/core.py", version.to_string())], &[("pkg/core.py", now)]).unwrap();
        let (_, output) = bash(&same.explain_command().unwrap());
        same.refusal(&output).unwrap_or_default()
    };
    let why = told("def same(a, b):\n    return False\n");
    assert!(why.contains("`print(same('a1', 'a1'))` prints `False`, where it printed `True` before"), "{why}");
    let why = told(now);
    assert!(why.contains("prints:\n```\nTrue\n```\nwhere it must print:\n```\nFalse\n```"), "{why}");
    let why = told("def same(a, b):\n    return a[0] == c\n");
    assert!(why.contains("fails with `NameError: name 'c' is not defined`"), "{why}");
    // The line that names the error, where the report goes on below it
    // (unittest's `Diff is 1528 characters long`).
    let why = told("def same(a, b):\n    raise ValueError('not alike\\nDiff is 3 characters long')\n");
    assert!(why.contains("fails with `ValueError: not alike`"), "{why}");
    assert_eq!(std::fs::read_to_string(root.path().join("pkg/core.py")).unwrap(), now, "the workspace is untouched");
    std::fs::write(root.path().join("pkg/core.py"), "def double(x):\n    return 2 * x if x < 0 else x + 1\n").unwrap();

    // Uses run with each staged change in place, each one's output apart.
    let (_, output) = bash(&check.differ_command("from pkg.core import double\nprint(double(-3))", &[1, 2]).unwrap());
    let outputs = super::super::reading::outputs_by_try(&output);
    assert_eq!(outputs, [(1, "-3\n".to_string()), (2, "-6\n".to_string())], "{output}");
}
