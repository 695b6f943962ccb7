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

    /// Seconds left before the deadline.
    pub fn seconds_left(&self) -> u64 {
        self.deadline.saturating_duration_since(Instant::now()).as_secs()
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
        assert!(!spent.allows_call());
    }
}
