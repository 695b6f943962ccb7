//! One file read with tree-sitter: its definitions (functions, methods,
//! classes, types, constants), the names each one uses, its imports, and
//! the places where the parse failed.

use std::ops::Range;

use tree_sitter::{Node, Parser};

/// The languages the map reads, each by its tree-sitter grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Rust,
    Go,
    Bash,
}

impl Language {
    /// The language of a file, by its extension (or a shell script's name).
    pub fn of_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let extension = name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase());
        Some(match extension.as_deref()? {
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "sh" | "bash" => Language::Bash,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Bash => "bash",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Bash => tree_sitter_bash::LANGUAGE.into(),
        }
    }

    /// What joins a container's name to a member's (`Invoice.total`, `Invoice::total`).
    fn separator(self) -> &'static str {
        if self == Language::Rust { "::" } else { "." }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    Function,
    Method,
    Class,
    /// A struct, enum, trait, interface or type alias.
    Type,
    Constant,
    Module,
}

impl DefKind {
    pub fn name(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Class => "class",
            DefKind::Type => "type",
            DefKind::Constant => "constant",
            DefKind::Module => "module",
        }
    }
}

/// One definition of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// The class, impl, type or module it sits in, when it sits in one.
    pub container: Option<String>,
    pub kind: DefKind,
    /// Whole lines: from the start of the line it (or its decorators and
    /// attributes) starts on, to the end of its last token. Replacing this
    /// range replaces the definition and nothing else.
    pub range: Range<usize>,
    /// First and last line, from 1.
    pub lines: (usize, usize),
    /// Its head, up to the body, whitespace collapsed.
    pub signature: String,
    /// The first line of its docstring or doc comment.
    pub doc: Option<String>,
    /// The names its body uses, each once, sorted.
    pub uses: Vec<String>,
    /// The words of its string literals and comments, lowercase, each
    /// once: where an error message or a documented value is found.
    pub words: Vec<String>,
    /// It sits inside a function's body: a helper of that function, no
    /// definition of the file's own.
    pub local: bool,
}

impl Definition {
    /// Whether it is what its JavaScript module exports whole
    /// (`module.exports = function (args, opts) {...}`): its users call it
    /// by the names they load the module as.
    pub fn is_whole_export(&self, language: Language) -> bool {
        matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx)
            && self.name == "exports"
            && self.container.is_none()
            && self.signature.starts_with("module.exports")
    }

    /// `Invoice.total` for a method, `total` for a function.
    pub fn qualified(&self, language: Language) -> String {
        match &self.container {
            Some(container) => format!("{container}{}{}", language.separator(), self.name),
            None => self.name.clone(),
        }
    }
}

/// A file as the map holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMap {
    pub language: Language,
    pub definitions: Vec<Definition>,
    /// The byte ranges of its import statements (whole lines).
    pub imports: Vec<Range<usize>>,
    /// The words its import statements hold (the names and module paths
    /// they bring in), sorted: which other files' definitions it can reach.
    pub imported: Vec<String>,
    /// The modules its imports name, as written, where the language names
    /// them by path: `./comparator` and `../internal/re` in JavaScript;
    /// `.prices`, `shop.prices` and, for `from shop import prices`, both
    /// `shop` and `shop.prices` in Python.
    pub modules: Vec<String>,
    /// The names its imports give a module loaded whole, with the module
    /// as written: `("parse", "../")` for `var parse = require('../')`,
    /// `("cookie", "./cookie")` for `import cookie from './cookie'`.
    pub bindings: Vec<(String, String)>,
    /// Where the parse failed (ERROR or MISSING nodes): their lines, from 1.
    pub error_lines: Vec<usize>,
}

/// The syntax tree of `text` read as `language`; `None` only when the
/// grammar cannot load.
pub fn tree(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    parser.parse(text, None)
}

