//! The Tool trait, the registry of enabled tools, and one file per tool.
//!
//! Adding a tool: write its file with an input type deriving `Deserialize` and
//! `JsonSchema`, implement [`TypedTool`], add it to [`ToolRegistry::builtin`],
//! add its test. The registry validates every input against the tool's schema
//! before the tool sees it, so a tool's `call` only handles well-typed input.

mod agent;
mod ask_user;
mod bash;
mod delete_file;
mod edit;
mod git;
mod glob;
mod grep;
mod list_dir;
pub mod mcp;
mod move_file;
mod multi_edit;
pub mod process;
mod read;
pub mod reaper;
mod remember;
mod repl;
pub mod sandbox;
pub mod skill;
pub use remember::{MEMORY_FILE, recent_memory};
mod sleep;
pub mod task;
mod web;
mod write;

use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::{ToolProfile, ToolSettings};
use crate::workspace::edits::{EditOutcome, FileChange};
use crate::workspace::{Workspace, WorkspaceError, WorkspacePath};

pub use crate::config::ToolSet;
pub use crate::protocol::{ToolKind, ToolSpec};

/// The tools of the compact profile: enough to find, read and change code.
/// Bash is left out: small models reach for it to change files they have not
/// read (`sed -i` on guessed text), past the guards of Edit and Write.
pub const COMPACT_TOOLS: [&str; 6] = ["Read", "Glob", "Grep", "ListDir", "Edit", "Write"];

/// What a call produced. An error result is still a result: the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub output: String,
    /// One line; what compaction keeps and what front ends show collapsed.
    pub summary: String,
    pub is_error: bool,
    /// A change the workspace already showed: nothing was changed.
    pub already_done: bool,
}

impl ToolOutput {
    pub fn ok(output: impl Into<String>, summary: impl Into<String>) -> Self {
        ToolOutput { output: output.into(), summary: summary.into(), is_error: false, already_done: false }
    }

    /// The result of a change the workspace already shows.
    pub fn already_done(output: impl Into<String>, summary: impl Into<String>) -> Self {
        ToolOutput { already_done: true, ..ToolOutput::ok(output, summary) }
    }

    pub fn error(message: impl Into<String>) -> Self {
        let output = message.into();
        let summary = output.lines().next().unwrap_or("error").to_string();
        ToolOutput { output, summary, is_error: true, already_done: false }
    }
}

/// Failures a tool reports; each becomes an error result the model can read.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The input was well-formed but cannot be carried out (e.g. `old_string` not found).
    #[error("{0}")]
    Invalid(String),
}

/// Where edits go. The agent implements it over its front end, emitting the
/// edit events around the front end's decision.
#[async_trait]
pub trait EditGate: Send + Sync {
    async fn propose(&self, change: FileChange) -> EditOutcome;
}

/// Puts the model's questions to the user (the AskUser tool). The agent core
/// implements it over its front end.
#[async_trait]
pub trait UserQuestions: Send + Sync {
    /// The user's answer, or why there is none (no terminal, dismissed).
    async fn ask(&self, question: &str, choices: &[String]) -> Result<String, String>;
}

/// Runs nested agents for the Agent tool. The agent core implements it, so
/// tools need not know how a conversation is built.
#[async_trait]
pub trait AgentRunner: Send + Sync {
    /// Runs a fresh agent named `name` on `prompt` until it answers, and
    /// returns its answer. The call's cancellation token stops it.
    async fn run(&self, name: &str, description: &str, prompt: &str) -> Result<String, ToolError>;
}

/// What lives as long as a conversation and belongs to its tools: the
/// interpreters of REPL, the task list, and which files the model has read.
/// Dropping it stops the interpreters.
#[derive(Default)]
pub struct ConversationState {
    pub(crate) repl: tokio::sync::Mutex<repl::Interpreters>,
    pub(crate) tasks: std::sync::Mutex<task::Tasks>,
    reads: std::sync::Mutex<ReadLedger>,
}

