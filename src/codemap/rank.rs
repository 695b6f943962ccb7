//! Ranking for localization: which definitions of the map a request is about,
//! ranked in three steps. Exact names first (a definition the prompt names,
//! `Invoice.total`, `semver.inc`, `parse_port(`); then a lexical ranking,
//! BM25 over each definition's name, path, signature, docstring, the names
//! its body uses and the words of its strings and comments; then the
//! reference graph, which lifts what the best-ranked definitions use (the
//! `amount` an invoice's `total` sums). Nothing here reads the prompt for
//! keywords: every word counts by how rare it is in the project.

use std::collections::{HashMap, HashSet};

use super::{CodeMap, DefKind, Found, Language};
use crate::text::is_identifier;

/// Definitions longer than this are no candidates for a change: a small
/// model cannot rewrite them whole. Their methods still are.
pub const MAX_CANDIDATE_LINES: usize = 200;
/// A function the request names may be longer, up to this: a change is
/// asked of it a line at a time.
pub const MAX_NAMED_LINES: usize = 500;

/// BM25's usual constants.
const K1: f32 = 1.2;
/// Lower than text search's 0.75 for definitions: a one-line definition is
/// no better a match for being short. Files keep it: a file holding every
/// word (a command-line script's help) is no better a match for being long.
const B: f32 = 0.4;
const FILE_B: f32 = 0.75;
/// How much a definition's own name weighs against a word of its body.
const NAME_WEIGHT: usize = 3;
/// Of a file's score, the share each of its definitions gets.
const FILE_SHARE: f32 = 0.5;
/// Of a ranked definition's score, the share passed to each definition it uses.
const SPREAD: f32 = 0.5;
/// How many of the best-ranked definitions pass score along the graph.
const SPREADERS: usize = 10;
/// How much a word of a definition's path weighs against a word of its body.
const PATH_WEIGHT: usize = 2;
/// How much a word of a definition's summary (its docstring's first
/// sentence, what it does in its author's words) weighs against a word of
/// its body.
const DOC_WEIGHT: usize = 2;
/// How much sharper than BM25's the weight of a rare word is.
const IDF_POWER: f32 = 1.5;

/// Whether `path` holds tests (`tests/`, `test_x.py`, `x_test.go`,
/// `x.test.js`, `x.spec.ts`) or only declares types (`x.d.ts`, `x.pyi`), by the
/// conventions of the languages the map reads.
pub fn is_aside(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let mut segments = lower.split('/');
    let name = segments.next_back().unwrap_or_default();
    let in_test_folder =
        lower.split('/').rev().skip(1).any(|s| matches!(s, "test" | "tests" | "spec" | "__tests__" | "testing"));
    let stem = name.split('.').next().unwrap_or_default();
    in_test_folder
        || matches!(stem, "test" | "tests" | "conftest")
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.ends_with(".d.ts")
        || name.ends_with(".pyi")
}

/// A definition, scored.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'m> {
    pub found: Found<'m>,
    pub score: f32,
    /// The prompt names it (by name or qualified name).
    pub named: bool,
}

/// The definitions most relevant to `prompt`, best first, at most `limit`.
pub fn rank<'m>(map: &'m CodeMap, prompt: &str, limit: usize) -> Vec<Ranked<'m>> {
    rank_hinted(map, prompt, "", limit)
}

