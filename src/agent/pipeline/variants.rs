//! Small variants of a definition: one operator, literal or name changed,
//! a `- 1` or `+ 1` added, a `not` dropped, two items swapped, an
//! operand converted (`int(…)` where a string met a number), or a line
//! break added to or dropped from a short string. Wrong
//! comparisons, off-by-ones and swapped pairs are among the commonest
//! one-line bugs (the operators mutation testing draws on), and a small
//! model that cannot see which line is wrong can still write the check
//! that tells the one right variant from the rest. Pure: it reads syntax
//! trees and runs nothing.

use std::collections::BTreeSet;
use std::ops::Range;

use tree_sitter::Node;

use crate::codemap::{Language, tree};

/// One small change of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The bytes of the file it replaces.
    pub at: Range<usize>,
    pub new: String,
    /// What it changes, as the user reads it: "`>=` → `>` on line 12".
    pub what: String,
    /// Its kind's place in the order of likelihood: 0 for an operator,
    /// then booleans, dropped negations, numbers, `± 1`, swapped pairs,
    /// swapped names, converted operands, and 8 for a line break added to
    /// or dropped from a short string.
    pub kind: usize,
}

impl Variant {
    /// `text` (the file the variant was made from) with the variant in place.
    pub fn applied(&self, text: &str) -> String {
        format!("{}{}{}", &text[..self.at.start], self.new, &text[self.at.end..])
    }

    /// The variant placed in the part of its file that starts at byte
    /// `start` (a definition), for [`Variant::applied`] to that part.
    pub fn within(&self, start: usize) -> Variant {
        Variant { at: self.at.start - start..self.at.end - start, ..self.clone() }
    }
}

/// Variants one definition may have at most: a long function's name swaps
/// are cut first.
const MAX_PER_DEFINITION: usize = 300;

/// Operator tokens and what each may have been meant as.
const OPERATORS: &[(&str, &[&str])] = &[
    ("<", &["<=", ">"]),
    ("<=", &["<", ">="]),
    (">", &[">=", "<"]),
    (">=", &[">", "<="]),
    ("==", &["!="]),
    ("!=", &["=="]),
    ("===", &["!=="]),
    ("!==", &["==="]),
    ("and", &["or"]),
    ("or", &["and"]),
    ("&&", &["||"]),
    ("||", &["&&"]),
    ("in", &["not in"]),
    ("not in", &["in"]),
    ("is", &["is not"]),
    ("is not", &["is"]),
    ("+", &["-"]),
    ("-", &["+"]),
    ("+=", &["-="]),
    ("-=", &["+="]),
];

/// Integer literals, by each grammar's name for them.
const INTEGERS: &[&str] = &["integer", "number", "integer_literal", "int_literal"];
/// Lists of call arguments, tuples and arrays: where two items may be swapped.
const PAIRS: &[&str] =
    &["argument_list", "arguments", "tuple", "expression_list", "array", "list", "tuple_expression", "pattern_list"];
/// Operands of arithmetic that may lack a conversion: a call's result, an
/// item, an attribute or a name.
const OPERANDS: &[&str] =
    &["call", "subscript", "attribute", "identifier", "call_expression", "subscript_expression", "member_expression"];

/// The conversions an operand may have been meant to go through.
fn conversions(language: Language) -> &'static [&'static str] {
    match language {
        Language::Python => &["int", "str"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => &["Number", "String"],
        _ => &[],
    }
}

/// Where a name stands for a count or an index, that may be off by one.
const COUNTED: &[&str] = &["argument_list", "arguments", "slice"];
const INDEXED: &[(&str, &str)] = &[("subscript", "subscript"), ("subscript_expression", "index")];

/// The variants of the definition at `range` of `text`, most likely first:
/// operators, booleans, dropped negations, numbers, `± 1`, swapped pairs,
/// swapped names, then converted operands.
pub fn variants(language: Language, text: &str, range: Range<usize>) -> Vec<Variant> {
    let Some(tree) = tree(language, text) else { return Vec::new() };
    let node = tree.root_node();
    let mut found = Found { text, language, kinds: Default::default() };
    let mut names = BTreeSet::new();
    walk(node, &range, &mut |n| found.visit(n, &mut names));
    walk(node, &range, &mut |n| found.swap_names(n, &names));
    let mut seen = BTreeSet::new();
    let mut all: Vec<Variant> = Vec::new();
    for kind in found.kinds {
        for variant in kind {
            if seen.insert((variant.at.start, variant.at.end, variant.new.clone())) {
                all.push(variant);
            }
        }
    }
    all.truncate(MAX_PER_DEFINITION);
    all
}

/// Bytes a string may have for its line breaks to be varied: a format's
/// pieces, not a message.
const MAX_STRING: usize = 40;

fn walk<'t>(node: Node<'t>, range: &Range<usize>, visit: &mut impl FnMut(Node<'t>)) {
    if node.end_byte() <= range.start || node.start_byte() >= range.end || node.kind().contains("comment") {
        return;
    }
    if node.start_byte() >= range.start && node.end_byte() <= range.end {
        visit(node);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, range, visit);
    }
}

