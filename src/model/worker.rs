//! The llama.cpp backend in a worker process of tack's own binary
//! (`tack model-worker`), so that llama.cpp stopping its process (a failed
//! `GGML_ASSERT`, memory running out, a GPU driver error) ends a generation
//! with an error instead of taking the editor's server down with it.
//!
//! The protocol is JSON lines on the worker's stdin and stdout: the settings
//! first, then requests ([`ToWorker`]) one way and streamed chunks
//! ([`FromWorker`]) the other. The worker owns the model, its KV cache and the
//! prompt cache; the server keeps only the tokenizer (a vocab-only load), so
//! counting tokens never waits on the pipe. A worker that dies fails the
//! generations it was running and is started again for the next one. It
//! never outlives the server: it exits when its stdin closes, and the kernel
//! kills it when the server goes (`PR_SET_PDEATHSIG`).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::llama::{LlamaBackend, LlamaSettings, LlamaTokenizer, LoadProgress};
use super::{BackendError, CompletionRequest, ModelBackend, ModelChunk, ToolProtocol};

/// The hidden subcommand a worker runs as.
pub const SUBCOMMAND: &str = "model-worker";
/// Lines of a worker's stderr kept to say why it died.
const STDERR_TAIL: usize = 8;
/// How long a dead worker's exit status is waited for.
const REAP: Duration = Duration::from_secs(5);

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ToWorker {
    Generate { id: u64, request: CompletionRequest },
    Cancel { id: u64 },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FromWorker {
    Progress { share: f32 },
    Ready(ModelInfo),
    Failed { message: String },
    Chunk { id: u64, chunk: ModelChunk },
    Error { id: u64, error: BackendError },
    Done { id: u64 },
}

/// What the server needs to know of the loaded model.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct ModelInfo {
    context_window: usize,
    parameters: Option<u64>,
    tool_protocol: ToolProtocol,
}

type Sink = UnboundedSender<Result<ModelChunk, BackendError>>;
/// Generations under way in one worker; `None` once the worker is gone, so
/// that none is added after the others were told.
type Running = Arc<Mutex<Option<HashMap<u64, Sink>>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A llama.cpp model running in a worker process.
pub struct WorkerBackend {
    shared: Arc<Shared>,
    tokenizer: LlamaTokenizer,
    info: ModelInfo,
}

struct Shared {
    program: PathBuf,
    settings: LlamaSettings,
    current: tokio::sync::Mutex<Option<Connection>>,
    next_id: AtomicU64,
}

#[derive(Clone)]
struct Connection {
    requests: UnboundedSender<ToWorker>,
    running: Running,
}

impl Connection {
    fn alive(&self) -> bool {
        lock(&self.running).is_some() && !self.requests.is_closed()
    }
}

impl WorkerBackend {
    /// Starts a worker (`program model-worker`) that loads the model, and
    /// waits until it is ready. `program` is tack's own binary.
    pub async fn start(program: PathBuf, mut settings: LlamaSettings) -> anyhow::Result<WorkerBackend> {
        let progress = settings.progress.take();
        let path = settings.path.clone();
        // Also checks the file, so a bad path is refused before any process starts.
        let tokenizer = tokio::task::spawn_blocking(move || LlamaTokenizer::load(&path)).await??;
        let (connection, info) = connect(&program, &settings, progress).await.map_err(anyhow::Error::msg)?;
        let shared = Shared {
            program,
            settings,
            current: tokio::sync::Mutex::new(Some(connection)),
            next_id: AtomicU64::new(1),
        };
        Ok(WorkerBackend { shared: Arc::new(shared), tokenizer, info })
    }
}

impl Shared {
    /// The live worker, started again if the last one died.
    async fn connection(&self) -> Result<Connection, BackendError> {
        let mut current = self.current.lock().await;
        if let Some(connection) = current.as_ref().filter(|c| c.alive()) {
            return Ok(connection.clone());
        }
        *current = None;
        tracing::info!("starting the model process again");
        let (connection, _) = connect(&self.program, &self.settings, None)
            .await
            .map_err(|message| BackendError::Fatal(format!("the model process cannot start again: {message}")))?;
        *current = Some(connection.clone());
        Ok(connection)
    }

    async fn generate(
        self: Arc<Self>,
        request: CompletionRequest,
    ) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        let failed = |error: BackendError| stream::once(async move { Err(error) }).boxed();
        let connection = match self.connection().await {
            Ok(connection) => connection,
            Err(error) => return failed(error),
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sink, receiver) = unbounded_channel();
        let stopped =
            || BackendError::Fatal("the model process stopped; it starts again for the next generation".into());
        match lock(&connection.running).as_mut() {
            Some(running) => running.insert(id, sink),
            None => return failed(stopped()),
        };
        if connection.requests.send(ToWorker::Generate { id, request }).is_err() {
            return failed(stopped());
        }
        let guard = CancelOnDrop { id, connection };
        stream::unfold((receiver, guard), |(mut receiver, guard)| async move {
            receiver.recv().await.map(|item| (item, (receiver, guard)))
        })
        .boxed()
    }
}