/// Reads `text` as `language`. tree-sitter recovers from errors, so a
/// broken file still yields the definitions it can read.
pub fn parse(language: Language, text: &str) -> FileMap {
    let empty = FileMap {
        language,
        definitions: Vec::new(),
        imports: Vec::new(),
        imported: Vec::new(),
        modules: Vec::new(),
        bindings: Vec::new(),
        error_lines: Vec::new(),
    };
    let Some(tree) = tree(language, text) else { return empty };
    let mut reader = Reader { language, text, definitions: Vec::new(), imports: Vec::new(), error_lines: Vec::new() };
    reader.visit(tree.root_node(), &Scope::default());
    errors(tree.root_node(), &mut reader.error_lines);
    let Reader { mut definitions, imports, mut error_lines, .. } = reader;
    definitions.sort_by_key(|d| d.range.start);
    error_lines.sort();
    error_lines.dedup();
    let mut imported: Vec<String> = imports
        .iter()
        .flat_map(|range| text[range.clone()].split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect();
    imported.sort();
    imported.dedup();
    let modules = imports.iter().flat_map(|range| modules_named(language, &text[range.clone()])).collect();
    let bindings = imports.iter().flat_map(|range| modules_bound(language, &text[range.clone()])).collect();
    FileMap { language, definitions, imports, imported, modules, bindings, error_lines }
}

/// The modules one import statement binds whole to a name (see
/// [`FileMap::bindings`]): CommonJS's `require` of a module, an ES
/// module's default import.
fn modules_bound(language: Language, statement: &str) -> Vec<(String, String)> {
    static BOUND: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?:(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)\s*[;,\n]|import\s+([A-Za-z_$][\w$]*)\s+from\s+['"]([^'"]+)['"])"#,
        )
        .expect("the pattern is valid")
    });
    if !matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx) {
        return Vec::new();
    }
    BOUND
        .captures_iter(&format!("{statement}\n"))
        .filter_map(|c| {
            let name = c.get(1).or(c.get(3))?.as_str().to_string();
            let module = c.get(2).or(c.get(4))?.as_str().to_string();
            Some((name, module))
        })
        .collect()
}

