//! The values constants compute, worked out from the code alone: a
//! constant written as arithmetic over numbers, strings and other
//! constants (`CAPACITY = READINGS_PER_DAY * config.RETENTION_DAYS + 2 *
//! config.SAFETY_MARGIN`) is folded to the number it holds. A small model
//! reads such a line right and then gets the arithmetic wrong (86400 // 45
//! read as 182.2); the folded value is what the program itself would
//! hold. Nothing runs: a call, or a name the files do not define as a
//! constant, leaves the value unknown.

use super::{DefKind, Definition, FileMap, Language, tree};

/// Constants a value may pass through: deeper is a cycle or not worth it.
const MAX_DEPTH: usize = 8;
/// Characters a value told may take: a table of settings, not a data set.
const MAX_WRITTEN: usize = 400;

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A list, tuple or array: its brackets and items.
    List(char, char, Vec<Value>),
    /// A dict or object: each key as written, and its value.
    Map(Vec<(String, Value)>),
}

impl Value {
    fn number(&self) -> Option<f64> {
        match self {
            Value::Int(n) => Some(*n as f64),
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// As `language` writes the value.
    fn written(&self, language: Language) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => match language {
                Language::Python => format!("{x:.1}"),
                _ => format!("{x:.0}"),
            },
            Value::Float(x) => x.to_string(),
            Value::Str(s) => format!("{s:?}"),
            Value::Bool(b) => match language {
                Language::Python => if *b { "True" } else { "False" }.to_string(),
                _ => b.to_string(),
            },
            Value::List(open, close, items) => {
                let items: Vec<String> = items.iter().map(|v| v.written(language)).collect();
                format!("{open}{}{close}", items.join(", "))
            }
            Value::Map(pairs) => {
                let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {}", v.written(language))).collect();
                format!("{{{}}}", pairs.join(", "))
            }
        }
    }
}

/// A file whose constants may be folded: its path, text and map.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub path: &'a str,
    pub text: &'a str,
    pub file: &'a FileMap,
}

/// A constant's folded value, as its language writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    pub path: String,
    pub name: String,
    pub value: String,
}

/// The values of the constants of `sources` that the code computes
/// rather than writes out (a literal is plain to read already), where
/// they fold; names resolve among the `sources`.
pub fn computed(sources: &[Source]) -> Vec<Computed> {
    let mut out = Vec::new();
    for source in sources {
        for definition in source.file.definitions.iter().filter(|d| is_constant(d)) {
            let Some(value) = fold_constant(sources, source, definition, 0, true) else { continue };
            let value = value.written(source.file.language);
            if value.len() <= MAX_WRITTEN {
                out.push(Computed { path: source.path.to_string(), name: definition.name.clone(), value });
            }
        }
    }
    out
}

fn is_constant(definition: &Definition) -> bool {
    definition.kind == DefKind::Constant && !definition.local && definition.container.is_none()
}

/// The node a definition of `name` gives its value by, in the tree of
/// that definition's text alone.
fn value_node<'t>(root: tree_sitter::Node<'t>, name: &str, text: &str) -> Option<tree_sitter::Node<'t>> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let (target, value) = match node.kind() {
            "assignment" => (node.child_by_field_name("left"), node.child_by_field_name("right")),
            "variable_declarator" | "const_spec" | "var_spec" | "const_item" | "static_item" => {
                (node.child_by_field_name("name"), node.child_by_field_name("value"))
            }
            _ => (None, None),
        };
        if let (Some(target), Some(value)) = (target, value)
            && &text[target.byte_range()] == name
        {
            // Go's `const X = 1` holds its values in an expression list.
            if value.kind() == "expression_list" && value.named_child_count() == 1 {
                return value.named_child(0);
            }
            return Some(value);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    None
}

/// Whether the expression `node` is written out: literals alone, or
/// lists and tables of them, with no name or operation to work out.
fn written_out(node: tree_sitter::Node) -> bool {
    let mut cursor = node.walk();
    let mut children = node.named_children(&mut cursor).filter(|n| n.kind() != "comment");
    match node.kind() {
        kind if is_literal_kind(kind) => true,
        "property_identifier" => true,
        "parenthesized_expression" | "list" | "tuple" | "array" | "dictionary" | "object" | "pair" => {
            children.all(written_out)
        }
        "unary_operator" | "unary_expression" => children.all(|n| is_literal_kind(n.kind())),
        _ => false,
    }
}

