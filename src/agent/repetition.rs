//! A reply caught in a loop. Small models decoding greedily can fall into a
//! cycle of lines (inside a Write's content: the same few lines with the
//! numbers counting up) and only stop at `max_tokens`, minutes later on a
//! CPU, with a call that never closes. The guard sees the cycle early so the
//! generation can be cut and the model told why. The guard watches small
//! models only (see `turn.rs`): it cannot tell a runaway from a long table
//! the user asked for, and a large model writes such a table on purpose.

/// Text kept to look for a cycle; a cycle longer than this is not caught.
const MAX_TAIL: usize = 16 * 1024;
/// Lines looked at, from the end.
const MAX_LINES: usize = 240;
/// The longest cycle looked for, in lines.
const MAX_PERIOD: usize = 12;
/// A cycle must come round this many times in a row...
const MIN_REPEATS: usize = 12;
/// ...over at least this many lines: a legitimate file may hold a few dozen
/// lines that differ only in their numbers (a table, a run of asserts).
const MIN_LINES: usize = 64;

#[derive(Default)]
pub struct RepetitionGuard {
    tail: String,
}

impl RepetitionGuard {
    /// Adds generated text; true when the reply now ends in a cycle.
    pub fn push(&mut self, chunk: &str) -> bool {
        self.tail.push_str(chunk);
        if self.tail.len() > MAX_TAIL {
            let mut cut = self.tail.len() - MAX_TAIL / 2;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.drain(..cut);
        }
        ends_in_cycle(&self.tail)
            || ends_in_copies(&self.tail)
            || ends_in_run(&self.tail)
            || ends_in_repeated_block(&self.tail)
            || ends_in_repeated_sentence(&self.tail)
    }
}

/// The longest code block, with the lines around it, that a repeat of is
/// looked for: a whole small file shown again and again, each copy too
/// long for a line cycle.
const MAX_BLOCK_PERIOD: usize = 80;
/// Copies of one block in a row that make a loop: a model may show a file
/// twice (before and after), not three times the same.
const MIN_BLOCK_REPEATS: usize = 3;

/// The reply ends in the same fenced code block, with what comes between,
/// written three times in a row.
fn ends_in_repeated_block(text: &str) -> bool {
    let Some((done, _)) = text.rsplit_once('\n') else { return false };
    // The blank lines after a block belong to the next copy's start.
    let done = done.trim_end();
    // Checked when a block closes, before the lines are gathered: this runs
    // at every token.
    let last = done.rsplit('\n').next().unwrap_or_default();
    if !last.trim_start().starts_with("```") {
        return false;
    }
    // From the end backwards.
    let lines: Vec<&str> = done.rsplit('\n').take(MAX_BLOCK_PERIOD * MIN_BLOCK_REPEATS).collect();
    (2..=MAX_BLOCK_PERIOD).any(|period| {
        // The first copy has no blank line before it to match.
        let span = period * MIN_BLOCK_REPEATS - 1;
        lines.len() >= span
            && lines[..period].iter().filter(|line| line.trim_start().starts_with("```")).count() >= 2
            && (period..span).all(|i| lines[i].trim_end() == lines[i - period].trim_end())
    })
}

/// The longest unit a run within a line is made of, in bytes...
const MAX_UNIT: usize = 16;
/// ...and how long the run must be: longer than any separator line or
/// padding a file of code holds.
const MIN_RUN: usize = 512;

/// The reply ends in one short unit repeated within a line (a number the
/// model keeps writing digits of: `offset: 100000000000...`), which the
/// line cycles never see.
fn ends_in_run(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < MIN_RUN {
        return false;
    }
    let tail = &bytes[bytes.len() - MIN_RUN..];
    (1..=MAX_UNIT).any(|unit| {
        tail[unit..].iter().zip(tail).all(|(later, earlier)| later == earlier)
            && !tail.iter().all(|b| b.is_ascii_whitespace())
    })
}

