//! How the project's own tests call the code a check is about: the start
//! of the first test that calls it, down to the call, and the helpers of
//! the tests' own it uses (a fake timer, a fixture class), shown to the
//! model that writes the check. A small model calls an API as it
//! remembers it (`timer=None` for a cache that calls its timer, a cache
//! object where a function that returns one is asked for); the project's
//! tests show how it is called.

use crate::codemap::rank::is_aside;
use crate::codemap::{CodeMap, DefKind, Language};
use crate::text::is_identifier;

/// Lines of a test shown above its call at most.
const MAX_ABOVE: usize = 20;
/// Lines shown after the call.
const AFTER: usize = 2;
/// Lines a helper of the tests' own may have to be shown.
const MAX_HELPER_LINES: usize = 20;
/// Helpers shown at most.
const MAX_HELPERS: usize = 2;

/// The excerpt of the project's tests in `language` that calls one of
/// `names` (a method's, preferring tests that name its `container`), with
/// the helpers it uses that the tests define, and the test file's path.
/// `text` reads a file of the project. `None` where no test calls them.
pub fn excerpt(
    map: &CodeMap,
    text: impl Fn(&str) -> Option<String>,
    language: Language,
    names: &[String],
    container: Option<&str>,
) -> Option<(String, String)> {
    // The excerpt kept: whether it names the container, its file, its lines and their span.
    struct Kept<'m> {
        names_container: bool,
        path: &'m str,
        shown: Vec<String>,
        span: (usize, usize),
    }
    let mut best: Option<Kept<'_>> = None;
    for (path, file) in map.files().filter(|(path, file)| is_aside(path) && file.language == language) {
        let Some(text) = text(path) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let Some(hit) = lines.iter().position(|line| names.iter().any(|name| calls(line, name))) else { continue };
        // The smallest definition around the call: the test it is in, or
        // the class of the method it decorates (`@cachedmethod(...)`).
        let around = file
            .definitions
            .iter()
            .filter(|d| d.lines.0 < hit + 1 && hit < d.lines.1)
            .min_by_key(|d| d.lines.1 - d.lines.0);
        let first = match around {
            Some(d) => (d.lines.0 - 1).max(hit.saturating_sub(MAX_ABOVE)),
            None => hit.saturating_sub(MAX_ABOVE / 2),
        };
        let last = match around {
            Some(d) => (hit + AFTER).min(d.lines.1 - 1),
            None => (hit + AFTER).min(lines.len() - 1),
        };
        let shown: Vec<String> = lines[first..=last].iter().map(|l| l.to_string()).collect();
        let names_container = container.is_some_and(|c| shown.iter().any(|l| l.contains(c)));
        if best.as_ref().is_none_or(|kept| names_container && !kept.names_container) {
            best = Some(Kept { names_container, path, shown, span: (first + 1, last + 1) });
        }
    }
    let Kept { path, shown, span, .. } = best?;
    let mut out: Vec<String> = helpers(map, &text, language, &shown, path, span);
    if !out.is_empty() {
        out.push(String::new());
    }
    out.extend(dedented(&shown));
    Some((path.to_string(), out.join("\n")))
}

/// Whether `line` calls `name` (`name(`, `.name(`, `@name`), not where it
/// defines it.
fn calls(line: &str, name: &str) -> bool {
    let code = line.trim_start();
    if ["def ", "fn ", "function ", "async def ", "pub fn "].iter().any(|lead| code.starts_with(lead)) {
        return false;
    }
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = &line[at + name.len()..];
        let starts = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'));
        starts && (after.starts_with('(') || before == Some('@'))
    })
}

/// The definitions of the tests' own (top-level, short, in a test file of
/// `language`) that `shown` uses, outside the lines shown, each as written.
fn helpers(
    map: &CodeMap,
    text: &impl Fn(&str) -> Option<String>,
    language: Language,
    shown: &[String],
    shown_path: &str,
    (first, last): (usize, usize),
) -> Vec<String> {
    let used: Vec<&str> = shown
        .iter()
        .flat_map(|l| l.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| is_identifier(w))
        .collect();
    let mut out = Vec::new();
    let mut told: Vec<&str> = Vec::new();
    for found in map.definitions().filter(|f| is_aside(f.path) && f.file.language == language) {
        let d = found.definition;
        let within = found.path == shown_path && d.lines.0 <= last && first <= d.lines.1;
        let short = d.lines.1 + 1 - d.lines.0 <= MAX_HELPER_LINES;
        if d.local || d.container.is_some() || within || !short || !matches!(d.kind, DefKind::Class | DefKind::Function)
        {
            continue;
        }
        if !used.contains(&d.name.as_str()) || told.contains(&d.name.as_str()) || told.len() >= MAX_HELPERS {
            continue;
        }
        let Some(text) = text(found.path) else { continue };
        let Some(written) = text.get(d.range.clone()) else { continue };
        told.push(&d.name);
        out.push(written.trim_end().to_string());
    }
    out
}

/// `lines` with the indent they all share taken off.
fn dedented(lines: &[String]) -> Vec<String> {
    let indent =
        lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    lines.iter().map(|l| l.get(indent..).unwrap_or(l.trim_start()).to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;

    #[test]
    fn a_test_that_calls_the_method_is_shown_to_its_call_with_the_helpers_it_uses() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("cache.py", "class TTLCache:\n    def expire(self, time=None):\n        pass\n"),
            (
                "tests/test_ttl.py",
                "import unittest\nfrom cache import TTLCache\n\n\nclass Timer:\n    def __init__(self):\n        \
self.time = 0\n\n    def __call__(self):\n        return self.time\n\n\nclass TTLCacheTest(unittest.TestCase):\n    \
def test_size(self):\n        self.assertEqual(1, 1)\n\n    def test_expire(self):\n        cache = \
TTLCache(maxsize=3, ttl=3, timer=Timer())\n        cache[1] = 1\n        cache.expire(3)\n        \
self.assertEqual(set(), set(cache))\n        self.assertEqual(0, len(cache))\n        self.assertEqual(0, 0)\n",
            ),
        ];
        for (path, text) in files {
            std::fs::create_dir_all(dir.path().join(path).parent().unwrap()).unwrap();
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        let mut map = CodeMap::new();
        map.refresh(&Workspace::open(dir.path()).unwrap());
        let read = |path: &str| std::fs::read_to_string(dir.path().join(path)).ok();
        let (path, shown) = excerpt(&map, read, Language::Python, &["expire".to_string()], Some("TTLCache")).unwrap();
        assert_eq!(path, "tests/test_ttl.py");
        assert_eq!(
            shown,
            "class Timer:\n    def __init__(self):\n        self.time = 0\n\n    def __call__(self):\n        return \
self.time\n\ndef test_expire(self):\n    cache = TTLCache(maxsize=3, ttl=3, timer=Timer())\n    cache[1] = 1\n    \
cache.expire(3)\n    self.assertEqual(set(), set(cache))\n    self.assertEqual(0, len(cache))"
        );
        // No test calls what it never names.
        assert!(excerpt(&map, read, Language::Python, &["evict".to_string()], None).is_none());
    }
}