fn is_literal_kind(kind: &str) -> bool {
    matches!(
        kind,
        "integer"
            | "float"
            | "number"
            | "string"
            | "true"
            | "false"
            | "int_literal"
            | "float_literal"
            | "integer_literal"
            | "interpreted_string_literal"
            | "raw_string_literal"
            | "string_literal"
            | "boolean_literal"
    )
}

/// The value `definition` holds; `None` where it does not fold, or where
/// `computed_only` and it is written out already.
fn fold_constant(
    sources: &[Source],
    source: &Source,
    definition: &Definition,
    depth: usize,
    computed_only: bool,
) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let text = source.text.get(definition.range.clone())?;
    let tree = tree(source.file.language, text)?;
    let node = value_node(tree.root_node(), &definition.name, text)?;
    if computed_only && written_out(node) {
        return None;
    }
    fold(sources, source, node, text, depth)
}

/// The constant named `name` that a use in `from` means: of `from`'s own
/// file first, else the one the sources define, where one alone does or
/// one alone sits in a file named as `object` (`config` of
/// `config.RETENTION_DAYS`).
fn resolve<'s>(
    sources: &'s [Source<'s>],
    from: &Source,
    name: &str,
    object: Option<&str>,
) -> Option<(&'s Source<'s>, &'s Definition)> {
    let defining = |source: &'s Source<'s>| {
        source.file.definitions.iter().filter(|d| is_constant(d) && d.name == name).map(move |d| (source, d))
    };
    let found: Vec<(&Source, &Definition)> = sources.iter().flat_map(defining).collect();
    if object.is_none()
        && let Some(own) = found.iter().find(|(s, _)| s.path == from.path)
    {
        return Some(*own);
    }
    let stem = |path: &str| {
        let file = path.rsplit('/').next().unwrap_or(path);
        file.split('.').next().unwrap_or(file).to_string()
    };
    let named: Vec<_> = match object {
        Some(object) => found.iter().filter(|(s, _)| stem(s.path) == object).copied().collect(),
        None => Vec::new(),
    };
    match (named.as_slice(), found.as_slice()) {
        ([one], _) | ([], [one]) => Some(*one),
        _ => None,
    }
}