/// The longest sentence a repeat within a line is looked for of...
const MAX_SENTENCE: usize = 256;
/// ...and how many times in a row it must come: a line of prose or code
/// says a thing once, not eight times.
const MIN_SENTENCE_REPEATS: usize = 8;
/// Bytes a sentence must hold, unlike each other: a run of `0, ` or `=`
/// is padding, which the runs above judge.
const MIN_SENTENCE_BYTES: usize = 8;

/// The reply ends in one sentence written again and again on one line
/// (the 1.5B coder: "The function in config.py is called read_config, not
/// load_config. " until `max_tokens`, two and a half minutes later), too
/// long a unit for a run and with no line break for a cycle to see.
fn ends_in_repeated_sentence(text: &str) -> bool {
    let bytes = text.as_bytes();
    (MAX_UNIT + 1..=MAX_SENTENCE).any(|unit| {
        let span = unit * MIN_SENTENCE_REPEATS;
        if bytes.len() < span {
            return false;
        }
        let tail = &bytes[bytes.len() - span..];
        let sentence = &tail[..unit];
        // A line break, or one escaped in a call's JSON, is for the cycles.
        let one_line = || !sentence.contains(&b'\n') && !sentence.windows(2).any(|pair| pair == b"\\n");
        tail[unit..].iter().zip(tail).all(|(later, earlier)| later == earlier)
            && one_line()
            && distinct_bytes(sentence) >= MIN_SENTENCE_BYTES
    })
}

fn distinct_bytes(bytes: &[u8]) -> usize {
    let mut seen = [false; 256];
    bytes.iter().for_each(|b| seen[*b as usize] = true);
    seen.iter().filter(|seen| **seen).count()
}

/// A line as the cycle sees it: numbers that count up do not break a cycle.
fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_number = false;
    for c in line.trim_end().chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('0');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// Copies in a row of one line, exactly, that make a loop sooner than a
/// cycle: a file holds a run of lines that differ only in their numbers,
/// hardly sixteen of one statement.
const MIN_COPIES: usize = 16;
/// A line that short (`}`, `pass`, `0, 0, 0,`) may well repeat.
const MIN_COPIED_LINE: usize = 12;

/// The reply ends in the same line, letter for letter, sixteen times: the
/// 0.5B coder wrote `console.log(capitalize("hello"), shout("hi"));` until
/// the cycle caught it 64 lines and half a minute later.
fn ends_in_copies(text: &str) -> bool {
    let Some((done, _)) = text.rsplit_once('\n') else { return false };
    let mut lines = done.rsplit('\n').map(str::trim_end);
    let Some(last) = lines.next().filter(|line| line.trim().len() >= MIN_COPIED_LINE) else { return false };
    lines.take(MIN_COPIES - 1).filter(|line| *line == last).count() == MIN_COPIES - 1
}

