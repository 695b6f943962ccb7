//! Edit: replace an exact string in a file.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Retry, ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, describe_outcome, number_lines, plural,
};
use crate::workspace::edits::{EditOutcome, FileChange};

pub struct Edit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Path of the file, relative to the workspace root.
    pub(super) file_path: String,
    /// The exact text to replace, including indentation. It must occur exactly once unless replace_all is set.
    pub(super) old_string: String,
    /// The text to put in its place.
    pub(super) new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub(super) replace_all: bool,
}

/// Applies one replacement to `text`, or says precisely why it cannot.
pub(super) fn replace(text: &str, edit: &EditInput, file: &str) -> Result<String, String> {
    if edit.old_string.is_empty() {
        return Err(format!("old_string is empty; to create {file} use Write"));
    }
    if edit.old_string == edit.new_string {
        return Err("old_string and new_string are the same; nothing would change".to_string());
    }
    let old = edit.old_string.as_str();
    let Some(first) = text.find(old) else {
        if let Some(meant) = in_the_files_quotes(text, edit)
            .or_else(|| in_the_files_indentation(text, edit))
            .or_else(|| in_the_files_spacing(text, edit))
        {
            return replace(text, &meant, file);
        }
        return Err(format!(
            "old_string was not found in {file}; read the file and copy the text exactly, including whitespace"
        ));
    };
    if edit.replace_all {
        return Ok(text.replace(old, &edit.new_string));
    }
    // One search for the common case (unique): stop at the second match.
    if text[first + old.len()..].contains(old) {
        let count = text.matches(old).count();
        return Err(format!(
            "old_string occurs {count} times in {file}; include more surrounding text to make it unique, or set \
             replace_all. The lines that hold it:\n{}{}",
            lines_holding(text, old),
            one_line_calls(text, edit, file)
        ));
    }
    if let Some(meant) = kept_line_below(text, first, edit) {
        return Err(format!(
            "nothing was changed: new_string keeps old_string and adds lines after it, but the next line of {file} \
             already sets the same thing, so both would stay:\n{}\nTo change that line, make the call with it in \
             old_string:\n{}",
            meant.clash,
            edit_call_text(file, &meant.old_string, &edit.new_string)
        ));
    }
    let mut out = String::with_capacity(text.len() - old.len() + edit.new_string.len());
    out.push_str(&text[..first]);
    out.push_str(&edit.new_string);
    out.push_str(&text[first + old.len()..]);
    Ok(out)
}

/// The edit with its quotes as the file writes them, when old_string is in
/// the file once but for `'` against `"`: models trained on one quote style
/// write it from memory (`LANG = 'fr'` for the file's `LANG = "fr"`), and
/// told only that old_string was not found, they repeat it unchanged.
/// Every difference must go the same way, and new_string's quotes of that
/// kind change with them.
fn in_the_files_quotes(text: &str, edit: &EditInput) -> Option<EditInput> {
    if !edit.old_string.contains(['\'', '"']) {
        return None;
    }
    let old = unquoted(&edit.old_string);
    let haystack = unquoted(text);
    let at = haystack.find(&old)?;
    if haystack[at + old.len()..].contains(&old) {
        return None;
    }
    let in_file = &text[at..at + old.len()];
    let mut swaps = edit.old_string.bytes().zip(in_file.bytes()).filter(|(ours, theirs)| ours != theirs);
    let (ours, theirs) = swaps.next()?;
    if swaps.any(|swap| swap != (ours, theirs)) {
        return None;
    }
    let (ours, theirs) = (ours as char, theirs as char);
    Some(EditInput {
        file_path: edit.file_path.clone(),
        old_string: in_file.to_string(),
        new_string: edit.new_string.replace(ours, &theirs.to_string()),
        replace_all: edit.replace_all,
    })
}

/// `s` with one quote character for both: it keeps every byte offset.
fn unquoted(s: &str) -> String {
    s.replace('\'', "\"")
}