/// Tells the worker to stop a generation whose stream was dropped before
/// its end.
struct CancelOnDrop {
    id: u64,
    connection: Connection,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let unfinished = lock(&self.connection.running).as_mut().and_then(|r| r.remove(&self.id)).is_some();
        if unfinished {
            let _ = self.connection.requests.send(ToWorker::Cancel { id: self.id });
        }
    }
}

/// Starts a worker, hands it the settings and waits for the model to load.
async fn connect(
    program: &Path,
    settings: &LlamaSettings,
    progress: Option<LoadProgress>,
) -> Result<(Connection, ModelInfo), String> {
    let mut command = Command::new(program);
    command.arg(SUBCOMMAND).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    #[cfg(target_os = "linux")]
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child =
        command.spawn().map_err(|e| format!("cannot start the model process ({}): {e}", program.display()))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("cannot start the model process: its pipes were not set up".into());
    };

    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let stderr_tail = tail.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::warn!(target: "tack::model_process", "{line}");
            let mut tail = lock(&stderr_tail);
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });

    let mut first = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
    first.push(b'\n');
    if stdin.write_all(&first).await.is_err() {
        let status = tokio::time::timeout(REAP, child.wait()).await.ok().and_then(Result::ok);
        return Err(death(status, &tail));
    }

    let mut lines = BufReader::new(stdout).lines();
    let info = loop {
        match lines.next_line().await {
            Ok(Some(line)) => match serde_json::from_str::<FromWorker>(&line) {
                Ok(FromWorker::Progress { share }) => {
                    if let Some(LoadProgress(report)) = &progress {
                        report(share);
                    }
                }
                Ok(FromWorker::Ready(info)) => break info,
                Ok(FromWorker::Failed { message }) => return Err(message),
                _ => tracing::warn!("the model process said something unexpected while loading: {line}"),
            },
            Ok(None) | Err(_) => {
                let status = tokio::time::timeout(REAP, child.wait()).await.ok().and_then(Result::ok);
                return Err(death(status, &tail));
            }
        }
    };

    let (requests, mut outbox) = unbounded_channel::<ToWorker>();
    tokio::spawn(async move {
        while let Some(request) = outbox.recv().await {
            let Ok(mut line) = serde_json::to_vec(&request) else { continue };
            line.push(b'\n');
            if stdin.write_all(&line).await.is_err() {
                break;
            }
        }
        // Dropping stdin here tells the worker that nobody needs it any more.
    });

    let running: Running = Arc::new(Mutex::new(Some(HashMap::new())));
    let reader_running = running.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let message = match serde_json::from_str::<FromWorker>(&line) {
                Ok(message) => message,
                Err(error) => {
                    tracing::warn!("unreadable line from the model process ({error}): {line}");
                    continue;
                }
            };
            let mut running = lock(&reader_running);
            let Some(running) = running.as_mut() else { break };
            match message {
                FromWorker::Chunk { id, chunk } => {
                    if let Some(sink) = running.get(&id) {
                        let _ = sink.send(Ok(chunk));
                    }
                }
                FromWorker::Error { id, error } => {
                    if let Some(sink) = running.remove(&id) {
                        let _ = sink.send(Err(error));
                    }
                }
                FromWorker::Done { id } => {
                    running.remove(&id);
                }
                other => tracing::warn!("the model process said something unexpected: {other:?}"),
            }
        }
        let status = tokio::time::timeout(REAP, child.wait()).await.ok().and_then(Result::ok);
        let abandoned = lock(&reader_running).take().unwrap_or_default();
        if abandoned.is_empty() {
            tracing::info!("the model process ended: {}", death(status, &tail));
            return;
        }
        let message = death(status, &tail);
        tracing::error!("{message}");
        for sink in abandoned.into_values() {
            let _ = sink.send(Err(BackendError::Fatal(message.clone())));
        }
    });
    Ok((Connection { requests, running }, info))
}

/// Why a worker went, for the user: how it ended and the last thing it said.
fn death(status: Option<ExitStatus>, tail: &Mutex<VecDeque<String>>) -> String {
    let how = match status {
        Some(status) => match (status.signal(), status.code()) {
            (Some(signal), _) => format!("was stopped by signal {signal}{}", signal_meaning(signal)),
            (None, Some(code)) => format!("exited with code {code}"),
            (None, None) => "stopped".to_string(),
        },
        None => "stopped answering".to_string(),
    };
    let tail = lock(tail);
    // llama.cpp says what failed on the line before it aborts.
    let said = tail
        .iter()
        .rev()
        .find(|line| line.contains("GGML_ASSERT") || line.contains("error"))
        .or_else(|| tail.iter().rev().find(|line| !line.trim().is_empty()));
    let mut message = format!("the model process {how}");
    if let Some(said) = said {
        message.push_str(&format!(" ({})", said.trim()));
    }
    message.push_str("; it starts again for the next generation");
    message
}

