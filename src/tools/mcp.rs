//! MCP servers' tools, offered beside the built-in ones as
//! `mcp__<server>__<tool>`, with the servers' own input schemas.
//!
//! Servers come from the project's `.mcp.json`, in the format Claude Code and
//! Cursor read: `{"mcpServers": {"name": {"command", "args", "env"}}}` for a
//! local process over stdio, `{"type": "http", "url", "headers"}` for
//! streamable HTTP. They are started when a conversation needs its tools
//! (stdio servers in a process group of their own) and stopped when the last
//! holder of [`McpServers`] drops it. A server that fails to start is
//! reported once and left out; one that dies later turns its calls into
//! errors and its tools drop out of the next prompt; the turn goes on.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, ToolSet};

/// The project's server list, relative to the workspace root.
pub const MCP_CONFIG: &str = ".mcp.json";
/// How long a server may take to start and list its tools.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Characters of a tool's result kept.
const MAX_RESULT_CHARS: usize = 30_000;

#[derive(Debug, Clone, Deserialize)]
struct McpFile {
    #[serde(default, rename = "mcpServers")]
    servers: BTreeMap<String, ServerConfig>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerConfig {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Decides whether a stdio server's command may run.
#[async_trait]
pub trait ServerGate: Send + Sync {
    /// `Err` says why the server named `name` may not run `command_line`.
    async fn may_start(&self, name: &str, command_line: &str) -> Result<(), String>;
}

/// Lets every server start: for `tack mcp list`, which the user runs to start them.
pub struct StartAll;

#[async_trait]
impl ServerGate for StartAll {
    async fn may_start(&self, _name: &str, _command_line: &str) -> Result<(), String> {
        Ok(())
    }
}

/// One running server.
struct Server {
    name: String,
    peer: Peer<RoleClient>,
    alive: AtomicBool,
    /// Why it stopped, once it did.
    death: Mutex<Option<String>>,
}

impl Server {
    fn died(&self, why: String) {
        if self.alive.swap(false, Ordering::SeqCst) {
            tracing::warn!(server = self.name, "MCP server stopped: {why}");
            *self.death.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        }
    }
}

/// The MCP servers of a workspace and their tools. Dropping the last clone
/// stops them.
#[derive(Clone, Default)]
pub struct McpServers {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    tools: Vec<Arc<dyn Tool>>,
    /// (server, problem) for each server that did not start.
    failures: Vec<(String, String)>,
    /// What keeps the servers running; dropped, they stop.
    running: Mutex<Vec<RunningService<RoleClient, ()>>>,
    listing: Vec<(String, Vec<(String, String)>)>,
}

impl McpServers {
    /// Starts every server of the workspace's `.mcp.json`, at once. No file,
    /// no servers; a file that cannot be read is one failure.
    pub async fn start(root: &Path, gate: &dyn ServerGate) -> McpServers {
        let path = root.join(MCP_CONFIG);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return McpServers::default(),
            Err(e) => return McpServers::failed(MCP_CONFIG, format!("cannot read it: {e}")),
        };
        let file: McpFile = match serde_json::from_str(&text) {
            Ok(file) => file,
            Err(e) => return McpServers::failed(MCP_CONFIG, format!("it is not a valid server list: {e}")),
        };
        let mut inner = Inner::default();
        // Asked one by one, before any starts: a question at a time.
        let mut allowed = Vec::new();
        for (name, config) in file.servers {
            let Some(command) = &config.command else {
                allowed.push((name, config));
                continue;
            };
            let line: Vec<String> = std::iter::once(command).chain(&config.args).map(|part| shell_word(part)).collect();
            match gate.may_start(&name, &line.join(" ")).await {
                Ok(()) => allowed.push((name, config)),
                Err(why) => {
                    tracing::warn!(server = name, "MCP server not started: {why}");
                    inner.failures.push((name, format!("not allowed to start: {why}")));
                }
            }
        }
        let starts = allowed.into_iter().map(|(name, config)| async move {
            let started = tokio::time::timeout(START_TIMEOUT, start_server(&name, &config, root)).await;
            let started =
                started.unwrap_or_else(|_| Err(format!("did not answer within {} s", START_TIMEOUT.as_secs())));
            (name, started)
        });
        for (name, started) in futures::future::join_all(starts).await {
            match started {
                Ok((service, tools)) => {
                    let server = Arc::new(Server {
                        name: name.clone(),
                        peer: service.peer().clone(),
                        alive: AtomicBool::new(true),
                        death: Mutex::new(None),
                    });
                    let mut listed = Vec::new();
                    for tool in tools {
                        let Some(remote) = tool.get("name").and_then(Value::as_str).map(str::to_string) else {
                            continue;
                        };
                        let description = tool.get("description").and_then(Value::as_str).unwrap_or("").to_string();
                        let schema = tool
                            .get("inputSchema")
                            .cloned()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
                        listed.push((remote.clone(), description.clone()));
                        inner.tools.push(Arc::new(McpTool {
                            name: intern(&format!("mcp__{}__{}", clean(&name), clean(&remote))),
                            description: intern(&format!("[{name} MCP server] {description}")),
                            remote,
                            schema,
                            server: server.clone(),
                        }));
                    }
                    inner.listing.push((name, listed));
                    inner.running.lock().unwrap_or_else(|e| e.into_inner()).push(service);
                }
                Err(problem) => {
                    tracing::warn!(server = name, "MCP server did not start: {problem}");
                    inner.failures.push((name, problem));
                }
            }
        }
        McpServers { inner: Arc::new(inner) }
    }

    fn failed(name: &str, problem: String) -> McpServers {
        tracing::warn!("{name}: {problem}");
        McpServers { inner: Arc::new(Inner { failures: vec![(name.to_string(), problem)], ..Default::default() }) }
    }

    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.inner.tools
    }

