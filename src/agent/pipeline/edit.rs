//! Edits at the size of a definition: what the model is shown of one (its
//! file's imports, then its lines), the code block its reply holds, and the
//! file with the definition's byte range replaced by that block, every other
//! byte left as it was.

use crate::codemap::{Definition, FileMap};

/// The definition as the model reads it: its path and place, the imports
/// of its file (the names it may use), then its text, in one code block.
pub fn shown(path: &str, text: &str, file: &FileMap, definition: &Definition) -> String {
    let total = text.lines().count();
    let (first, last) = definition.lines;
    let imports: Vec<&str> = file
        .imports
        .iter()
        .filter(|range| range.end <= definition.range.start)
        .map(|range| text[range.clone()].trim_end())
        .collect();
    let mut out = format!("{path} (lines {first} to {last} of {total})\n```{}\n", file.language.name());
    if !imports.is_empty() {
        out.push_str(&imports.join("\n"));
        out.push_str("\n...\n\n");
    }
    out.push_str(text[definition.range.clone()].trim_end_matches('\n'));
    out.push_str("\n```\n");
    out
}

/// The code of a reply's first fenced block; `None` when it has none.
pub fn code_block(reply: &str) -> Option<String> {
    let mut lines = reply.lines();
    lines.by_ref().find(|line| line.trim_start().starts_with("```"))?;
    let mut code = Vec::new();
    for line in lines {
        if line.trim_start().starts_with("```") {
            break;
        }
        code.push(line);
    }
    // A reply that shows the imports again, as it was shown them, means the
    // lines after the marker; an unclosed block is taken as far as it goes.
    if let Some(at) = code.iter().position(|line| line.trim() == "...") {
        code.drain(..=at);
    }
    while code.first().is_some_and(|line| line.trim().is_empty()) {
        code.remove(0);
    }
    let code = code.join("\n");
    (!code.trim().is_empty()).then_some(code)
}

/// `text` with `definition` replaced by `new`, which is indented as the
/// definition is when the model wrote it flush left.
pub fn replaced(text: &str, definition: &Definition, new: &str) -> String {
    let old = &text[definition.range.clone()];
    let indent = |s: &str| s.lines().find(|l| !l.trim().is_empty()).map_or(0, |l| l.len() - l.trim_start().len());
    let (had, has) = (indent(old), indent(new));
    let new = if has < had {
        let pad = &old.lines().find(|l| !l.trim().is_empty()).unwrap_or_default()[..had - has];
        new.lines()
            .map(|line| if line.trim().is_empty() { line.to_string() } else { format!("{pad}{line}") })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        new.to_string()
    };
    let new = new.trim_end_matches('\n');
    format!("{}{new}{}", &text[..definition.range.start], &text[definition.range.end..])
}

/// Whether two versions of code are the same but for trailing whitespace and blank lines.
pub fn same_code(a: &str, b: &str) -> bool {
    let lines =
        |s: &str| s.lines().map(str::trim_end).filter(|l| !l.is_empty()).map(str::to_string).collect::<Vec<_>>();
    lines(a) == lines(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codemap::{Language, parse};

    const FILE: &str = "import math\n\n\nclass Circle:\n    def area(self):\n        return math.pi * self.r\n\n    def grow(self, k):\n        self.r *= k\n# end\n";

    #[test]
    fn replacing_a_method_leaves_every_other_byte_as_it_was() {
        let map = parse(Language::Python, FILE);
        let area = map.definitions.iter().find(|d| d.name == "area").unwrap();
        // Written flush left, as a small model often does.
        let new = replaced(FILE, area, "def area(self):\n    return math.pi * self.r ** 2");
        assert_eq!(new, FILE.replace("self.r\n\n", "self.r ** 2\n\n"));
        let after = parse(Language::Python, &new);
        assert!(after.error_lines.is_empty());
        assert_eq!(after.definitions.len(), map.definitions.len());
    }

    #[test]
    fn the_definition_is_shown_with_its_imports_and_place() {
        let map = parse(Language::Python, FILE);
        let grow = map.definitions.iter().find(|d| d.name == "grow").unwrap();
        assert_eq!(
            shown("geo/circle.py", FILE, &map, grow),
            "geo/circle.py (lines 8 to 9 of 10)\n```python\nimport math\n...\n\n    def grow(self, k):\n        self.r *= k\n```\n"
        );
    }

    #[test]
    fn the_code_of_a_reply_is_its_first_block_after_any_imports_shown_again() {
        assert_eq!(
            code_block("Here:\n```python\nimport math\n...\n\ndef f():\n    pass\n```\nDone."),
            Some("def f():\n    pass".into())
        );
        assert_eq!(code_block("No change is needed."), None);
        assert_eq!(code_block("```js\nconst a = 1\n"), Some("const a = 1".into()));
    }
}