/// The files the model has seen, as it saw them: an edit of a file it never
/// read, or that changed since, is made blind (a model guesses the old text
/// and mangles the file), so Edit, MultiEdit and Write refuse it.
#[derive(Default)]
struct ReadLedger {
    /// Absolute path -> hash of the text the model last saw.
    seen: std::collections::HashMap<std::path::PathBuf, u64>,
    /// New files whose name exists in another folder, already pointed out once.
    warned: std::collections::HashSet<std::path::PathBuf>,
    /// The last change made: the file, and the hashes of its text before and
    /// after. Forgotten when a turn starts or a command runs.
    last_change: Option<(std::path::PathBuf, u64, u64)>,
}

/// Lines of a file a refused blind edit shows; longer files must be Read.
const SHOWN_ON_BLIND_EDIT: usize = 400;

fn text_hash(text: &str) -> u64 {
    crate::text::fnv1a(text.as_bytes())
}

impl ConversationState {
    fn ledger(&self) -> std::sync::MutexGuard<'_, ReadLedger> {
        self.reads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The model has seen `text` as the contents of `path`.
    pub(crate) fn note_read(&self, path: &WorkspacePath, text: &str) {
        self.ledger().seen.insert(path.abs.clone(), text_hash(text));
    }

    /// Whether the model last saw `path` holding `text`.
    pub(crate) fn has_read(&self, path: &WorkspacePath, text: &str) -> bool {
        self.ledger().seen.get(&path.abs) == Some(&text_hash(text))
    }

    /// The files the model has read, as absolute paths.
    pub(crate) fn read_paths(&self) -> Vec<std::path::PathBuf> {
        let mut paths: Vec<_> = self.ledger().seen.keys().cloned().collect();
        paths.sort();
        paths
    }

    /// Refuses a change to the existing file `path`, now holding `current`,
    /// unless the model has read it as it is. A file short enough to show is
    /// shown in the refusal, and counts as read: the model can make the
    /// change right away, from the real text (a small model told to go and
    /// read tends to pass the advice on to the user instead). `retry` says
    /// what the model is to do next.
    pub(crate) fn check_read(&self, path: &WorkspacePath, current: &str, retry: Retry<'_>) -> Result<(), ToolError> {
        let why = match self.ledger().seen.get(&path.abs) {
            None => format!("you had not read {}", path.display()),
            Some(hash) if *hash != text_hash(current) => {
                format!("{} has changed since you last read it", path.display())
            }
            Some(_) => return Ok(()),
        };
        if current.lines().count() > SHOWN_ON_BLIND_EDIT {
            return Err(ToolError::Invalid(format!(
                "nothing was changed: {why}. Read it now (Read with file_path {0}), then make the change again \
                 with old_string copied exactly from what Read shows",
                path.display()
            )));
        }
        self.note_read(path, current);
        let (next, after) = match retry {
            Retry::SameCall => {
                ("it now counts as read, and your old_string matches it: make the same call again now", String::new())
            }
            Retry::CopyOldString(problem) => (
                "make the change again, with old_string copied exactly from these lines (without the line numbers)",
                // Why the call as made would fail too, with the calls that
                // would not: told only to copy, the model makes it again.
                format!("The call as made would also fail: {problem}\n"),
            ),
            Retry::WholeFile => ("write it again with the whole new contents, keeping what should stay", String::new()),
        };
        Err(ToolError::Invalid(format!(
            "nothing was changed: {why}. Here it is now; {next}:\n{}{after}",
            number_all_lines(current)
        )))
    }

    /// After a change was proposed: the model knows the file as it now is.
    /// `before` is the text the change started from, when putting it back
    /// right away would be a flip (see `refuse_undo`).
    pub(crate) fn note_changed(&self, workspace: &Workspace, path: &WorkspacePath, before: Option<&str>) {
        match workspace.read_text(path) {
            Ok(text) => {
                self.note_read(path, &text);
                let before = before.map(text_hash);
                let after = text_hash(&text);
                if let Some(before) = before.filter(|before| *before != after) {
                    self.ledger().last_change = Some((path.abs.clone(), before, after));
                }
            }
            Err(_) => {
                self.ledger().seen.remove(&path.abs);
            }
        }
    }