/// The variants found so far, by kind, in the order they are tried.
struct Found<'t> {
    text: &'t str,
    language: Language,
    kinds: [Vec<Variant>; 9],
}

impl Found<'_> {
    fn add(&mut self, kind: usize, node: Node, new: String) {
        if self.degenerate(node, &new) {
            return;
        }
        let old = &self.text[node.byte_range()];
        let line = node.start_position().row + 1;
        // A token is shown in the expression around it, where that is short:
        // `0` → `1` alone does not say which `0` of a line changed.
        const SHOWN: usize = 32;
        let mut around = node;
        while let Some(parent) = around.parent() {
            let text = &self.text[parent.byte_range()];
            let statement = ["statement", "declarat", "assignment", "block", "body", "module", "program", "pair"]
                .iter()
                .any(|kind| parent.kind().contains(kind));
            if text.len() > SHOWN || text.contains('\n') || statement {
                break;
            }
            around = parent;
        }
        let (start, end) = (around.start_byte(), around.end_byte());
        let (shown_old, shown_new) = match around.id() == node.id() {
            true => (one_line(old), one_line(&new)),
            false => {
                let before = &self.text[start..node.start_byte()];
                let after = &self.text[node.end_byte()..end];
                (one_line(&self.text[start..end]), one_line(&format!("{before}{new}{after}")))
            }
        };
        let what = format!("`{shown_old}` → `{shown_new}` on line {line}");
        self.kinds[kind].push(Variant { at: node.byte_range(), new, what, kind });
    }

    fn visit(&mut self, node: Node, names: &mut BTreeSet<String>) {
        let text = &self.text[node.byte_range()];
        if node.child_count() == 0 {
            if !node.is_named() {
                if let Some((_, others)) = OPERATORS.iter().find(|(op, _)| *op == text) {
                    for other in *others {
                        self.add(0, node, other.to_string());
                    }
                }
            }
            match text {
                "True" => self.add(1, node, "False".into()),
                "False" => self.add(1, node, "True".into()),
                "true" => self.add(1, node, "false".into()),
                "false" => self.add(1, node, "true".into()),
                _ => {}
            }
            if INTEGERS.contains(&node.kind()) {
                if let Ok(n) = text.parse::<u64>() {
                    self.add(3, node, (n + 1).to_string());
                    if n > 0 {
                        self.add(3, node, (n - 1).to_string());
                    }
                }
            }
            if node.kind() == "identifier" {
                names.insert(text.to_string());
                if counted(node) {
                    self.add(4, node, format!("{text} - 1"));
                    self.add(4, node, format!("{text} + 1"));
                }
            }
            return;
        }
        // `not x` and `!x` without their negation.
        let negated = match node.kind() {
            "not_operator" => node.child_by_field_name("argument"),
            "unary_expression" if node.child(0).is_some_and(|op| &self.text[op.byte_range()] == "!") => {
                node.child_by_field_name("argument")
            }
            _ => None,
        };
        if let Some(argument) = negated {
            self.add(2, node, self.text[argument.byte_range()].to_string());
        }
        // `'%s_%d' % (id, m.group(2) + 1)` where the group is a string.
        if matches!(node.kind(), "binary_operator" | "binary_expression") {
            let operator = node.child_by_field_name("operator").map(|op| &self.text[op.byte_range()]);
            if matches!(operator, Some("+" | "-" | "*")) {
                for operand in ["left", "right"].into_iter().filter_map(|side| node.child_by_field_name(side)) {
                    if OPERANDS.contains(&operand.kind()) {
                        let inner = &self.text[operand.byte_range()];
                        for conversion in conversions(self.language) {
                            self.add(7, operand, format!("{conversion}({inner})"));
                        }
                    }
                }
            }
        }
        // A line break too few or too many where a string joins pieces of
        // text (`'{}{}\n'.format(code, block)` that drops the blank line
        // between two blocks): text formats are full of them.
        if node.kind() == "string" && text.len() <= MAX_STRING && !text.contains('\n') {
            let quote = text.find(['\'', '"']).unwrap_or(0);
            if !text[quote..].starts_with("'''") && !text[quote..].starts_with("\"\"\"") {
                for (at, _) in text.match_indices("\\n") {
                    self.add(8, node, format!("{}{}", &text[..at], &text[at + 2..]));
                }
                for (at, _) in text.match_indices("}{") {
                    self.add(8, node, format!("{}\\n{}", &text[..at + 1], &text[at + 1..]));
                }
            }
        }
        if PAIRS.contains(&node.kind()) {
            let mut cursor = node.walk();
            let items: Vec<Node> = node.named_children(&mut cursor).filter(|c| !c.kind().contains("comment")).collect();
            if let [a, b] = items.as_slice() {
                let t = self.text;
                let swapped = format!(
                    "{}{}{}{}{}",
                    &t[node.start_byte()..a.start_byte()],
                    &t[b.byte_range()],
                    &t[a.end_byte()..b.start_byte()],
                    &t[a.byte_range()],
                    &t[b.end_byte()..node.end_byte()]
                );
                let what = format!(
                    "`{}` and `{}` swapped on line {}",
                    one_line(&t[a.byte_range()]),
                    one_line(&t[b.byte_range()]),
                    node.start_position().row + 1
                );
                self.kinds[5].push(Variant { at: node.byte_range(), new: swapped, what, kind: 5 });
            }
        }
    }

    /// A name written where a like-named one was meant (`low` for `high`
    /// in `lowHasPre`, `p1` for `p2`): the names of the same definition only.
    fn swap_names(&mut self, node: Node, names: &BTreeSet<String>) {
        if node.kind() != "identifier" || node.child_count() != 0 {
            return;
        }
        let name = &self.text[node.byte_range()];
        for other in names.iter().filter(|other| alike(name, other)) {
            self.add(6, node, other.clone());
        }
    }
}