/// As [`rank`], with `hints`: words that may be the code's own for what
/// the request speaks of (a model's guess: `MAX_LENGTH` for "how long"),
/// searched as the prompt's words are, never taken as names it gives.
pub fn rank_hinted<'m>(map: &'m CodeMap, prompt: &str, hints: &str, limit: usize) -> Vec<Ranked<'m>> {
    let mut query = Query::of(prompt, map);
    query.terms.extend(terms_of(hints));
    query.terms.sort();
    query.terms.dedup();
    // What a module exports whole is named by the names its users load it as.
    let mut bound: HashMap<&str, Vec<String>> = HashMap::new();
    for found in map.definitions().filter(|f| f.definition.is_whole_export(f.file.language)) {
        bound.insert(found.path, bound_names(map, found.path));
    }
    let named = |found: &Found<'_>| {
        query.names(found)
            || found.definition.is_whole_export(found.file.language)
                && bound.get(found.path).is_some_and(|names| names.iter().any(|n| query.identifiers.contains(n)))
    };
    let all: Vec<Found<'m>> = map
        .definitions()
        .filter(|f| {
            let lines = f.definition.lines.1 + 1 - f.definition.lines.0;
            let function = matches!(f.definition.kind, DefKind::Function | DefKind::Method);
            lines <= MAX_CANDIDATE_LINES || function && lines <= MAX_NAMED_LINES && named(f)
        })
        .filter(|f| f.definition.kind != DefKind::Module && !f.definition.local)
        // Tests and type declarations are left out unless the prompt names
        // their file: a report of what the code does is about the code, and
        // a small model offered a test to change makes it agree with the bug.
        .filter(|f| !is_aside(f.path) || query.names_file(f.path))
        // Rust's `mod tests` (or `mod test`) inside a source file is a test file too.
        .filter(|f| {
            !f.definition.container.as_deref().is_some_and(|c| {
                let module = c.split("::").next().unwrap_or(c);
                module == "tests" || module == "test"
            })
        })
        .collect();
    if all.is_empty() || query.terms.is_empty() {
        return Vec::new();
    }
    // Each definition as BM25 reads it: its length and how often each of the
    // query's terms occurs in it; nothing else of its words is kept, so a
    // large tree costs little memory.
    let documents: Vec<Counts> = all.iter().map(|found| Counts::of(&document(found), &query.terms)).collect();
    // Files first: a file's words are its path's and all its definitions';
    // the file's score lifts each definition in it.
    let mut file_counts: std::collections::BTreeMap<&str, Counts> = Default::default();
    for (found, counts) in all.iter().zip(&documents) {
        file_counts.entry(found.path).or_insert_with(|| Counts::empty(query.terms.len())).add(counts);
    }
    let (files, file_documents): (Vec<&str>, Vec<Counts>) = file_counts.into_iter().unzip();
    let file_scores: HashMap<&str, f32> = files.into_iter().zip(bm25(&file_documents, FILE_B)).collect();
    let lexical = bm25(&documents, B);
    // How many definitions share a name: a name defined everywhere
    // (`__init__`, `new`) says little about which one is meant.
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for found in &all {
        *defined.entry(found.definition.name.as_str()).or_default() += 1;
    }
    let mut ranked: Vec<Ranked<'m>> = all
        .iter()
        .zip(lexical)
        .map(|(found, lexical)| {
            let lexical = lexical + FILE_SHARE * file_scores[found.path];
            Ranked { found: *found, score: lexical, named: named(found) }
        })
        .collect();
    // Exact names first: a named definition outranks every lexical match,
    // the more so the fewer definitions share its name.
    // Named where no word of the request matches, it still ranks.
    let best_lexical = ranked.iter().map(|r| r.score).fold(f32::EPSILON, f32::max);
    for r in ranked.iter_mut().filter(|r| r.named) {
        r.score += best_lexical / defined[r.found.definition.name.as_str()] as f32;
    }
    spread_along_uses(map, &mut ranked, &defined);
    ranked.retain(|r| r.score > 0.0);
    ranked.sort_by(|a, b| {
        (b.named, b.score).partial_cmp(&(a.named, a.score)).unwrap_or(std::cmp::Ordering::Equal).then_with(|| {
            (a.found.path, a.found.definition.range.start).cmp(&(b.found.path, b.found.definition.range.start))
        })
    });
    ranked.truncate(limit);
    ranked
}

