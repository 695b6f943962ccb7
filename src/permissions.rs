//! Who may run what: modes, rules, sensitive paths and remembered answers.
//!
//! Pure functions over data: no I/O, no waiting. The turn loop asks
//! [`decide`] for a verdict and, when the verdict is [`Verdict::Ask`], asks the
//! front end. Order of precedence, first match wins:
//! plan mode refusal > sensitive path > deny rule > ask rule > allow rule >
//! remembered "always allow" > the mode's default.

use std::collections::BTreeSet;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::protocol::PermissionMode;
use crate::protocol::ToolKind;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    Allow,
    Deny,
    Ask,
}

/// A permission rule as written in config. Every field given must match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub action: RuleAction,
    /// Tool name, or `*` for any (the default).
    #[serde(default)]
    pub tool: Option<String>,
    /// Glob over workspace-relative paths, e.g. `src/**` or `**/*.lock`.
    #[serde(default)]
    pub path: Option<String>,
    /// Glob over the command line of command tools, e.g. `cargo test*`.
    #[serde(default)]
    pub command: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("invalid permission rule: bad {field} pattern `{pattern}`: {source}")]
pub struct RuleError {
    field: &'static str,
    pattern: String,
    #[source]
    source: globset::Error,
}

#[derive(Debug, Clone)]
struct CompiledRule {
    action: RuleAction,
    tool: Option<String>,
    path: Option<GlobMatcher>,
    command: Option<GlobMatcher>,
    /// The rule as written, for messages.
    text: String,
}

/// A call as permissions see it.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    pub tool: &'a str,
    pub kind: ToolKind,
    /// Workspace-relative paths, both as named and as resolved through symlinks.
    pub paths: &'a [String],
    pub command: Option<&'a str>,
}

/// Who or what settled a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Mode,
    Rule,
    Remembered,
    SensitivePath,
    /// A PreToolUse command hook allowed the call.
    Hook,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Mode => "mode",
            Source::Rule => "rule",
            Source::Remembered => "remembered",
            Source::Hook => "hook",
            Source::SensitivePath => "sensitive_path",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow {
        source: Source,
    },
    Deny {
        reason: String,
        source: Source,
    },
    /// The front end must ask the user; `reason` says why it is asked.
    Ask {
        reason: String,
    },
}

/// The permission state of one conversation.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub mode: PermissionMode,
    rules: Vec<CompiledRule>,
    /// What the user answered "always allow" for, in this conversation: a
    /// tool's name, or for command tools `Tool:program` per program, so that
    /// allowing `ls` always does not allow `rm`.
    remembered: BTreeSet<String>,
}