    /// Refuses a change that would put `path` back as it was before the
    /// change made just before it. Small models flip a change back and
    /// forth (`TIMEOUT = 60`, then `TIMEOUT = 30`, then 60 again) until the
    /// turn runs out, ending wherever the flipping stopped. A run of a
    /// command between the two (adding a debug line, running, taking it
    /// out) is not a flip: that forgets the last change.
    pub(crate) fn refuse_undo(&self, path: &WorkspacePath, before: &str, after: &str) -> Option<ToolOutput> {
        let undoes = self.ledger().last_change.as_ref().is_some_and(|(changed, was, is)| {
            *changed == path.abs && *is == text_hash(before) && *was == text_hash(after)
        });
        undoes.then(|| {
            ToolOutput::already_done(
                format!(
                    "nothing was changed: this would put {0} back as it was before your last change, undoing it. \
                     If that change was right, it stands and the task is done: say so. If it was wrong, make a \
                     different change.",
                    path.display()
                ),
                format!("{} kept", path.display()),
            )
        })
    }

    /// Whether the last change (since the turn started or a command ran) was to `path`.
    pub(crate) fn changed_last(&self, path: &WorkspacePath) -> bool {
        self.ledger().last_change.as_ref().is_some_and(|(changed, _, _)| *changed == path.abs)
    }

    /// A turn starts, or a command runs: a change undone after it is meant.
    pub(crate) fn forget_last_change(&self) {
        self.ledger().last_change = None;
    }

    /// Refuses, once, to create `path` when a file of that name exists in
    /// another folder: the model most likely guessed the folder wrong.
    pub(crate) fn check_new_file(&self, workspace: &Workspace, path: &WorkspacePath) -> Result<(), ToolError> {
        let elsewhere = crate::workspace::snapshot::same_name_elsewhere(workspace.root(), &path.real_rel);
        if elsewhere.is_empty() || !self.ledger().warned.insert(path.abs.clone()) {
            return Ok(());
        }
        Err(ToolError::Invalid(format!(
            "{} does not exist, but {} does: to change that file, Read it and Edit it; \
             to create a new file at {} anyway, repeat this Write",
            path.display(),
            elsewhere.join(" and "),
            path.display()
        )))
    }
}

/// What a model refused a change to an unread file is to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry<'a> {
    /// The change as called would apply: make it again, unchanged (a small
    /// model told to "copy old_string" works out a new, worse one).
    SameCall,
    /// The change would not apply, for this reason: copy old_string from
    /// the file shown.
    CopyOldString(&'a str),
    /// A Write: the file's whole contents.
    WholeFile,
}

impl ConversationState {
    /// State of a resumed conversation.
    pub fn with_tasks(tasks: Vec<task::Task>) -> ConversationState {
        ConversationState { tasks: std::sync::Mutex::new(task::Tasks::from_tasks(tasks)), ..Default::default() }
    }

    /// Stops every interpreter: what a cancelled turn leaves behind must not run on.
    pub async fn stop_processes(&self) {
        self.repl.lock().await.kill_all();
    }

    /// The task list, as the task tools left it.
    pub fn tasks(&self) -> Vec<task::Task> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner()).all().to_vec()
    }

    /// A number that changes whenever the task list does.
    pub fn tasks_revision(&self) -> u64 {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner()).revision()
    }
}

/// What a running tool may use.
pub struct ToolContext<'a> {
    pub workspace: &'a Workspace,
    pub edits: &'a dyn EditGate,
    /// Cancelled when the turn is: long-running tools stop at the next check.
    pub cancel: CancellationToken,
    /// The id of the call being run.
    pub tool_call_id: &'a str,
    pub state: &'a ConversationState,
    pub agents: &'a dyn AgentRunner,
    pub user: &'a dyn UserQuestions,
}