/// One step of the reference graph: each of the best-ranked definitions
/// passes a share of its score to the definitions it can reach that are
/// named as the names it uses.
fn spread_along_uses(map: &CodeMap, ranked: &mut [Ranked<'_>], defined: &HashMap<&str, usize>) {
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by(|a, b| ranked[*b].score.total_cmp(&ranked[*a].score));
    let spreaders: Vec<(Found<'_>, f32, Vec<String>)> = order
        .iter()
        .take(SPREADERS)
        .map(|&i| ranked[i])
        .filter(|r| r.score > 0.0)
        .map(|r| (r.found, r.score, resolved_imports(map, r.found.path, r.found.file)))
        .collect();
    // A name most definitions use (a logger, the parser's `md`) is the
    // project's plumbing, not what a request is about: what it gains
    // shrinks with the share of all definitions that use it.
    let mut users: HashMap<&str, usize> = HashMap::new();
    for definition in ranked.iter().map(|r| r.found.definition) {
        for used in &definition.uses {
            *users.entry(used.as_str()).or_default() += 1;
        }
    }
    let definitions = ranked.len() as f32 + 1.0;
    for r in ranked.iter_mut() {
        let name = r.found.definition.name.as_str();
        let Some(count) = defined.get(name) else { continue };
        let used_by = users.get(name).copied().unwrap_or(0) as f32;
        let rarity = (definitions / (used_by + 1.0)).ln() / definitions.ln();
        let gain: f32 = rarity
            * spreaders
                .iter()
                .filter(|(spreader, _, _)| spreader.definition.uses.iter().any(|used| used == name))
                .filter(|(spreader, _, resolved)| reaches(spreader, resolved, &r.found))
                .map(|(_, score, _)| score * SPREAD / *count as f32)
                .sum::<f32>();
        r.score += gain;
    }
}

/// Whether a name `from` uses can be `to`: a definition of its own file;
/// a method (called on a value whose type the map does not know); in the
/// languages that import by path, one of a file its imports resolve to (a
/// package's `__init__.py` or `index.js` standing for its whole directory);
/// in the languages whose files share one namespace (a Go package, sourced
/// shell scripts), one of its directory; elsewhere, one its imports or
/// qualified names mention. A parameter that happens to share its name
/// with another file's constant (`options`) reaches nothing.
fn reaches(from: &Found<'_>, resolved: &[String], to: &Found<'_>) -> bool {
    if from.path == to.path || to.definition.kind == DefKind::Method {
        return true;
    }
    match from.file.language {
        Language::Python | Language::JavaScript | Language::TypeScript | Language::Tsx => {
            resolved.iter().any(|file| file == to.path || is_index(file) && to.path.starts_with(directory(file)))
        }
        Language::Go | Language::Bash if directory(from.path) == directory(to.path) => true,
        _ => {
            let mentioned = |word: &str| {
                from.file.imported.iter().chain(&from.definition.uses).any(|w| w.eq_ignore_ascii_case(word))
            };
            let module = match from.file.language {
                Language::Go => directory(to.path).trim_end_matches('/').rsplit('/').next().unwrap_or_default(),
                _ => to.path.rsplit('/').next().and_then(|name| name.split('.').next()).unwrap_or_default(),
            };
            mentioned(&to.definition.name) || !module.is_empty() && mentioned(module)
        }
    }
}

/// The directory of a path, with its trailing slash (`""` at the root).
fn directory(path: &str) -> &str {
    path.rfind('/').map_or("", |slash| &path[..=slash])
}

/// A package's index file, which stands for its directory.
fn is_index(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name.split('.').next(), Some("__init__" | "index"))
}

/// The files of the map that `file`'s imports name (see
/// [`super::FileMap::modules`]): JavaScript's relative paths, with or
/// without their extension or as a directory's index; Python's modules,
/// relative by their leading dots, else from the root or a source folder
/// (`src/pkg/mod.py` for `pkg.mod`).
fn resolved_imports(map: &CodeMap, path: &str, file: &super::FileMap) -> Vec<String> {
    file.modules.iter().filter_map(|module| resolved(map, path, file.language, module)).collect()
}

/// The file of the map that `module`, as an import of the file `path`
/// writes it, names (see [`resolved_imports`]).
fn resolved(map: &CodeMap, path: &str, language: Language, module: &str) -> Option<String> {
    let exists = |candidate: &str| map.file(candidate).is_some();
    let base = match language {
        Language::JavaScript | Language::TypeScript | Language::Tsx if module.starts_with('.') => {
            normalized(&format!("{}{module}", directory(path)))
        }
        Language::Python => {
            let dots = module.chars().take_while(|c| *c == '.').count();
            let rest = module[dots..].replace('.', "/");
            if dots == 0 {
                let suffix = format!("{rest}.py");
                let package = format!("{rest}/__init__.py");
                // An absolute module is found from the root or any source folder.
                return map
                    .files()
                    .map(|(p, _)| p)
                    .find(|p| [&suffix, &package].iter().any(|s| *p == s.as_str() || p.ends_with(&format!("/{s}"))))
                    .map(str::to_string);
            }
            let mut dir = directory(path).to_string();
            for _ in 1..dots {
                dir = directory(dir.trim_end_matches('/')).to_string();
            }
            normalized(&format!("{dir}{rest}"))
        }
        _ => return None,
    };
    let candidates: &[&str] = match language {
        Language::Python => &[".py", "/__init__.py"],
        _ => &["", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", "/index.js", "/index.ts"],
    };
    let base = base.trim_end_matches('/');
    if let Some(found) = candidates.iter().map(|ending| format!("{base}{ending}")).find(|c| exists(c)) {
        return Some(found);
    }
    match base.is_empty() {
        true => ["index.js", "index.ts"].into_iter().find(|c| exists(c)).map(str::to_string),
        false => None,
    }
}

/// The names the project's files give the module `path` where they load
/// it whole (`var parse = require('../')`): what its users, and a request,
/// call the function it exports whole.
pub fn bound_names(map: &CodeMap, path: &str) -> Vec<String> {
    let mut names: Vec<String> = map
        .files()
        .flat_map(|(from, file)| {
            file.bindings
                .iter()
                .filter(move |(_, module)| resolved(map, from, file.language, module).as_deref() == Some(path))
                .map(|(name, _)| name.clone())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `a/b/../c/./d` as `a/c/d`; a path that climbs above the root stays empty.
fn normalized(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// What the prompt says, as terms to search.
struct Query {
    /// Lowercase subwords (`parse_port` gives `parse`, `port`, `parse_port`).
    terms: Vec<String>,
    /// The names the prompt writes as code; of a dotted name, its last
    /// part (the rest qualifies it: `Cart` in `Cart.total` names no target),
    /// less those an exact dotted name settles (see `exact`).
    identifiers: Vec<String>,
    /// Dotted names as written (`pkg.func`, `Invoice.total`).
    dotted: Vec<String>,
    /// The dotted names that are some definition's qualified name
    /// (`TTLCache.expire`, `pkg.TTLCache.expire`): each names that
    /// definition alone, and the prompt's other mentions of its last part
    /// (`expire()`, `cache.expire(3)`) are taken to mean it too: the
    /// request said which `expire` it speaks of (a sibling class's was
    /// changed in its place).
    exact: Vec<String>,
    /// The prompt's text, for the file names it mentions.
    text: String,
}

impl Query {
    fn of(prompt: &str, map: &CodeMap) -> Query {
        let mut dotted = Vec::new();
        // The names written as code outside a dotted name.
        let mut plain = Vec::new();
        // Between backticks is code, as the user marked it; a string
        // literal in it (`inc('1.2.3', 'minor')`) is data, not a name.
        for (i, span) in prompt.split('`').enumerate() {
            let is_code = i % 2 == 1;
            let span = if is_code { without_string_literals(span) } else { span.to_string() };
            let chars: Vec<char> = span.chars().collect();
            let mut start = 0;
            while start < chars.len() {
                if !(chars[start].is_alphanumeric() || chars[start] == '_') {
                    start += 1;
                    continue;
                }
                let mut end = start;
                while end < chars.len() && (chars[end].is_alphanumeric() || chars[end] == '_' || chars[end] == '.') {
                    end += 1;
                }
                let token: String = chars[start..end].iter().collect::<String>().trim_end_matches('.').to_string();
                let called = chars.get(end) == Some(&'(');
                // `f(extensions=['toc'])`: a keyword argument names a parameter.
                let keyword = is_code && chars.get(end) == Some(&'=') && chars.get(end + 1) != Some(&'=');
                start = end;
                if keyword {
                    continue;
                }
                let parts: Vec<&str> = token.split('.').filter(|p| !p.is_empty()).collect();
                if !parts.iter().all(|p| is_identifier(p)) {
                    continue;
                }
                let Some(last) = parts.last() else { continue };
                let is_dotted = parts.len() > 1 && parts.iter().all(|p| p.chars().count() > 1);
                if is_dotted {
                    dotted.push(token.clone());
                }
                if !is_dotted && (is_code || called || looks_like_code(last)) {
                    plain.push(last.to_string());
                }
            }
        }
        let mut terms = terms_of(prompt);
        terms.sort();
        terms.dedup();
        let qualified: HashSet<String> =
            map.definitions().map(|f| f.definition.qualified(f.file.language).replace("::", ".")).collect();
        let is_exact =
            |d: &str| qualified.contains(d) || d.match_indices('.').any(|(at, _)| qualified.contains(&d[at + 1..]));
        let exact: Vec<String> = dotted.iter().filter(|d| is_exact(d)).cloned().collect();
        let settled: Vec<&str> = exact.iter().filter_map(|d| d.rsplit('.').next()).collect();
        let lasts = dotted.iter().filter_map(|d| d.rsplit('.').next());
        let mut identifiers: Vec<String> = plain.iter().map(String::as_str).chain(lasts).map(str::to_string).collect();
        identifiers.retain(|name| !settled.contains(&name.as_str()));
        Query { terms, identifiers, dotted, exact, text: prompt.to_string() }
    }

    /// Whether the prompt mentions the file by its name (`test_calc.py`).
    fn names_file(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.text.contains(name)
    }

    /// Whether the prompt names this definition as code: its qualified
    /// name, a dotted name ending in it, or its name between backticks,
    /// written as a call (`total(`), or shaped as code (`in_stock`, `parseDate`).
    fn names(&self, found: &Found<'_>) -> bool {
        let definition = found.definition;
        let qualified = definition.qualified(found.file.language).replace("::", ".");
        // `cache.expire` names no `expire` where the prompt's `TTLCache.expire` settles which.
        let settled = |name: &str| self.exact.iter().any(|d| d.rsplit('.').next() == Some(name));
        let named_by = |d: &String| match self.exact.contains(d) {
            true => *d == qualified || d.ends_with(&format!(".{qualified}")),
            false => *d == qualified || d.ends_with(&format!(".{}", definition.name)) && !settled(&definition.name),
        };
        if self.dotted.iter().any(named_by) {
            return true;
        }
        self.identifiers.contains(&definition.name)
    }
}

/// The words of `text` as the ranking searches them: the subwords of each
/// word, plurals dropped.
fn terms_of(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| is_identifier(w))
        .flat_map(subwords)
        .map(|word| stem(&word))
        .collect()
}

/// A word written as code in prose: `parse_port`, `parseDate`, `MAX_SIZE`.
pub fn looks_like_code(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    word.contains('_') || chars.windows(2).any(|w| w[0].is_lowercase() && w[1].is_uppercase())
}

/// `code` with its quoted strings blanked out.
fn without_string_literals(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut quote: Option<char> = None;
    for c in code.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(' ');
            }
            Some(_) => out.push(' '),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(' ');
            }
            None => out.push(c),
        }
    }
    out
}

/// Words shorter than this say too little to rank by (`it`, `of`, `x`).
const MIN_TERM: usize = 3;

/// The lowercase words of an identifier: its snake_case and camelCase
/// parts and, when it has several, itself.
pub fn subwords(identifier: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = identifier.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let boundary = c == '_'
            || (c.is_uppercase()
                && i > 0
                && (chars[i - 1].is_lowercase()
                    || chars.get(i + 1).is_some_and(|n| n.is_lowercase()) && chars[i - 1].is_uppercase()));
        if boundary && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        if c != '_' {
            current.extend(c.to_lowercase());
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts.retain(|p| p.chars().count() >= MIN_TERM);
    let whole = identifier.to_lowercase();
    if parts.len() != 1 && whole.chars().count() >= MIN_TERM {
        parts.push(whole);
    }
    parts
}

/// A word with its plural ending dropped (`titles` to `title`, `entries`
/// to `entry`, `boxes` to `box`): the commonest mismatch between the words
/// of a request and those of the code it is about (`URLs` and `url`).
pub fn stem(word: &str) -> String {
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..n - 3]);
    }
    if n > 4 && ["sses", "xes", "ches", "shes", "zes"].iter().any(|end| word.ends_with(end)) {
        return word[..n - 2].to_string();
    }
    if n > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|end| word.ends_with(end)) {
        return word[..n - 1].to_string();
    }
    word.to_string()
}

