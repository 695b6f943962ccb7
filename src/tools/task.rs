//! The task tools: a task list per conversation that the model keeps to plan
//! and track multi-step work. The list is saved with the session, so a resumed
//! conversation finds it again.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool, plural};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

impl TaskStatus {
    fn mark(self) -> &'static str {
        match self {
            TaskStatus::Pending => "[ ]",
            TaskStatus::InProgress => "[~]",
            TaskStatus::Completed => "[x]",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: u32,
    pub subject: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub status: TaskStatus,
    /// Tasks that must be completed before this one can start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<u32>,
}

/// The task list of one conversation, in creation order.
#[derive(Debug, Default)]
pub struct Tasks {
    tasks: Vec<Task>,
    /// Bumped on every change, so the conversation knows when to save.
    revision: u64,
}

impl Tasks {
    pub fn from_tasks(tasks: Vec<Task>) -> Tasks {
        Tasks { tasks, revision: 0 }
    }

    pub fn all(&self) -> &[Task] {
        &self.tasks
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    fn get(&self, id: u32) -> Result<&Task, ToolError> {
        self.tasks.iter().find(|t| t.id == id).ok_or_else(|| self.missing(id))
    }

    fn missing(&self, id: u32) -> ToolError {
        let known: Vec<String> = self.tasks.iter().map(|t| t.id.to_string()).collect();
        ToolError::Invalid(if known.is_empty() {
            format!("no task {id}: the task list is empty")
        } else {
            format!("no task {id}; the tasks are {}", known.join(", "))
        })
    }

    /// Tasks named in `blocked_by` that are not done yet.
    fn open_blockers(&self, task: &Task) -> Vec<u32> {
        task.blocked_by
            .iter()
            .copied()
            .filter(|id| self.tasks.iter().any(|t| t.id == *id && t.status != TaskStatus::Completed))
            .collect()
    }

    fn line(&self, task: &Task) -> String {
        let mut line = format!("{} #{} {}", task.status.mark(), task.id, task.subject);
        let blockers = self.open_blockers(task);
        if !blockers.is_empty() {
            let ids: Vec<String> = blockers.iter().map(|id| format!("#{id}")).collect();
            line.push_str(&format!(" (blocked by {})", ids.join(", ")));
        }
        line
    }

    fn listing(&self) -> String {
        if self.tasks.is_empty() {
            return "the task list is empty".to_string();
        }
        self.tasks.iter().map(|t| self.line(t)).collect::<Vec<_>>().join("\n")
    }
}

fn with_tasks<T>(ctx: &ToolContext<'_>, f: impl FnOnce(&mut Tasks) -> T) -> T {
    f(&mut ctx.state.tasks.lock().unwrap_or_else(|e| e.into_inner()))
}

pub struct TaskCreate;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// A short imperative title, e.g. "Add a test for the parser".
    subject: String,
    /// What done means, in a sentence or two.
    description: Option<String>,
    /// Ids of tasks that must be completed first.
    blocked_by: Option<Vec<u32>>,
}

#[async_trait]
impl TypedTool for TaskCreate {
    type Input = TaskCreateInput;
    const NAME: &'static str = "TaskCreate";
    const DESCRIPTION: &'static str =
        "Add a task to this conversation's task list (status pending). Use the list to plan work of several steps.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &TaskCreateInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: TaskCreateInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        with_tasks(ctx, |list| {
            let blocked_by = input.blocked_by.unwrap_or_default();
            for id in &blocked_by {
                list.get(*id)?;
            }
            let id = list.tasks.iter().map(|t| t.id).max().unwrap_or(0) + 1;
            let task = Task {
                id,
                subject: input.subject.trim().to_string(),
                description: input.description.unwrap_or_default(),
                status: TaskStatus::Pending,
                blocked_by,
            };
            let summary = format!("created task #{id}: {}", task.subject);
            list.tasks.push(task);
            list.revision += 1;
            Ok(ToolOutput::ok(format!("{summary}\n\n{}", list.listing()), summary))
        })
    }
}

