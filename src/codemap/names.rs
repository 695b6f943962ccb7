//! The names a file reads that nothing binds, and the names it declares
//! twice: what a language's compiler refuses beyond its grammar, read from
//! the syntax tree in-process (no program is started). A file-wide view:
//! a name bound anywhere in the file counts as bound everywhere, so a name
//! reported is one no scope of the file can give a value.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::parse::{Language, tree};

/// Python's builtins (`dir(builtins)` of Python 3.12, less the private
/// ones) and the names every module has.
const PYTHON_BUILTINS: [&str; 166] = [
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "__file__",
    "__path__",
    "__builtins__",
    "__cached__",
    "__annotations__",
    "__dict__",
    "__module__",
    "__qualname__",
    "__class__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// The names `text` reads that nothing in it binds and that are no
/// builtin, for Python; `None` for another language, or where a star
/// import binds names the file does not show.
pub fn unbound_names(language: Language, text: &str) -> Option<BTreeSet<String>> {
    if language != Language::Python || text.contains("import *") {
        return None;
    }
    let tree = tree(language, text)?;
    let mut names = Names { text, bound: BTreeSet::new(), read: BTreeSet::new() };
    names.visit(tree.root_node());
    let Names { bound, read, .. } = names;
    Some(read.into_iter().filter(|name| !bound.contains(name) && !PYTHON_BUILTINS.contains(&name.as_str())).collect())
}

/// The names `text` declares twice at its top level, for JavaScript and
/// TypeScript (`const { check } = require(…)` and `function check`): the
/// file does not load. Empty for another language.
pub fn redeclared(language: Language, text: &str) -> Vec<String> {
    if !matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx) {
        return Vec::new();
    }
    let Some(tree) = tree(language, text) else { return Vec::new() };
    let root = tree.root_node();
    let mut declared: Vec<String> = Vec::new();
    let mut cursor = root.walk();
    for statement in root.children(&mut cursor) {
        let statement = match statement.kind() {
            "export_statement" => statement.child_by_field_name("declaration").unwrap_or(statement),
            _ => statement,
        };
        match statement.kind() {
            "function_declaration" | "class_declaration" | "generator_function_declaration" => {
                declared.extend(statement.child_by_field_name("name").map(|n| node_text(n, text).to_string()));
            }
            // `var` may declare a name again; `let` and `const` may not.
            "lexical_declaration" => {
                let mut inner = statement.walk();
                for declarator in statement.children(&mut inner).filter(|c| c.kind() == "variable_declarator") {
                    if let Some(name) = declarator.child_by_field_name("name") {
                        pattern_names(name, text, &mut declared);
                    }
                }
            }
            _ => {}
        }
    }
    let mut twice: Vec<String> =
        declared.iter().filter(|name| declared.iter().filter(|other| other == name).count() > 1).cloned().collect();
    twice.sort();
    twice.dedup();
    twice
}

/// The names a JavaScript binding pattern binds: `x`, `{ a, b: c }`, `[d, ...e]`.
fn pattern_names(node: Node, text: &str, names: &mut Vec<String>) {
    match node.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => names.push(node_text(node, text).to_string()),
        // `{ key: value }` binds the value's names; the key is a property.
        "pair_pattern" => {
            if let Some(value) = node.child_by_field_name("value") {
                pattern_names(value, text, names);
            }
        }
        _ => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                pattern_names(child, text, names);
            }
        }
    }
}

fn node_text<'t>(node: Node, text: &'t str) -> &'t str {
    &text[node.byte_range()]
}

/// The names a Python file binds and reads, file-wide.
struct Names<'t> {
    text: &'t str,
    bound: BTreeSet<String>,
    read: BTreeSet<String>,
}