/// A definition as the lexical ranking reads it.
fn document(found: &Found<'_>) -> Vec<String> {
    document_words(found).iter().map(|word| stem(word)).collect()
}

fn document_words(found: &Found<'_>) -> Vec<String> {
    let definition = found.definition;
    let mut words = Vec::new();
    for _ in 0..NAME_WEIGHT {
        words.extend(subwords(&definition.name));
    }
    if let Some(container) = &definition.container {
        words.extend(subwords(container));
    }
    for _ in 0..PATH_WEIGHT {
        for part in found.path.split(['/', '.', '-']) {
            words.extend(subwords(part));
        }
    }
    for name in definition.signature.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        words.extend(subwords(name));
    }
    if let Some(doc) = &definition.doc {
        for _ in 0..DOC_WEIGHT {
            words.extend(
                doc.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= MIN_TERM).map(str::to_lowercase),
            );
        }
    }
    for used in &definition.uses {
        words.extend(subwords(used));
    }
    words.extend(definition.words.iter().cloned());
    words
}

/// A document as BM25 reads it: its length in words, and the count of each
/// query term in it (in the query's order).
#[derive(Debug, Clone)]
struct Counts {
    length: usize,
    terms: Vec<u32>,
}

impl Counts {
    fn empty(terms: usize) -> Counts {
        Counts { length: 0, terms: vec![0; terms] }
    }

