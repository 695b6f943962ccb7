//! The programs that run beside a check: watchers of its command line
//! (Python's `sys.argv`, Node's `process.argv`) and recorders of the
//! project's functions its run calls (Python's profiler, Node's V8
//! coverage). Placeholders in capitals are filled in by [`super::check`].

/// Runs the check (`CHECK`) with a profiler that notes each Python
/// function called from a file under the working folder, in the order
/// first called, and writes them (their paths relative to the folder) to
/// `OUT` however the check ends.
pub(super) const PYTHON_CALLS: &str = r#"import os as _os, sys as _sys
_root = _os.path.realpath(_os.getcwd()) + _os.sep
_ours = {}
_called = {}
_ran = {}
def _relative(file):
    if file not in _ours:
        real = _os.path.realpath(file)
        _ours[file] = real[len(_root):] if not file.startswith("<") and real.startswith(_root) else None
    return _ours[file]
def _line(frame, event, arg):
    if event == "line":
        _ran[frame.f_code].add(frame.f_lineno)
    return _line
def _note(frame, event, arg):
    code = frame.f_code
    if event != "call" or _relative(code.co_filename) is None:
        return None
    if code.co_name != "<module>":
        _called.setdefault((code.co_filename, code.co_firstlineno))
    _ran.setdefault(code, set())
    return _line
_sys.settrace(_note)
try:
    exec(compile(open("CHECK").read(), "<stdin>", "exec"), {"__name__": "__main__"})
finally:
    _sys.settrace(None)
    with open("OUT", "w") as _out:
        for _file, _line in _called:
            _out.write(f"{_relative(_file)}:{_line}\n")
    _unrun = {}
    for _code, _lines in _ran.items():
        if hasattr(_code, "co_lines"):
            _have = {_l for _, _, _l in _code.co_lines() if _l is not None and _l > _code.co_firstlineno}
            _unrun.setdefault(_relative(_code.co_filename), set()).update(_have - _lines)
    with open("UNRUN", "w") as _out:
        for _file, _lines in _unrun.items():
            if _lines:
                _out.write(f"{_file}:{','.join(map(str, sorted(_lines)))}\n")"#;

/// Runs every test of the test modules MODULES (unittest's cases, and
/// pytest's plain functions that take no fixture), each alone, tracing which
/// lines of the project's own files (not the tests') it runs, and prints,
/// after a `tests: FAILING PASSING` line, the lines the failing tests run
/// most and the passing ones least, by Ochiai's measure (`SCORE
/// FILE:LINE`, best first, at most LIMIT): spectrum-based fault
/// localization, as the failing tests themselves point to the fault.
pub(super) const PYTHON_SPECTRUM: &str = r#"import importlib as _importlib, math as _math, os as _os, sys as _sys, unittest as _unittest
_root = _os.path.realpath(_os.getcwd()) + _os.sep
_ours = {}
def _relative(file):
    if file not in _ours:
        real = _os.path.realpath(file)
        path = real[len(_root):] if not file.startswith("<") and real.startswith(_root) else None
        parts = path.split(_os.sep) if path else []
        aside = any(p in ("test", "tests", "testing") for p in parts[:-1]) or (parts and (parts[-1].startswith("test_") or parts[-1].endswith("_test.py") or parts[-1] == "conftest.py"))
        _ours[file] = None if aside else path
    return _ours[file]
_hit = set()
def _line(frame, event, arg):
    if event == "line":
        _hit.add((frame.f_code.co_filename, frame.f_lineno))
    return _line
def _call(frame, event, arg):
    return _line if _relative(frame.f_code.co_filename) is not None else None
def _cases(suite):
    for test in suite:
        if isinstance(test, _unittest.TestSuite):
            yield from _cases(test)
        else:
            yield test
def _functions(module):
    # pytest's plain test functions, those that take no fixture.
    import inspect
    for name, value in vars(module).items():
        if name.startswith("test") and inspect.isfunction(value) and value.__module__ == module.__name__:
            if not inspect.signature(value).parameters:
                yield _unittest.FunctionTestCase(value)
_spectra, _failing, _passing = {}, 0, 0
for _name in MODULES:
    try:
        _module = _importlib.import_module(_name)
    except Exception:
        continue
    for _case in [*_cases(_unittest.TestLoader().loadTestsFromModule(_module)), *_functions(_module)]:
        _hit.clear()
        _result = _unittest.TestResult()
        _sys.settrace(_call)
        try:
            _case.run(_result)
        finally:
            _sys.settrace(None)
        _failed = not _result.wasSuccessful()
        _failing += _failed
        _passing += not _failed
        for _key in _hit:
            _counts = _spectra.setdefault(_key, [0, 0])
            _counts[0 if _failed else 1] += 1