/// The edit with old_string as the file indents it, when its lines are
/// lines of the file but for the whitespace around them (a method copied
/// without its class's indentation, tabs for spaces, a trailing space
/// dropped), in one place only. new_string's lines move by the same
/// indentation, so the change lands at the file's depth. Models lose
/// leading whitespace when they copy from numbered lines.
fn in_the_files_indentation(text: &str, edit: &EditInput) -> Option<EditInput> {
    let old_lines: Vec<&str> = edit.old_string.trim_end_matches('\n').split('\n').collect();
    let first = old_lines.iter().position(|line| !line.trim().is_empty())?;
    let file_lines: Vec<&str> = text.split('\n').collect();
    let count = old_lines.len();
    let mut windows = (0..(file_lines.len() + 1).saturating_sub(count))
        .filter(|&start| (0..count).all(|i| file_lines[start + i].trim() == old_lines[i].trim()));
    let start = windows.next()?;
    if windows.next().is_some() {
        return None;
    }
    let begin: usize = file_lines[..start].iter().map(|line| line.len() + 1).sum();
    let mut end = begin + file_lines[start..start + count].iter().map(|line| line.len() + 1).sum::<usize>() - 1;
    if text[..end].ends_with('\r') {
        end -= 1;
    }
    if edit.old_string.ends_with('\n') && text[end..].starts_with('\n') {
        end += 1;
    }
    // A line of new_string indented as its old_string line takes the file's
    // line's indentation (a flattened copy keeps no depth to shift); any
    // other line shifts as the first line of old_string did.
    let new_string = edit
        .new_string
        .split('\n')
        .enumerate()
        .map(|(i, line)| {
            let (ours, theirs) = match old_lines.get(i) {
                Some(old) if indent(old) == indent(line) => (indent(old), indent(file_lines[start + i])),
                _ => (indent(old_lines[first]), indent(file_lines[start + first])),
            };
            match line.strip_prefix(ours) {
                Some(rest) if !line.trim().is_empty() => format!("{theirs}{rest}"),
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some(EditInput {
        file_path: edit.file_path.clone(),
        old_string: text[begin..end].to_string(),
        new_string,
        replace_all: edit.replace_all,
    })
}

/// The edit with old_string as the file lays it out, when it is the file's
/// text in one place but for the amount and kind of whitespace between its
/// words, line breaks included: small models join a function's lines into
/// one (`def area(w, h): return w + h` for a two-line function). Only the
/// part of new_string that differs from old_string is put in; the file's
/// layout around it stays.
fn in_the_files_spacing(text: &str, edit: &EditInput) -> Option<EditInput> {
    let old = edit.old_string.trim();
    let (lead, trail) = edit.old_string.split_once(old)?;
    let new = edit.new_string.strip_prefix(lead).unwrap_or(&edit.new_string);
    let new = new.strip_suffix(trail).unwrap_or(new);
    let (old_squeezed, old_at) = squeezed(old);
    let (text_squeezed, text_at) = squeezed(text);
    if old_squeezed.is_empty() {
        return None;
    }
    let at = text_squeezed.find(&old_squeezed)?;
    let after_first = at + text_squeezed[at..].chars().next()?.len_utf8();
    if text_squeezed[after_first..].contains(&old_squeezed) {
        return None;
    }
    // The file's bytes for the squeezed byte `i` of old_string.
    let in_file = |i: usize| text_at[at + i];
    let begin = in_file(0);
    let end = in_file(old_squeezed.len() - 1) + 1;
    // What changes, trimmed to whole words at both ends, so the whitespace
    // around it is the file's.
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while prefix > 0 && !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let prefix = old[..prefix].trim_end().len();
    let longest_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old.bytes().rev().zip(new.bytes().rev()).take(longest_suffix).take_while(|(a, b)| a == b).count();
    while suffix > 0 && !old.is_char_boundary(old.len() - suffix) {
        suffix -= 1;
    }
    let suffix = old[old.len() - suffix..].trim_start().len();
    // old_string's byte offsets as squeezed offsets: both ends fall on
    // non-whitespace, which squeezing keeps one for one.
    let squeezed_offset = |offset: usize| old_at.iter().position(|&o| o == offset);
    let change_begin = if prefix == 0 { begin } else { in_file(squeezed_offset(prefix - 1)?) + 1 };
    let change_end = if suffix == 0 { end } else { in_file(squeezed_offset(old.len() - suffix)?) };
    if change_begin > change_end {
        return None;
    }
    let new_string =
        format!("{}{}{}", &text[begin..change_begin], &new[prefix..new.len() - suffix], &text[change_end..end]);
    Some(EditInput {
        file_path: edit.file_path.clone(),
        old_string: text[begin..end].to_string(),
        new_string,
        replace_all: edit.replace_all,
    })
}

/// `s` with each run of whitespace as one space, and for each byte of that
/// the offset in `s` it stands for.
fn squeezed(s: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(s.len());
    let mut offsets = Vec::with_capacity(s.len());
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                offsets.push(i);
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.push(c);
        offsets.extend(i..i + c.len_utf8());
    }
    (out, offsets)
}

/// A line's indentation.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// An insertion that meant a replacement: what old_string should have been.
struct MeantReplacement {
    old_string: String,
    /// The added line and the line it would sit above, for the error.
    clash: String,
}

/// Small models use old_string as an anchor: they copy a line, and put in
/// new_string that line and the changed line below it (`# Timeout` ->
/// `# Timeout\nTIMEOUT = 60`), leaving the old `TIMEOUT = 30` in place. An
/// added line that sets what the line right below already sets (the same
/// assignment target, or a second `return`) is such a case.
fn kept_line_below(text: &str, first: usize, edit: &EditInput) -> Option<MeantReplacement> {
    let old = edit.old_string.as_str();
    let added = edit.new_string.strip_prefix(old)?;
    let end = first + old.len();
    let rest = &text[end..];
    // The anchor must end at a line end, and the addition start a new line.
    let (added, rest, gap) =
        if old.ends_with('\n') { (added, rest, 0) } else { (added.strip_prefix('\n')?, rest.strip_prefix('\n')?, 1) };
    let replaced = added
        .lines()
        .zip(rest.lines())
        .take_while(|(new, below)| new != below && same_target(new, below).is_some())
        .count();
    if replaced == 0 {
        return None;
    }
    let span: usize = rest.lines().take(replaced).map(|line| line.len() + 1).sum::<usize>() - 1;
    let mut old_string = text[first..end + gap + span].to_string();
    if edit.new_string.ends_with('\n') && rest[span..].starts_with('\n') {
        old_string.push('\n');
    }
    let (new, below) = added.lines().zip(rest.lines()).next()?;
    Some(MeantReplacement { old_string, clash: format!("  {new}\n  {below}") })
}

/// What a line sets, when it is an assignment or a return: `TIMEOUT` for
/// `TIMEOUT = 30`, `let x` for `let x = 1;`.
fn same_target<'a>(a: &'a str, b: &str) -> Option<&'a str> {
    fn target(line: &str) -> Option<&str> {
        let line = line.trim();
        if let Some((left, _)) = line.split_once(" = ") {
            return Some(left.trim_end()).filter(|left| !left.is_empty());
        }
        let word = line.split(|c: char| !c.is_alphanumeric() && c != '_').next()?;
        (word == "return").then_some(word)
    }
    let target_a = target(a)?;
    (Some(target_a) == target(b)).then_some(target_a)
}

