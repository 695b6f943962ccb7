//! REPL: one persistent Python or Node interpreter per language and
//! conversation, so that variables and imports survive between calls.
//!
//! Each interpreter runs a small driver program in its own process group. The
//! driver reads one JSON request per line on stdin (`{"code": …}`), runs the
//! code in a namespace that lives as long as the interpreter, and lets its
//! output stream straight to the real stdout and stderr, where output of
//! child processes lands too, in order. When the code is done it writes an end
//! marker (random per interpreter) on stderr and, on stdout, the marker
//! followed by a JSON reply `{"error", "brief"}` and a newline. tack reads both
//! pipes continuously into capped buffers up to their markers, so a huge
//! output can neither block the interpreter nor fill memory.
//!
//! While a call runs its interpreter is out of [`Interpreters`] and owned by
//! the call: a timeout, a cancel or a dropped call future kills the whole group
//! and the state is gone; only a call that ends normally puts it back.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use super::process::{Capped, GroupGuard, ProcessSettings, unconfined_note};
use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};

/// How long output readers may take once the process group is gone.
const DRAIN: Duration = Duration::from_secs(2);

/// The longest reply line accepted after a marker; the drivers cap their
/// error text far below it, so only forged markers come near.
const MAX_REPLY: usize = 1 << 20;

/// The environment variable that hands the end marker to the driver, which
/// removes it at once so that child processes never see it.
const MARKER_VAR: &str = "TACK_REPL_MARKER";

const PYTHON_DRIVER: &str = r#"
def _tack_repl():
    import sys

    # The workspace comes first on sys.path: its own json.py or ast.py must
    # not replace the modules the driver needs.
    first = sys.path.pop(0) if sys.path else None
    import ast, json, linecache, os, traceback

    if first is not None:
        sys.path.insert(0, first)
    ns = globals()
    del ns["_tack_repl"]
    marker = os.environ.pop("TACK_REPL_MARKER", "").encode()
    # Requests come on a private copy of stdin; fd 0 becomes /dev/null so that
    # neither input() nor a child process can swallow the next request.
    requests = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)
    # Private copies of the output pipes: the markers get through even when
    # the code closes or redirects fd 1 and 2.
    out_fd, err_fd = os.dup(1), os.dup(2)

    def send(fd, data):
        while data:
            data = data[os.write(fd, data):]

    def cap(text, limit):
        if len(text) <= limit:
            return text
        half = limit // 2
        return text[:half] + "\n[... %d characters elided ...]\n" % (len(text) - limit) + text[-half:]

    def describe(error, name):
        tb = error.__traceback__
        # The driver's own frames come first; the code did not write them.
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next
        if isinstance(error, SyntaxError) and error.filename == name:
            tb = None
        text = "".join(traceback.format_exception(type(error), error, tb))
        last = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
        return cap(text, 20000), cap(last[-1] if last else type(error).__name__, 300)

    count = 0
    while True:
        line = requests.readline()
        if not line:
            return
        count += 1
        name = "<repl:%d>" % count
        error = brief = None
        try:
            code = json.loads(line)["code"]
            linecache.cache[name] = (len(code), None, code.splitlines(True), name)
            tree = ast.parse(code, name, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, "exec"), ns)
            if last is not None:
                sys.displayhook(eval(compile(last, name, "eval"), ns))
        except SystemExit:
            raise
        except BaseException as e:
            error, brief = describe(e, name)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        send(err_fd, marker + b"\n")
        send(out_fd, marker + json.dumps({"error": error, "brief": brief}).encode() + b"\n")


_tack_repl()
"#;

