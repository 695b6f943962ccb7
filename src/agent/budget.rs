//! A turn's hard limits: the asks the harness makes in one turn (the
//! whole-file way's and the pipeline's) are at most so many model calls in
//! at most so many seconds; then the turn ends saying what it tried, having
//! changed nothing it could not verify.

use std::time::{Duration, Instant};

use crate::config::PipelineSettings;

#[derive(Debug)]
pub struct Budget {
    calls_left: u32,
    deadline: Instant,
}

impl Budget {
    pub fn new(settings: &PipelineSettings) -> Budget {
        Budget {
            calls_left: settings.max_model_calls,
            deadline: Instant::now() + Duration::from_secs(settings.max_seconds),
        }
    }

    /// Whether another model call fits in what is left.
    pub fn allows_call(&self) -> bool {
        self.calls_left > 0 && Instant::now() < self.deadline
    }

    /// Whether the turn's seconds are not spent yet: a search the turn
    /// may do without (varying a refused version) starts only then.
    pub fn has_time(&self) -> bool {
        Instant::now() < self.deadline
    }

    /// The time limit of a command the pipeline runs (`requested`, in
    /// ms), cut to what is left before the deadline: the turn's seconds
    /// hold its runs too, not only its model calls (a check that ran a
    /// large project's tests against each candidate took a turn of 300 s
    /// to 618).
    pub fn command_timeout_ms(&self, requested: u64) -> u64 {
        requested.min(u64::try_from(self.time_left().as_millis()).unwrap_or(u64::MAX))
    }

    /// What a command or a model reply about to start may take: what is
    /// left before the deadline, and `FLOOR` at least, so that one that
    /// starts just before it is not cut at once. A reply is cut as a
    /// command is (the 1.5B began a 1,388-token reply at 285 s of a 300 s
    /// turn and wrote on for 112 s).
    pub fn time_left(&self) -> Duration {
        const FLOOR: Duration = Duration::from_secs(10);
        self.deadline.saturating_duration_since(Instant::now()).max(FLOOR)
    }

    /// Seconds a search of small changes may take: half of what is left
    /// of the turn, so that the model's own versions still get theirs (a
    /// project's tests run against each of hundreds of Markdown variants
    /// took all 211 s left, and no version was asked). `FLOOR` at least.
    pub fn search_seconds(&self) -> u64 {
        const FLOOR: u64 = 20;
        (self.deadline.saturating_duration_since(Instant::now()).as_secs() / 2).max(FLOOR)
    }

    pub fn spend_call(&mut self) {
        self.calls_left = self.calls_left.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_ends_at_its_calls_or_its_seconds() {
        let mut budget = Budget::new(&PipelineSettings { max_model_calls: 2, ..Default::default() });
        assert!(budget.allows_call());
        budget.spend_call();
        budget.spend_call();
        assert!(!budget.allows_call());
        let spent = Budget::new(&PipelineSettings { max_seconds: 0, ..Default::default() });
        assert!(!spent.allows_call() && !spent.has_time());
        assert_eq!(spent.command_timeout_ms(120_000), 10_000, "a command about to start has the floor");
        let fresh = Budget::new(&PipelineSettings { max_seconds: 300, ..Default::default() });
        assert_eq!(fresh.command_timeout_ms(120_000), 120_000);
        assert!((290_000..=300_000).contains(&fresh.command_timeout_ms(u64::MAX)), "cut to the deadline");
    }
}