impl Policy {
    pub fn new(mode: PermissionMode, rules: &[Rule]) -> Result<Policy, RuleError> {
        let compile = |field: &'static str, pattern: &Option<String>| -> Result<Option<GlobMatcher>, RuleError> {
            pattern
                .as_ref()
                .map(|p| {
                    Glob::new(p).map(|g| g.compile_matcher()).map_err(|source| RuleError {
                        field,
                        pattern: p.clone(),
                        source,
                    })
                })
                .transpose()
        };
        let rules = rules
            .iter()
            .map(|rule| {
                Ok(CompiledRule {
                    action: rule.action,
                    tool: rule.tool.clone().filter(|t| t != "*"),
                    path: compile("path", &rule.path)?,
                    command: compile("command", &rule.command)?,
                    text: describe_rule(rule),
                })
            })
            .collect::<Result<_, RuleError>>()?;
        Ok(Policy { mode, rules, remembered: BTreeSet::new() })
    }

    /// Remembers an "always allow" answer for calls like this one. A command
    /// line that cannot be taken apart is not remembered: the next one asks.
    pub fn remember(&mut self, call: &CallFacts<'_>) {
        match call.command {
            None => {
                self.remembered.insert(call.tool.to_string());
            }
            Some(command) => {
                for key in split_command(command).into_iter().flatten().filter_map(|part| program_key(call.tool, &part))
                {
                    self.remembered.insert(key);
                }
            }
        }
    }

    fn is_remembered(&self, call: &CallFacts<'_>) -> bool {
        match call.command {
            None => self.remembered.contains(call.tool),
            Some(command) => split_command(command).is_some_and(|parts| {
                !parts.is_empty()
                    && parts
                        .iter()
                        .all(|part| program_key(call.tool, part).is_some_and(|key| self.remembered.contains(&key)))
            }),
        }
    }

    /// The verdict for one call.
    pub fn decide(&self, call: &CallFacts<'_>) -> Verdict {
        if self.mode == PermissionMode::Plan && call.kind.changes_things() {
            return Verdict::Deny {
                reason: format!("{} is not available in plan mode: only read-only tools run", call.tool),
                source: Source::Mode,
            };
        }
        for path in call.paths {
            if let Some(why) = sensitive_reason(path) {
                return Verdict::Deny {
                    reason: format!("{path} is a sensitive path ({why}); tack never lets the agent touch it"),
                    source: Source::SensitivePath,
                };
            }
        }
        // A line of several commands is as allowed as its least allowed part.
        if let Some(parts) = call.command.and_then(split_command).filter(|parts| parts.len() > 1) {
            let verdicts: Vec<Verdict> =
                parts.iter().map(|part| self.decide(&CallFacts { command: Some(part), ..call.clone() })).collect();
            let deny = verdicts.iter().find(|v| matches!(v, Verdict::Deny { .. }));
            let ask = verdicts.iter().find(|v| matches!(v, Verdict::Ask { .. }));
            return deny
                .or(ask)
                .or(verdicts.first())
                .cloned()
                .unwrap_or(Verdict::Ask { reason: "empty command".into() });
        }
        for action in [RuleAction::Deny, RuleAction::Ask, RuleAction::Allow] {
            let Some(rule) = self.rules.iter().find(|r| r.action == action && r.matches(call)) else {
                continue;
            };
            match action {
                RuleAction::Deny => {
                    return Verdict::Deny { reason: format!("denied by rule {}", rule.text), source: Source::Rule };
                }
                RuleAction::Ask => return Verdict::Ask { reason: format!("rule {} asks", rule.text) },
                // Strict mode: an allow rule does not skip the question.
                RuleAction::Allow if self.mode == PermissionMode::Ask && call.kind.asks() => {}
                RuleAction::Allow => return Verdict::Allow { source: Source::Rule },
            }
        }
        if !call.kind.asks() {
            return Verdict::Allow { source: Source::Mode };
        }
        match self.mode {
            PermissionMode::AutoAll => Verdict::Allow { source: Source::Mode },
            PermissionMode::AutoRead if self.is_remembered(call) => Verdict::Allow { source: Source::Remembered },
            _ => {
                let what = match call.kind {
                    ToolKind::Execute => "runs a command".to_string(),
                    ToolKind::Network => match call.command {
                        Some(host) => format!("reaches {host} on the network"),
                        None => "reaches the network".to_string(),
                    },
                    _ => "changes the workspace".to_string(),
                };
                Verdict::Ask { reason: format!("{} {what}", call.tool) }
            }
        }
    }
}

