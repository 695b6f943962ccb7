//! AskUser: the model puts a question to the user, optionally with answers
//! to pick from, and the answer is the result. For what only the user can
//! say (which of two designs, a missing requirement), not for permission,
//! which the permission layer asks about by itself.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

/// Choices offered at most.
const MAX_CHOICES: usize = 10;

pub struct AskUser;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserInput {
    /// The question, complete on its own.
    question: String,
    /// Answers the user may pick from; leave out for a free answer.
    #[serde(default)]
    choices: Vec<String>,
}

#[async_trait]
impl TypedTool for AskUser {
    type Input = AskUserInput;
    const NAME: &'static str = "AskUser";
    const DESCRIPTION: &'static str = "Ask the user a question and wait for the answer, optionally offering choices. Only for what you cannot find out yourself (a decision, a missing requirement); the answer is the result.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &AskUserInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: AskUserInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let question = input.question.trim();
        if question.is_empty() {
            return Err(ToolError::Invalid("the question is empty".into()));
        }
        let choices: Vec<String> =
            input.choices.iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).take(MAX_CHOICES).collect();
        // Calls of one reply run side by side: the user gets one question at a time.
        static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let answer = tokio::select! {
            answer = async {
                let _turn = ONE_AT_A_TIME.lock().await;
                ctx.user.ask(question, &choices).await
            } => answer,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Invalid("cancelled before the user answered".into())),
        };
        match answer {
            Ok(answer) => {
                let summary = format!("the user answered: {}", answer.lines().next().unwrap_or(""));
                Ok(ToolOutput::ok(format!("The user answered: {answer}"), summary))
            }
            Err(why) => Err(ToolError::Invalid(format!(
                "the user could not be asked: {why}. Go on with what you know and say in your answer what you assumed, or stop and say what you need"
            ))),
        }
    }
}
