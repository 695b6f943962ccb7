//! Context budget and compaction: what of the history the next prompt holds.
//!
//! Pure functions over messages and their token counts. The history itself
//! (and the session file) always keeps everything; compaction only shapes
//! the prompt. When the prompt passes the threshold, in order until it fits:
//! 1. tool outputs longer than the limit are cut (head and tail kept);
//! 2. older tool results are replaced by their one-line summary;
//! 3. the oldest exchanges are left out, an assistant message always together
//!    with the message after it, so a call never loses its result;
//! 4. long tool outputs among the recent messages are cut harder.
//!
//! The first user message (the task) and the last `keep_recent` messages are
//! never summarized or left out.

pub use crate::config::ContextSettings;
use crate::protocol::{Block, Message, Role};

/// The prompt's messages after compaction, and what it saved.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub messages: Vec<Message>,
    pub tokens_before: usize,
    pub tokens_after: usize,
    /// Tool results replaced by their summary.
    pub summarized: usize,
    /// Messages left out.
    pub omitted: usize,
}

/// Tokens the prompt may use.
pub fn budget(context_window: usize, settings: &ContextSettings) -> usize {
    (context_window as f64 * settings.compact_threshold.clamp(0.05, 1.0)) as usize
}

/// Shapes `history` to fit `budget` tokens next to a system prompt of
/// `system_tokens`. `counts[i]` is the token count of `history[i]`; `count`
/// measures rewritten messages. `None` when the history fits as it is.
pub fn compact(
    history: &[Message],
    counts: &[usize],
    system_tokens: usize,
    budget: usize,
    settings: &ContextSettings,
    count: &dyn Fn(&Message) -> usize,
) -> Option<Compacted> {
    let tokens_before = system_tokens + counts.iter().sum::<usize>();
    if tokens_before <= budget {
        return None;
    }
    let mut messages: Vec<Message> = history.to_vec();
    let mut sizes: Vec<usize> = counts.to_vec();
    let total = |sizes: &[usize], kept: &[bool]| {
        system_tokens + sizes.iter().zip(kept).filter(|(_, k)| **k).map(|(s, _)| s).sum::<usize>()
    };
    let mut kept = vec![true; messages.len()];

    let first_user = messages.iter().position(|m| m.role == Role::User);
    let mut recent_start = messages.len().saturating_sub(settings.keep_recent);
    // The recent window must not start on a result whose call it would leave behind.
    if recent_start > 0 && recent_start < messages.len() && carries_results(&messages[recent_start]) {
        recent_start -= 1;
    }
    let middle: Vec<usize> = (0..recent_start).filter(|i| Some(*i) != first_user).collect();

    let rewrite = |messages: &mut Vec<Message>, sizes: &mut Vec<usize>, i: usize, f: &dyn Fn(&mut Block) -> bool| {
        let mut changed = false;
        for block in &mut messages[i].blocks {
            changed |= f(block);
        }
        if changed {
            sizes[i] = count(&messages[i]);
        }
        changed
    };

    // 1. Cut long outputs in the middle.
    let limit = settings.max_tool_output_chars;
    for &i in &middle {
        rewrite(&mut messages, &mut sizes, i, &|block| cut_output(block, limit));
    }

    // 2. Summaries for older results, oldest first.
    let mut summarized = 0;
    for &i in &middle {
        if total(&sizes, &kept) <= budget {
            break;
        }
        let mut replaced = 0;
        for block in &mut messages[i].blocks {
            if let Block::ToolResult { output, summary, .. } = block {
                if !output.starts_with(SUMMARY_MARK) {
                    *output = format!("{SUMMARY_MARK} {summary}]");
                    replaced += 1;
                }
            }
        }
        if replaced > 0 {
            summarized += replaced;
            sizes[i] = count(&messages[i]);
        }
    }

    // 3. Leave out the oldest exchanges, in pairs.
    let mut omitted = 0;
    let mut position = 0;
    while total(&sizes, &kept) > budget && position + 1 < middle.len() {
        let (a, b) = (middle[position], middle[position + 1]);
        if b != a + 1 {
            position += 1;
            continue;
        }
        kept[a] = false;
        kept[b] = false;
        omitted += 2;
        position += 2;
    }

    // 4. Still too big: the recent messages' outputs are cut too.
    if total(&sizes, &kept) > budget {
        for i in recent_start..messages.len() {
            rewrite(&mut messages, &mut sizes, i, &|block| cut_output(block, limit / 4));
        }
    }

    if omitted > 0 {
        if let Some(first) = first_user {
            messages[first].blocks.push(Block::Text {
                text: format!("[tack: {omitted} earlier messages are left out here to fit the context window]"),
            });
            sizes[first] = count(&messages[first]);
        }
    }
    let tokens_after = total(&sizes, &kept);
    let messages = messages.into_iter().zip(kept).filter(|(_, k)| *k).map(|(m, _)| m).collect();
    Some(Compacted { messages, tokens_before, tokens_after, summarized, omitted })
}

/// How a summarized result starts, so it is not summarized twice.
const SUMMARY_MARK: &str = "[compacted: full output left out; summary:";

