//! What a request says must stay as it is ("…but leave the web server's
//! logging as it is"), and a change with its parts there undone: a small
//! model that sets `log_level = DEBUG` in every section of app.ini has the
//! one in `[web]` left out, as a careful reviewer would leave it out.

use std::sync::OnceLock;

use regex::Regex;
use similar::DiffOp;

use super::code_text::{declared_name, words};

/// The names of the parts of a file that `prompt` says stay as they are
/// and names nowhere else: `web` for "Scale the worker to 3; the web
/// service stays as it is". A name the prompt also asks to change ("Add
/// a retry to fetch, but leave fetch's signature as it is") is not kept.
pub(super) fn kept_names(prompt: &str) -> Vec<String> {
    static KEPT: OnceLock<Regex> = OnceLock::new();
    let kept = KEPT.get_or_init(|| {
        let same = r"(?:as it is|as is|unchanged|untouched|alone|the same)";
        Regex::new(&format!(
            r"(?i)\b(?:leave|keep)\s+(?P<a>[^,;.!?]{{1,60}}?)\s+{same}|(?P<b>[^,;.!?]{{1,60}}?)\s+(?:stays|stay|remains|remain|must stay|should stay)\s+{same}|\b(?:don't|do not|never)\s+(?:change|touch|modify|edit)\s+(?P<c>[^,;.!?]{{1,60}})"
        ))
        .expect("a valid pattern")
    });
    let mut names = Vec::new();
    let mut rest = prompt.to_string();
    for found in kept.captures_iter(prompt) {
        let phrase = ["a", "b", "c"].iter().find_map(|group| found.name(group)).map(|m| m.as_str()).unwrap_or("");
        rest = rest.replacen(found.get(0).map(|m| m.as_str()).unwrap_or(""), " ", 1);
        names.extend(
            words(phrase)
                .filter(|word| {
                    word.len() > 1 && !["the", "its", "their", "all"].contains(&word.to_lowercase().as_str())
                })
                .map(str::to_lowercase),
        );
    }
    let elsewhere: Vec<String> = words(&rest).map(str::to_lowercase).collect();
    names.retain(|name| !elsewhere.contains(name));
    names.dedup();
    names
}

/// The parts of the file at `path` that `text` holds, each its name and
/// the range of its lines: the sections of a settings file (`[web]`, a
/// top-level YAML key) or the top-level declarations of code.
fn parts(path: &str, text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let extension = path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
    let header = |line: &str| -> Option<String> {
        match extension.as_str() {
            "ini" | "cfg" | "conf" | "toml" | "properties" => {
                let name = line.trim().strip_prefix('[')?.strip_suffix(']')?;
                Some(name.trim_matches(['[', ']']).trim().to_string())
            }
            "yaml" | "yml" => {
                let starts = line.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"');
                let (key, _) = line.split_once(':').filter(|_| starts)?;
                Some(key.trim_matches('"').to_string())
            }
            _ => (!line.starts_with(char::is_whitespace)).then(|| declared_name(line)).flatten().map(str::to_string),
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<(usize, String)> =
        lines.iter().enumerate().filter_map(|(at, line)| Some((at, header(line)?))).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, (start, name))| {
            let end = starts.get(k + 1).map_or(lines.len(), |(next, _)| *next);
            (name.to_lowercase(), *start..end)
        })
        .collect()
}

/// `after`, the file at `path` once changed from `before`, with what it
/// changes in the parts named `kept` undone, and the names of the parts
/// whose changes were undone (none: `after` as it is).
pub(super) fn sparing(path: &str, before: &str, after: &str, kept: &[String]) -> (String, Vec<String>) {
    let kept_parts: Vec<(String, std::ops::Range<usize>)> =
        parts(path, before).into_iter().filter(|(name, _)| kept.contains(name)).collect();
    if kept_parts.is_empty() {
        return (after.to_string(), Vec::new());
    }
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    // A line added belongs to the part of the line it follows.
    let part_of = |line: usize| kept_parts.iter().find(|(_, lines)| lines.contains(&line)).map(|(name, _)| name);
    let mut spared: Vec<String> = Vec::new();
    let mut text = String::new();
    for op in ops {
        let (old_lines, new_lines) = (op.old_range(), op.new_range());
        let touched = match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Insert { old_index, .. } => old_index.checked_sub(1).and_then(part_of),
            _ => old_lines.clone().find_map(part_of),
        };
        match touched {
            Some(name) => {
                if !spared.contains(name) {
                    spared.push(name.clone());
                }
                text.extend(old[old_lines].iter().copied());
            }
            None => text.extend(new[new_lines].iter().copied()),
        }
    }
    (text, spared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_request_keeps_is_what_it_names_only_as_kept() {
        let prompt = "Turn on debug logging for the worker in app.ini, but leave the web server's logging as it is.";
        assert_eq!(kept_names(prompt), ["web", "server"]);
        let prompt = "Scale the worker to 3 replicas in the deployment config; the web service stays as it is.";
        assert_eq!(kept_names(prompt), ["web", "service"]);
        assert_eq!(kept_names("Add caching to load, and don't change parse."), ["parse"]);
        // Named as the place of the change too: not kept.
        let names = kept_names("Add a retry to fetch, but leave fetch's signature as it is.");
        assert!(!names.contains(&"fetch".to_string()), "{names:?}");
        assert!(kept_names("The distance argument stays in kilometres.").is_empty());
        assert!(kept_names("Fix the bug.").is_empty());
    }

    #[test]
    fn a_change_to_a_kept_section_is_undone_and_the_rest_kept() {
        let ini = "; Services.\n\n[web]\nport = 8080\nlog_level = INFO\n\n[worker]\nlog_level = INFO\n";
        let both = ini.replace("INFO", "DEBUG");
        let (text, spared) = sparing("app.ini", ini, &both, &["web".into(), "server".into()]);
        assert_eq!(text, "; Services.\n\n[web]\nport = 8080\nlog_level = INFO\n\n[worker]\nlog_level = DEBUG\n");
        assert_eq!(spared, ["web"]);
        // A line added at the end of a kept section is undone too.
        let added = ini.replace("log_level = INFO\n\n[worker]", "log_level = INFO\ndebug = true\n\n[worker]");
        assert_eq!(sparing("app.ini", ini, &added, &["web".into()]).1, ["web"]);
        // Nothing kept there: the change as it is.
        assert_eq!(sparing("app.ini", ini, &both, &["cache".into()]), (both.clone(), Vec::new()));
    }

    #[test]
    fn the_parts_of_yaml_and_code_are_their_top_level_keys_and_declarations() {
        let yaml = "# Deploy.\nweb:\n  replicas: 2\nworker:\n  replicas: 1\n";
        let (text, spared) = sparing("deploy/services.yaml", yaml, &yaml.replace("2", "3"), &["web".into()]);
        assert_eq!((text.as_str(), spared.len()), (yaml, 1));
        let code = "def parse(s):\n    return s\n\n\ndef load(p):\n    return p\n";
        let after = code.replace("return s", "return s.strip()").replace("return p", "return open(p).read()");
        let (text, spared) = sparing("io.py", code, &after, &["parse".into()]);
        assert_eq!(text, code.replace("return p", "return open(p).read()"));
        assert_eq!(spared, ["parse"]);
    }
}