#[async_trait]
impl TypedTool for Edit {
    type Input = EditInput;
    const NAME: &'static str = "Edit";
    const DESCRIPTION: &'static str = "Replace an exact string in a file. old_string must match the file exactly (whitespace included) and occur once, unless replace_all is true.";
    const KIND: ToolKind = ToolKind::Edit;
    const SET: ToolSet = ToolSet::Edit;

    fn paths(input: &EditInput) -> Vec<String> {
        vec![input.file_path.clone()]
    }

    async fn call(&self, input: EditInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let path = ctx.workspace.resolve(&input.file_path)?;
        let before = ctx.workspace.read_text(&path)?;
        if let Some(made) = already_made(&before, &input, path.display()) {
            return Ok(ToolOutput::already_done(made, format!("{} already changed", path.display())));
        }
        // Small models follow a change with an edit that restates its result
        // (old_string and new_string both the new line): the change is done.
        if input.old_string == input.new_string && before.contains(&input.old_string) && ctx.state.changed_last(&path) {
            return Ok(ToolOutput::already_done(
                format!(
                    "nothing was changed: old_string and new_string are the same, and {0} already holds it. Your \
                     change to {0} stands; if the task is done, say so.",
                    path.display()
                ),
                format!("{} unchanged", path.display()),
            ));
        }
        let after = replace(&before, &input, path.display());
        ctx.state.check_read(
            &path,
            &before,
            match &after {
                Ok(_) => Retry::SameCall,
                Err(problem) => Retry::CopyOldString(problem),
            },
        )?;
        let after = after.map_err(ToolError::Invalid)?;
        if let Some(refused) = ctx.state.refuse_undo(&path, &before, &after) {
            return Ok(refused);
        }
        let display = path.display().to_string();
        let snippet = changed_lines(&before, &after);
        let outcome =
            ctx.edits.propose(FileChange::Write { path: path.clone(), before: Some(before.clone()), after }).await;
        ctx.state.note_changed(ctx.workspace, &path, Some(&before));
        let mut output = describe_outcome(&outcome, "edited", &display)?;
        if matches!(outcome, EditOutcome::Applied) {
            // The model checks its change against what the file now says,
            // not against what it meant to write.
            output.output.push_str(&format!("; the changed lines now read:\n{snippet}"));
            output.output.push_str(&still_named(ctx, &input));
        }
        Ok(output)
    }
}