    /// (server, why) for each server that did not start.
    pub fn failures(&self) -> &[(String, String)] {
        &self.inner.failures
    }

    /// (server, [(tool, description)]) of the servers that started.
    pub fn listing(&self) -> &[(String, Vec<(String, String)>)] {
        &self.inner.listing
    }
}

async fn start_server(
    name: &str,
    config: &ServerConfig,
    root: &Path,
) -> Result<(RunningService<RoleClient, ()>, Vec<Value>), String> {
    let service = match (config.kind.as_deref(), &config.command, &config.url) {
        (Some("http" | "streamable-http" | "streamableHttp") | None, None, Some(url)) => {
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut headers = HashMap::new();
            let mut auth = None;
            for (key, value) in &config.headers {
                if let Some(token) = value.strip_prefix("Bearer ").filter(|_| key.eq_ignore_ascii_case("authorization"))
                {
                    auth = Some(token.to_string());
                    continue;
                }
                let key = http::HeaderName::from_bytes(key.as_bytes()).map_err(|e| format!("header {key}: {e}"))?;
                let value = http::HeaderValue::from_str(value).map_err(|e| format!("header {key}: {e}"))?;
                headers.insert(key, value);
            }
            let mut transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers);
            if let Some(token) = auth {
                transport_config = transport_config.auth_header(token);
            }
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            ().serve(transport).await.map_err(|e| format!("cannot connect to {url}: {e}"))?
        }
        (Some("stdio") | None, Some(command), _) => {
            let mut process = tokio::process::Command::new(command);
            process.args(&config.args).envs(&config.env).current_dir(root).kill_on_drop(true);
            // If tack dies without stopping it, the kernel does.
            // SAFETY: prctl is async-signal-safe.
            unsafe {
                process.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let mut wrapped = process_wrap9::tokio::CommandWrap::from(process);
            // The server and anything it starts stop together.
            wrapped.wrap(process_wrap9::tokio::ProcessGroup::leader()).wrap(process_wrap9::tokio::KillOnDrop);
            let (transport, _) = rmcp::transport::TokioChildProcess::builder(wrapped)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            ().serve(transport).await.map_err(|e| format!("`{command}` did not start an MCP session: {e}"))?
        }
        (kind, _, _) => {
            return Err(format!(
                "server {name} needs a `command` (stdio) or a `url` (http){}",
                kind.map(|k| format!("; type `{k}` is not supported")).unwrap_or_default()
            ));
        }
    };
    let tools = service.peer().list_all_tools().await.map_err(|e| format!("cannot list its tools: {e}"))?;
    let tools = tools.into_iter().filter_map(|tool| serde_json::to_value(tool).ok()).collect();
    Ok((service, tools))
}

