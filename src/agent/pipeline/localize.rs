//! Localization: which definitions of the code map a request is about,
//! ranked in three steps. Exact names first (a definition the prompt names,
//! `Invoice.total`, `semver.inc`, `parse_port(`); then a lexical ranking,
//! BM25 over each definition's name, path, signature, docstring, the names
//! its body uses and the words of its strings and comments; then the
//! reference graph, which lifts what the best-ranked definitions use (the
//! `amount` an invoice's `total` sums). Nothing here reads the prompt for
//! keywords: every word counts by how rare it is in the project.

use std::collections::HashMap;

use crate::codemap::{CodeMap, DefKind, Found};

/// Definitions longer than this are no candidates for a change: a small
/// model cannot rewrite them whole. Their methods still are.
pub const MAX_CANDIDATE_LINES: usize = 200;

/// BM25's usual constants.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How much a definition's own name weighs against a word of its body.
const NAME_WEIGHT: usize = 3;
/// The score a definition named exactly in the prompt gets, over the lexical one.
const NAMED: f32 = 12.0;
/// Of a ranked definition's score, the share passed to each definition it uses.
const SPREAD: f32 = 0.5;
/// How many of the best-ranked definitions pass score along the graph.
const SPREADERS: usize = 10;

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
    let query = Query::of(prompt);
    let all: Vec<Found<'m>> = map
        .definitions()
        .filter(|f| f.definition.lines.1 + 1 - f.definition.lines.0 <= MAX_CANDIDATE_LINES)
        .filter(|f| f.definition.kind != DefKind::Module)
        .collect();
    if all.is_empty() || query.terms.is_empty() {
        return Vec::new();
    }
    let documents: Vec<Vec<String>> = all.iter().map(document).collect();
    let lexical = bm25(&documents, &query.terms);
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
            let named = query.names(found);
            let exact = if named { NAMED / defined[found.definition.name.as_str()] as f32 } else { 0.0 };
            Ranked { found: *found, score: lexical + exact, named }
        })
        .collect();
    spread_along_uses(&mut ranked, &defined);
    ranked.retain(|r| r.score > 0.0);
    ranked.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            (a.found.path, a.found.definition.range.start).cmp(&(b.found.path, b.found.definition.range.start))
        })
    });
    ranked.truncate(limit);
    ranked
}

/// One step of the reference graph: each of the best-ranked definitions
/// passes a share of its score to the definitions named as the names it uses.
fn spread_along_uses(ranked: &mut [Ranked<'_>], defined: &HashMap<&str, usize>) {
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by(|a, b| ranked[*b].score.total_cmp(&ranked[*a].score));
    let mut gains: HashMap<&str, f32> = HashMap::new();
    for &i in order.iter().take(SPREADERS) {
        let spreader = &ranked[i];
        if spreader.score <= 0.0 {
            break;
        }
        for used in &spreader.found.definition.uses {
            if let Some(count) = defined.get(used.as_str()) {
                *gains.entry(used.as_str()).or_default() += spreader.score * SPREAD / *count as f32;
            }
        }
    }
    for r in ranked.iter_mut() {
        if let Some(gain) = gains.get(r.found.definition.name.as_str()) {
            r.score += gain;
        }
    }
}

/// What the prompt says, as terms to search.
struct Query {
    /// Lowercase subwords (`parse_port` gives `parse`, `port`, `parse_port`).
    terms: Vec<String>,
    /// Identifiers as written; of a dotted name, its last part (the rest
    /// qualifies it: `Cart` in `Cart.total` names no target).
    identifiers: Vec<String>,
    /// Dotted names as written (`pkg.func`, `Invoice.total`).
    dotted: Vec<String>,
}

impl Query {
    fn of(prompt: &str) -> Query {
        let mut identifiers = Vec::new();
        let mut words = Vec::new();
        let mut dotted = Vec::new();
        for token in prompt.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            let token = token.trim_matches('.');
            if token.is_empty() {
                continue;
            }
            let parts: Vec<&str> = token.split('.').filter(|p| !p.is_empty()).collect();
            if parts.len() > 1 && parts.iter().all(|p| is_identifier(p)) {
                dotted.push(token.to_string());
            }
            words.extend(parts.iter().filter(|p| is_identifier(p)).map(|p| p.to_string()));
            identifiers.extend(parts.last().filter(|p| is_identifier(p)).map(|p| p.to_string()));
        }
        let mut terms: Vec<String> = words.iter().flat_map(|i| subwords(i)).collect();
        terms.sort();
        terms.dedup();
        Query { terms, identifiers, dotted }
    }

    /// Whether the prompt names this definition: its qualified name, or a
    /// dotted name ending in it, or its own name when that is a code name
    /// (`in_stock`, `parseDate`) or written as a call (`total(`).
    fn names(&self, found: &Found<'_>) -> bool {
        let definition = found.definition;
        let qualified = definition.qualified(found.file.language).replace("::", ".");
        if self.dotted.iter().any(|d| *d == qualified || d.ends_with(&format!(".{}", definition.name))) {
            return true;
        }
        let name = definition.name.as_str();
        let code_like = name.contains('_') || name.chars().skip(1).any(char::is_uppercase) || name.len() > 3;
        code_like && self.identifiers.iter().any(|i| i == name)
    }
}