fn signal_meaning(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => " (SIGABRT: llama.cpp stopped on a failed check)",
        libc::SIGKILL => " (SIGKILL: killed, perhaps for lack of memory)",
        libc::SIGSEGV => " (SIGSEGV: a crash in llama.cpp)",
        libc::SIGBUS => " (SIGBUS: the model file changed or vanished while mapped)",
        _ => "",
    }
}

impl ModelBackend for WorkerBackend {
    fn stream(&self, request: CompletionRequest) -> BoxStream<'static, Result<ModelChunk, BackendError>> {
        stream::once(self.shared.clone().generate(request)).flatten().boxed()
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.count_tokens(text)
    }

    fn context_window(&self) -> usize {
        self.info.context_window
    }

    fn parameters(&self) -> Option<u64> {
        self.info.parameters
    }

    fn tool_protocol(&self) -> ToolProtocol {
        self.info.tool_protocol
    }
}

/// The worker's side: `tack model-worker`. Reads the settings, loads the
/// model and serves generations until its stdin closes.
pub async fn serve() -> ExitCode {
    // Only protocol lines may reach the server: the protocol keeps its own
    // copy of stdout, and anything else that prints (llama.cpp, a library)
    // goes to stderr, where the server logs it.
    // SAFETY: plain descriptor calls on descriptors this process owns.
    let protocol = unsafe { libc::dup(1) };
    if protocol < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        eprintln!("tack model-worker: cannot set up its output");
        return ExitCode::FAILURE;
    }
    // SAFETY: `protocol` is a fresh descriptor that nothing else owns.
    let mut output = std::io::BufWriter::new(unsafe { std::fs::File::from_raw_fd(protocol) });
    let (outbox, messages) = std::sync::mpsc::channel::<FromWorker>();
    std::thread::spawn(move || {
        for message in messages {
            let Ok(mut line) = serde_json::to_vec(&message) else { continue };
            line.push(b'\n');
            if output.write_all(&line).and_then(|_| output.flush()).is_err() {
                // The server is gone.
                std::process::exit(0);
            }
            if matches!(message, FromWorker::Failed { .. }) {
                std::process::exit(1);
            }
        }
    });

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let settings = match lines.next_line().await {
        Ok(Some(line)) => serde_json::from_str::<LlamaSettings>(&line),
        _ => return ExitCode::SUCCESS,
    };
    let mut settings = match settings {
        Ok(settings) => settings,
        Err(error) => fail(&outbox, format!("unreadable model settings: {error}")),
    };
    let progress = outbox.clone();
    settings.progress = Some(LoadProgress(Arc::new(move |share| {
        let _ = progress.send(FromWorker::Progress { share });
    })));
    let backend = match tokio::task::spawn_blocking(move || LlamaBackend::load(settings)).await {
        Ok(Ok(backend)) => Arc::new(backend),
        Ok(Err(error)) => fail(&outbox, error.to_string()),
        Err(error) => fail(&outbox, format!("loading the model failed: {error}")),
    };
    let info = ModelInfo {
        context_window: backend.context_window(),
        parameters: backend.parameters(),
        tool_protocol: backend.tool_protocol(),
    };
    let _ = outbox.send(FromWorker::Ready(info));

    let mut running: HashMap<u64, tokio::task::AbortHandle> = HashMap::new();
    while let Ok(Some(line)) = lines.next_line().await {
        match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Generate { id, request }) => {
                running.retain(|_, task| !task.is_finished());
                let backend = backend.clone();
                let outbox = outbox.clone();
                let task = tokio::spawn(async move {
                    let mut stream = backend.stream(request);
                    while let Some(item) = stream.next().await {
                        let message = match item {
                            Ok(chunk) => FromWorker::Chunk { id, chunk },
                            Err(error) => FromWorker::Error { id, error },
                        };
                        if outbox.send(message).is_err() {
                            return;
                        }
                    }
                    let _ = outbox.send(FromWorker::Done { id });
                });
                running.insert(id, task.abort_handle());
            }
            // Dropping the generation's stream stops it within a token.
            Ok(ToWorker::Cancel { id }) => {
                if let Some(task) = running.remove(&id) {
                    task.abort();
                }
            }
            Err(error) => tracing::warn!("unreadable request from the server ({error}): {line}"),
        }
    }
    // The server has gone; a generation still running has nobody to read it.
    std::process::exit(0)
}

/// Reports a failure to load; the writer thread ends the process once the
/// report is out.
fn fail(outbox: &std::sync::mpsc::Sender<FromWorker>, message: String) -> ! {
    if outbox.send(FromWorker::Failed { message }).is_err() {
        std::process::exit(1);
    }
    loop {
        std::thread::park();
    }
}
