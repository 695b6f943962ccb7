//! Verification of a candidate change before anything is proposed: the file
//! must still parse (no ERROR or MISSING node it did not have), the new
//! version must still define what it replaces, and it must change something.
//! Pure: it runs no program. The language's own checker and the tests run
//! after, as tool calls the user sees.

use crate::codemap::{Definition, FileMap, Language, parse};

use crate::agent::code_text::same_code;

/// Why a candidate is refused, in words the model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The candidate is the definition as it was.
    Unchanged,
    /// The file no longer parses: the first new error's line, and that line.
    Breaks { line: usize, text: String },
    /// The new version defines no `name` (the model wrote other code).
    Drops { name: String },
    /// The file defines `name` twice in one scope, where it did once: the
    /// later replaces the earlier (a class's `__init__` copied in beside a
    /// method the model rewrote).
    Redefines { name: String, lines: (usize, usize) },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Unchanged => write!(f, "the new version is the same as the old one: nothing changed"),
            Refusal::Breaks { line, text } => {
                write!(f, "with it the file no longer parses: line {line} (`{}`) is not valid code", text.trim())
            }
            Refusal::Drops { name } => write!(f, "the new version no longer defines `{name}`"),
            Refusal::Redefines { name, lines: (first, second) } => write!(
                f,
                "with it the file defines `{name}` twice (lines {first} and {second}): the second replaces the first"
            ),
        }
    }
}

/// Checks the file `after` against what it was (`before`, mapped as
/// `before_map`), where `definition` was replaced by `new`.
pub fn check(
    language: Language,
    before: &str,
    before_map: &FileMap,
    definition: &Definition,
    new: &str,
    after: &str,
) -> Result<FileMap, Refusal> {
    if same_code(&before[definition.range.clone()], new) {
        return Err(Refusal::Unchanged);
    }
    check_file(language, before, before_map, definition, after)
}

/// [`check`] for a change of several places of the file (see
/// [`super::edit::with_companions`]): it must change the file, still
/// parse, and still define `definition`.
pub fn check_file(
    language: Language,
    before: &str,
    before_map: &FileMap,
    definition: &Definition,
    after: &str,
) -> Result<FileMap, Refusal> {
    if same_code(before, after) {
        return Err(Refusal::Unchanged);
    }
    let after_map = parse(language, after);
    if after_map.error_lines.len() > before_map.error_lines.len() {
        let line = after_map
            .error_lines
            .iter()
            .copied()
            .find(|line| !before_map.error_lines.contains(line))
            .unwrap_or(after_map.error_lines[0]);
        let text = after.lines().nth(line.saturating_sub(1)).unwrap_or_default().to_string();
        return Err(Refusal::Breaks { line, text });
    }
    let still_defined = after_map.definitions.iter().any(|d| d.name == definition.name && d.kind == definition.kind);
    if !still_defined {
        return Err(Refusal::Drops { name: definition.name.clone() });
    }
    if let Some(refusal) = redefined(language, before_map, &after_map, after) {
        return Err(refusal);
    }
    Ok(after_map)
}

/// A name the file `after` defines twice in one scope where `before`
/// defined it once at most. Python and JavaScript take the later
/// definition silently; a compiled language's checker says so itself.
fn redefined(language: Language, before: &FileMap, after_map: &FileMap, after: &str) -> Option<Refusal> {
    if !matches!(language, Language::Python | Language::JavaScript | Language::TypeScript | Language::Tsx) {
        return None;
    }
    let scoped = |map: &FileMap| {
        let mut seen: std::collections::HashMap<(Option<String>, String), Vec<usize>> = Default::default();
        for d in map.definitions.iter().filter(|d| !d.local) {
            seen.entry((d.container.clone(), d.name.clone())).or_default().push(d.lines.0);
        }
        seen
    };
    let was = scoped(before);
    // A property's setter, an overload: one name defined twice on purpose.
    let on_purpose = |line: usize| {
        let head: String = after.lines().skip(line.saturating_sub(1)).take(3).collect();
        head.contains(".setter") || head.contains(".deleter") || head.contains("overload")
    };
    let mut twice: Vec<_> = scoped(after_map)
        .into_iter()
        .filter(|(key, lines)| lines.len() > was.get(key).map_or(1, Vec::len).max(1))
        .filter(|(_, lines)| !lines.iter().any(|&line| on_purpose(line)))
        .collect();
    twice.sort_by_key(|(_, lines)| lines[1]);
    let ((container, name), lines) = twice.into_iter().next()?;
    let name = match container {
        Some(container) => format!("{container}.{name}"),
        None => name,
    };
    Some(Refusal::Redefines { name, lines: (lines[0], lines[1]) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::pipeline::edit::replaced;

    const FILE: &str = "def double(x):\n    return x + x\n\n\ndef half(x):\n    return x / 2\n";

    fn try_change(name: &str, new: &str) -> Result<FileMap, Refusal> {
        let map = parse(Language::Python, FILE);
        let definition = map.definitions.iter().find(|d| d.name == name).unwrap();
        let (after, placed) = replaced(FILE, definition, new);
        check(Language::Python, FILE, &map, definition, &placed, &after)
    }

    #[test]
    fn a_change_that_breaks_the_parse_is_refused_with_its_line() {
        let refusal = try_change("half", "def half(x):\n    return (x / 2").unwrap_err();
        assert!(matches!(refusal, Refusal::Breaks { line: 6, .. }), "{refusal:?}");
        assert!(refusal.to_string().contains("line 6"));
    }

    #[test]
    fn a_change_that_defines_something_else_or_nothing_new_is_refused() {
        assert_eq!(try_change("half", "print(3)").unwrap_err(), Refusal::Drops { name: "half".into() });
        assert_eq!(try_change("half", "def half(x):\n    return x / 2\n\n").unwrap_err(), Refusal::Unchanged);
    }

    #[test]
    fn a_version_that_defines_a_method_its_class_has_a_second_time_is_refused() {
        let class =
            "class Cache:\n    def __init__(self):\n        self.items = {}\n\n    def expire(self):\n        pass\n";
        let map = parse(Language::Python, class);
        let expire = map.definitions.iter().find(|d| d.name == "expire").unwrap();
        let version = "    def expire(self):\n        return []\n\n    def __init__(self):\n        self.other = 1\n";
        let (after, placed) = replaced(class, expire, version);
        let refusal = check(Language::Python, class, &map, expire, &placed, &after).unwrap_err();
        assert_eq!(refusal, Refusal::Redefines { name: "Cache.__init__".into(), lines: (2, 8) });
        // A helper added beside it is new code, not a second definition.
        let version =
            "    def expire(self):\n        return self._expired()\n\n    def _expired(self):\n        return []\n";
        let (after, placed) = replaced(class, expire, version);
        assert!(check(Language::Python, class, &map, expire, &placed, &after).is_ok());
    }

    #[test]
    fn a_sound_change_passes() {
        assert!(try_change("half", "def half(x):\n    return x // 2").is_ok());
    }
}
