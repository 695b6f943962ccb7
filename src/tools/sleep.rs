//! Sleep: wait a while, e.g. for a server started in the background. A cancel
//! ends the wait at once.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

const MAX_SLEEP_MS: u64 = 600_000;

pub struct Sleep;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepInput {
    /// How long to wait, in milliseconds (at most 600000).
    #[schemars(range(min = 1, max = 600000))]
    duration_ms: u64,
}

#[async_trait]
impl TypedTool for Sleep {
    type Input = SleepInput;
    const NAME: &'static str = "Sleep";
    const DESCRIPTION: &'static str = "Wait for the given number of milliseconds (at most 10 minutes), for example while a process started in the background gets ready.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Command;

    fn paths(_: &SleepInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: SleepInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let wanted = input.duration_ms.min(MAX_SLEEP_MS);
        let started = std::time::Instant::now();
        tokio::select! {
            _ = ctx.cancel.cancelled() => {
                let slept = started.elapsed().as_millis();
                Ok(ToolOutput::error(format!("sleep cancelled after {slept} ms of {wanted} ms")))
            }
            _ = tokio::time::sleep(Duration::from_millis(wanted)) => {
                Ok(ToolOutput::ok(format!("slept {wanted} ms"), format!("slept {wanted} ms")))
            }
        }
    }
}