fn carries_results(message: &Message) -> bool {
    message.blocks.iter().any(|b| matches!(b, Block::ToolResult { .. }))
}

/// Cuts a tool output to `limit` characters, keeping its head and tail.
fn cut_output(block: &mut Block, limit: usize) -> bool {
    let Block::ToolResult { output, .. } = block else { return false };
    let length = output.chars().count();
    if length <= limit {
        return false;
    }
    let keep = limit / 2;
    let head: String = output.chars().take(keep).collect();
    let tail: String = output.chars().skip(length - keep).collect();
    *output = format!("{head}\n[… {} characters cut to fit the context window …]\n{tail}", length - 2 * keep);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(message: &Message) -> usize {
        crate::model::transcript("", std::slice::from_ref(message)).len().div_ceil(4)
    }

    fn exchange(i: usize, output_len: usize) -> [Message; 2] {
        [
            Message {
                role: Role::Assistant,
                blocks: vec![Block::ToolUse {
                    id: format!("call_{i}"),
                    name: "Read".into(),
                    input: serde_json::json!({"file_path": format!("{i}.rs")}),
                }],
            },
            Message {
                role: Role::User,
                blocks: vec![Block::ToolResult {
                    tool_use_id: format!("call_{i}"),
                    output: "x".repeat(output_len),
                    is_error: false,
                    summary: format!("read {i}.rs"),
                }],
            },
        ]
    }

    fn history(exchanges: usize, output_len: usize) -> Vec<Message> {
        let mut history = vec![Message::user_text("the task")];
        for i in 0..exchanges {
            history.extend(exchange(i, output_len));
        }
        history
    }

    fn run(history: &[Message], budget: usize) -> Option<Compacted> {
        let counts: Vec<usize> = history.iter().map(tokens).collect();
        compact(history, &counts, 100, budget, &ContextSettings::default(), &tokens)
    }

    /// Every ToolUse is answered in the very next message, and every result has its call.
    fn assert_paired(messages: &[Message]) {
        for (i, message) in messages.iter().enumerate() {
            for block in &message.blocks {
                if let Block::ToolUse { id, .. } = block {
                    let next = messages.get(i + 1).expect("a call at the end has no result");
                    assert!(
                        next.blocks
                            .iter()
                            .any(|b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id))
                    );
                }
                if let Block::ToolResult { tool_use_id, .. } = block {
                    let previous = &messages[i - 1];
                    assert!(
                        previous.blocks.iter().any(|b| matches!(b, Block::ToolUse { id, .. } if id == tool_use_id))
                    );
                }
            }
        }
    }

    #[test]
    fn a_history_that_fits_is_left_alone() {
        assert_eq!(run(&history(3, 100), 10_000), None);
    }

    #[test]
    fn older_results_become_summaries_and_the_task_and_recent_messages_stay_whole() {
        let history = history(6, 2_000);
        let compacted = run(&history, 1_600).unwrap();
        assert!(compacted.tokens_after <= 1_600, "{compacted:?}");
        assert!(compacted.tokens_after < compacted.tokens_before);
        assert_eq!(compacted.omitted, 0);
        assert_eq!(compacted.messages[0], history[0]);
        assert_eq!(compacted.messages[11..], history[11..]);
        let Block::ToolResult { output, .. } = &compacted.messages[2].blocks[0] else { panic!() };
        assert_eq!(output, "[compacted: full output left out; summary: read 0.rs]");
        assert_paired(&compacted.messages);
    }

    #[test]
    fn when_summaries_are_not_enough_old_exchanges_are_left_out_in_pairs() {
        let history = history(40, 400);
        let compacted = run(&history, 900).unwrap();
        assert!(compacted.tokens_after <= 900, "{}", compacted.tokens_after);
        assert!(compacted.omitted > 0 && compacted.omitted % 2 == 0);
        assert_eq!(compacted.messages[0].blocks[0], history[0].blocks[0]);
        assert!(compacted.messages[0].text().contains("earlier messages are left out"));
        assert_eq!(compacted.messages.last(), history.last());
        assert_eq!(compacted.messages.len(), history.len() - compacted.omitted);
        assert_paired(&compacted.messages);
    }

    #[test]
    fn huge_recent_outputs_are_cut_as_a_last_resort() {
        let history = history(1, 200_000);
        let compacted = run(&history, 8_000).unwrap();
        let Block::ToolResult { output, .. } = &compacted.messages[2].blocks[0] else { panic!() };
        assert!(output.contains("characters cut to fit the context window"));
        assert!(output.len() < 6_000);
        assert_paired(&compacted.messages);
    }

    #[test]
    fn the_recent_window_never_splits_a_call_from_its_result() {
        let history = history(5, 2_000);
        let settings = ContextSettings { keep_recent: 1, ..ContextSettings::default() };
        let counts: Vec<usize> = history.iter().map(tokens).collect();
        let compacted = compact(&history, &counts, 100, 400, &settings, &tokens).unwrap();
        assert_paired(&compacted.messages);
        // The last call's result is whole, so its call was kept whole with it.
        assert_eq!(compacted.messages.last(), history.last());
    }
}