impl CompiledRule {
    fn matches(&self, call: &CallFacts<'_>) -> bool {
        if self.tool.as_deref().is_some_and(|tool| tool != call.tool) {
            return false;
        }
        if let Some(glob) = &self.path {
            // A deny or ask rule fires when any path matches; an allow rule only
            // when all do, so that one allowed path cannot carry another along.
            let matched = |p: &String| glob.is_match(p.as_str());
            let ok = match self.action {
                RuleAction::Allow => !call.paths.is_empty() && call.paths.iter().all(matched),
                _ => call.paths.iter().any(matched),
            };
            if !ok {
                return false;
            }
        }
        if let Some(glob) = &self.command {
            let Some(command) = call.command else { return false };
            // Rules see each simple command of a line: `a && rm -rf x` is two.
            // A line that cannot be taken apart is never allowed by a rule.
            let ok = match (split_command(command), self.action) {
                (Some(parts), RuleAction::Allow) => !parts.is_empty() && parts.iter().all(|p| glob.is_match(p)),
                (Some(parts), _) => parts.iter().any(|p| glob.is_match(p)),
                (None, RuleAction::Allow) => false,
                (None, _) => glob.is_match(command.trim()),
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

/// Splits a shell command line into its simple commands, at `&&`, `||`,
/// `;`, `|`, `&` and newlines outside quotes, with leading variable
/// assignments and wrappers (`sudo`, `env`, `nohup`, ...) taken off each.
/// `None` when the line holds constructs that can hide other commands
/// (command substitution, subshells, process substitution, here-documents)
/// or has unbalanced quotes: rules cannot judge it.
pub fn split_command(line: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                current.push(c);
            }
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '`' if !single => return None,
            '$' if !single && chars.peek() == Some(&'(') => return None,
            _ if single || double => current.push(c),
            '(' | ')' => return None,
            '<' | '>' if chars.peek() == Some(&'(') => return None,
            '<' if chars.peek() == Some(&'<') => return None,
            ';' | '\n' => parts.push(std::mem::take(&mut current)),
            '&' | '|' => {
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                // `2>&1` and `&>` redirect; they do not separate commands.
                if c == '&' && (current.ends_with('>') || chars.peek() == Some(&'>')) {
                    current.push(c);
                } else {
                    parts.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if single || double || escaped {
        return None;
    }
    parts.push(current);
    Some(parts.iter().filter_map(|part| strip_prefixes(part)).collect())
}

/// What an "always allow" of a simple command covers: its program.
fn program_key(tool: &str, simple_command: &str) -> Option<String> {
    simple_command.split_whitespace().next().map(|program| format!("{tool}:{program}"))
}

/// A simple command without leading `VAR=value` words and wrappers.
fn strip_prefixes(part: &str) -> Option<String> {
    const WRAPPERS: [&str; 7] = ["sudo", "env", "command", "exec", "nohup", "time", "nice"];
    let mut words = part.split_whitespace().peekable();
    while let Some(word) = words.peek() {
        let assignment = word
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if assignment || WRAPPERS.contains(word) {
            words.next();
        } else {
            break;
        }
    }
    let rest: Vec<&str> = words.collect();
    (!rest.is_empty()).then(|| rest.join(" "))
}

fn describe_rule(rule: &Rule) -> String {
    let mut parts = vec![format!("{:?}", rule.action).to_lowercase()];
    if let Some(tool) = &rule.tool {
        parts.push(format!("tool={tool}"));
    }
    if let Some(path) = &rule.path {
        parts.push(format!("path={path}"));
    }
    if let Some(command) = &rule.command {
        parts.push(format!("command={command}"));
    }
    format!("[{}]", parts.join(" "))
}

/// Whether a tool of this kind is offered at all in this mode.
pub fn visible_in_mode(mode: PermissionMode, kind: ToolKind) -> bool {
    mode != PermissionMode::Plan || !kind.changes_things()
}

/// Why a workspace-relative path holds secrets, if it does. Such paths are
/// denied to every tool in every mode, and searches skip them.
pub fn sensitive_reason(rel: &str) -> Option<&'static str> {
    let components: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
    let name = components.last().copied().unwrap_or("");
    let dirs = &components[..components.len().saturating_sub(1)];
    if dirs.contains(&".ssh") {
        return Some("SSH keys");
    }
    if dirs.contains(&".aws") {
        return Some("cloud credentials");
    }
    if dirs.contains(&"secrets") || name == "secrets" {
        return Some("a secrets directory");
    }
    if name == ".ssh" || name == ".aws" {
        return Some("a credentials directory");
    }
    if name == ".env" || (name.starts_with(".env.") && !name.ends_with(".example") && !name.ends_with(".sample")) {
        return Some("environment secrets");
    }
    if name.ends_with(".pem") || name.ends_with(".key") || name.ends_with(".p12") || name.ends_with(".pfx") {
        return Some("a private key or certificate");
    }
    if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
        .iter()
        .any(|key| name == *key || name.starts_with(&format!("{key}.")))
    {
        return Some("an SSH private key");
    }
    if name == "credentials" || name.starts_with("credentials.") {
        return Some("credentials");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(tool: &'a str, kind: ToolKind, paths: &'a [String]) -> CallFacts<'a> {
        CallFacts { tool, kind, paths, command: None }
    }

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn rule(action: RuleAction, tool: Option<&str>, path: Option<&str>) -> Rule {
        Rule { action, tool: tool.map(Into::into), path: path.map(Into::into), command: None }
    }

    #[test]
    fn modes_decide_unruled_calls() {
        let src = paths(&["src/a.rs"]);
        let cases = [
            (PermissionMode::Plan, ToolKind::ReadOnly, "allow"),
            (PermissionMode::Plan, ToolKind::Edit, "deny"),
            (PermissionMode::Plan, ToolKind::Execute, "deny"),
            (PermissionMode::Ask, ToolKind::ReadOnly, "allow"),
            (PermissionMode::Ask, ToolKind::Edit, "ask"),
            (PermissionMode::AutoRead, ToolKind::ReadOnly, "allow"),
            (PermissionMode::AutoRead, ToolKind::Edit, "ask"),
            (PermissionMode::AutoRead, ToolKind::Execute, "ask"),
            (PermissionMode::AutoAll, ToolKind::Edit, "allow"),
            (PermissionMode::AutoAll, ToolKind::Execute, "allow"),
        ];
        for (mode, kind, expected) in cases {
            let verdict = Policy::new(mode, &[]).unwrap().decide(&facts("T", kind, &src));
            let got = match verdict {
                Verdict::Allow { .. } => "allow",
                Verdict::Deny { .. } => "deny",
                Verdict::Ask { .. } => "ask",
            };
            assert_eq!(got, expected, "{mode:?} {kind:?}");
        }
    }

    #[test]
    fn sensitive_paths_are_denied_even_in_auto_all_and_for_reads() {
        let policy = Policy::new(PermissionMode::AutoAll, &[rule(RuleAction::Allow, None, Some("**"))]).unwrap();
        for path in [
            ".env",
            "app/.env.production",
            "certs/server.pem",
            "id_rsa",
            "home/.ssh/config",
            ".aws/credentials",
            "config/secrets/db.yml",
            "credentials.json",
        ] {
            let p = paths(&[path]);
            let verdict = policy.decide(&facts("Read", ToolKind::ReadOnly, &p));
            assert!(matches!(verdict, Verdict::Deny { source: Source::SensitivePath, .. }), "{path}: {verdict:?}");
        }
        for path in ["src/env.rs", ".env.example", "docs/keys.md", "credential_helper.rs"] {
            assert_eq!(sensitive_reason(path), None, "{path}");
        }
    }

    #[test]
    fn rules_deny_before_ask_before_allow() {
        let rules = [
            rule(RuleAction::Allow, Some("Edit"), Some("src/**")),
            rule(RuleAction::Deny, Some("Edit"), Some("src/generated/**")),
            rule(RuleAction::Ask, None, Some("**/*.lock")),
        ];
        let policy = Policy::new(PermissionMode::AutoRead, &rules).unwrap();
        let decide = |tool: &str, kind, list: &[&str]| policy.decide(&facts(tool, kind, &paths(list)));
        assert!(matches!(decide("Edit", ToolKind::Edit, &["src/a.rs"]), Verdict::Allow { source: Source::Rule }));
        assert!(matches!(decide("Edit", ToolKind::Edit, &["src/generated/x.rs"]), Verdict::Deny { .. }));
        assert!(matches!(decide("Write", ToolKind::Edit, &["src/a.rs"]), Verdict::Ask { .. }));
        assert!(matches!(decide("Read", ToolKind::ReadOnly, &["Cargo.lock"]), Verdict::Ask { .. }));
        // An allow rule needs every path to match: a move out of src/ still asks.
        assert!(matches!(decide("Edit", ToolKind::Edit, &["src/a.rs", "b.rs"]), Verdict::Ask { .. }));
    }

    #[test]
    fn remembered_answers_skip_the_question_except_in_ask_mode() {
        let p = paths(&["a.rs"]);
        let mut auto = Policy::new(PermissionMode::AutoRead, &[]).unwrap();
        auto.remember(&facts("Edit", ToolKind::Edit, &p));
        assert!(matches!(
            auto.decide(&facts("Edit", ToolKind::Edit, &p)),
            Verdict::Allow { source: Source::Remembered }
        ));
        assert!(matches!(auto.decide(&facts("Write", ToolKind::Edit, &p)), Verdict::Ask { .. }));
        let mut strict = Policy::new(PermissionMode::Ask, &[rule(RuleAction::Allow, Some("Edit"), None)]).unwrap();
        strict.remember(&facts("Edit", ToolKind::Edit, &p));
        assert!(matches!(strict.decide(&facts("Edit", ToolKind::Edit, &p)), Verdict::Ask { .. }));
    }

    #[test]
    fn command_lines_split_into_simple_commands() {
        let split = |line: &str| split_command(line);
        assert_eq!(split("cargo test && rm -rf /"), Some(vec!["cargo test".into(), "rm -rf /".into()]));
        assert_eq!(split("a; b || c | d & e\nf"), Some(["a", "b", "c", "d", "e", "f"].map(String::from).to_vec()));
        assert_eq!(split("echo 'a && b' \"c; d\""), Some(vec!["echo 'a && b' \"c; d\"".into()]));
        assert_eq!(split("make 2>&1 | tee log"), Some(vec!["make 2>&1".into(), "tee log".into()]));
        assert_eq!(split("FOO=1 sudo rm -rf x"), Some(vec!["rm -rf x".into()]));
        for hidden in ["echo $(rm -rf x)", "echo `rm x`", "(rm x)", "diff <(ls) x", "cat <<EOF", "echo 'open"] {
            assert_eq!(split(hidden), None, "{hidden}");
        }
    }

    #[test]
    fn command_rules_look_at_every_simple_command() {
        let rule = |action, command: &str| Rule { action, tool: None, path: None, command: Some(command.into()) };
        let policy = Policy::new(
            PermissionMode::AutoRead,
            &[
                rule(RuleAction::Allow, "cargo *"),
                rule(RuleAction::Deny, "rm *"),
                rule(RuleAction::Allow, "git status"),
            ],
        )
        .unwrap();
        let decide = |command: &str| {
            policy.decide(&CallFacts { tool: "Bash", kind: ToolKind::Execute, paths: &[], command: Some(command) })
        };
        assert!(matches!(decide("cargo test"), Verdict::Allow { .. }));
        assert!(matches!(decide("cargo build && git status"), Verdict::Allow { .. }));
        assert!(matches!(decide("cargo test && rm -rf /"), Verdict::Deny { .. }));
        assert!(matches!(decide("cargo test; curl x | sh"), Verdict::Ask { .. }));
        // Cannot be taken apart: no rule allows it, deny rules still see the text.
        assert!(matches!(decide("cargo test $(curl x)"), Verdict::Ask { .. }));
        assert!(matches!(decide("rm -rf $(pwd)"), Verdict::Deny { .. }));
    }

    #[test]
    fn always_allowing_a_command_covers_its_program_only() {
        let mut policy = Policy::new(PermissionMode::AutoRead, &[]).unwrap();
        let bash = |command| CallFacts { tool: "Bash", kind: ToolKind::Execute, paths: &[], command: Some(command) };
        policy.remember(&bash("cargo test --all"));
        assert!(matches!(policy.decide(&bash("cargo build")), Verdict::Allow { source: Source::Remembered }));
        assert!(matches!(policy.decide(&bash("rm -rf target")), Verdict::Ask { .. }));
        assert!(matches!(policy.decide(&bash("cargo test && rm -rf target")), Verdict::Ask { .. }));
        policy.remember(&bash("echo $(whoami)"));
        assert!(matches!(policy.decide(&bash("echo hi")), Verdict::Ask { .. }), "unparseable lines are not remembered");
    }

    #[test]
    fn bad_rule_patterns_are_reported() {
        let err = Policy::new(PermissionMode::AutoRead, &[rule(RuleAction::Deny, None, Some("src/[a"))]).unwrap_err();
        assert!(err.to_string().contains("src/[a"), "{err}");
    }
}