fn fold(sources: &[Source], source: &Source, node: tree_sitter::Node, text: &str, depth: usize) -> Option<Value> {
    let own = &text[node.byte_range()];
    match node.kind() {
        "integer" | "int_literal" | "integer_literal" => {
            let digits: String = own.chars().filter(|c| *c != '_').collect();
            // Rust's `10u32`: the suffix names the type, not the value.
            let digits = digits.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            digits.parse().ok().map(Value::Int)
        }
        "float" | "float_literal" => own.replace('_', "").parse().ok().map(Value::Float),
        "number" => {
            let digits = own.replace('_', "");
            match digits.parse::<i128>() {
                Ok(n) => Some(Value::Int(n)),
                Err(_) => digits.parse().ok().map(Value::Float),
            }
        }
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "boolean_literal" => Some(Value::Bool(own == "true")),
        "string" | "interpreted_string_literal" | "string_literal" => {
            let quote = own.chars().next().filter(|q| matches!(q, '\'' | '"'))?;
            let triple = own.starts_with(&quote.to_string().repeat(3));
            let inner = own.get(1..own.len().checked_sub(1)?)?;
            // Escapes, prefixes and interpolations are not worked out.
            (!triple && own.ends_with(quote) && !inner.contains('\\') && !inner.contains(quote))
                .then(|| Value::Str(inner.to_string()))
        }
        "parenthesized_expression" => fold(sources, source, node.named_child(0)?, text, depth),
        "list" | "tuple" | "array" => {
            let mut cursor = node.walk();
            let items: Option<Vec<Value>> = node
                .named_children(&mut cursor)
                .filter(|n| n.kind() != "comment")
                .map(|item| fold(sources, source, item, text, depth))
                .collect();
            let (open, close) = if node.kind() == "tuple" { ('(', ')') } else { ('[', ']') };
            Some(Value::List(open, close, items?))
        }
        "dictionary" | "object" => {
            let mut cursor = node.walk();
            let mut pairs = Vec::new();
            for pair in node.named_children(&mut cursor).filter(|n| n.kind() != "comment") {
                // A spread or a shorthand property is no pair to write out.
                let (key, value) = (pair.child_by_field_name("key")?, pair.child_by_field_name("value")?);
                let key = match fold(sources, source, key, text, depth) {
                    Some(key @ (Value::Str(_) | Value::Int(_))) => key.written(source.file.language),
                    _ if key.kind() == "property_identifier" => text[key.byte_range()].to_string(),
                    _ => return None,
                };
                pairs.push((key, fold(sources, source, value, text, depth)?));
            }
            Some(Value::Map(pairs))
        }
        "unary_operator" | "unary_expression" => {
            let operand = node.child_by_field_name("argument").or_else(|| node.child_by_field_name("operand"))?;
            let operator = node.child_by_field_name("operator").map(|o| &text[o.byte_range()]);
            let operator = operator.unwrap_or_else(|| own.trim_start().get(..1).unwrap_or_default());
            match (operator, fold(sources, source, operand, text, depth)?) {
                ("-", Value::Int(n)) => Some(Value::Int(n.checked_neg()?)),
                ("-", Value::Float(x)) => Some(Value::Float(-x)),
                ("+", value @ (Value::Int(_) | Value::Float(_))) => Some(value),
                _ => None,
            }
        }
        "binary_operator" | "binary_expression" => {
            let left = fold(sources, source, node.child_by_field_name("left")?, text, depth)?;
            let right = fold(sources, source, node.child_by_field_name("right")?, text, depth)?;
            let operator = &text[node.child_by_field_name("operator")?.byte_range()];
            binary(source.file.language, operator, left, right)
        }
        "identifier" => {
            let (found, definition) = resolve(sources, source, own, None)?;
            fold_constant(sources, found, definition, depth + 1, false)
        }
        // `config.RETENTION_DAYS`, `settings.LIMIT`: a module's constant.
        "attribute" | "member_expression" | "selector_expression" | "scoped_identifier" => {
            let (object, name) = match node.kind() {
                "attribute" => (node.child_by_field_name("object")?, node.child_by_field_name("attribute")?),
                "member_expression" => (node.child_by_field_name("object")?, node.child_by_field_name("property")?),
                "selector_expression" => (node.child_by_field_name("operand")?, node.child_by_field_name("field")?),
                _ => (node.child_by_field_name("path")?, node.child_by_field_name("name")?),
            };
            let object = &text[object.byte_range()];
            let object = object.rsplit(['.', ':']).next().unwrap_or(object);
            let (found, definition) = resolve(sources, source, &text[name.byte_range()], Some(object))?;
            fold_constant(sources, found, definition, depth + 1, false)
        }
        _ => None,
    }
}

