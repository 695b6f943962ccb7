//! Hooks around tool calls: the pre-tool check and the post-tool rewrite.
//!
//! Internal for now: the pipeline is permission -> `before` -> execute ->
//! `after`. User-configured hooks (shell commands from config) will implement
//! this trait.

use serde_json::Value;

use crate::tools::ToolOutput;

/// A call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    pub tool_call_id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
}

pub trait ToolHook: Send + Sync {
    /// Runs after the permission check. `Err(reason)` blocks the call; the
    /// reason becomes its error result.
    fn before(&self, _call: &HookCall<'_>) -> Result<(), String> {
        Ok(())
    }

    /// Runs after the tool, before the result is recorded; may rewrite it.
    fn after(&self, _call: &HookCall<'_>, _output: &mut ToolOutput) {}
}