/// Said of an Edit whose change the file already shows: old_string gone,
/// new_string there. Small models make a change again after it succeeded;
/// told "old_string was not found", they undo it or go round in circles.
fn already_made(text: &str, edit: &EditInput, file: &str) -> Option<String> {
    if edit.new_string.trim().is_empty() || text.contains(edit.old_string.as_str()) {
        return None;
    }
    // Quotes and spacing aside, as `replace` makes an edit: one made in the
    // file's quote style or layout is made too.
    let loosely = |s: &str| squeezed(&unquoted(s));
    let (text_loose, offsets) = loosely(text);
    if text_loose.contains(&loosely(edit.old_string.trim()).0) {
        return None;
    }
    let new = loosely(edit.new_string.trim()).0;
    let at = text_loose.find(&new)?;
    let (begin, end) = (offsets[at], offsets[at + new.len() - 1]);
    let first = text[..begin].matches('\n').count();
    let count = text[begin..end].matches('\n').count() + 1;
    let lines = text.lines().enumerate().skip(first).take(count.min(MAX_LISTED)).map(|(i, line)| (i + 1, line));
    Some(format!(
        "{file} already reads as this edit would leave it, and old_string is not in it: the change is made \
         already, and nothing was changed. The lines:\n{}",
        number_lines(lines)
    ))
}

/// A name a rename is about: a word of three characters or more (`i` to
/// `j` is too likely part of something else).
fn is_renamed_name(s: &str) -> bool {
    s.len() >= 3 && crate::text::is_identifier(s)
}

/// Lines still naming a renamed identifier, listed after the edit.
const MAX_STILL_NAMED: usize = 10;

