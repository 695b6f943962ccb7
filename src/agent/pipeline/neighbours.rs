//! Uses of the code near the check's own, to choose among changes that all
//! pass it: the check's printing statements with one literal argument at a
//! time put to another value (another literal the check writes, a string
//! cut short at a separator, a number one off). A fix changes what the
//! request reports and little else; a wrong change that happens to pass
//! (a flag read from the wrong object, a condition turned around) changes
//! more of what the code did around it. So of the changes, the one that
//! changes fewest of these uses from what they printed before is kept,
//! where one changes strictly fewest: the minimal behaviour change that
//! program repair prefers among plausible patches.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::expect::prints_a_line;
use super::{Stop, check, reading};
use crate::agent::Conversation;
use crate::agent::turn::Generation;
use crate::codemap::Language;
use crate::protocol::Block;

/// Uses run at most: one process runs them all, per change.
const MAX_USES: usize = 48;
/// Printed before each use's output, to tell one use's lines from the next.
pub const MARK: &str = "--- use";
/// Printed instead of [`MARK`] before a use that is the check's own with a
/// truth value turned the other way (`case_sensitive=False` for the
/// request's `True`): what the call does with its option the other way.
pub const TURNED_MARK: &str = "--- use turned";

/// A literal of a statement: its byte range, and whether it is a string
/// (its quote), a number or a truth value.
#[derive(Debug, Clone, PartialEq)]
struct Literal {
    at: std::ops::Range<usize>,
    quote: Option<char>,
    truth: bool,
}

impl Literal {
    fn value<'s>(&self, line: &'s str) -> &'s str {
        match self.quote {
            Some(_) => &line[self.at.start + 1..self.at.end - 1],
            None => &line[self.at.clone()],
        }
    }
}

/// The string and whole-number literals of `line`, in order, where it is
/// one whole statement alone (a comment after it aside); `None` where it
/// is not (a call it opens and does not close, two statements).
fn literals(language: Language, line: &str) -> Option<Vec<Literal>> {
    let tree = crate::codemap::tree(language, line)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let statements = root.named_children(&mut cursor).filter(|n| n.kind() != "comment").count();
    if root.has_error() || statements != 1 {
        return None;
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let text = &line[node.byte_range()];
        match node.kind() {
            // A string with a prefix (`f"…"`, `b'…'`), three quotes or a
            // template is left as it is: a value put in it may not read
            // as that value.
            "string" => {
                let quote = text.chars().next().filter(|q| *q == '\'' || *q == '"');
                if let Some(quote) = quote {
                    let triple = text.starts_with(&quote.to_string().repeat(3));
                    if text.len() >= 2 && text.ends_with(quote) && !triple {
                        found.push(Literal { at: node.byte_range(), quote: Some(quote), truth: false });
                    }
                }
            }
            // `1.5`, `1e3`, `0x1f`, `2n` are left as they are too.
            "integer" | "number" => {
                if text.bytes().all(|b| b.is_ascii_digit()) {
                    found.push(Literal { at: node.byte_range(), quote: None, truth: false });
                }
            }
            "true" | "false" => found.push(Literal { at: node.byte_range(), quote: None, truth: true }),
            "template_string" => {}
            _ => {
                let mut cursor = node.walk();
                let children: Vec<tree_sitter::Node> = node.children(&mut cursor).collect();
                stack.extend(children.into_iter().rev());
            }
        }
    }
    Some(found)
}

/// The other values a string literal may take: every literal string the
/// statements write, and each cut short before a separator (`2.0.0-rc.1`
/// gives `2`, `2.0`, `2.0.0`, `2.0.0-rc`).
fn string_values(all: &[String]) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for value in all {
        let cuts = value.char_indices().filter(|(_, c)| !c.is_alphanumeric()).map(|(i, _)| i);
        for end in cuts.chain([value.len()]) {
            let cut = &value[..end];
            if !cut.is_empty() && !values.iter().any(|v| v == cut) {
                values.push(cut.to_string());
            }
        }
    }
    values
}

/// A truth value written the other way, in the case the language writes it.
fn turned(value: &str) -> Option<&'static str> {
    match value {
        "True" => Some("False"),
        "False" => Some("True"),
        "true" => Some("false"),
        "false" => Some("true"),
        _ => None,
    }
}