/// A tool as the agent sees it: untyped JSON in, [`ToolOutput`] out.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn input_schema(&self) -> Value;
    fn kind(&self) -> ToolKind;
    fn set(&self) -> ToolSet;
    /// The workspace paths the call would touch, for permission rules. The
    /// input has already been validated against the schema.
    fn paths(&self, input: &Value) -> Vec<String>;
    /// The command line the call would run, for command rules.
    fn command(&self, _input: &Value) -> Option<String> {
        None
    }
    /// Under which OS sandbox the call's commands run, for the permission prompt.
    fn sandbox(&self) -> Option<String> {
        None
    }
    /// Whether the tool can still run (an MCP server's tool stops when its
    /// server does); unavailable tools are left out of the prompt.
    fn available(&self) -> bool {
        true
    }
    async fn call(&self, input: Value, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError>;
}

/// A tool with a typed input. A blanket impl makes every `TypedTool` a [`Tool`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    type Input: DeserializeOwned + schemars::JsonSchema + Send;
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    const KIND: ToolKind;
    const SET: ToolSet;
    fn paths(input: &Self::Input) -> Vec<String>;
    fn command(_input: &Self::Input) -> Option<String> {
        None
    }
    /// Under which OS sandbox the tool's commands run, for the permission prompt.
    fn sandbox(&self) -> Option<String> {
        None
    }
    async fn call(&self, input: Self::Input, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }
    fn input_schema(&self) -> Value {
        // Inlined subschemas keep each schema self-contained: a model reads
        // it whole, and grammars are built from several schemas combined.
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|settings| settings.inline_subschemas = true)
            .into_generator();
        let mut schema = serde_json::to_value(generator.into_root_schema_for::<T::Input>()).unwrap_or(Value::Null);
        if let Some(object) = schema.as_object_mut() {
            // Noise for a model reading the prompt; the validator does not need them.
            object.remove("$schema");
            object.remove("title");
        }
        schema
    }
    fn kind(&self) -> ToolKind {
        T::KIND
    }
    fn set(&self) -> ToolSet {
        T::SET
    }
    fn paths(&self, input: &Value) -> Vec<String> {
        serde_json::from_value::<T::Input>(input.clone()).map(|i| T::paths(&i)).unwrap_or_default()
    }
    fn sandbox(&self) -> Option<String> {
        TypedTool::sandbox(self)
    }
    fn command(&self, input: &Value) -> Option<String> {
        serde_json::from_value::<T::Input>(input.clone()).ok().and_then(|i| T::command(&i))
    }
    async fn call(&self, input: Value, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let input = serde_json::from_value::<T::Input>(input)
            .map_err(|e| ToolError::Invalid(format!("invalid input for {}: {e}", T::NAME)))?;
        TypedTool::call(self, input, ctx).await
    }
}

struct Registered {
    tool: Arc<dyn Tool>,
    schema: Value,
    validator: jsonschema::Validator,
}

/// Why a call cannot run at all. The message is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallProblem {
    #[error("unknown tool `{name}`; the available tools are: {available}")]
    UnknownTool { name: String, available: String },
    #[error("invalid input for {name}: {problems}\nexpected input (JSON schema): {schema}")]
    SchemaViolation { name: String, problems: String, schema: String },
}

/// The enabled tools, in prompt order, each with its compiled input validator.
pub struct ToolRegistry {
    tools: Vec<Registered>,
    /// The skills the Skill tool loads, when it is offered.
    skills: Option<Arc<skill::SkillCatalog>>,
    /// The MCP servers whose tools are here, kept running with the registry.
    mcp: Option<mcp::McpServers>,
    /// The resolved profile: with `WholeFiles` (and `Adaptive` on the turns
    /// that hand over files) the model is offered no tools and answers with
    /// whole files; the tools here apply its changes.
    profile: ToolProfile,
    /// Tools never offered to the model that the harness calls itself, as
    /// any call is made, approved and run: Bash, with the whole-file
    /// profiles, for the command a prompt asks to run.
    harness_only: Vec<Registered>,
}

