//! Sub-agents: a nested agent with a fresh history, run to its answer.
//!
//! The Agent tool and the editor's code actions both hand work to a
//! sub-agent. It shares the parent's backend, tools, workspace, hooks and
//! permissions (a copy: answers it remembers stay with it), and the parent's
//! event numbering: its events carry its `agentPath`. It has its own history,
//! task list and interpreters, keeps no session file, and is cancelled with
//! the parent's turn. Its final text is its answer.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Conversation, ConversationParts, TurnOutcome};
use crate::protocol::{Event, Message, StopReason};
use crate::tools::{AgentRunner, ToolError};

/// Starts sub-agents of one conversation, during one tool call.
pub(super) struct SubAgents<'a> {
    pub(super) parent: &'a Conversation,
    pub(super) cancel: CancellationToken,
}

impl Conversation {
    /// A fresh agent one level below this one, named `name` in event paths.
    fn sub_agent(&self, name: &str) -> Conversation {
        let mut agent = Conversation::new(ConversationParts {
            backend: self.backend.clone(),
            tools: self.tools.clone(),
            workspace: self.workspace.clone(),
            host: self.events.host().clone(),
            policy: self.policy.clone(),
            settings: self.settings.clone(),
            session: None,
            history: Vec::new(),
            tasks: Vec::new(),
        });
        agent.events = self.events.child(name);
        agent.hooks = self.hooks.clone();
        agent.depth = self.depth + 1;
        agent
    }

    /// Runs `prompt` to its end in a sub-agent, reporting its start and end
    /// under this agent's path.
    pub(crate) async fn delegate(
        &self,
        name: &str,
        description: &str,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, ToolError> {
        let limit = self.settings.max_agent_depth;
        if self.depth >= limit {
            return Err(ToolError::Invalid(format!(
                "sub-agents may nest at most {limit} deep and this agent is at depth {}; do the work yourself",
                self.depth
            )));
        }
        let mut agent = self.sub_agent(name);
        self.events.emit(Event::SubagentStarted { agent_id: name.to_string(), description: description.to_string() });
        agent.record(Message::user_text(prompt));
        agent.choose_way(prompt);
        let outcome = agent.turn_loop(cancel).await;
        agent.state.stop_processes().await;
        self.events.emit(Event::SubagentFinished { agent_id: name.to_string(), stop_reason: outcome.stop_reason });
        Ok(outcome)
    }
}

#[async_trait]
impl AgentRunner for SubAgents<'_> {
    async fn run(&self, name: &str, description: &str, prompt: &str) -> Result<String, ToolError> {
        let outcome = self.parent.delegate(name, description, prompt, &self.cancel).await?;
        let answer = outcome.text.trim();
        match outcome.stop_reason {
            StopReason::EndTurn => Ok(answer.to_string()),
            StopReason::Cancelled => Err(ToolError::Invalid("the sub-agent was cancelled".into())),
            reason => {
                let why = match reason {
                    StopReason::MaxIterations => "it reached the iteration limit",
                    StopReason::LoopDetected => "it kept repeating itself",
                    _ => "its model failed",
                };
                let last = if answer.is_empty() { String::new() } else { format!("; its last words: {answer}") };
                Err(ToolError::Invalid(format!("the sub-agent stopped before answering: {why}{last}")))
            }
        }
    }
}

impl Conversation {
    /// A turn whose work a sub-agent does: what an editor's code action
    /// starts. The events report a turn of this conversation; the work and
    /// its events are the sub-agent's; the history keeps the request and the
    /// answer, so that a later turn can refer to them.
    pub async fn run_delegated(
        &mut self,
        name: &str,
        description: &str,
        prompt: &str,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        self.events.emit(Event::TurnStarted { prompt: description.to_string() });
        let outcome = match self.delegate(name, description, prompt, &cancel).await {
            Ok(outcome) => outcome,
            Err(error) => {
                self.events.emit(Event::Error { message: error.to_string() });
                TurnOutcome { stop_reason: StopReason::Error, text: String::new(), usage: Default::default() }
            }
        };
        self.record(Message::user_text(format!("[{description}, done by the sub-agent {name}]\n{prompt}")));
        if !outcome.text.trim().is_empty() {
            self.record(Message {
                role: crate::protocol::Role::Assistant,
                blocks: vec![crate::protocol::Block::Text { text: outcome.text.clone() }],
            });
        }
        self.events.emit(Event::Status { status: crate::protocol::AgentStatus::Idle });
        self.events.emit(Event::TurnFinished {
            stop_reason: outcome.stop_reason,
            text: outcome.text.clone(),
            usage: outcome.usage,
        });
        outcome
    }
}