impl Found<'_> {
    /// Whether `new` in place of `node` leaves a choice or an operation
    /// between two equal sides (`v1Higher ? v2 : v2`, `a == a`): code no
    /// one writes, which a weak check may still pass.
    fn degenerate(&self, node: Node, new: &str) -> bool {
        let mut around = node.parent();
        for _ in 0..3 {
            let Some(parent) = around else { return false };
            let sides = match parent.kind() {
                "ternary_expression" => {
                    (parent.child_by_field_name("consequence"), parent.child_by_field_name("alternative"))
                }
                "conditional_expression" => (parent.named_child(0), parent.named_child(2)),
                "binary_expression" | "binary_operator" | "boolean_operator" => {
                    (parent.child_by_field_name("left"), parent.child_by_field_name("right"))
                }
                "comparison_operator" => (parent.named_child(0), parent.named_child(1)),
                _ => (None, None),
            };
            if let (Some(a), Some(b)) = sides {
                let side = |side: Node| -> String {
                    let range = side.byte_range();
                    let text = match range.start <= node.start_byte() && node.end_byte() <= range.end {
                        true => format!(
                            "{}{new}{}",
                            &self.text[range.start..node.start_byte()],
                            &self.text[node.end_byte()..range.end]
                        ),
                        false => self.text[range].to_string(),
                    };
                    text.split_whitespace().collect()
                };
                return side(a) == side(b);
            }
            around = parent.parent();
        }
        false
    }
}

/// Whether a name stands where a count or an index goes: a call's
/// argument, a slice's bound, a subscript.
fn counted(node: Node) -> bool {
    let Some(parent) = node.parent() else { return false };
    COUNTED.contains(&parent.kind())
        || INDEXED.iter().any(|(kind, field)| {
            parent.kind() == *kind && parent.child_by_field_name(field).is_some_and(|index| index.id() == node.id())
        })
}

/// Two different names that share a long end or start (`lowHasPre` and
/// `highHasPre`), or that differ in one character of two or three (`p1`, `p2`).
fn alike(a: &str, b: &str) -> bool {
    if a == b || a.len() < 2 || b.len() < 2 {
        return false;
    }
    let prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let suffix = a.chars().rev().zip(b.chars().rev()).take_while(|(x, y)| x == y).count();
    let short = a.len().min(b.len());
    if a.len() == b.len() && short <= 3 {
        return prefix + suffix + 1 == a.len();
    }
    (suffix >= 3 && suffix < short) || (prefix >= 3 && prefix < short && a.len().abs_diff(b.len()) <= 4)
}