pub struct TaskGet;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskIdInput {
    id: u32,
}

#[async_trait]
impl TypedTool for TaskGet {
    type Input = TaskIdInput;
    const NAME: &'static str = "TaskGet";
    const DESCRIPTION: &'static str = "Show one task of the task list in full: subject, description, status, blockers.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &TaskIdInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: TaskIdInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        with_tasks(ctx, |list| {
            let task = list.get(input.id)?;
            let mut out = list.line(task);
            if !task.description.is_empty() {
                out.push_str(&format!("\n\n{}", task.description));
            }
            Ok(ToolOutput::ok(out, format!("task #{}", task.id)))
        })
    }
}

pub struct TaskList;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {}

#[async_trait]
impl TypedTool for TaskList {
    type Input = TaskListInput;
    const NAME: &'static str = "TaskList";
    const DESCRIPTION: &'static str = "List every task with its status: [ ] pending, [~] in progress, [x] completed.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &TaskListInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, _: TaskListInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        with_tasks(ctx, |list| {
            let done = list.tasks.iter().filter(|t| t.status == TaskStatus::Completed).count();
            let summary = format!("{} done of {}", done, plural(list.tasks.len(), "task"));
            Ok(ToolOutput::ok(list.listing(), summary))
        })
    }
}

pub struct TaskUpdate;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    id: u32,
    status: Option<TaskStatus>,
    subject: Option<String>,
    description: Option<String>,
    /// Replaces the ids of tasks that must be completed first.
    blocked_by: Option<Vec<u32>>,
    /// Removes the task from the list.
    delete: Option<bool>,
}

#[async_trait]
impl TypedTool for TaskUpdate {
    type Input = TaskUpdateInput;
    const NAME: &'static str = "TaskUpdate";
    const DESCRIPTION: &'static str = "Change a task: its status (pending, in_progress, completed), subject, description or blockers; or delete it. Mark a task in_progress when starting it and completed when done.";
    const KIND: ToolKind = ToolKind::ReadOnly;
    const SET: ToolSet = ToolSet::Agent;

    fn paths(_: &TaskUpdateInput) -> Vec<String> {
        Vec::new()
    }

    async fn call(&self, input: TaskUpdateInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        with_tasks(ctx, |list| {
            let id = input.id;
            list.get(id)?;
            if input.delete == Some(true) {
                list.tasks.retain(|t| t.id != id);
                for task in &mut list.tasks {
                    task.blocked_by.retain(|b| *b != id);
                }
                list.revision += 1;
                let summary = format!("deleted task #{id}");
                return Ok(ToolOutput::ok(format!("{summary}\n\n{}", list.listing()), summary));
            }
            if let Some(blocked_by) = &input.blocked_by {
                for blocker in blocked_by {
                    if *blocker == id {
                        return Err(ToolError::Invalid(format!("task #{id} cannot block itself")));
                    }
                    list.get(*blocker)?;
                }
            }
            let index = list.tasks.iter().position(|t| t.id == id).unwrap_or_default();
            if input.status == Some(TaskStatus::InProgress) {
                let blockers = list.open_blockers(&list.tasks[index]);
                if !blockers.is_empty() && input.blocked_by.is_none() {
                    let ids: Vec<String> = blockers.iter().map(|b| format!("#{b}")).collect();
                    return Err(ToolError::Invalid(format!(
                        "task #{id} is blocked by {}: complete those first",
                        ids.join(", ")
                    )));
                }
            }
            let task = &mut list.tasks[index];
            if let Some(status) = input.status {
                task.status = status;
            }
            if let Some(subject) = input.subject {
                task.subject = subject.trim().to_string();
            }
            if let Some(description) = input.description {
                task.description = description;
            }
            if let Some(blocked_by) = input.blocked_by {
                task.blocked_by = blocked_by;
            }
            list.revision += 1;
            let summary = format!("updated task #{id}");
            Ok(ToolOutput::ok(format!("{summary}\n\n{}", list.listing()), summary))
        })
    }
}