fn is_identifier(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

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
    parts.retain(|p| p.chars().count() >= 2);
    let whole = identifier.to_lowercase();
    if parts.len() != 1 && whole.chars().count() >= 2 {
        parts.push(whole);
    }
    parts
}

/// A definition as the lexical ranking reads it.
fn document(found: &Found<'_>) -> Vec<String> {
    let definition = found.definition;
    let mut words = Vec::new();
    for _ in 0..NAME_WEIGHT {
        words.extend(subwords(&definition.name));
    }
    if let Some(container) = &definition.container {
        words.extend(subwords(container));
    }
    for part in found.path.split(['/', '.', '-']) {
        words.extend(subwords(part));
    }
    for name in definition.signature.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        words.extend(subwords(name));
    }
    if let Some(doc) = &definition.doc {
        words.extend(doc.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 2).map(str::to_lowercase));
    }
    for used in &definition.uses {
        words.extend(subwords(used));
    }
    words.extend(definition.words.iter().cloned());
    words
}

/// BM25 of each document for the query's terms.
fn bm25(documents: &[Vec<String>], terms: &[String]) -> Vec<f32> {
    let n = documents.len() as f32;
    let average = documents.iter().map(Vec::len).sum::<usize>() as f32 / n.max(1.0);
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for document in documents {
        let mut seen: Vec<&str> =
            document.iter().map(String::as_str).filter(|w| terms.iter().any(|t| t == w)).collect();
        seen.sort();
        seen.dedup();
        for word in seen {
            *frequency.entry(word).or_default() += 1;
        }
    }
    documents
        .iter()
        .map(|document| {
            let length = document.len() as f32;
            terms
                .iter()
                .filter_map(|term| {
                    let df = *frequency.get(term.as_str())? as f32;
                    let tf = document.iter().filter(|w| *w == term).count() as f32;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    Some(idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average.max(1.0))))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;

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
    fn words_of_docstrings_and_bodies_rank_a_definition_never_named() {
        let (_dir, map) = map_of(&SHOP);
        assert_eq!(top(&map, "The sales report comes out as one line")[0], "shop/report.py:render");
        assert_eq!(top(&map, "What discount is applied to prices?")[0], "shop/prices.py:DISCOUNT");
    }

    #[test]
    fn what_a_named_definition_uses_comes_next() {
        let (_dir, map) = map_of(&SHOP);
        let ranked = top(&map, "Cart.total is too high");
        assert_eq!(ranked[0], "shop/cart.py:Cart.total");
        assert_eq!(ranked[1], "shop/prices.py:price_of", "{ranked:?}");
    }

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(subwords("parse_port"), ["parse", "port", "parse_port"]);
        assert_eq!(subwords("parseHTTPDate"), ["parse", "http", "date", "parsehttpdate"]);
        assert_eq!(subwords("total"), ["total"]);
    }
}