fn one_line(code: &str) -> String {
    let line = code.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(language: Language, text: &str) -> Vec<String> {
        variants(language, text, 0..text.len()).iter().map(|v| v.applied(text)).collect()
    }

    #[test]
    fn a_comparison_an_off_by_one_and_a_count_are_varied() {
        let code = "def windows(seq, step):\n    if len(seq) >= step:\n        return islice(seq, step, None)\n";
        let found = all(Language::Python, code);
        assert!(found.iter().any(|v| v.contains("len(seq) > step:")), "{found:#?}");
        assert!(found.iter().any(|v| v.contains("islice(seq, step - 1, None)")));
        // Only names standing for counts get `- 1`: not the function's name.
        assert!(!found.iter().any(|v| v.contains("windows - 1")));
    }

    #[test]
    fn like_names_and_pairs_are_swapped_and_strings_left_alone() {
        let code = "function diff(low, high) {\n  const lowHasPre = !!low.pre\n  const highHasPre = !!high.pre\n  \
const prefix = lowHasPre ? 'pre' : ''\n  return [prefix, 'major < minor']\n}\n";
        let found = all(Language::JavaScript, code);
        assert!(found.iter().any(|v| v.contains("const prefix = highHasPre ?")), "{found:#?}");
        assert!(found.iter().any(|v| v.contains("return ['major < minor', prefix]")));
        assert!(!found.iter().any(|v| v.contains("'major <= minor'")), "inside a string");
    }

    #[test]
    fn a_short_string_gains_a_line_break_between_pieces_or_loses_one() {
        let code = "def join(a, b):\n    \"\"\"Join {}{} blocks.\\n\"\"\"\n    return '{}{}\\n'.format(a, b)\n";
        let found = all(Language::Python, code);
        assert!(found.iter().any(|v| v.contains("return '{}\\n{}\\n'.format(a, b)")), "{found:#?}");
        assert!(found.iter().any(|v| v.contains("return '{}{}'.format(a, b)")), "{found:#?}");
        assert!(!found.iter().any(|v| v.contains("Join {}\\n{}")), "a docstring is left alone");
    }

    #[test]
    fn numbers_booleans_and_negations_are_varied_and_each_variant_once() {
        let code = "function f(a) {\n  if (!a.ok) return a.name.slice(1);\n  return true;\n}\n";
        let found = all(Language::JavaScript, code);
        for expected in ["slice(2)", "slice(0)", "return false", "if (a.ok)"] {
            assert!(found.iter().any(|v| v.contains(expected)), "{expected}: {found:#?}");
        }
        let unique: BTreeSet<&String> = found.iter().collect();
        assert_eq!(unique.len(), found.len());
    }

    #[test]
    fn no_variant_leaves_a_choice_between_two_equal_sides() {
        let code = "const diff = (v1, v2, up) => {\n  const low = up ? v2 : v1\n  return low == v1\n}\n";
        let found = all(Language::JavaScript, code);
        assert!(!found.iter().any(|v| v.contains("up ? v1 : v1") || v.contains("up ? v2 : v2")), "{found:#?}");
        assert!(!found.iter().any(|v| v.contains("v1 == v1")), "{found:#?}");
        assert!(found.iter().any(|v| v.contains("return low == v2")), "a swap with unequal sides is kept");
        let python = "def pick(a, b, up):\n    return a if up else b\n";
        let found = all(Language::Python, python);
        assert!(!found.iter().any(|v| v.contains("a if up else a") || v.contains("b if up else b")), "{found:#?}");
    }

    #[test]
    fn an_operand_of_arithmetic_is_converted_last() {
        let code = "def unique(id):\n    m = MATCH(id)\n    return '%s_%d' % (m.group(1), m.group(2)+1)\n";
        let ordered = variants(Language::Python, code, 0..code.len());
        let found: Vec<String> = ordered.iter().map(|v| v.applied(code)).collect();
        assert!(found.iter().any(|v| v.contains("(m.group(1), int(m.group(2))+1)")), "{found:#?}");
        assert!(found.iter().any(|v| v.contains("str(m.group(2))+1")));
        assert!(!found.iter().any(|v| v.contains("int(1)")), "a literal is what it is");
        assert_eq!(ordered.last().map(|v| v.kind), Some(7));
        assert!(ordered.windows(2).all(|pair| pair[0].kind <= pair[1].kind), "most likely first");
    }

    #[test]
    fn only_the_definition_s_bytes_are_varied() {
        let text = "def a(x):\n    return x > 1\n\n\ndef b(x):\n    return x > 2\n";
        let map = crate::codemap::parse(Language::Python, text);
        let b = map.definitions.iter().find(|d| d.name == "b").unwrap();
        let found = variants(Language::Python, text, b.range.clone());
        assert!(!found.is_empty());
        assert!(found.iter().all(|v| v.at.start >= b.range.start && v.at.end <= b.range.end));
        assert!(found.iter().any(|v| v.what == "`x > 2` → `x >= 2` on line 6"), "{found:#?}");
    }

    #[test]
    fn names_are_alike_by_a_long_shared_end_or_one_character() {
        assert!(alike("lowHasPre", "highHasPre"));
        assert!(alike("p1", "p2"));
        assert!(!alike("p1", "q2"));
        assert!(!alike("i", "j"));
        assert!(!alike("seq", "step"));
    }
}