/// The modules one import statement names (see [`FileMap::modules`]).
fn modules_named(language: Language, statement: &str) -> Vec<String> {
    match language {
        Language::JavaScript | Language::TypeScript | Language::Tsx => statement
            .split(['\'', '"', '`'])
            .skip(1)
            .step_by(2)
            .filter(|specifier| !specifier.is_empty())
            .map(str::to_string)
            .collect(),
        Language::Python => {
            let statement: String = statement.replace(['(', ')', '\\'], " ");
            let words: Vec<&str> = statement.split_whitespace().collect();
            let names = |list: &[&str]| -> Vec<String> {
                list.join(" ")
                    .split(',')
                    .filter_map(|item| item.split_whitespace().next())
                    .filter(|name| *name != "*")
                    .map(str::to_string)
                    .collect()
            };
            match words.as_slice() {
                ["from", module, "import", rest @ ..] => {
                    let joined = if module.ends_with('.') { module.to_string() } else { format!("{module}.") };
                    std::iter::once(module.to_string())
                        .chain(names(rest).iter().map(|n| format!("{joined}{n}")))
                        .collect()
                }
                ["import", rest @ ..] => names(rest),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Where a node sits: in which container, and whether inside a function
/// body (whose local variables are no definitions).
#[derive(Default, Clone)]
struct Scope {
    container: Option<String>,
    in_function: bool,
    /// A class body, an impl or a trait: functions there are methods.
    in_type: bool,
}

struct Reader<'t> {
    language: Language,
    text: &'t str,
    definitions: Vec<Definition>,
    imports: Vec<Range<usize>>,
    error_lines: Vec<usize>,
}

impl Reader<'_> {
    fn text_of(&self, node: Node) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or_default()
    }

    fn field_text(&self, node: Node, field: &str) -> Option<String> {
        node.child_by_field_name(field).map(|n| self.text_of(n).to_string()).filter(|s| !s.is_empty())
    }

    fn visit(&mut self, node: Node, scope: &Scope) {
        if self.try_definition(node, scope) {
            return;
        }
        if self.is_import(node) {
            self.imports.push(self.whole_lines(node, node));
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, scope);
        }
    }

    fn is_import(&self, node: Node) -> bool {
        matches!(
            (self.language, node.kind()),
            (Language::Python, "import_statement" | "import_from_statement" | "future_import_statement")
                | (Language::JavaScript | Language::TypeScript | Language::Tsx, "import_statement")
                | (Language::Rust, "use_declaration" | "extern_crate_declaration")
                | (Language::Go, "import_declaration")
        )
    }

    /// Records `node` when it is a definition, and reads its body for
    /// nested ones; false when it is none.
    fn try_definition(&mut self, node: Node, scope: &Scope) -> bool {
        use Language::*;
        let kind = node.kind();
        let function_kind = if scope.in_type { DefKind::Method } else { DefKind::Function };
        match (self.language, kind) {
            (Python, "decorated_definition") => {
                let Some(inner) = node.child_by_field_name("definition") else { return false };
                self.definition_with_body(node, inner, scope);
                true
            }
            (Python, "function_definition" | "class_definition") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Python, "expression_statement") if !scope.in_function => {
                let Some(assignment) = node.named_child(0).filter(|n| n.kind() == "assignment") else {
                    return false;
                };
                let Some(left) = assignment.child_by_field_name("left").filter(|n| n.kind() == "identifier") else {
                    return false;
                };
                let name = self.text_of(left).to_string();
                self.push(node, node, name, DefKind::Constant, scope, None);
                true
            }
            (JavaScript | TypeScript | Tsx, "export_statement") => {
                // The export keyword goes with what it exports.
                let mut cursor = node.walk();
                let inner: Vec<Node> = node.named_children(&mut cursor).collect();
                let mut any = false;
                for child in inner {
                    any |= self.try_definition_at(node, child, scope);
                }
                any
            }
            (JavaScript | TypeScript | Tsx, _) => self.try_definition_at(node, node, scope),
            (Rust, "function_item" | "function_signature_item" | "macro_definition") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Rust, "struct_item" | "enum_item" | "union_item" | "type_item") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Rust, "const_item" | "static_item") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Rust, "trait_item" | "mod_item") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Rust, "impl_item") => {
                let Some(type_name) = node.child_by_field_name("type").map(|t| self.type_name(t)) else {
                    return false;
                };
                let inner = Scope { container: Some(type_name), in_function: false, in_type: true };
                if let Some(body) = node.child_by_field_name("body") {
                    let mut cursor = body.walk();
                    for child in body.children(&mut cursor) {
                        self.visit(child, &inner);
                    }
                }
                true
            }
            (Go, "function_declaration") => {
                self.definition_with_body(node, node, scope);
                true
            }
            (Go, "method_declaration") => {
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| find_kind(r, &["type_identifier"]))
                    .map(|t| self.text_of(t).to_string());
                let Some(name) = self.field_text(node, "name") else { return false };
                let inner = Scope { container: receiver, in_function: false, in_type: true };
                self.push(node, node, name, DefKind::Method, &inner, node.child_by_field_name("body"));
                true
            }
            (Go, "type_declaration" | "const_declaration" | "var_declaration") if !scope.in_function => {
                let mut cursor = node.walk();
                let specs: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|c| matches!(c.kind(), "type_spec" | "type_alias" | "const_spec" | "var_spec"))
                    .collect();
                let def_kind = if kind == "type_declaration" { DefKind::Type } else { DefKind::Constant };
                for spec in &specs {
                    // A declaration of one spec is replaced whole, keyword included.
                    let outer = if specs.len() == 1 { node } else { *spec };
                    if let Some(name) = self.field_text(*spec, "name") {
                        self.push(outer, *spec, name, def_kind, scope, None);
                    }
                }
                !specs.is_empty()
            }
            (Bash, "function_definition") => {
                let Some(name) = self.field_text(node, "name") else { return false };
                self.push(node, node, name, function_kind, scope, node.child_by_field_name("body"));
                true
            }
            (Bash, "variable_assignment")
                if !scope.in_function && node.parent().is_some_and(|p| p.kind() == "program") =>
            {
                let Some(name) = self.field_text(node, "name") else { return false };
                self.push(node, node, name, DefKind::Constant, scope, None);
                true
            }
            _ => false,
        }
    }

    /// JavaScript and TypeScript definitions, `outer` being the node the
    /// definition's range starts at (an export statement around it).
    fn try_definition_at(&mut self, outer: Node, node: Node, scope: &Scope) -> bool {
        match node.kind() {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                let Some(name) = self.field_text(node, "name") else { return false };
                let kind = if scope.in_type { DefKind::Method } else { DefKind::Function };
                self.push(outer, node, name, kind, scope, node.child_by_field_name("body"));
                true
            }
            "class_declaration" | "abstract_class_declaration" | "class"
                if node.child_by_field_name("name").is_some() =>
            {
                self.definition_with_body(outer, node, scope);
                true
            }
            "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
                let Some(name) = self.field_text(node, "name") else { return false };
                self.push(outer, node, name, DefKind::Type, scope, None);
                true
            }
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                let Some(name) = self.field_text(node, "name") else { return false };
                self.push(outer, node, name, DefKind::Method, scope, node.child_by_field_name("body"));
                true
            }
            "lexical_declaration" | "variable_declaration" if !scope.in_function => {
                let mut cursor = node.walk();
                let declarators: Vec<Node> =
                    node.named_children(&mut cursor).filter(|c| c.kind() == "variable_declarator").collect();
                // `const x = require('x')` is CommonJS's import.
                let requires =
                    |d: &Node| d.child_by_field_name("value").is_some_and(|v| self.text_of(v).starts_with("require("));
                if !declarators.is_empty() && declarators.iter().all(requires) {
                    self.imports.push(self.whole_lines(outer, outer));
                    return true;
                }
                let mut any = false;
                for declarator in &declarators {
                    let Some(name) = declarator.child_by_field_name("name").filter(|n| n.kind() == "identifier") else {
                        continue;
                    };
                    let name = self.text_of(name).to_string();
                    let value = declarator.child_by_field_name("value");
                    let kind = match value.map(|v| v.kind()) {
                        Some("arrow_function" | "function_expression" | "function" | "generator_function") => {
                            DefKind::Function
                        }
                        Some("class") => DefKind::Class,
                        _ => DefKind::Constant,
                    };
                    let whole = if declarators.len() == 1 { outer } else { *declarator };
                    let body = value.and_then(|v| v.child_by_field_name("body"));
                    self.push(whole, *declarator, name, kind, scope, body);
                    any = true;
                }
                any
            }
            // `exports.parse = function (...) {...}`, `Range.prototype.test = ...`
            "expression_statement" if !scope.in_function => {
                let Some(assignment) = node.named_child(0).filter(|n| n.kind() == "assignment_expression") else {
                    return false;
                };
                let (Some(left), Some(right)) =
                    (assignment.child_by_field_name("left"), assignment.child_by_field_name("right"))
                else {
                    return false;
                };
                if left.kind() != "member_expression"
                    || !matches!(right.kind(), "function_expression" | "arrow_function" | "function" | "class")
                {
                    return false;
                }
                let Some(name) = self.field_text(left, "property") else { return false };
                let object = left.child_by_field_name("object").map(|o| self.text_of(o).to_string());
                let container = object
                    .as_deref()
                    .and_then(|o| o.strip_suffix(".prototype"))
                    .filter(|c| !c.is_empty())
                    .map(str::to_string);
                let kind = if container.is_some() { DefKind::Method } else { DefKind::Function };
                let inner = Scope { container, ..scope.clone() };
                self.push(outer, node, name, kind, &inner, right.child_by_field_name("body"));
                true
            }
            _ => false,
        }
    }

    /// A definition whose name is its `name` field, and whose body (the
    /// `body` field) may hold more definitions.
    fn definition_with_body(&mut self, outer: Node, node: Node, scope: &Scope) {
        let Some(name) = self.field_text(node, "name") else {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                self.visit(child, scope);
            }
            return;
        };
        let kind = match node.kind() {
            "class_definition" | "class_declaration" | "abstract_class_declaration" | "class" => DefKind::Class,
            "struct_item" | "enum_item" | "union_item" | "type_item" | "trait_item" => DefKind::Type,
            "const_item" | "static_item" => DefKind::Constant,
            "mod_item" => DefKind::Module,
            _ if scope.in_type => DefKind::Method,
            _ => DefKind::Function,
        };
        self.push(outer, node, name, kind, scope, node.child_by_field_name("body"));
    }

    /// Records a definition spanning `outer`, named `name`, and reads its
    /// `body` for the definitions nested in it.
    fn push(&mut self, outer: Node, node: Node, name: String, kind: DefKind, scope: &Scope, body: Option<Node>) {
        let range = self.whole_lines(self.with_leading_attributes(outer), outer);
        let lines =
            (self.text[..range.start].matches('\n').count() + 1, self.text[..range.end].matches('\n').count() + 1);
        let head_end = body.map_or(node.end_byte(), |b| b.start_byte()).max(node.start_byte());
        let head = &self.text[node.start_byte()..head_end];
        let head = if body.is_none() { head.lines().next().unwrap_or_default() } else { head };
        let mut signature = head.split_whitespace().collect::<Vec<_>>().join(" ");
        signature = signature.trim_end_matches(['{', ':', '=']).trim_end().to_string();
        if signature.chars().count() > 160 {
            signature = signature.chars().take(157).collect::<String>() + "...";
        }
        let doc = self.doc_of(outer, body);
        let mut uses = Vec::new();
        let mut words = Vec::new();
        collect_names(body.unwrap_or(node), self.text, &mut uses, &mut words);
        uses.sort();
        uses.dedup();
        uses.retain(|used| *used != name);
        words.sort();
        words.dedup();
        self.definitions.push(Definition {
            name: name.clone(),
            container: scope.container.clone(),
            kind,
            range,
            lines,
            signature,
            doc,
            uses,
            words,
            local: scope.in_function,
        });
        let Some(body) = body else { return };
        let inner = match kind {
            DefKind::Class | DefKind::Type => Scope { container: Some(name), in_function: false, in_type: true },
            DefKind::Module => Scope { container: Some(name), in_function: false, in_type: false },
            DefKind::Constant => return,
            DefKind::Function | DefKind::Method => {
                Scope { container: Some(self.qualified(scope, &name)), in_function: true, in_type: false }
            }
        };
        let mut cursor = body.walk();
        for child in body.children(&mut cursor) {
            self.visit(child, &inner);
        }
    }

    fn qualified(&self, scope: &Scope, name: &str) -> String {
        match &scope.container {
            Some(container) => format!("{container}{}{name}", self.language.separator()),
            None => name.to_string(),
        }
    }

    /// The node a definition's range starts at: Rust's `#[...]` attributes
    /// and the doc comments right above it belong to it.
    fn with_leading_attributes<'n>(&self, node: Node<'n>) -> Node<'n> {
        let mut first = node;
        while let Some(previous) = first.prev_sibling() {
            let attached = match (self.language, previous.kind()) {
                (Language::Rust, "attribute_item") => true,
                (Language::Rust, "line_comment") => self.text_of(previous).starts_with("///"),
                // Go's doc comments, and JavaScript's `/** ... */`, belong to what follows them.
                (Language::Go, "comment") => true,
                (Language::JavaScript | Language::TypeScript | Language::Tsx, "comment") => {
                    self.text_of(previous).starts_with("/**")
                }
                _ => false,
            };
            let adjacent = previous.end_position().row + 1 >= first.start_position().row;
            if !attached || !adjacent {
                break;
            }
            first = previous;
        }
        first
    }

    /// From the start of `first`'s line, when only indentation precedes it
    /// there, to the end of `last`.
    fn whole_lines(&self, first: Node, last: Node) -> Range<usize> {
        let start = first.start_byte();
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let from = if self.text[line_start..start].trim().is_empty() { line_start } else { start };
        from..last.end_byte()
    }

    /// The first sentence of a Python docstring, or of the comment right
    /// above the definition in the other languages.
    fn doc_of(&self, outer: Node, body: Option<Node>) -> Option<String> {
        let text = if self.language == Language::Python {
            let first = body?.named_child(0).filter(|n| n.kind() == "expression_statement")?;
            let string = first.named_child(0).filter(|n| n.kind() == "string")?;
            self.text_of(string).trim_matches(|c| c == '"' || c == '\'' || c == 'r').to_string()
        } else {
            let mut comments = Vec::new();
            let mut at = outer;
            while let Some(previous) = at.prev_sibling() {
                let is_comment = previous.kind().contains("comment");
                if !is_comment || previous.end_position().row + 1 < at.start_position().row {
                    break;
                }
                // A line comment's node holds its newline.
                comments.push(self.text_of(previous).trim_end().to_string());
                at = previous;
            }
            comments.reverse();
            comments.join("\n")
        };
        let python = self.language == Language::Python;
        // A comment's markers go; a docstring's `*emphasis*` stays.
        let lines = text.lines().map(|line| match python {
            true => line.trim(),
            false => line.trim().trim_end_matches("*/").trim_start_matches(['/', '*', '#', '!']).trim(),
        });
        // A summary wraps over lines; the tags and examples after it are not
        // part of it.
        let summary: Vec<&str> = lines
            .skip_while(|line| line.is_empty())
            .take_while(|line| !line.is_empty() && !line.starts_with('@') && !line.starts_with(">>>"))
            .collect();
        let summary = first_sentence(&summary.join(" "));
        (!summary.is_empty()).then_some(summary)
    }

    /// The name of an impl's type: `Parser` of `Parser<'a, T>` or `&mut Parser`.
    fn type_name(&self, node: Node) -> String {
        find_kind(node, &["type_identifier"])
            .map(|n| self.text_of(n).to_string())
            .unwrap_or_else(|| self.text_of(node).to_string())
    }
}