impl Names<'_> {
    fn visit(&mut self, node: Node) {
        match node.kind() {
            "identifier" => {
                self.read.insert(node_text(node, self.text).to_string());
                return;
            }
            // `obj.attr`: the object is read, the attribute is no name.
            "attribute" => {
                if let Some(object) = node.child_by_field_name("object") {
                    self.visit(object);
                }
                return;
            }
            // `f(key=value)`: the key is no name.
            "keyword_argument" => {
                if let Some(value) = node.child_by_field_name("value") {
                    self.visit(value);
                }
                return;
            }
            "function_definition" | "class_definition" => self.bind_field(node, "name"),
            "parameters" | "lambda_parameters" => {
                let mut cursor = node.walk();
                for parameter in node.named_children(&mut cursor) {
                    self.bind_parameter(parameter);
                }
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind_target(left);
                }
            }
            "named_expression" => self.bind_field(node, "name"),
            "as_pattern" => {
                if let Some(alias) = node.child_by_field_name("alias") {
                    self.bind_target(alias);
                }
            }
            "import_statement" | "import_from_statement" => {
                self.bind_imports(node);
                return;
            }
            "global_statement" | "nonlocal_statement" => {
                let mut cursor = node.walk();
                for name in node.named_children(&mut cursor) {
                    self.bound.insert(node_text(name, self.text).to_string());
                }
                return;
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.visit(child);
        }
    }

    fn bind_field(&mut self, node: Node, field: &str) {
        if let Some(name) = node.child_by_field_name(field) {
            self.bound.insert(node_text(name, self.text).to_string());
        }
    }

    fn bind_parameter(&mut self, parameter: Node) {
        match parameter.kind() {
            "identifier" => {
                self.bound.insert(node_text(parameter, self.text).to_string());
            }
            "default_parameter" | "typed_default_parameter" => self.bind_field(parameter, "name"),
            // `x: int`, `*args`, `**kwargs`: the first name is the parameter's.
            _ => {
                let mut cursor = parameter.walk();
                if let Some(name) = parameter.named_children(&mut cursor).find(|c| c.kind() == "identifier") {
                    self.bound.insert(node_text(name, self.text).to_string());
                }
            }
        }
    }

    /// The names an assignment's target binds; an attribute or an item
    /// assigned binds none (and reads what it is on).
    fn bind_target(&mut self, target: Node) {
        match target.kind() {
            "identifier" => {
                self.bound.insert(node_text(target, self.text).to_string());
            }
            "attribute" | "subscript" => {}
            _ => {
                let mut cursor = target.walk();
                for child in target.named_children(&mut cursor) {
                    self.bind_target(child);
                }
            }
        }
    }

    /// `import a.b` binds `a`; `import a as b` and `from m import a as b`
    /// bind `b`; `from m import a` binds `a`.
    fn bind_imports(&mut self, node: Node) {
        let module = node.child_by_field_name("module_name").map(|m| m.id());
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if Some(child.id()) == module {
                continue;
            }
            let name = match child.kind() {
                "aliased_import" => child.child_by_field_name("alias"),
                "dotted_name" => child.named_child(0),
                _ => None,
            };
            if let Some(name) = name {
                self.bound.insert(node_text(name, self.text).to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "from pager import paginate\nimport os.path\nimport json as j\n\n\n@cached\ndef show(page, *rest, size: int = 10, **options):\n    rows = paginate(ITEMS, page, per_page=size)\n    total = sum(len(r) for r in rows)\n    for i, (a, b) in enumerate(rows):\n        self.count += i\n    try:\n        pass\n    except KeyError as error:\n        print(error, os.sep, j.dumps(options), undefined_name)\n    return [str(row) for row in rows] + [lambda x: x + y]\n\n\nclass Box:\n    limit = 3\n\n\nITEMS = list(range(50))\n";

    #[test]
    fn the_names_a_python_file_reads_and_nothing_binds() {
        let unbound = unbound_names(Language::Python, APP).unwrap();
        let unbound: Vec<&str> = unbound.iter().map(String::as_str).collect();
        // `per_page` is a keyword, `count` an attribute, `self` unbound here.
        assert_eq!(unbound, ["cached", "self", "undefined_name", "y"]);
        assert_eq!(unbound_names(Language::Python, "from m import *\nprint(x)\n"), None);
        assert_eq!(unbound_names(Language::JavaScript, "x;\n"), None);
    }

    #[test]
    fn a_name_declared_twice_at_the_top_of_a_script_is_found() {
        let signup = "'use strict';\nconst { passwordErrors, other: renamed } = require('./validate');\n\nmodule.exports = { passwordErrors };\n";
        let shadowed = format!("{signup}\nfunction passwordErrors(password) {{\n  return [];\n}}\n");
        assert_eq!(redeclared(Language::JavaScript, &shadowed), ["passwordErrors"]);
        assert!(redeclared(Language::JavaScript, signup).is_empty());
        let renamed = format!("{signup}\nexport function renamed() {{}}\n");
        assert_eq!(redeclared(Language::JavaScript, &renamed), ["renamed"]);
        assert!(redeclared(Language::Python, "def a(): pass\ndef a(): pass\n").is_empty());
    }
}