/// After an edit that renames one identifier to another (`calc_total` to
/// `compute_total`): where the old name is still used in the workspace, as
/// Grep would list it. A model renaming "everywhere" otherwise stops at the
/// first file, the one it was looking at.
fn still_named(ctx: &ToolContext<'_>, edit: &EditInput) -> String {
    if !is_renamed_name(&edit.old_string) || !is_renamed_name(&edit.new_string) {
        return String::new();
    }
    let Ok(matcher) =
        super::grep::line_matcher(grep_regex::RegexMatcherBuilder::new().word(true), &regex::escape(&edit.old_string))
    else {
        return String::new();
    };
    let found = super::grep::search(ctx, ctx.workspace.root(), &matcher, None, super::grep::Hits::Every);
    let lines: Vec<String> = found
        .iter()
        .flat_map(|(rel, hits)| hits.iter().map(move |(number, text)| format!("{rel}:{number}:{}", text.trim_end())))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let more = match lines.len() > MAX_STILL_NAMED {
        true => format!("\n({} more)", lines.len() - MAX_STILL_NAMED),
        false => String::new(),
    };
    // The calls that finish the rename, where replace_all would touch the
    // name alone: a small model told where a name is left stops there. A
    // file all of whose uses are listed counts as read: the model has seen
    // every line the call would change.
    let mut listed = 0;
    let mut calls: Vec<String> = Vec::new();
    for (rel, hits) in &found {
        listed += hits.len();
        if calls.len() == MAX_SUGGESTED {
            break;
        }
        let Ok(path) = ctx.workspace.resolve(rel) else { continue };
        let Ok(text) = ctx.workspace.read_text(&path) else { continue };
        if only_whole_words(&text, &edit.old_string) {
            if listed <= MAX_STILL_NAMED {
                ctx.state.note_read(&path, &text);
            }
            calls.push(rename_call(rel, edit));
        }
    }
    let calls = match calls.as_slice() {
        [] => String::new(),
        calls => format!("To rename it there too:\n{}\n", calls.join("\n")),
    };
    format!(
        "\n`{}` is still used in {}:\n{}{more}\n{calls}",
        edit.old_string,
        plural(found.len(), "file"),
        lines[..lines.len().min(MAX_STILL_NAMED)].join("\n")
    )
}

/// Occurrences of a repeated old_string listed in the error.
const MAX_LISTED: usize = 10;

/// The numbered lines on which `needle` starts, so that a model can pick one.
fn lines_holding(text: &str, needle: &str) -> String {
    let starts: Vec<usize> = text.match_indices(needle).map(|(at, _)| text[..at].matches('\n').count()).collect();
    let lines: Vec<&str> = text.lines().collect();
    let mut numbered: Vec<usize> = starts;
    numbered.dedup();
    let shown = numbered.iter().take(MAX_LISTED).filter_map(|&i| lines.get(i).map(|line| (i + 1, *line)));
    number_lines(shown)
}

/// Calls suggested for a repeated old_string.
const MAX_SUGGESTED: usize = 3;

/// An Edit call as errors suggest it, in the `Name {json}` form the agent
/// loop recognises when a model copies it out as text.
fn edit_call_text(file: &str, old_string: &str, new_string: &str) -> String {
    format!(
        "Edit {{\"file_path\": {}, \"old_string\": {}, \"new_string\": {}}}",
        serde_json::Value::from(file),
        serde_json::Value::from(old_string),
        serde_json::Value::from(new_string)
    )
}

/// Whether every occurrence of `name` in `text` is the whole name (not
/// `calc_totals` for `calc_total`), so that replace_all renames only it.
fn only_whole_words(text: &str, name: &str) -> bool {
    regex::Regex::new(&format!(r"\b{}\b", regex::escape(name)))
        .is_ok_and(|word| word.find_iter(text).count() == text.matches(name).count())
}

/// The Edit call that renames every occurrence of the edit's old name in `file`.
fn rename_call(file: &str, edit: &EditInput) -> String {
    format!(
        "Edit {{\"file_path\": {}, \"old_string\": {}, \"new_string\": {}, \"replace_all\": true}}",
        serde_json::Value::from(file),
        serde_json::Value::from(edit.old_string.as_str()),
        serde_json::Value::from(edit.new_string.as_str())
    )
}

/// For a one-line old_string found on several lines: the exact call that
/// changes each line alone (its whole line as old_string, when unique). A
/// small model told "include more text" explains that to the user instead;
/// given the call, it makes it.
fn one_line_calls(text: &str, edit: &EditInput, file: &str) -> String {
    if edit.old_string.contains('\n') || edit.new_string.contains('\n') {
        return String::new();
    }
    // Renaming a name: every use of it, most likely; offered only where
    // each occurrence is the whole name (not `calc_totals` for `calc_total`).
    if is_renamed_name(&edit.old_string)
        && is_renamed_name(&edit.new_string)
        && only_whole_words(text, &edit.old_string)
    {
        return format!("To rename every one: {}", rename_call(file, edit));
    }
    let calls: Vec<String> = text
        .lines()
        .filter(|line| line.contains(edit.old_string.as_str()) && text.matches(*line).count() == 1)
        .take(MAX_SUGGESTED)
        .map(|line| edit_call_text(file, line, &line.replacen(edit.old_string.as_str(), &edit.new_string, 1)))
        .collect();
    if calls.is_empty() {
        return String::new();
    }
    format!("To change one line only, make the call with its whole line:\n{}", calls.join("\n"))
}