fn ends_in_cycle(text: &str) -> bool {
    // Inside a JSON string (a call's content) lines end with the escape `\n`.
    let text = text.replace("\\n", "\n");
    // The last piece is a line still being written.
    let Some((done, _)) = text.rsplit_once('\n') else { return false };
    let mut lines: Vec<String> = done.rsplit('\n').take(MAX_LINES).map(shape).collect();
    lines.reverse();
    let n = lines.len();
    (1..=MAX_PERIOD).any(|period| {
        if n < period * MIN_REPEATS {
            return false;
        }
        let block = &lines[n - period..];
        if block.iter().all(|line| line.trim().is_empty()) {
            return false;
        }
        let matched = (period..n).take_while(|&back| lines[n - 1 - back] == lines[n - 1 - back + period]).count();
        let repeated = matched + period;
        repeated / period >= MIN_REPEATS && repeated >= MIN_LINES
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed_in_pieces(text: &str) -> bool {
        let mut guard = RepetitionGuard::default();
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(7).any(|piece| guard.push(&piece.iter().collect::<String>()))
    }

    #[test]
    fn a_call_whose_content_cycles_with_counting_numbers_is_caught() {
        // What the 1.5B coder wrote into a Write of a three-line file.
        let mut call = String::from(r#"{"name": "Write", "arguments": {"file_path": "settings.py", "content": ""#);
        for i in 0..100 {
            call.push_str(&format!("{}\\n# Seconds to wait.\\n{}\\nTIMEOUT = 60\\n\\n", i * 2, i * 2 + 1));
        }
        assert!(fed_in_pieces(&call));
        let mut asserts = String::new();
        for i in 0..100 {
            asserts.push_str(&format!("assert is_even({}) == True\nassert is_even({}) == False\n", i * 2, i * 2 + 1));
        }
        assert!(fed_in_pieces(&asserts));
    }

    #[test]
    fn ordinary_code_and_short_runs_of_similar_lines_pass() {
        let mut table = String::new();
        for i in 0..40 {
            table.push_str(&format!("    ({i}, {}),\n", i * i));
        }
        assert!(!fed_in_pieces(&table), "40 rows of a table are not a loop");
        let source = include_str!("turn.rs");
        assert!(!fed_in_pieces(source));
        assert!(!fed_in_pieces(&"\n".repeat(500)), "blank lines are not a cycle worth cutting");
        assert!(!fed_in_pieces(&format!("# {}\nx = 1\n", "=".repeat(120))), "a separator line is not a run");
        assert!(!fed_in_pieces(&" ".repeat(2000)), "nor is indentation");
    }

    #[test]
    fn a_file_shown_again_and_again_is_caught_at_the_third_copy() {
        // The 0.5B coder's reply to a one-line fix in a nine-line file.
        let copy = "utils.js\n```\nfunction capitalize(word) {\n  return word.charAt(0).toUpperCase() + word.slice(0);\n}\n\nfunction shout(text) {\n  return text.toUpperCase() + \"!\";\n}\n\nmodule.exports = { capitalize, shout };\n```\n\n";
        assert!(!fed_in_pieces(&copy.repeat(2)), "a file shown twice is not a loop");
        assert!(fed_in_pieces(&copy.repeat(3)));
        // Before and after, each once, and two blocks that differ pass.
        let before_after = "```\nx = 1\n```\n\n```\nx = 2\n```\n\n```\nx = 1\n```\n";
        assert!(!fed_in_pieces(before_after));
    }

    #[test]
    fn one_line_copied_sixteen_times_is_caught() {
        let line = "console.log(capitalize(\"hello\"), shout(\"hi\"));\n";
        assert!(!fed_in_pieces(&line.repeat(15)));
        assert!(fed_in_pieces(&line.repeat(16)));
        assert!(!fed_in_pieces(&"  }\n".repeat(30)), "short lines repeat");
        assert!(!fed_in_pieces(&"0, 0, 0, 0,\n".repeat(30)), "a row of zeros is too short to judge");
    }

    #[test]
    fn a_sentence_written_again_and_again_on_one_line_is_caught() {
        let sentence = "The function in config.py is called read_config, not load_config. ";
        assert!(!fed_in_pieces(&sentence.repeat(7)));
        assert!(fed_in_pieces(&sentence.repeat(8)));
        assert!(!fed_in_pieces(&format!("x = [{}]\n", "0, ".repeat(100))), "a row of zeros is data");
        assert!(!fed_in_pieces(&format!("# {}\n", "=-".repeat(200))), "a ruler is padding");
        let rows = "    assert is_even(2) == True\n".repeat(10);
        assert!(!fed_in_pieces(&rows), "lines are judged by the cycles");
    }

    #[test]
    fn a_number_that_never_ends_is_caught() {
        // The 1.5B coder's Read offset, written until max_tokens.
        let call =
            format!(r#"{{"name": "Read", "arguments": {{"file_path": "greet.py", "offset": 1{}"#, "0".repeat(600));
        assert!(fed_in_pieces(&call));
        assert!(fed_in_pieces(&format!("Let's try {}", "ab12".repeat(200))));
    }
}