impl ToolRegistry {
    /// Every built-in tool whose set is not disabled.
    /// The built-in tools the settings enable, sized to a model: the profile
    /// is resolved from its context window and parameter count.
    pub fn for_model(settings: &ToolSettings, context_window: usize, parameters: Option<u64>) -> ToolRegistry {
        let mut settings = settings.clone();
        settings.profile = settings.profile.resolve(context_window, parameters);
        ToolRegistry::builtin(&settings)
    }

    /// The built-in tools the settings enable; `auto` counts as `full`.
    pub fn builtin(settings: &ToolSettings) -> ToolRegistry {
        let processes = Arc::new(process::ProcessSettings::from_settings(settings));
        let mut all: Vec<Arc<dyn Tool>> = vec![
            Arc::new(read::Read),
            Arc::new(glob::Glob),
            Arc::new(grep::Grep),
            Arc::new(list_dir::ListDir),
            Arc::new(write::Write),
            Arc::new(edit::Edit),
            Arc::new(multi_edit::MultiEdit),
            Arc::new(move_file::Move),
            Arc::new(delete_file::DeleteFile),
            Arc::new(remember::Remember),
            Arc::new(bash::Bash { settings: processes.clone() }),
            Arc::new(sleep::Sleep),
            Arc::new(repl::Repl { settings: processes.clone() }),
            Arc::new(git::GitStatus { settings: processes.clone() }),
            Arc::new(git::GitDiff { settings: processes.clone() }),
            Arc::new(git::GitLog { settings: processes.clone() }),
            Arc::new(git::GitShow { settings: processes.clone() }),
            Arc::new(agent::Agent),
            Arc::new(ask_user::AskUser),
            Arc::new(task::TaskCreate),
            Arc::new(task::TaskGet),
            Arc::new(task::TaskList),
            Arc::new(task::TaskUpdate),
            Arc::new(web::WebFetch { settings: settings.web.clone() }),
        ];
        if let Some(search) = &settings.web.search {
            all.push(Arc::new(web::WebSearch { settings: settings.web.clone(), search: search.clone() }));
        }
        let compact =
            matches!(settings.profile, ToolProfile::Compact | ToolProfile::WholeFiles | ToolProfile::Adaptive);
        let whole_files = matches!(settings.profile, ToolProfile::WholeFiles | ToolProfile::Adaptive);
        let (offered, rest): (Vec<_>, Vec<_>) = all
            .into_iter()
            .filter(|t| !settings.disabled.contains(&t.set()))
            .partition(|t| !compact || COMPACT_TOOLS.contains(&t.name()));
        let mut registry = ToolRegistry::new(offered);
        if whole_files {
            registry.harness_only = ToolRegistry::new(rest.into_iter().filter(|t| t.name() == "Bash")).tools;
        }
        registry.profile = match settings.profile {
            ToolProfile::Auto => ToolProfile::Full,
            chosen => chosen,
        };
        registry
    }

    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> ToolRegistry {
        let tools = tools
            .into_iter()
            .map(|tool| {
                let schema = tool.input_schema();
                let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| {
                    // A built-in schema that does not compile is a programming error
                    // caught by the registry tests, not a runtime condition.
                    panic!("schema of tool {} does not compile: {e}", tool.name())
                });
                Registered { tool, schema, validator }
            })
            .collect();
        ToolRegistry { tools, skills: None, mcp: None, profile: ToolProfile::Full, harness_only: Vec::new() }
    }

    /// Adds the Skill tool when there are skills and reading is enabled.
    pub fn with_skills(mut self, catalog: skill::SkillCatalog, settings: &ToolSettings) -> ToolRegistry {
        if catalog.is_empty() || settings.disabled.contains(&ToolSet::Read) {
            return self;
        }
        let catalog = Arc::new(catalog);
        let mut with_skill = ToolRegistry::new([Arc::new(skill::Skill { catalog: catalog.clone() }) as Arc<dyn Tool>]);
        self.tools.append(&mut with_skill.tools);
        self.skills = Some(catalog);
        self
    }

    /// Adds the tools of the started MCP servers, unless the `mcp` set is
    /// off; the registry keeps the servers running as long as it lives.
    pub fn with_mcp(mut self, servers: mcp::McpServers, settings: &ToolSettings) -> ToolRegistry {
        if settings.disabled.contains(&ToolSet::Mcp) || servers.tools().is_empty() {
            return self;
        }
        // A server's schema that does not compile would leave its tool's
        // input unchecked: such a tool is left out.
        let usable = servers.tools().iter().filter(|tool| match jsonschema::validator_for(&tool.input_schema()) {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(tool = tool.name(), "MCP tool left out: its input schema does not compile: {error}");
                false
            }
        });
        let mut added = ToolRegistry::new(usable.cloned());
        self.tools.append(&mut added.tools);
        self.mcp = Some(servers);
        self
    }

    /// The skills of the Skill tool, when it is offered.
    pub fn skills(&self) -> Option<&skill::SkillCatalog> {
        self.skills.as_deref()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|r| r.tool.name() == name).map(|r| &r.tool)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|r| r.tool.name())
    }

    /// The profile the tools were chosen by, resolved: never `Auto`.
    pub fn profile(&self) -> ToolProfile {
        self.profile
    }

    /// The tools offered to the model, keeping only those `visible` admits.
    pub fn specs(&self, visible: impl Fn(ToolKind) -> bool) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|r| visible(r.tool.kind()) && r.tool.available())
            .map(|r| ToolSpec {
                name: r.tool.name().to_string(),
                description: r.tool.description().to_string(),
                input_schema: r.schema.clone(),
            })
            .collect()
    }

    /// Whether the harness may call `name` itself (see `harness_only`).
    pub fn harness_can_call(&self, name: &str) -> bool {
        self.harness_only.iter().chain(&self.tools).any(|r| r.tool.name() == name)
    }

    /// As `check`, for a call the harness makes itself: among the tools
    /// offered and those only it calls.
    pub fn check_harness_call(&self, name: &str, input: &Value) -> Result<&Arc<dyn Tool>, CallProblem> {
        match self.harness_only.iter().find(|r| r.tool.name() == name) {
            Some(registered) => Self::validated(registered, input),
            None => self.check(name, input),
        }
    }

    /// Finds the tool and checks the input against its schema.
    pub fn check(&self, name: &str, input: &Value) -> Result<&Arc<dyn Tool>, CallProblem> {
        let Some(registered) = self.tools.iter().find(|r| r.tool.name() == name) else {
            return Err(CallProblem::UnknownTool {
                name: name.to_string(),
                available: self.names().collect::<Vec<_>>().join(", "),
            });
        };
        Self::validated(registered, input)
    }

    fn validated<'r>(registered: &'r Registered, input: &Value) -> Result<&'r Arc<dyn Tool>, CallProblem> {
        let problems: Vec<String> = registered
            .validator
            .iter_errors(input)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() { error.to_string() } else { format!("at {at}: {error}") }
            })
            .collect();
        if problems.is_empty() {
            Ok(&registered.tool)
        } else {
            Err(CallProblem::SchemaViolation {
                name: registered.tool.name().to_string(),
                problems: problems.join("; "),
                schema: registered.schema.to_string(),
            })
        }
    }
}

