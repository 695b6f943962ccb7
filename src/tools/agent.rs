//! Agent: hands a self-contained sub-task to a nested agent and returns its
//! answer. Several Agent calls in one reply run in parallel.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

pub struct Agent;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    /// A few words on what the sub-agent is for, shown to the user.
    description: String,
    /// The whole task: the sub-agent sees nothing of this conversation but this text.
    prompt: String,
}

#[async_trait]
impl TypedTool for Agent {
    type Input = AgentInput;
    const NAME: &'static str = "Agent";
    const DESCRIPTION: &'static str = "Start a sub-agent with a fresh history on a self-contained task (research across many files, an independent change) and get its final answer. It has the same tools and permissions. Several Agent calls in one reply run in parallel.";
    const KIND: ToolKind = ToolKind::Delegate;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &AgentInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: AgentInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let answer = ctx.agents.run(ctx.tool_call_id, &input.description, &input.prompt).await?;
        let summary = format!("sub-agent answered: {}", answer.lines().next().unwrap_or_default());
        let answer =
            if answer.is_empty() { "(the sub-agent finished without a final message)".to_string() } else { answer };
        Ok(ToolOutput::ok(answer, summary))
    }
}