/// The first sentence of `text`: through the first period that ends a
/// word before a capital or the end (`e.g.` and `1.5` go on), at most
/// 200 characters.
fn first_sentence(text: &str) -> String {
    const MAX_SUMMARY_CHARS: usize = 200;
    let chars: Vec<char> = text.chars().take(MAX_SUMMARY_CHARS).collect();
    let end = (0..chars.len())
        .find(|&i| {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            chars[i] == '.'
                && i > 0
                && chars[i - 1].is_alphanumeric()
                && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
                && next.is_none_or(|c| c.is_uppercase())
        })
        .map_or(chars.len(), |i| i + 1);
    chars[..end].iter().collect::<String>().trim().to_string()
}

/// The lines of the ERROR and MISSING nodes under `node`, going down only
/// where an error is.
fn errors(node: Node, lines: &mut Vec<usize>) {
    if node.is_error() || node.is_missing() {
        lines.push(node.start_position().row + 1);
    }
    if !node.has_error() {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        errors(child, lines);
    }
}

/// The first node of one of `kinds` at or under `node`, in document order.
fn find_kind<'n>(node: Node<'n>, kinds: &[&str]) -> Option<Node<'n>> {
    if kinds.contains(&node.kind()) {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'n>> = node.children(&mut cursor).collect();
    children.into_iter().find_map(|child| find_kind(child, kinds))
}