/// A command word as a shell would need it written.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Tool names may hold letters, digits, `_` and `-` only.
fn clean(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// A `'static` copy of a tool's name or description: tools name themselves
/// with `&'static str`, and servers are started again for each conversation,
/// so each distinct text is kept once.
fn intern(text: &str) -> &'static str {
    static TEXTS: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut texts = TEXTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = texts.get(text) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
    texts.insert(text.to_string(), leaked);
    leaked
}

struct McpTool {
    name: &'static str,
    description: &'static str,
    /// The tool's name on its server.
    remote: String,
    schema: Value,
    server: Arc<Server>,
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    /// What a server's tool does is unknown: it is gated like a command.
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn set(&self) -> ToolSet {
        ToolSet::Mcp
    }

    fn paths(&self, _input: &Value) -> Vec<String> {
        Vec::new()
    }

    fn available(&self) -> bool {
        self.server.alive.load(Ordering::SeqCst)
    }

    async fn call(&self, input: Value, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        if !self.available() {
            let why = self.server.death.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
            return Err(ToolError::Invalid(format!(
                "the MCP server {} has stopped ({why}); its tools are no longer available",
                self.server.name
            )));
        }
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = input.as_object().cloned();
        let result = tokio::select! {
            result = self.server.peer.call_tool(params) => result,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Invalid("cancelled".into())),
        };
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                let why = error.to_string();
                if self.server.peer.is_transport_closed() {
                    self.server.died(why.clone());
                    return Err(ToolError::Invalid(format!(
                        "the MCP server {} stopped during the call ({why}); its tools are no longer available",
                        self.server.name
                    )));
                }
                return Err(ToolError::Invalid(format!("{} failed: {why}", self.name)));
            }
        };
        let result = serde_json::to_value(result).unwrap_or(Value::Null);
        let text = render(&result);
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(ToolError::Invalid(if text.is_empty() { format!("{} failed", self.name) } else { text }));
        }
        let summary = format!("{}: {}", self.name, text.lines().next().unwrap_or("done"));
        Ok(ToolOutput::ok(text, summary))
    }
}

/// A call's result as text: text as it is, images and audio as a line that
/// says what they were, embedded resources by their text or address.
fn render(result: &Value) -> String {
    let mut parts = Vec::new();
    for item in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match text("type") {
            "text" => parts.push(text("text").to_string()),
            kind @ ("image" | "audio") => {
                let bytes = text("data").len() * 3 / 4;
                parts.push(format!("[{kind}: {}, about {bytes} bytes, not shown]", text("mimeType")));
            }
            "resource" => {
                let resource = item.get("resource").cloned().unwrap_or(Value::Null);
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                match resource.get("text").and_then(Value::as_str) {
                    Some(body) => parts.push(format!("[resource {uri}]\n{body}")),
                    None => parts.push(format!("[resource {uri}, binary, not shown]")),
                }
            }
            "resource_link" => parts.push(format!("[resource link {}]", text("uri"))),
            other => parts.push(format!("[{other} content, not shown]")),
        }
    }
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.push(structured.to_string());
        }
    }
    let mut text = parts.join("\n");
    if text.chars().count() > MAX_RESULT_CHARS {
        let end = text.char_indices().nth(MAX_RESULT_CHARS).map_or(text.len(), |(i, _)| i);
        text.truncate(end);
        text.push_str("\n[… cut: the result is longer …]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_text_with_media_summarised() {
        let result = serde_json::json!({"content": [
            {"type": "text", "text": "two files"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
        ]});
        assert_eq!(
            render(&result),
            "two files\n[image: image/png, about 3 bytes, not shown]\n[resource file:///a.txt]\nhello"
        );
        assert_eq!(render(&serde_json::json!({"content": [], "structuredContent": {"n": 1}})), "{\"n\":1}");
        assert_eq!(clean("my server.v2"), "my_server_v2");
    }
}