const NODE_DRIVER: &str = r#"
(() => {
  const util = require("util");
  const vm = require("vm");
  const marker = process.env.TACK_REPL_MARKER || "";
  delete process.env.TACK_REPL_MARKER;
  globalThis.require = require;
  // Bound now: the code may replace process.stdout.write.
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const cap = (text, limit) =>
    text.length <= limit
      ? text
      : `${text.slice(0, limit / 2)}\n[... ${text.length - limit} characters elided ...]\n${text.slice(-limit / 2)}`;
  // The driver's frames follow the code's; the code did not write them.
  const describe = (e) => {
    if (!(e instanceof Error) || !e.stack) return `Uncaught ${util.inspect(e)}`;
    const lines = e.stack.split("\n");
    const cut = lines.findIndex((l) => /^\s+at .*(node:vm|\[eval\])/.test(l));
    return (cut < 0 ? lines : lines.slice(0, cut)).join("\n");
  };
  const brief = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : `Uncaught ${util.inspect(e)}`);
  // A failure in a callback must not end the interpreter and its state.
  process.on("uncaughtException", (e) => err(`${describe(e)}\n`));
  process.on("unhandledRejection", (e) => err(`unhandled rejection: ${describe(e)}\n`));
  let count = 0;
  const run = async (line) => {
    count += 1;
    let error = null;
    let summary = null;
    try {
      const { code } = JSON.parse(line);
      let value = vm.runInThisContext(code, { filename: `<repl:${count}>` });
      if (value !== null && typeof value === "object" && typeof value.then === "function") value = await value;
      if (value !== undefined) {
        globalThis._ = value;
        out(`${util.inspect(value)}\n`);
      }
    } catch (e) {
      error = cap(describe(e), 20000);
      summary = cap(brief(e).split("\n")[0], 300);
    }
    err(`${marker}\n`);
    out(`${marker}${JSON.stringify({ error, brief: summary })}\n`);
  };
  let queue = Promise.resolve();
  const lines = require("readline").createInterface({ input: process.stdin, terminal: false });
  lines.on("line", (line) => {
    queue = queue.then(() => run(line));
  });
})();
"#;

pub struct Repl {
    pub(crate) settings: Arc<ProcessSettings>,
}