print(f"tests: {_failing} {_passing}")
_scores = sorted(
    ((_ef / _math.sqrt(_failing * (_ef + _ep)), _relative(_file), _lineno) for (_file, _lineno), (_ef, _ep) in _spectra.items() if _ef),
    key=lambda s: (-s[0], s[1], s[2]),
)
for _score, _file, _lineno in _scores[:LIMIT]:
    print(f"{_score:.3f} {_file}:{_lineno}")"#;

/// Runs the check (read from CHECK as from stdin) with a `sys.argv` that
/// leaves the file MARK where anything reads past the program's name.
pub(super) const PYTHON_ARGV: &str = r#"import sys as _sys
class _Arguments(list):
    def _read(self):
        import os
        if not os.path.exists("MARK"):
            # The script's line that read them: its innermost frame (this
            # watcher is read from stdin too, in globals of its own).
            frame, line = _sys._getframe(), ""
            while frame is not None:
                if frame.f_code.co_filename == "<stdin>" and frame.f_globals is not _watcher:
                    line = str(frame.f_lineno)
                    break
                frame = frame.f_back
            with open("MARK", "w") as mark:
                mark.write(line)
    def __getitem__(self, index):
        if index != 0:
            self._read()
        return list.__getitem__(self, index)
    def __iter__(self):
        self._read()
        return list.__iter__(self)
    def __len__(self):
        self._read()
        return list.__len__(self)
_watcher = globals()
_sys.argv = _Arguments(_sys.argv)
exec(compile(open("CHECK").read(), "<stdin>", "exec"), {"__name__": "__main__"})"#;

/// Loaded before the check: a `process.argv` that leaves the file MARK
/// where anything reads past the interpreter's and the script's paths.
pub(super) const NODE_ARGV: &str = r#"const marked = { done: false };
process.argv = new Proxy(process.argv, {
  get(target, key, receiver) {
    if (!marked.done && key !== "0" && key !== "1") {
      marked.done = true;
      // The script's line that read them: the innermost frame of stdin's.
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 50;
      const frame = /\[stdin\]:(\d+)/.exec(new Error().stack || "");
      Error.stackTraceLimit = limit;
      try { require("fs").writeFileSync("MARK", frame ? frame[1] : ""); } catch {}
    }
    return Reflect.get(target, key, receiver);
  },
});"#;

/// Reads the V8 coverage Node wrote to the folder it is given and prints
/// each function that ran, of a file under the working folder (its path
/// relative to the folder).
pub(super) const NODE_CALLS: &str = r#"const fs = require("fs"), path = require("path"), url = require("url");
const root = fs.realpathSync(process.cwd()) + path.sep;
const dir = process.argv[2];
const called = new Set();
const unrun = [];
for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
  let report;
  try { report = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")); } catch { continue; }
  for (const script of report.result || []) {
    if (!script.url.startsWith("file:")) continue;
    const file = url.fileURLToPath(script.url);
    if (!file.startsWith(root)) continue;
    let text;
    try { text = fs.readFileSync(file, "utf8"); } catch { continue; }
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      if (!range || range.count === 0 || (range.startOffset === 0 && !fn.functionName)) continue;
      const line = text.slice(0, range.startOffset).split("\n").length;
      called.add(`${file.slice(root.length)}:${line}`);
    }
    // Each character's count is its innermost range's: blocks nest in
    // their functions, and inner functions in outer ones.
    const counts = new Int32Array(text.length).fill(-1);
    const ranges = script.functions.flatMap((fn) => fn.ranges);
    ranges.sort((a, b) => (b.endOffset - b.startOffset) - (a.endOffset - a.startOffset));
    for (const r of ranges) counts.fill(r.count, r.startOffset, Math.min(r.endOffset, text.length));
    const lines = [];
    let start = 0;
    text.split("\n").forEach((line, i) => {
      let code = false, ran = false;
      for (let at = start; at < start + line.length; at++) {
        if (/\s/.test(text[at])) continue;
        code = true;
        if (counts[at] !== 0) { ran = true; break; }
      }
      if (code && !ran) lines.push(i + 1);
      start += line.length + 1;
    });
    if (lines.length) unrun.push(`${file.slice(root.length)}:${lines.join(",")}`);
  }
}
for (const at of [...called].sort()) console.log(at);
fs.writeFileSync(process.argv[3], unrun.map((line) => line + "\n").join(""));"#;