fn number_values(all: &[String]) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for value in all {
        let Ok(n) = value.parse::<u64>() else { continue };
        for v in [Some(n), n.checked_sub(1), n.checked_add(1), Some(0)].into_iter().flatten() {
            let v = v.to_string();
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    values
}

/// The script of uses near the check's (see the module's doc): its lines
/// that are not printing statements, as they are, then each near use
/// after a [`MARK`] line, guarded so that one that raises prints so and
/// the next still runs. `None` where the language has no such guard here,
/// or the check's printing statements have no literal to vary.
pub fn script(language: Language, check: &str) -> Option<String> {
    let (mark, guard): (String, fn(&str) -> String) = match language {
        Language::Python => (format!("print({MARK:?})"), |use_| {
            format!("try:\n    {use_}\nexcept Exception as _error:\n    print('raises', type(_error).__name__)")
        }),
        Language::JavaScript | Language::TypeScript => (format!("console.log({MARK:?});"), |use_| {
            format!("try {{ {use_} }} catch (_error) {{ console.log('throws', _error && _error.name); }}")
        }),
        _ => return None,
    };
    let statements: Vec<(&str, Vec<Literal>)> = check
        .lines()
        .filter(|line| prints_a_line(language, line))
        .filter_map(|line| Some((line, literals(language, line)?)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    let all = |string: bool| -> Vec<String> {
        let values = statements.iter().flat_map(|(line, found)| {
            found
                .iter()
                .filter(move |l| l.quote.is_some() == string && !l.truth)
                .map(move |l| l.value(line).to_string())
        });
        values.collect()
    };
    let (strings, numbers) = (string_values(&all(true)), number_values(&all(false)));
    let own: Vec<&str> = statements.iter().map(|(line, _)| line.trim()).collect();
    // One list per statement, taken in turn, so that the first statement
    // does not take every place.
    let mut per_statement: Vec<Vec<String>> = Vec::new();
    let mut turned_uses: Vec<String> = Vec::new();
    for (line, found) in &statements {
        let mut uses = Vec::new();
        for literal in found {
            if literal.truth {
                let Some(other) = turned(literal.value(line)) else { continue };
                let use_ = format!("{}{other}{}", &line[..literal.at.start], &line[literal.at.end..]);
                if !own.contains(&use_.trim()) && !uses.contains(&use_) {
                    turned_uses.push(use_.clone());
                    uses.push(use_);
                }
                continue;
            }
            let values = if literal.quote.is_some() { &strings } else { &numbers };
            for value in values {
                if value == literal.value(line) {
                    continue;
                }
                let written = match literal.quote {
                    Some(quote) if value.contains(quote) || value.contains('\\') => continue,
                    Some(quote) => format!("{quote}{value}{quote}"),
                    None => value.clone(),
                };
                let use_ = format!("{}{written}{}", &line[..literal.at.start], &line[literal.at.end..]);
                if !own.contains(&use_.trim()) && !uses.contains(&use_) {
                    uses.push(use_);
                }
            }
        }
        per_statement.push(uses);
    }
    let mut uses: Vec<String> = Vec::new();
    let longest = per_statement.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for list in &per_statement {
            if let Some(use_) = list.get(i).filter(|u| uses.len() < MAX_USES && !uses.contains(u)) {
                uses.push(use_.clone());
            }
        }
    }
    if uses.is_empty() {
        return None;
    }
    let mut out: Vec<String> =
        check.lines().filter(|line| !prints_a_line(language, line)).map(str::to_string).collect();
    for use_ in &uses {
        out.push(match turned_uses.contains(use_) {
            true => mark.replace(MARK, TURNED_MARK),
            false => mark.clone(),
        });
        out.push(guard(use_.trim()));
    }
    Some(out.join("\n") + "\n")
}

/// What each use printed, by the [`MARK`] lines of one run's output.
fn by_use(output: &str) -> Vec<String> {
    let mut uses: Vec<String> = Vec::new();
    let mut started = false;
    for line in output.lines() {
        if line.trim_end() == MARK || line.trim_end() == TURNED_MARK {
            uses.push(String::new());
            started = true;
        } else if let (true, Some(last)) = (started, uses.last_mut()) {
            last.push_str(line.trim_end());
            last.push('\n');
        }
    }
    uses
}

/// Of the changes whose runs printed `outputs`, the one whose uses differ
/// least from the `original` run's, counted use by use (a use a run never
/// reached differs), where one differs strictly least; with how many of
/// the uses each changed. `None` where the original printed no use, or
/// no change differs least alone.
pub fn least_changed(original: &str, outputs: &[String]) -> Option<(usize, Vec<usize>)> {
    let before = by_use(original);
    if before.is_empty() {
        return None;
    }
    let changed: Vec<usize> = outputs
        .iter()
        .map(|output| {
            let after = by_use(output);
            (0..before.len()).filter(|i| after.get(*i) != Some(&before[*i])).count()
        })
        .collect();
    let least = *changed.iter().min()?;
    match changed.iter().filter(|n| **n == least).count() {
        1 => Some((changed.iter().position(|n| *n == least)?, changed)),
        _ => None,
    }
}

/// Whether a change makes the code answer alike whatever its input: where
/// the code as it is printed at least two values across the near uses, the
/// change's run prints at most one, every other use failing or never
/// reached. A change that makes a function return one value everywhere (or
/// fail, its error caught inside the library: semver's `new Range(range -
/// 1)` made `satisfies` false for every range) passes a check of one case
/// as readily as the fix, and is almost never what a report of one wrong
/// result asks for.
pub fn flattens(original: &str, output: &str) -> bool {
    let values = |output: &str| -> std::collections::BTreeSet<String> {
        by_use(output).into_iter().filter(|printed| !is_failure(printed)).collect()
    };
    values(original).len() >= 2 && values(output).len() <= 1
}

/// Whether a change alters what a use of the check's own call with a
/// truth value turned the other way printed on the code as it is
/// (`original`): a request about what an option does when set speaks of
/// that setting, and the other one is not its case. Only uses that ran
/// before count.
pub fn changes_turned(original: &str, output: &str) -> bool {
    let turned: Vec<bool> = original
        .lines()
        .filter(|line| line.trim_end() == MARK || line.trim_end() == TURNED_MARK)
        .map(|line| line.trim_end() == TURNED_MARK)
        .collect();
    let (before, after) = (by_use(original), by_use(output));
    (0..before.len()).any(|i| turned[i] && !is_failure(&before[i]) && after.get(i) != Some(&before[i]))
}

/// Whether a use's output is its guard's report of an error (see [`script`]).
fn is_failure(printed: &str) -> bool {
    printed.starts_with("raises ") || printed.starts_with("throws ")
}

impl Conversation {
    /// The near uses (see the module's doc) run on the code as it is and
    /// with each passing change numbered `tries` (among the staged ones)
    /// in place, in one Bash call: what the code as it is printed, and
    /// what each change's run printed, in the order of `tries`. `None`
    /// where the check has no near uses.
    pub(super) async fn near_runs(
        &mut self,
        check: &check::Check,
        tries: &[usize],
        cancel: &CancellationToken,
    ) -> Result<Option<(String, Vec<String>)>, Stop> {
        let Some(script) = script(check.language(), &check.script) else { return Ok(None) };
        let Some(command) = check.differ_command_from_now(&script, tries) else { return Ok(None) };
        self.notify("[running uses near the check's on the code as it is and with each change…]");
        let mut generation = Generation::default();
        generation.blocks.push(Block::Text {
            text: "Uses of the code near the check's, on the code as it is and with each change that passes it: a \
change that makes them all print one value is no fix, and the change that alters fewest of them is the likeliest one."
                .into(),
        });
        let input = json!({ "command": command, "timeout_ms": 120_000 });
        let (_, output) = self.harness_call(generation, "Bash", input, cancel).await?;
        let runs = reading::outputs_by_try(&output);
        let Some((_, original)) = runs.iter().find(|(n, _)| *n == 0) else { return Ok(None) };
        let outputs: Vec<String> = tries
            .iter()
            .map(|n| runs.iter().find(|(m, _)| m == n).map(|(_, printed)| printed.clone()).unwrap_or_default())
            .collect();
        Ok(Some((original.clone(), outputs)))
    }

    /// Of the changes whose near uses printed `outputs`, the place of the
    /// one that changes fewest of what the code as it is printed
    /// (`original`), told; `None` where no one changes fewest alone.
    pub(super) fn least_changing(&self, original: &str, outputs: &[String]) -> Option<usize> {
        let Some((least, changed)) = least_changed(original, outputs) else {
            self.notify("[the near uses do not single out one change]");
            return None;
        };
        let uses = by_use(original).len();
        let counts: Vec<String> = changed.iter().map(|n| n.to_string()).collect();
        self.notify(&format!(
            "[of {uses} uses near the check's, the changes alter {}: the one that alters fewest is kept]",
            counts.join(", ")
        ));
        Some(least)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literals_of_a_statement_are_its_strings_and_whole_numbers() {
        let line = "console.log(semver.diff('1.2.3', \"2.0.0-rc.1\"), x2, 10, 1.5, [1, 2]);";
        let found: Vec<&str> = literals(Language::JavaScript, line).unwrap().iter().map(|l| l.value(line)).collect();
        assert_eq!(found, ["1.2.3", "2.0.0-rc.1", "10", "1", "2"]);
        let line = "print(f'{n}', b'x', 'it\\'s', 0x1f, 7)  # seven";
        let found: Vec<&str> = literals(Language::Python, line).unwrap().iter().map(|l| l.value(line)).collect();
        assert_eq!(found, ["it\\'s", "7"]);
        assert_eq!(literals(Language::Python, "print(parse('1.2',"), None);
        assert_eq!(literals(Language::JavaScript, "console.log(1); console.log(2);"), None);
    }

    #[test]
    fn near_uses_vary_one_literal_at_a_time_and_leave_the_check_out() {
        let check = "const semver = require('semver');\nconsole.log(semver.diff('1.2.3', '2.0.0-rc.1'));\n";
        let script = script(Language::JavaScript, check).unwrap();
        assert!(script.starts_with("const semver = require('semver');\nconsole.log(\"--- use\");\n"));
        assert!(script.contains("try { console.log(semver.diff('2.0.0', '2.0.0-rc.1')); } catch"));
        assert!(script.contains("try { console.log(semver.diff('1.2.3', '2.0.0-rc')); } catch"));
        assert!(script.contains("try { console.log(semver.diff('1.2.3', '1.2')); } catch"));
        assert!(!script.contains("try { console.log(semver.diff('1.2.3', '2.0.0-rc.1')); }"));
        let check = "import more\n\nprint(list(more.windowed([1, 2, 3], 3)))\n";
        let script = super::script(Language::Python, check).unwrap();
        assert!(script.contains("try:\n    print(list(more.windowed([1, 2, 3], 2)))\nexcept Exception as _error:"));
        assert_eq!(super::script(Language::Python, "import more\nprint(more.version())\n"), None);
        assert_eq!(super::script(Language::Go, check), None);
    }

    #[test]
    fn the_check_s_own_call_with_an_option_turned_is_a_use_a_small_change_must_leave_as_it_was() {
        let check = "import parse\nprint(parse.findall('x({})x', 'X(hi)X', case_sensitive=True))\n";
        let script = script(Language::Python, check).unwrap();
        assert!(
            script.contains(
                "print(\"--- use turned\")\ntry:\n    print(parse.findall('x({})x', 'X(hi)X', case_sensitive=False))"
            ),
            "{script}"
        );
        assert!(
            script.contains("print(\"--- use\")\ntry:\n    print(parse.findall('x', 'X(hi)X', case_sensitive=True))")
        );
        let check = "const qs = require('qs');\nconsole.log(qs.parse('a[1]=2', { allowSparse: true }));\n";
        assert!(super::script(Language::JavaScript, check).unwrap().contains("{ allowSparse: false }"));
        let original = "--- use\n[]\n--- use turned\n['hi']\n--- use\nraises IndexError\n";
        assert!(changes_turned(original, "--- use\n[]\n--- use turned\n[]\n--- use\nraises IndexError\n"));
        assert!(!changes_turned(original, "--- use\n['h']\n--- use turned\n['hi']\n--- use\n[]\n"));
        // A turned use that raised before may do anything now.
        let raised = "--- use turned\nraises TypeError\n";
        assert!(!changes_turned(raised, "--- use turned\n[]\n"));
    }

    #[test]
    fn the_change_that_alters_fewest_near_uses_is_kept_where_it_alone_does() {
        let original = "--- use\nmajor\n--- use\nminor\n--- use\nraises ValueError\n";
        let narrow = "--- use\npremajor\n--- use\nminor\n--- use\nraises ValueError\n".to_string();
        let broad = "--- use\npremajor\n--- use\npreminor\n--- use\nnull\n".to_string();
        let crashed = "--- use\npremajor\n".to_string();
        assert_eq!(least_changed(original, &[broad.clone(), narrow.clone(), crashed]), Some((1, vec![3, 1, 3])));
        assert_eq!(least_changed(original, &[narrow.clone(), narrow]), None);
        assert_eq!(least_changed("", &[broad]), None);
    }

    #[test]
    fn a_change_that_makes_every_near_use_print_one_value_flattens_the_code() {
        let original = "--- use\nfalse\n--- use\ntrue\n--- use\nfalse\n--- use\ntrue\n";
        // Every use false, or false where it does not throw: no fix.
        assert!(flattens(original, "--- use\nfalse\n--- use\nfalse\n--- use\nfalse\n--- use\nfalse\n"));
        assert!(flattens(original, "--- use\nthrows TypeError\n--- use\nthrows TypeError\n--- use\nfalse\n"));
        assert!(flattens(original, "--- use\nraises ValueError\n"));
        // One use turned around: the uses still tell inputs apart.
        assert!(!flattens(original, "--- use\nfalse\n--- use\ntrue\n--- use\ntrue\n--- use\ntrue\n"));
        // Where the code printed one value already, nothing is flattened.
        let alike = "--- use\nfalse\n--- use\nfalse\n--- use\nthrows TypeError\n";
        assert!(!flattens(alike, "--- use\nfalse\n--- use\nfalse\n--- use\nfalse\n"));
    }
}