/// The languages REPL can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Python,
    Node,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Node => "node",
        }
    }

    fn program(self) -> &'static str {
        match self {
            Language::Python => "python3",
            Language::Node => "node",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplInput {
    /// `python` (python3) or `node` (JavaScript).
    language: Language,
    /// The code to run. The value of a final expression is printed, as in a notebook.
    code: String,
    /// Stop the interpreter and start a fresh one, losing all its state, before running the code (which may then be empty).
    #[serde(default)]
    restart: bool,
    /// Time limit in milliseconds (default 120000; the settings cap it). A call that times out loses the interpreter's state.
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
}

/// The running interpreters of one conversation. Dropping it kills them.
#[derive(Default)]
pub struct Interpreters {
    running: HashMap<Language, Interpreter>,
}

impl Interpreters {
    /// Kills every interpreter and its children.
    pub fn kill_all(&mut self) {
        // Each interpreter's guard kills its group as it is dropped.
        self.running.clear();
    }
}

/// One interpreter process running its driver. Dropping it kills its group.
struct Interpreter {
    child: GroupGuard,
    stdin: ChildStdin,
    stdout: Marked<ChildStdout>,
    stderr: Marked<ChildStderr>,
    marker: Vec<u8>,
}

/// How a call to an interpreter ended.
enum End {
    Replied(Reply),
    /// The reply line after the marker was not the driver's JSON.
    Unreadable,
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
}

#[derive(Deserialize)]
struct Reply {
    error: Option<String>,
    brief: Option<String>,
}

impl Interpreter {
    /// Starts an interpreter; a note for the user about how it runs goes to `notes`.
    fn start(
        language: Language,
        root: &Path,
        settings: &ProcessSettings,
        notes: &mut String,
    ) -> Result<Interpreter, String> {
        let marker = format!("\u{1e}tack-repl-{:016x}\u{1e}", fastrand::u64(..));
        let (mut confined, mut registration) = (None, None);
        let mut command = CommandWrap::with_new(language.program(), |c| {
            match language {
                Language::Python => c.arg("-u").arg("-c").arg(PYTHON_DRIVER),
                Language::Node => c.arg("-e").arg(NODE_DRIVER),
            };
            c.current_dir(root).env(MARKER_VAR, &marker);
            c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            settings.scrub(c);
            registration = crate::tools::reaper::register_in_child(c);
            confined = Some(settings.sandbox.confine(root, c));
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let spawned = command.spawn();
        drop(registration);
        if let Some(note) = confined.and_then(|confined| unconfined_note(&confined.confinement)) {
            notes.push_str(&note);
        }
        let child = spawned.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{} is not installed (no `{}` on PATH), so REPL cannot run {} code here",
                language.program(),
                language.program(),
                language.name()
            ),
            _ => format!("cannot start {}: {e}", language.program()),
        })?;
        let mut child = GroupGuard::new(child);
        let missing = || format!("cannot start {}: its pipes were not set up", language.program());
        let stdin = child.0.stdin().take().ok_or_else(missing)?;
        let stdout = child.0.stdout().take().ok_or_else(missing)?;
        let stderr = child.0.stderr().take().ok_or_else(missing)?;
        Ok(Interpreter {
            child,
            stdin,
            stdout: Marked::new(stdout),
            stderr: Marked::new(stderr),
            marker: marker.into_bytes(),
        })
    }

    /// Whether the process is still there to take a request.
    fn alive(&mut self) -> bool {
        matches!(self.child.0.try_wait(), Ok(None))
    }

    /// Runs `code`; returns how it ended and the captured stdout and stderr.
    /// Unless it ended with a reply, the interpreter's group is dead after.
    async fn run(&mut self, code: &str, timeout: Duration, cancel: &CancellationToken) -> (End, String, String) {
        let mut request = serde_json::json!({ "code": code }).to_string();
        request.push('\n');
        let mut out = Capped::default();
        let mut err = Capped::default();
        let Interpreter { child, stdin, stdout, stderr, marker } = self;
        let marker: &[u8] = marker;
        let end = {
            let exchange = async {
                // A failed write means the interpreter is gone: its pipes tell the rest.
                if stdin.write_all(request.as_bytes()).await.is_ok() && stdin.flush().await.is_ok() {
                    let (reply, _) =
                        tokio::join!(stdout.until_marker(marker, &mut out), stderr.until_marker(marker, &mut err));
                    reply
                } else {
                    None
                }
            };
            tokio::select! {
                reply = exchange => match reply {
                    Some(line) => match serde_json::from_slice::<Reply>(&line) {
                        Ok(reply) => End::Replied(reply),
                        Err(_) => End::Unreadable,
                    },
                    None => End::Exited(None),
                },
                // A child process still holding the pipes keeps them from closing.
                _ = child.0.wait() => End::Exited(None),
                _ = tokio::time::sleep(timeout) => End::TimedOut,
                _ = cancel.cancelled() => End::Cancelled,
            }
        };
        if matches!(end, End::Replied(_)) {
            return (end, out.text(), err.text());
        }
        // Whatever ended it, nothing of the group survives; what it wrote
        // before that still reaches the model.
        let _ = child.0.start_kill();
        let _ = tokio::time::timeout(DRAIN, async {
            tokio::join!(stdout.until_marker(marker, &mut out), stderr.until_marker(marker, &mut err))
        })
        .await;
        let status = tokio::time::timeout(DRAIN, child.0.wait()).await.ok().and_then(|s| s.ok());
        let end = match end {
            End::Exited(_) => End::Exited(status.and_then(|s| s.code())),
            other => other,
        };
        (end, out.text(), err.text())
    }
}

/// One output pipe of an interpreter, read up to the driver's end marker.
struct Marked<R> {
    pipe: R,
    /// Read but not yet passed on: a possible start of the marker, or the
    /// marker and the beginning of its reply line.
    pending: Vec<u8>,
    closed: bool,
}

impl<R: AsyncRead + Unpin> Marked<R> {
    fn new(pipe: R) -> Self {
        Marked { pipe, pending: Vec::new(), closed: false }
    }

    /// Moves output into `into` up to the marker and returns the rest of the
    /// marker's line; `None` when the pipe closes first. Cancel-safe: bytes
    /// read stay in `pending` when the future is dropped.
    async fn until_marker(&mut self, marker: &[u8], into: &mut Capped) -> Option<Vec<u8>> {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            if let Some(reply) = self.take(marker, into) {
                return Some(reply);
            }
            if self.closed {
                into.push(&self.pending);
                self.pending.clear();
                return None;
            }
            match self.pipe.read(&mut buffer).await {
                Ok(0) | Err(_) => self.closed = true,
                Ok(read) => self.pending.extend_from_slice(&buffer[..read]),
            }
        }
    }

    fn take(&mut self, marker: &[u8], into: &mut Capped) -> Option<Vec<u8>> {
        let Some(at) = find(&self.pending, marker) else {
            // All but what could be the start of a marker is plain output.
            let keep = marker.len().saturating_sub(1).min(self.pending.len());
            let cut = self.pending.len() - keep;
            into.push(&self.pending[..cut]);
            self.pending.drain(..cut);
            return None;
        };
        into.push(&self.pending[..at]);
        self.pending.drain(..at);
        let body = &self.pending[marker.len()..];
        match body.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let reply = body[..end].to_vec();
                self.pending.drain(..marker.len() + end + 1);
                Some(reply)
            }
            None if body.len() > MAX_REPLY => {
                // Not the driver's reply: let it through as output.
                into.push(&self.pending);
                self.pending.clear();
                None
            }
            None => None,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    haystack.windows(needle.len()).position(|w| w[0] == first && w == needle)
}