/// The node kinds that name something a definition may define.
const NAME_KINDS: [&str; 7] = [
    "identifier",
    "property_identifier",
    "field_identifier",
    "type_identifier",
    "shorthand_property_identifier",
    "command_name",
    "variable_name",
];

/// Words of a string literal or comment worth indexing: a few letters or more.
const MIN_WORD_LEN: usize = 3;

/// Definitions nested in a body: their names and words are their own, not
/// the body's (a class is not about everything its methods use).
const NESTED_DEFINITIONS: [&str; 10] = [
    "function_definition",
    "class_definition",
    "decorated_definition",
    "method_definition",
    "function_declaration",
    "class_declaration",
    "function_item",
    "impl_item",
    "method_declaration",
    "struct_item",
];

fn collect_names(node: Node, text: &str, names: &mut Vec<String>, words: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !NESTED_DEFINITIONS.contains(&child.kind()) {
            collect_in(child, text, names, words);
        }
    }
}

fn collect_in(node: Node, text: &str, names: &mut Vec<String>, words: &mut Vec<String>) {
    let kind = node.kind();
    if NAME_KINDS.contains(&kind) {
        if let Ok(name) = node.utf8_text(text.as_bytes()) {
            names.push(name.to_string());
        }
        return;
    }
    let is_text = kind.contains("comment")
        || kind == "string_content"
        || kind == "string_fragment"
        || (kind.contains("string") && node.named_child_count() == 0);
    if is_text {
        if let Ok(literal) = node.utf8_text(text.as_bytes()) {
            words.extend(
                literal
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .filter(|w| w.chars().count() >= MIN_WORD_LEN)
                    .map(str::to_lowercase),
            );
        }
        return;
    }
    collect_names(node, text, names, words);
}
