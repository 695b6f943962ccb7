//! Whether a project's MCP server may start. A stdio server in `.mcp.json` is
//! a command from the repository, run as soon as a conversation begins: it is
//! decided like a Bash command line (tool `McpServer`), so `auto_all` starts
//! it, a rule can allow or deny it, plan mode never starts it, and otherwise
//! the user is asked through the front end's approval.

use std::sync::Arc;

use async_trait::async_trait;

use super::{ApprovalRequest, Host};
use crate::permissions::{CallFacts, Policy, Verdict};
use crate::protocol::ApprovalDecision;
use crate::tools::ToolKind;
use crate::tools::mcp::ServerGate;

/// The name permission rules give the start of an MCP server.
pub const MCP_SERVER: &str = "McpServer";

/// Decides server starts with a conversation's policy and front end.
pub struct PolicyGate {
    pub policy: Policy,
    pub host: Arc<dyn Host>,
}

#[async_trait]
impl ServerGate for PolicyGate {
    async fn may_start(&self, name: &str, command_line: &str) -> Result<(), String> {
        let facts = CallFacts { tool: MCP_SERVER, kind: ToolKind::Execute, paths: &[], command: Some(command_line) };
        match self.policy.decide(&facts) {
            Verdict::Allow { .. } => Ok(()),
            Verdict::Deny { reason, .. } => Err(reason),
            Verdict::Ask { .. } => {
                let request = ApprovalRequest {
                    tool_call_id: format!("mcp_server_{name}"),
                    name: MCP_SERVER.to_string(),
                    input: serde_json::json!({ "server": name, "command": command_line }),
                    reason: format!("start the MCP server {name} from .mcp.json: {command_line}"),
                    agent_path: Vec::new(),
                };
                let approval = self.host.approve(request).await;
                match approval.decision {
                    ApprovalDecision::Allow | ApprovalDecision::AllowAlways => Ok(()),
                    ApprovalDecision::Deny => Err(approval.note.unwrap_or_else(|| "the user did not allow it".into())),
                }
            }
        }
    }
}