#[async_trait]
impl TypedTool for Repl {
    type Input = ReplInput;
    const NAME: &'static str = "REPL";
    const DESCRIPTION: &'static str = "Run Python (python3) or JavaScript (node) code in a persistent interpreter in the workspace root. Variables, functions and imports persist between calls of the same language in this conversation; the value of a final expression is printed, as in a notebook. Returns stdout, stderr and the traceback of an exception. Use restart to start over with a fresh interpreter; a timeout or cancel also loses the state.";
    const KIND: ToolKind = ToolKind::Execute;
    const SET: ToolSet = ToolSet::Command;

    fn paths(_: &ReplInput) -> Vec<String> {
        Vec::new()
    }

    fn sandbox(&self) -> Option<String> {
        Some(self.settings.sandbox.describe())
    }

    async fn call(&self, input: ReplInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let language = input.language;
        let name = language.name();
        let timeout = self.settings.timeout(input.timeout_ms);
        // Taken out while the call runs: if the call is dropped or fails, the
        // half-used interpreter dies with it instead of lingering in the map.
        let previous = ctx.state.repl.lock().await.running.remove(&language);
        let mut notes = String::new();
        let reusable = match previous {
            Some(mut interpreter) if !input.restart => {
                if interpreter.alive() {
                    Some(interpreter)
                } else {
                    notes.push_str(&format!(
                        "[the previous {name} interpreter had exited; this call runs in a fresh one, the earlier state is gone]\n"
                    ));
                    None
                }
            }
            _ => None,
        };
        let mut interpreter = match reusable {
            Some(interpreter) => interpreter,
            None => Interpreter::start(language, ctx.workspace.root(), &self.settings, &mut notes)
                .map_err(ToolError::Invalid)?,
        };
        let (end, stdout, stderr) = interpreter.run(&input.code, timeout, &ctx.cancel).await;

        let mut output = notes;
        output.push_str(&stdout);
        if !stderr.is_empty() {
            end_line(&mut output);
            output.push_str("[stderr]\n");
            output.push_str(&stderr);
        }
        let (status, summary, is_error) = match end {
            End::Replied(reply) => {
                ctx.state.repl.lock().await.running.insert(language, interpreter);
                match reply.error {
                    None => (None, format!("{name}: ok"), false),
                    Some(error) => {
                        let brief = reply
                            .brief
                            .or_else(|| error.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_string))
                            .unwrap_or_else(|| "error".to_string());
                        (Some(error), format!("{name}: {brief}"), true)
                    }
                }
            }
            End::Unreadable => (
                Some(format!(
                    "the {name} interpreter sent a reply tack could not read; it was stopped, its state is gone"
                )),
                format!("{name}: unreadable reply"),
                true,
            ),
            End::Exited(code) => {
                let how = match code {
                    Some(code) => format!("exited with code {code}"),
                    None => "was killed by a signal".to_string(),
                };
                (
                    Some(format!(
                        "the {name} interpreter {how}; its state is gone and the next call starts a fresh one"
                    )),
                    format!("{name}: the interpreter {how}"),
                    code != Some(0),
                )
            }
            End::TimedOut => (
                Some(format!(
                    "timed out after {} ms; the interpreter was restarted, its state is gone",
                    timeout.as_millis()
                )),
                format!("{name}: timed out"),
                true,
            ),
            End::Cancelled => (
                Some("cancelled by the user; the interpreter was stopped, its state is gone".to_string()),
                format!("{name}: cancelled"),
                true,
            ),
        };
        if let Some(status) = status {
            end_line(&mut output);
            output.push_str(&status);
        }
        if output.trim().is_empty() {
            output = if input.restart && input.code.trim().is_empty() {
                format!("started a fresh {name} interpreter")
            } else {
                "(no output)".to_string()
            };
        }
        Ok(ToolOutput { output, summary, is_error, already_done: false })
    }
}