/// Lines shown around a change.
const CONTEXT_LINES: usize = 2;
/// Changed lines shown at most.
const MAX_SHOWN: usize = 30;

/// `after`'s lines where it differs from `before`, with a little context, numbered.
fn changed_lines(before: &str, after: &str) -> String {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail =
        old.iter().rev().zip(new.iter().rev()).take_while(|(a, b)| a == b).count().min(old.len().min(new.len()) - head);
    let start = head.saturating_sub(CONTEXT_LINES);
    let end = (new.len() - tail + CONTEXT_LINES).min(new.len()).min(start + MAX_SHOWN);
    if start >= end {
        return "(the file is now empty)\n".to_string();
    }
    number_lines((start..end).map(|i| (i + 1, new[i])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changed_lines_are_shown_with_their_neighbours() {
        let before = "a\nb\nc\nd\ne\nf\ng\n";
        assert_eq!(
            changed_lines(before, "a\nb\nc\nD\ne\nf\ng\n"),
            "     2\tb\n     3\tc\n     4\tD\n     5\te\n     6\tf\n"
        );
        assert_eq!(changed_lines("x\n", "import y\nx\n"), "     1\timport y\n     2\tx\n");
        assert_eq!(changed_lines("x\ny\n", "x\n"), "     1\tx\n", "a deleted last line shows what precedes it");
        assert_eq!(changed_lines("x\n", ""), "(the file is now empty)\n");
    }

    fn edit(old: &str, new: &str) -> EditInput {
        EditInput { file_path: "f".into(), old_string: old.into(), new_string: new.into(), replace_all: false }
    }

    #[test]
    fn an_anchor_insertion_that_leaves_the_old_line_below_is_refused_with_the_meant_call() {
        let settings = "# Seconds to wait.\nTIMEOUT = 30\nRETRIES = 3\n";
        let error =
            replace(settings, &edit("# Seconds to wait.", "# Seconds to wait.\nTIMEOUT = 60"), "s.py").unwrap_err();
        assert!(error.contains("  TIMEOUT = 60\n  TIMEOUT = 30"), "{error}");
        assert!(
            error.contains(
                r##"Edit {"file_path": "s.py", "old_string": "# Seconds to wait.\nTIMEOUT = 30", "new_string": "# Seconds to wait.\nTIMEOUT = 60"}"##
            ),
            "{error}"
        );
        // The call it names does what was meant.
        let meant = edit("# Seconds to wait.\nTIMEOUT = 30", "# Seconds to wait.\nTIMEOUT = 60");
        assert_eq!(replace(settings, &meant, "s.py").unwrap(), "# Seconds to wait.\nTIMEOUT = 60\nRETRIES = 3\n");

        let greet = "def greet(name):\n    return \"Helo, \" + name\n";
        let error =
            replace(greet, &edit("def greet(name):\n", "def greet(name):\n    return f\"Hello, {name}\"\n"), "g.py")
                .unwrap_err();
        assert!(error.contains(r#""old_string": "def greet(name):\n    return \"Helo, \" + name\n""#), "{error}");
    }

    #[test]
    fn a_repeated_name_gets_the_call_that_renames_every_one_unless_it_is_part_of_another() {
        let main = "from cart import calc_total\nprint(calc_total([1]))\n";
        let error = replace(main, &edit("calc_total", "compute_total"), "main.py").unwrap_err();
        assert!(error.contains(r#""new_string": "compute_total", "replace_all": true}"#), "{error}");
        let longer = format!("{main}print(calc_totals)\n");
        let error = replace(&longer, &edit("calc_total", "compute_total"), "main.py").unwrap_err();
        assert!(!error.contains("replace_all\": true"), "{error}");
        assert!(error.contains(r#""old_string": "print(calc_total([1]))""#), "{error}");
    }

    #[test]
    fn an_edit_already_made_is_said_to_be_made() {
        let settings = "# Wait.\nTIMEOUT = 60\nRETRIES = 3\n";
        let made = already_made(settings, &edit("TIMEOUT = 30", "TIMEOUT = 60"), "s.py").unwrap();
        assert!(made.starts_with("s.py already reads as this edit would leave it"), "{made}");
        assert!(made.ends_with("     2\tTIMEOUT = 60\n"), "{made}");
        assert_eq!(already_made(settings, &edit("TIMEOUT = 60", "TIMEOUT = 90"), "s.py"), None);
        assert_eq!(already_made(settings, &edit("TIMEOUT = 30", "TIMEOUT = 90"), "s.py"), None);
        // Made in the file's quote style, by an edit in the other one.
        let app = "LANG = \"en\"\n";
        let made = already_made(app, &edit("LANG = 'fr'", "LANG = 'en'"), "app.py").unwrap();
        assert!(made.ends_with("     1\tLANG = \"en\"\n"), "{made}");
        assert_eq!(already_made("LANG = \"fr\"\nOTHER = 'en'\n", &edit("LANG = 'fr'", "'en'"), "app.py"), None);
        // Made in the file's layout, by an edit that joined its lines.
        let geometry = "def area(w, h):\n    return w * h\n";
        let made =
            already_made(geometry, &edit("def area(w, h): return w + h", "def area(w, h): return w * h"), "g.py");
        assert!(made.unwrap().ends_with("     1\tdef area(w, h):\n     2\t    return w * h\n"));
    }

    #[test]
    fn a_repeated_word_gets_the_call_for_each_line() {
        let app = "LANG = 'fr'\n\ndef hello(language=LANG):\n    return {'en': 'Hello', 'fr': 'Bonjour'}[language]\n";
        let error = replace(app, &edit("fr", "en"), "app.py").unwrap_err();
        assert!(
            error.contains(r#"Edit {"file_path": "app.py", "old_string": "LANG = 'fr'", "new_string": "LANG = 'en'"}"#),
            "{error}"
        );
        assert!(error.contains(r#""new_string": "    return {'en': 'Hello', 'en': 'Bonjour'}[language]"}"#), "{error}");
    }

    #[test]
    fn an_edit_in_the_other_quote_style_is_made_in_the_files() {
        let app = "DEFAULT_LANGUAGE = \"fr\"\nNAMES = {'fr': 'French'}\n";
        assert_eq!(
            replace(app, &edit("DEFAULT_LANGUAGE = 'fr'", "DEFAULT_LANGUAGE = 'en'"), "app.py").unwrap(),
            "DEFAULT_LANGUAGE = \"en\"\nNAMES = {'fr': 'French'}\n"
        );
        assert_eq!(
            replace(app, &edit("NAMES = {\"fr\": \"French\"}", "NAMES = {\"en\": \"English\"}"), "app.py").unwrap(),
            "DEFAULT_LANGUAGE = \"fr\"\nNAMES = {'en': 'English'}\n"
        );
        // Quotes that differ both ways, or text that differs in more than
        // quotes, are not guessed at.
        let mixed = "x = \"a\" + 'b'\n";
        assert!(replace(mixed, &edit("x = 'a' + \"b\"", "x = 1"), "m.py").is_err());
        assert!(replace(app, &edit("DEFAULT_LANGUAGE = 'de'", "DEFAULT_LANGUAGE = 'en'"), "app.py").is_err());
        let twice = "a = \"x\"\nb = \"x\"\n";
        assert!(replace(twice, &edit("'x'", "'y'"), "t.py").unwrap_err().contains("was not found"));
    }

    #[test]
    fn an_edit_that_joined_the_files_lines_is_made_in_the_files_layout() {
        let geometry = "def area(width, height):\n    return width + height\n\n\ndef perimeter(width, height):\n    return 2 * (width + height)\n";
        let joined =
            edit("def area(width, height): return width + height", "def area(width, height): return width * height");
        assert_eq!(
            replace(geometry, &joined, "geometry.py").unwrap(),
            "def area(width, height):\n    return width * height\n\n\ndef perimeter(width, height):\n    return 2 * (width + height)\n",
            "only the operator changed; the file's line break and indentation are kept"
        );
        let spaced = "total = price  *  count\n";
        assert_eq!(
            replace(spaced, &edit("total = price * count", "total = price * count * 2"), "t.py").unwrap(),
            "total = price  *  count * 2\n"
        );
        let added = "x = f(a,\n      b)\n";
        assert_eq!(
            replace(added, &edit("x = f(a, b)", "x = f(a, b, c)"), "t.py").unwrap(),
            "x = f(a,\n      b, c)\n",
            "new text inside the match goes where the difference is"
        );
        // Text that is the file's in two places, or that differs in more
        // than whitespace, is not guessed at.
        let twice = "def f():\n    return 1\ndef g():\n    return 1\n";
        assert!(replace(twice, &edit("return   1", "return 2"), "t.py").is_err());
        assert!(replace(geometry, &edit("def area(width, height): return width - height", "pass"), "t.py").is_err());
    }

    #[test]
    fn an_edit_that_lost_the_files_indentation_is_made_at_the_files_depth() {
        let class = "class Cart:\n    def total(self):\n        return sum(self.items)  \n\n    def clear(self):\n        self.items = []\n";
        let flat = edit("def total(self):\nreturn sum(self.items)", "def total(self):\nreturn sum(self.items) * 2");
        assert_eq!(
            replace(class, &flat, "cart.py").unwrap(),
            "class Cart:\n    def total(self):\n        return sum(self.items) * 2\n\n    def clear(self):\n        self.items = []\n",
            "the trailing space is gone with the line it was on; the rest of the file is as it was"
        );
        let deeper = edit(
            "        def clear(self):\n            self.items = []\n",
            "        def clear(self):\n            self.items.clear()\n",
        );
        assert_eq!(
            replace(class, &deeper, "cart.py").unwrap(),
            "class Cart:\n    def total(self):\n        return sum(self.items)  \n\n    def clear(self):\n        self.items.clear()\n"
        );
        let tabs = "fn main() {\r\n\tlet x = 1;\r\n}\r\n";
        assert_eq!(
            replace(tabs, &edit("    let x = 1;", "    let x = 2;"), "main.rs").unwrap(),
            "fn main() {\r\n\tlet x = 2;\r\n}\r\n",
            "spaces for the file's tab, and its line ends kept"
        );
        // Lines that are the file's in more than one place, or that differ
        // in more than whitespace, are not guessed at.
        let twice = "if a:\n    x = 1\nif b:\n    x = 1\n";
        assert!(replace(twice, &edit("x = 1\n", "x = 2\n"), "t.py").unwrap_err().contains("occurs 2 times"));
        assert!(replace(twice, &edit("  if a:\n  x = 1", "if a:\n    x = 2"), "t.py").is_ok());
        assert!(replace(class, &edit("def total(self):\nreturn sum(items)", "pass"), "cart.py").is_err());
    }

    #[test]
    fn real_insertions_pass() {
        let imports = "import os\nimport re\n\nx = 1\n";
        assert!(replace(imports, &edit("import os", "import os\nimport sys"), "m.py").is_ok());
        let functions = "def add(a, b):\n    return a + b\n";
        let added = "    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n";
        assert!(replace(functions, &edit("    return a + b\n", added), "c.py").is_ok());
        let assignments = "x = 1\ny = 2\n";
        assert!(replace(assignments, &edit("x = 1", "x = 1\nz = 3"), "v.py").is_ok());
    }

    #[test]
    fn a_repeated_old_string_lists_its_lines() {
        let text = "LANG = \"fr\"\n\ndef hello():\n    return {\"en\": 1, \"fr\": 2, \"fr-ca\": 3}\n";
        assert_eq!(
            lines_holding(text, "\"fr"),
            "     1\tLANG = \"fr\"\n     4\t    return {\"en\": 1, \"fr\": 2, \"fr-ca\": 3}\n"
        );
    }
}
