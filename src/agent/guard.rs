//! Loop detection: pure functions over the calls a turn has made.
//!
//! Three patterns, checked after every batch of calls, newest call last:
//! - the same failing call (tool and input equal, both results errors) twice
//!   within the last 4 calls;
//! - the same call 3 or more times in a row, failing or not;
//! - a repeating cycle of period 2 or 3 (A-B-A-B, A-B-C-A-B-C), repeated at
//!   least twice.
//!
//! Only patterns that end with the newest call count, so an old loop the
//! model has already left does not fire again. After a detection the turn
//! loop starts a fresh window.

use serde_json::Value;

/// One call as the guard sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub name: String,
    pub input: Value,
    pub is_error: bool,
}

impl CallRecord {
    fn same_call(&self, other: &CallRecord) -> bool {
        self.name == other.name && self.input == other.input
    }

    fn describe(&self) -> String {
        let input = self.input.to_string();
        let input = match input.char_indices().nth(120) {
            Some((end, _)) => format!("{}…", &input[..end]),
            None => input,
        };
        format!("{} {input}", self.name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopKind {
    RepeatedFailure,
    RepeatedCall { times: usize },
    Cycle { period: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub kind: LoopKind,
    /// What repeated, in words the model and the user can act on.
    pub description: String,
}

/// How far back the failure check looks, in calls.
const FAILURE_WINDOW: usize = 4;
/// Identical calls in a row that count as a loop.
const SAME_CALL_RUN: usize = 3;

/// Looks for a loop ending at the newest call.
pub fn detect(calls: &[CallRecord]) -> Option<Detection> {
    let last = calls.last()?;

    let run = calls.iter().rev().take_while(|c| c.same_call(last)).count();
    if run >= SAME_CALL_RUN {
        return Some(Detection {
            kind: LoopKind::RepeatedCall { times: run },
            description: format!("the same call was made {run} times in a row: {}", last.describe()),
        });
    }

    if last.is_error {
        let window = &calls[calls.len().saturating_sub(FAILURE_WINDOW)..calls.len() - 1];
        if window.iter().any(|c| c.is_error && c.same_call(last)) {
            return Some(Detection {
                kind: LoopKind::RepeatedFailure,
                description: format!("the same call failed twice: {}", last.describe()),
            });
        }
    }

    for period in [2, 3] {
        if calls.len() < period * 2 {
            continue;
        }
        let tail = &calls[calls.len() - period * 2..];
        let repeats = (0..period).all(|i| tail[i].same_call(&tail[i + period]));
        // A cycle of one repeated call is the run above, not a cycle.
        let varied = tail[..period].iter().any(|c| !c.same_call(&tail[0]));
        if repeats && varied {
            let cycle: Vec<String> = tail[..period].iter().map(CallRecord::describe).collect();
            return Some(Detection {
                kind: LoopKind::Cycle { period },
                description: format!("the same {period} calls keep repeating in a cycle: {}", cycle.join(", then ")),
            });
        }
    }
    None
}

/// What the loop does about the n-th detection of a turn (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intervention {
    /// Tell the model, and go on.
    Nudge(String),
    /// Give up: the turn ends with stop reason `loop_detected`.
    Stop,
}

/// Detections after which the turn is ended.
pub const MAX_DETECTIONS: usize = 3;

pub fn intervention(detection: &Detection, count: usize) -> Intervention {
    if count >= MAX_DETECTIONS {
        return Intervention::Stop;
    }
    let advice = if count == 1 {
        "This is not making progress. Read the last error, then take a different step: list the files with ListDir or find them with Glob if a path was wrong, Read a file before you edit it and copy the exact text to change from it, or search with Grep for what you need. If the task is done, answer the user in plain text."
    } else {
        "This is the second loop in this turn. Do not repeat any earlier call. If you cannot make progress another way, stop calling tools and explain to the user what blocks you. One more loop ends the turn."
    };
    Intervention::Nudge(format!("[tack] Loop detected: {}. {advice}", detection.description))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(name: &str, input: Value) -> CallRecord {
        CallRecord { name: name.into(), input, is_error: false }
    }

    fn err(name: &str, input: Value) -> CallRecord {
        CallRecord { name: name.into(), input, is_error: true }
    }

    fn read(path: &str) -> CallRecord {
        ok("Read", json!({"file_path": path}))
    }

    fn kind(calls: &[CallRecord]) -> Option<LoopKind> {
        detect(calls).map(|d| d.kind)
    }

    #[test]
    fn a_failing_call_repeated_within_four_calls_is_a_loop() {
        let bad = err("Edit", json!({"old_string": "x"}));
        assert_eq!(kind(&[bad.clone(), read("a"), read("b"), bad.clone()]), Some(LoopKind::RepeatedFailure));
        assert_eq!(kind(&[bad.clone(), bad.clone()]), Some(LoopKind::RepeatedFailure));
        // Too far apart: five calls.
        assert_eq!(kind(&[bad.clone(), read("a"), read("b"), read("c"), bad.clone()]), None);
    }

    #[test]
    fn a_retry_that_succeeds_is_not_a_loop() {
        let bad = err("Edit", json!({"old_string": "x"}));
        let good = ok("Edit", json!({"old_string": "x"}));
        assert_eq!(kind(&[bad.clone(), good]), None);
        // Different input after a failure: the model is trying something else.
        assert_eq!(kind(&[bad, err("Edit", json!({"old_string": "y"}))]), None);
    }

    #[test]
    fn the_same_call_three_times_in_a_row_is_a_loop() {
        assert_eq!(kind(&[read("a"), read("a")]), None);
        assert_eq!(kind(&[read("a"), read("a"), read("a")]), Some(LoopKind::RepeatedCall { times: 3 }));
        assert_eq!(
            kind(&[read("b"), read("a"), read("a"), read("a"), read("a")]),
            Some(LoopKind::RepeatedCall { times: 4 })
        );
    }

    #[test]
    fn reading_different_files_is_not_a_loop() {
        let calls: Vec<CallRecord> = (0..12).map(|i| read(&format!("src/{i}.rs"))).collect();
        assert_eq!(kind(&calls), None);
    }

    #[test]
    fn cycles_of_period_two_and_three_are_loops() {
        let (a, b, c) = (read("a"), ok("Grep", json!({"pattern": "x"})), ok("ListDir", json!({})));
        assert_eq!(kind(&[a.clone(), b.clone(), a.clone(), b.clone()]), Some(LoopKind::Cycle { period: 2 }));
        assert_eq!(kind(&[a.clone(), b.clone(), a.clone()]), None);
        assert_eq!(
            kind(&[a.clone(), b.clone(), c.clone(), a.clone(), b.clone(), c.clone()]),
            Some(LoopKind::Cycle { period: 3 })
        );
        assert_eq!(kind(&[a.clone(), b.clone(), c.clone(), a.clone(), b.clone()]), None);
        // The pattern must end at the newest call.
        assert_eq!(kind(&[a.clone(), b.clone(), a.clone(), b.clone(), c]), None);
    }

    #[test]
    fn old_loops_do_not_fire_again() {
        let calls = [read("a"), read("a"), read("a"), read("b")];
        assert_eq!(kind(&calls), None);
    }

    #[test]
    fn interventions_escalate_then_stop() {
        let detection = detect(&[read("a"), read("a"), read("a")]).unwrap();
        let Intervention::Nudge(first) = intervention(&detection, 1) else { panic!() };
        assert!(first.contains("the same call was made 3 times in a row: Read {\"file_path\":\"a\"}"), "{first}");
        assert!(first.contains("take a different step"), "{first}");
        let Intervention::Nudge(second) = intervention(&detection, 2) else { panic!() };
        assert!(second.contains("One more loop ends the turn"));
        assert_eq!(intervention(&detection, 3), Intervention::Stop);
    }
}
