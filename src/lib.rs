//! tack: a local-first coding-agent harness that lives inside the editor as a Language Server.
//!
//! The code map, one line a module. Dependency direction:
//! `protocol` <- `agent` <- (`cli`, `lsp`, `acp`); the agent reaches the world
//! only through the traits it owns (`ModelBackend`, `Tool`, `Host`).
//!
//! - [`protocol`]: wire types: messages, events, stop reasons, usage.
//! - [`codemap`]: the workspace's definitions and references, read with tree-sitter, kept current.
//! - [`config`]: settings and their layers (defaults, user, workspace, front end).
//! - [`agent`]: the harness core: conversations, the turn loop, sessions, prompts, hooks.
//! - [`model`]: model backends behind one trait, and the incremental tool-call parser.
//! - [`tools`]: the Tool trait, the registry, one file per tool.
//! - [`permissions`]: modes, rules, sensitive paths, remembered answers (pure functions).
//! - [`workspace`]: the root boundary, buffer overlay, atomic writes, proposed edits.
//! - [`text`]: what names something in code, and a hash stable across processes.
//! - [`cli`]: the headless front end: `tack run`, `tack sessions`.
//! - [`lsp`]: `tack lsp`, the agent as a language server.
//! - [`acp`]: `tack acp`, the agent over the Agent Client Protocol (Zed and others).

pub mod acp;
pub mod agent;
pub mod cli;
pub mod codemap;
pub mod config;
pub mod lsp;
pub mod model;
pub mod permissions;
pub mod protocol;
pub mod text;
pub mod tools;
pub mod workspace;