/// Ends `text` with a newline unless it is empty or already does.
fn end_line(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &[u8] = b"\x1emark\x1e";

    /// Feeds `chunks` through a pipe that hands them over in small pieces.
    async fn read_through(chunks: &[&[u8]]) -> (Vec<Option<Vec<u8>>>, String) {
        let (mut writer, reader) = tokio::io::duplex(3);
        let data: Vec<u8> = chunks.concat();
        tokio::spawn(async move {
            let _ = writer.write_all(&data).await;
        });
        let mut marked = Marked::new(reader);
        let mut out = Capped::default();
        let mut replies = Vec::new();
        loop {
            let reply = marked.until_marker(MARKER, &mut out).await;
            let done = reply.is_none();
            replies.push(reply);
            if done {
                break;
            }
        }
        (replies, out.text())
    }

    #[tokio::test]
    async fn markers_split_across_reads_are_found() {
        let (replies, out) =
            read_through(&[b"hello\nno newline", MARKER, b"{\"a\":1}\n", b"more", MARKER, b"\n"]).await;
        assert_eq!(replies, [Some(b"{\"a\":1}".to_vec()), Some(Vec::new()), None]);
        assert_eq!(out, "hello\nno newlinemore");
    }

    #[tokio::test]
    async fn a_partial_marker_is_output_when_the_pipe_closes() {
        let (replies, out) = read_through(&[b"abc\x1emar"]).await;
        assert_eq!(replies, [None]);
        assert_eq!(out, "abc\u{1e}mar");
    }

    /// Whether a process whose command line contains `marker` is alive.
    fn running(marker: &str) -> bool {
        std::process::Command::new("pgrep").args(["-f", marker]).output().is_ok_and(|o| o.status.success())
    }

    async fn python() -> Interpreter {
        Interpreter::start(Language::Python, &std::env::temp_dir(), &ProcessSettings::default(), &mut String::new())
            .unwrap()
    }

    #[tokio::test]
    async fn a_dropped_call_kills_the_interpreter_group() {
        let mut interpreter = python().await;
        let code = "import subprocess, time\nsubprocess.Popen(['sleep', '303.5'])\ntime.sleep(60)";
        let call = async move { interpreter.run(code, Duration::from_secs(60), &CancellationToken::new()).await };
        assert!(tokio::time::timeout(Duration::from_millis(1500), call).await.is_err());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!running("sleep 303.5"), "the dropped call's interpreter left its child running");
    }

    #[tokio::test]
    async fn kill_all_stops_idle_interpreters_and_their_children() {
        let mut interpreter = python().await;
        let code = "import subprocess\nsubprocess.Popen(['sleep', '304.5']) and None";
        let (end, ..) = interpreter.run(code, Duration::from_secs(30), &CancellationToken::new()).await;
        assert!(matches!(end, End::Replied(Reply { error: None, .. })));
        assert!(running("sleep 304.5"));
        let mut interpreters = Interpreters::default();
        interpreters.running.insert(Language::Python, interpreter);
        interpreters.kill_all();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!running("sleep 304.5"), "kill_all left a child running");
    }

    #[tokio::test]
    async fn an_exit_is_seen_even_while_a_child_holds_the_pipes() {
        let mut interpreter = python().await;
        let code =
            "import os, subprocess\nsubprocess.Popen(['sleep', '305.5'])\nprint('leaving', flush=True)\nos._exit(4)";
        let started = std::time::Instant::now();
        let (end, out, _) = interpreter.run(code, Duration::from_secs(30), &CancellationToken::new()).await;
        assert!(matches!(end, End::Exited(Some(4))) && out == "leaving\n", "{out}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!running("sleep 305.5"));
    }

    #[test]
    fn find_locates_the_needle() {
        assert_eq!(find(b"xx\x1emark\x1eyy", MARKER), Some(2));
        assert_eq!(find(b"\x1emar", MARKER), None);
        assert_eq!(find(b"abc", b""), None);
    }
}