    fn of(words: &[String], query: &[String]) -> Counts {
        let terms = query.iter().map(|term| words.iter().filter(|w| *w == term).count() as u32).collect();
        Counts { length: words.len(), terms }
    }

    fn add(&mut self, other: &Counts) {
        self.length += other.length;
        for (mine, theirs) in self.terms.iter_mut().zip(&other.terms) {
            *mine += theirs;
        }
    }
}

/// BM25 of each document for the query's terms.
fn bm25(documents: &[Counts], b: f32) -> Vec<f32> {
    let n = documents.len() as f32;
    let average = documents.iter().map(|d| d.length).sum::<usize>() as f32 / n.max(1.0);
    let terms = documents.first().map_or(0, |d| d.terms.len());
    let frequency: Vec<usize> = (0..terms).map(|t| documents.iter().filter(|d| d.terms[t] > 0).count()).collect();
    documents
        .iter()
        .map(|document| {
            let length = document.length as f32;
            (0..terms)
                .filter(|t| frequency[*t] > 0)
                .map(|t| {
                    let (df, tf) = (frequency[t] as f32, document.terms[t] as f32);
                    // Raised above BM25's own: in one project, the words
                    // that run through all of it (`version` in a semver
                    // library) say what the project is, not where in it a
                    // request points; its rare words (`caret`) do.
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln().powf(IDF_POWER);
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - b + b * length / average.max(1.0)))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;
    use std::path::Path;

    fn map_of(files: &[(&str, &str)]) -> (tempfile::TempDir, CodeMap) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let abs = dir.path().join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, text).unwrap();
        }
        let mut map = CodeMap::new();
        map.refresh(&Workspace::open(dir.path()).unwrap());
        (dir, map)
    }

    fn top(map: &CodeMap, prompt: &str) -> Vec<String> {
        rank(map, prompt, 3)
            .iter()
            .map(|r| format!("{}:{}", r.found.path, r.found.definition.qualified(r.found.file.language)))
            .collect()
    }

    const SHOP: [(&str, &str); 3] = [
        (
            "shop/cart.py",
            "from shop.prices import price_of\n\nclass Cart:\n    def total(self):\n        \"\"\"What the customer pays.\"\"\"\n        return sum(price_of(item) * n for item, n in self.items)\n\n    def add(self, item, n=1):\n        self.items.append((item, n))\n",
        ),
        (
            "shop/prices.py",
            "DISCOUNT = 0.1\n\ndef price_of(item):\n    \"\"\"The unit price after the discount.\"\"\"\n    return item.price * (1 - DISCOUNT)\n",
        ),
        (
            "shop/report.py",
            "def render(rows):\n    \"\"\"Formats the sales report as text.\"\"\"\n    return '\\n'.join(rows)\n",
        ),
    ];

    #[test]
    fn a_dotted_name_in_the_prompt_is_the_definition_it_names() {
        let (_dir, map) = map_of(&SHOP);
        assert_eq!(top(&map, "`Cart.total()` counts every item twice. Fix it.")[0], "shop/cart.py:Cart.total");
        assert_eq!(top(&map, "shop.prices.price_of returns the wrong price")[0], "shop/prices.py:price_of");
    }

    #[test]
    fn a_method_named_with_its_class_is_that_class_s_and_no_sibling_s() {
        // Two caches each define `expire`; the request names one by its
        // class, then speaks of it as `cache.expire(3)` and `expire()`.
        let cache = "class TTLCache:\n    def expire(self, time=None):\n        \"\"\"Remove expired items.\"\"\"\n        return None\n\n\nclass TLRUCache:\n    def expire(self, time=None):\n        \"\"\"Remove expired items from the cache.\"\"\"\n        return None\n";
        let (_dir, map) = map_of(&[("cache.py", cache)]);
        let prompt = "I'd like `TTLCache.expire()` to return what it removed: `set(cache.expire(3))` should be \
`{(1, 1)}`, and `expire()` with nothing expired an empty result.";
        let named: Vec<String> = rank(&map, prompt, 5)
            .iter()
            .filter(|r| r.named)
            .map(|r| r.found.definition.qualified(r.found.file.language))
            .collect();
        assert_eq!(named, ["TTLCache.expire"]);
        // Unqualified, both are what the request may mean.
        let named = rank(&map, "`expire()` should return what it removed", 5).iter().filter(|r| r.named).count();
        assert_eq!(named, 2);
    }

    #[test]
    fn words_of_docstrings_and_bodies_rank_a_definition_never_named() {
        let (_dir, map) = map_of(&SHOP);
        assert_eq!(top(&map, "The sales report comes out as one line")[0], "shop/report.py:render");
        // The discount's constant, beside the function whose summary says
        // it applies the discount: the answer's value is among the first.
        let ranked = top(&map, "What discount is applied to prices?");
        assert_eq!(ranked[..2], ["shop/prices.py:price_of", "shop/prices.py:DISCOUNT"], "{ranked:?}");
    }

    #[test]
    fn what_a_docstring_says_a_definition_does_outweighs_the_words_of_its_body() {
        // more-itertools as it ships: `set_partitions`'s long docstring and
        // body speak of parts and order more often than `divide`'s one
        // sentence, "Divide the elements from *iterable* into *n* parts,
        // maintaining order.", which is what the question asks for.
        let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/projects/more-itertools");
        let mut map = CodeMap::new();
        map.refresh(&Workspace::open(&project).unwrap());
        let question = "Which function of more_itertools splits an iterable into a given number n of parts while \
keeping the items in their original order (the first part gets the first items, and so on)?";
        let ranked = top(&map, question);
        assert_eq!(ranked[0], "more_itertools/more.py:divide", "{ranked:?}");
    }

    #[test]
    fn what_a_named_definition_uses_comes_next() {
        let (_dir, map) = map_of(&SHOP);
        let ranked = top(&map, "Cart.total is too high");
        assert_eq!(ranked[0], "shop/cart.py:Cart.total");
        assert_eq!(ranked[1], "shop/prices.py:price_of", "{ranked:?}");
    }

    #[test]
    fn tests_and_type_declarations_are_aside() {
        for path in [
            "tests/test_more.py",
            "pkg/x_test.go",
            "src/a.test.js",
            "src/a.spec.ts",
            "typings/index.d.ts",
            "src/gguf/tests.rs",
        ] {
            assert!(is_aside(path), "{path}");
        }
        for path in ["more_itertools/more.py", "lib/command.js", "src/testing_utils_impl.rs", "contest.py"] {
            assert!(!is_aside(path), "{path}");
        }
    }

    #[test]
    fn a_rust_test_module_in_a_source_file_is_aside() {
        let lib = "pub fn clamp(x: i32) -> i32 {\n    x.min(100)\n}\n\n#[cfg(test)]\nmod test {\n    use super::*;\n\n    \
#[test]\n    fn clamp_above() {\n        assert_eq!(clamp(150), 100);\n    }\n}\n";
        let (_dir, map) = map_of(&[("src/lib.rs", lib)]);
        assert_eq!(top(&map, "test::clamp_above fails: clamp of 150"), ["src/lib.rs:clamp"]);
    }

    #[test]
    fn plurals_meet_their_singulars() {
        for (word, stemmed) in [("titles", "title"), ("urls", "url"), ("entries", "entry"), ("boxes", "box")] {
            assert_eq!(stem(word), stemmed);
        }
        for word in ["status", "class", "analysis", "is", "bus"] {
            assert_eq!(stem(word), word);
        }
        let (_dir, map) = map_of(&[
            (
                "shop/text.py",
                "def slugify(title):\n    \"\"\"The URL slug of a title: lowercase words.\"\"\"\n    return title\n",
            ),
            ("shop/catalog.py", "def find(sku):\n    \"\"\"The product with this SKU.\"\"\"\n    return sku\n"),
        ]);
        assert_eq!(
            top(&map, "Product page URLs keep the capital letters of product titles. Fix it.")[0],
            "shop/text.py:slugify"
        );
    }

    #[test]
    fn a_parameter_lifts_no_other_file_s_definition_that_shares_its_name() {
        // `discount` is a parameter of `Cart.total`, and the name of a
        // settings constant that nothing imports.
        let (_dir, map) = map_of(&[
            (
                "shop/cart.py",
                "from shop.prices import price_of\n\nclass Cart:\n    def total(self, discount):\n        return sum(price_of(i) for i in self.items) - discount\n",
            ),
            ("shop/prices.py", "def price_of(item):\n    return item.price\n"),
            ("admin/settings.py", "discount = 0.2\n"),
        ]);
        let ranked = top(&map, "Cart.total is too high");
        assert!(ranked.contains(&"shop/prices.py:price_of".to_string()), "{ranked:?}");
        assert!(!ranked.contains(&"admin/settings.py:discount".to_string()), "{ranked:?}");
        // In JavaScript, two files of one stem: what `./semver` resolves
        // to is reached, the command-line script of the same name is not.
        let (_dir, map) = map_of(&[
            (
                "classes/range.js",
                "const SemVer = require('./semver')\nclass Range {\n  test (version, options) {\n    return new SemVer(version, options).ok\n  }\n}\n",
            ),
            ("classes/semver.js", "class SemVer {\n  constructor (version, options) { this.ok = true }\n}\n"),
            ("bin/semver.js", "let options = {}\nconst main = () => options\n"),
        ]);
        let ranked = top(&map, "`Range.test` refuses a version it should accept");
        assert!(ranked.contains(&"classes/semver.js:SemVer".to_string()), "{ranked:?}");
        assert!(!ranked.contains(&"bin/semver.js:options".to_string()), "{ranked:?}");
    }

    #[test]
    fn a_name_most_definitions_use_is_plumbing_and_gains_little() {
        let mut billing = String::from("from util import log, round_cents\n\n");
        billing.push_str("def invoice_total(lines):\n    log('total')\n    return round_cents(sum(lines))\n\n");
        for name in ["refund", "credit_note", "reminder", "statement", "receipt", "dunning"] {
            billing.push_str(&format!("def {name}(x):\n    log('{name}')\n    return x\n\n"));
        }
        let (_dir, map) = map_of(&[
            ("util.py", "def log(message):\n    print(message)\n\ndef round_cents(x):\n    return round(x, 2)\n"),
            ("billing.py", &billing),
        ]);
        let ranked = top(&map, "`invoice_total` is off by a cent");
        assert_eq!(ranked[1], "util.py:round_cents", "{ranked:?}");
    }

    #[test]
    fn a_module_exported_whole_is_named_by_what_its_users_load_it_as() {
        // A long exported function, as argument parsers write theirs: the
        // request calls it by the name the tests give it.
        let body: String = (0..250).map(|i| format!("    var flag{i} = args[{i}];\n")).collect();
        let index = format!(
            "function isNumber (x) {{\n  return /^[0-9]+$/.test(x);\n}}\n\nmodule.exports = function (args, opts) {{\n{body}    return {{ _: [] }};\n}};\n"
        );
        let (_dir, map) = map_of(&[
            ("index.js", &index),
            (
                "test/short.js",
                "var parse = require('../');\nvar test = require('tape');\n\ntest('short', function (t) {\n  t.deepEqual(parse(['-b']), { b: true, _: [] });\n});\n",
            ),
            ("example/run.js", "const argv = require('../index.js')(process.argv.slice(2));\nconsole.log(argv);\n"),
        ]);
        assert_eq!(bound_names(&map, "index.js"), vec!["parse".to_string()]);
        let ranked = rank(&map, "`parse(['-k=a=b'])` gives `{ k: 'a' }`, I expected `{ k: 'a=b' }`", 3);
        let first = ranked.first().expect("a candidate");
        assert_eq!(
            (first.found.path, first.found.definition.name.as_str(), first.named),
            ("index.js", "exports", true)
        );
        // Unnamed, a definition that long is no candidate.
        let ranked = rank(&map, "short options with flags lose what follows the equals sign", 3);
        assert!(ranked.iter().all(|r| r.found.definition.name != "exports"), "{ranked:?}");
    }

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(subwords("parse_port"), ["parse", "port", "parse_port"]);
        assert_eq!(subwords("parseHTTPDate"), ["parse", "http", "date", "parsehttpdate"]);
        assert_eq!(subwords("to_id"), ["to_id"]);
        assert_eq!(subwords("total"), ["total"]);
    }
}