fn binary(language: Language, operator: &str, left: Value, right: Value) -> Option<Value> {
    use Value::{Float, Int, Str};
    match (operator, left, right) {
        ("+", Str(a), Str(b)) => Some(Str(a + &b)),
        ("+", Int(a), Int(b)) => a.checked_add(b).map(Int),
        ("-", Int(a), Int(b)) => a.checked_sub(b).map(Int),
        ("*", Int(a), Int(b)) => a.checked_mul(b).map(Int),
        ("%", Int(a), Int(b)) if b != 0 => Some(Int(a.rem_euclid(b))).filter(|_| a >= 0 && b > 0),
        ("//", Int(a), Int(b)) if b != 0 => Some(Int(a.div_euclid(b))).filter(|_| b > 0),
        ("**", Int(a), Int(b)) => a.checked_pow(u32::try_from(b).ok()?).map(Int),
        // Division of whole numbers is whole in Go, Rust and the like.
        ("/", Int(a), Int(b))
            if b != 0 && !matches!(language, Language::Python | Language::JavaScript | Language::TypeScript) =>
        {
            a.checked_div(b).map(Int)
        }
        (operator, a, b) => {
            let (a, b) = (a.number()?, b.number()?);
            let x = match operator {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" if b != 0.0 => a / b,
                "**" => a.powf(b),
                _ => return None,
            };
            x.is_finite().then_some(Float(x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codemap::parse;

    fn values(files: &[(&str, &str)]) -> Vec<(String, String)> {
        let maps: Vec<(String, String, FileMap)> = files
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string(), parse(Language::of_path(path).unwrap(), text)))
            .collect();
        let sources: Vec<Source> = maps.iter().map(|(path, text, file)| Source { path, text, file }).collect();
        computed(&sources).into_iter().map(|c| (c.name, c.value)).collect()
    }

    #[test]
    fn a_constant_computed_from_other_files_constants_is_folded() {
        let config = "POLL_INTERVAL_S = 45\nRETENTION_DAYS = 2\nSAFETY_MARGIN = 16  # slots\n";
        let buffer = "import config\n\nSECONDS_PER_DAY = 24 * 60 * 60\nREADINGS_PER_DAY = SECONDS_PER_DAY // \
config.POLL_INTERVAL_S\nCAPACITY = READINGS_PER_DAY * config.RETENTION_DAYS + 2 * config.SAFETY_MARGIN\n\n\ndef \
slots():\n    return CAPACITY\n";
        let found = values(&[("config.py", config), ("buffer.py", buffer)]);
        let expected = [("SECONDS_PER_DAY", "86400"), ("READINGS_PER_DAY", "1920"), ("CAPACITY", "3872")];
        assert_eq!(found, expected.map(|(n, v)| (n.to_string(), v.to_string())));
    }

    #[test]
    fn a_table_of_other_constants_is_written_out_with_their_values() {
        let levels = "LOUD = \"DEBUG\"\nQUIET = \"WARNING\"\n";
        let profiles = "import levels\n\nPROFILES = {\n    \"dev\": {\"verbosity\": levels.LOUD, \"reload\": True},\n    \
\"production\": {\"verbosity\": levels.QUIET, \"reload\": False},\n}\nNAMES = [\"dev\", \"production\"]\n";
        let found = values(&[("levels.py", levels), ("profiles.py", profiles)]);
        let table = r#"{"dev": {"verbosity": "DEBUG", "reload": True}, "production": {"verbosity": "WARNING", "reload": False}}"#;
        assert_eq!(found, [("PROFILES".to_string(), table.to_string())]);
        let js = "const LEVEL = 'warn';\nconst DEFAULTS = { level: LEVEL, retries: 2 + 1, ...base };\nconst OPTIONS = { level: LEVEL, tags: ['a'] };\n";
        let found = values(&[("a.js", js)]);
        assert_eq!(found, [("OPTIONS".to_string(), r#"{level: "warn", tags: ["a"]}"#.to_string())]);
    }

    #[test]
    fn what_does_not_fold_is_left_out_and_nothing_is_run() {
        let python = "import os\nA = 10 / 4\nB = os.getenv('B', 3) * 2\nC = 'v' + '1'\nD = A * 2\nE = -(2 ** 3)\n";
        let found = values(&[("a.py", python)]);
        let expected = [("A", "2.5"), ("C", "\"v1\""), ("D", "5.0"), ("E", "-8")];
        assert_eq!(found, expected.map(|(n, v)| (n.to_string(), v.to_string())));
        let js = "const { LIMIT } = require('./limits');\nconst MS = 60 * 1000;\nconst TTL = 15 * MS;\nconst X = \
f(2);\n";
        let found = values(&[("a.js", js)]);
        let expected = [("MS", "60000"), ("TTL", "900000")];
        assert_eq!(found, expected.map(|(n, v)| (n.to_string(), v.to_string())));
        let go = "package c\n\nconst Base = 40\nconst Limit = Base / 3 + 1\n";
        assert_eq!(values(&[("c.go", go)]), [("Limit".to_string(), "14".to_string())]);
        let cycle = "A = B + 1\nB = A + 1\n";
        assert!(values(&[("a.py", cycle)]).is_empty());
    }
}