/// Numbered lines as `cat -n` prints them: what Read returns and what the
/// model quotes back in edits.
pub(crate) fn number_lines<'a>(lines: impl Iterator<Item = (usize, &'a str)>) -> String {
    let mut out = String::new();
    for (number, line) in lines {
        out.push_str(&format!("{number:>6}\t{line}\n"));
    }
    out
}

/// Every line of `text`, numbered from 1 as Read shows them.
pub(crate) fn number_all_lines(text: &str) -> String {
    number_lines(text.lines().enumerate().map(|(i, line)| (i + 1, line)))
}

/// The folder an optional `path` input names: the root when it is left out
/// or empty (models fill every field of a schema, optional ones with "").
pub(crate) fn folder_or_root(path: &Option<String>) -> &str {
    path.as_deref().filter(|path| !path.trim().is_empty()).unwrap_or(".")
}

/// Counts things for summaries: "1 file", "3 files".
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// Outcome of a proposed change as the model reads it.
pub(crate) fn describe_outcome(outcome: &EditOutcome, done: &str, path: &str) -> Result<ToolOutput, ToolError> {
    match outcome {
        EditOutcome::Applied => Ok(ToolOutput::ok(format!("{done} {path}"), format!("{done} {path}"))),
        EditOutcome::Partial { applied_hunks, total_hunks } => {
            let list: Vec<String> = applied_hunks.iter().map(|h| (h + 1).to_string()).collect();
            let message = format!(
                "the user applied only some hunks of the change to {path}: hunks {} of {total_hunks} landed, the others did not; read the file before editing it again",
                if list.is_empty() { "none".to_string() } else { list.join(", ") }
            );
            Ok(ToolOutput {
                summary: format!("partially applied to {path}"),
                output: message,
                is_error: false,
                already_done: false,
            })
        }
        EditOutcome::Rejected { reason } => {
            Err(ToolError::Invalid(format!("the change to {path} was rejected: {reason}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn without(sets: &[ToolSet]) -> ToolSettings {
        ToolSettings { disabled: sets.iter().copied().collect(), ..ToolSettings::default() }
    }

    #[test]
    fn tool_sets_can_be_switched_off() {
        let all = ToolRegistry::builtin(&ToolSettings::default());
        assert_eq!(
            all.names().collect::<Vec<_>>(),
            [
                "Read",
                "Glob",
                "Grep",
                "ListDir",
                "Write",
                "Edit",
                "MultiEdit",
                "Move",
                "DeleteFile",
                "Remember",
                "Bash",
                "Sleep",
                "REPL",
                "GitStatus",
                "GitDiff",
                "GitLog",
                "GitShow",
                "Agent",
                "AskUser",
                "TaskCreate",
                "TaskGet",
                "TaskList",
                "TaskUpdate",
                "WebFetch"
            ]
        );
        let read_only = ToolRegistry::builtin(&without(&[
            ToolSet::Edit,
            ToolSet::Command,
            ToolSet::Agent,
            ToolSet::Git,
            ToolSet::Web,
        ]));
        assert_eq!(read_only.names().collect::<Vec<_>>(), ["Read", "Glob", "Grep", "ListDir"]);
        let input = serde_json::json!({"file_path": "a", "old_string": "x", "new_string": "y"});
        assert!(matches!(read_only.check("Edit", &input), Err(CallProblem::UnknownTool { .. })));
        let nothing = ToolRegistry::builtin(&without(&[
            ToolSet::Edit,
            ToolSet::Read,
            ToolSet::Command,
            ToolSet::Agent,
            ToolSet::Git,
            ToolSet::Web,
        ]));
        assert_eq!(nothing.names().count(), 0);
    }

    #[test]
    fn schema_violations_name_the_problem_and_show_the_schema() {
        let registry = ToolRegistry::builtin(&ToolSettings::default());
        let problem = registry.check("Read", &serde_json::json!({"file_path": 7})).err().unwrap().to_string();
        assert!(problem.contains("at /file_path") && problem.contains("not of type \"string\""), "{problem}");
        assert!(problem.contains("expected input (JSON schema): {"), "{problem}");
        let problem =
            registry.check("Read", &serde_json::json!({"file_path": "a", "offset": 0})).err().unwrap().to_string();
        assert!(problem.contains("offset"), "{problem}");
    }
}
