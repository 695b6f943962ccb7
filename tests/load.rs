//! Load: one real `tack lsp` serving 16 conversations at once, each running
//! many scripted turns that read, search, run an approved command and edit a
//! file through `workspace/applyEdit`. Checks that every turn ends, that each
//! conversation's events arrive gapless and in a valid order, that no event,
//! approval or edit is lost, that nothing deadlocks, and that the server's
//! memory does not grow without bound. `TACK_LOAD_TURNS` sets the turns per
//! conversation (the default, 60, takes about 30 seconds on 2 busy cores).

mod lsp_client;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lsp_client::{LspClient, is_main};
use serde_json::{Value, json};

const CONVERSATIONS: usize = 16;

/// Turns per conversation unless `TACK_LOAD_TURNS` says otherwise.
const DEFAULT_TURNS: usize = 60;

/// The turn after which the baseline RSS is taken (or the last turn, if fewer).
const BASELINE_TURN: usize = 20;

/// How long nothing at all may arrive before the run counts as deadlocked.
const STALL: Duration = Duration::from_secs(60);

/// Items per folder of the workspace, so no folder gets huge.
const ITEMS_PER_DIR: usize = 100;

/// Calls in every work reply: Read, Grep, Bash, Edit.
const CALLS_PER_ITEM: usize = 4;

fn item_path(item: usize) -> String {
    format!("items/{:02}/item_{item}.txt", item / ITEMS_PER_DIR)
}

fn call(tool: &str, input: Value) -> String {
    json!({ "tool": tool, "input": input }).to_string()
}

/// The model's replies for `items` turns' worth of work.
///
/// The scripted backend is one per server and serves the main agent of every
/// conversation from one list, in the order generations ask for it, so which
/// conversation gets which entry depends on scheduling. The script is therefore
/// made of entries that work whoever gets them: a work reply for item `k`
/// (read its file, search, run a command, edit the file just read: the Edit's
/// read-before-edit check holds because the Read is in the same reply) and an
/// answer, alternating. Each item has a file of its own, so no two
/// conversations ever edit the same file and every edit must land.
///
/// A turn ends at the first answer it draws, so it makes zero or more work
/// replies' calls; there are exactly as many answers as turns. The script
/// never runs dry: while a turn is still running fewer answers than turns have
/// been taken, and every answer but the last has entries after it. All work
/// replies are taken, since the last entry is an answer: the total of calls,
/// approvals and edits is exact even though their spread over turns is not
/// (about half the turns draw an answer first and make no call of their own).
fn script(items: usize) -> Value {
    let mut entries = Vec::with_capacity(2 * items);
    for item in 0..items {
        let path = item_path(item);
        let work = [
            format!("Working on item {item}."),
            call("Read", json!({ "file_path": path })),
            call("Grep", json!({ "pattern": format!("TODO|item {item}$"), "path": "src" })),
            call("Bash", json!({ "command": format!("echo checked item {item}") })),
            call(
                "Edit",
                json!({ "file_path": path, "old_string": "status = todo", "new_string": format!("status = done {item}") }),
            ),
        ];
        entries.push(Value::String(work.join("\n")));
        entries.push(Value::String(format!("Item {item} is done.")));
    }
    Value::Array(entries)
}

fn workspace(dir: &Path, items: usize) {
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("src/lib.rs", "//! The library.\n\n// TODO: split this module\npub fn answer() -> u32 {\n    42\n}\n");
    write("src/util.rs", "//! Helpers.\n\npub fn double(x: u32) -> u32 {\n    x * 2 // TODO: overflow\n}\n");
    for item in 0..items {
        write(&item_path(item), &format!("item {item}\nstatus = todo\n"));
    }
}

/// The server's resident set, in kB, from `/proc/<pid>/status`.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's /proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status:\n{status}"))
}

/// Bytes of the workspace's session files: the histories as saved, for
/// comparing with the server's memory.
fn session_bytes(root: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(root.join(".tack/sessions")) else { return 0 };
    entries.filter_map(|entry| entry.ok()?.metadata().ok()).map(|meta| meta.len()).sum()
}

/// What the dispatcher hands a conversation's driver, in arrival order.
enum Incoming {
    Event(Value),
    /// A `tack/approveTool` request left for the driver to answer.
    Approval(Value),
}

/// Closes the server's stdin when the thread that holds it panics, so that
/// the server exits, every other thread's wait ends at once, and the first
/// failure is the one reported.
struct StopServerOnPanic<'a>(&'a LspClient);

impl Drop for StopServerOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.close_stdin();
        }
    }
}

/// One line per event, for failure messages.
fn brief(events: &[Value]) -> String {
    events.iter().map(|e| format!("  {}\n", lsp_client::brief_event(e))).collect()
}

/// Counts from checked turns.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    turns: usize,
    events: usize,
    tool_calls: usize,
    approvals: usize,
    edits_applied: usize,
    turns_without_calls: usize,
    compactions: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.turns += other.turns;
        self.events += other.events;
        self.tool_calls += other.tool_calls;
        self.approvals += other.approvals;
        self.edits_applied += other.edits_applied;
        self.turns_without_calls += other.turns_without_calls;
        self.compactions += other.compactions;
    }
}

/// Checks one whole turn's events (their `seq` was checked on arrival): it
/// starts with `turn_started` and ends with `turn_finished` (`end_turn`), all
/// of it the main agent's and this turn's; every call is followed by exactly
/// one result, every approval and edit event sits between its call and its
/// result, and every call succeeded.
fn check_turn(events: &[Value], turn_id: &str) -> Result<Tally, String> {
    let kind = |e: &Value| e["kind"].as_str().unwrap_or("?").to_string();
    if let Some(stray) = events.iter().find(|e| e["turnId"] != turn_id || !is_main(e)) {
        return Err(format!("an event not of the main agent's {turn_id}: {stray}"));
    }
    let first = events.first().map(kind);
    if first.as_deref() != Some("turn_started") {
        return Err(format!("{turn_id} starts with {first:?}, not turn_started"));
    }
    let last = events.last().unwrap();
    if kind(last) != "turn_finished" || last["stopReason"] != "end_turn" {
        return Err(format!("{turn_id} does not end with turn_finished end_turn: {last}"));
    }
    let inner = &events[1..events.len() - 1];
    if let Some(bound) = inner.iter().find(|e| matches!(kind(e).as_str(), "turn_started" | "turn_finished")) {
        return Err(format!("a turn boundary inside {turn_id}: {bound}"));
    }
    // Call id -> whether its result arrived.
    let mut calls: BTreeMap<String, bool> = BTreeMap::new();
    let mut tally = Tally { turns: 1, events: events.len(), ..Tally::default() };
    for event in inner {
        let id = event["toolCallId"].as_str().unwrap_or("").to_string();
        let open = calls.get(&id) == Some(&false);
        match kind(event).as_str() {
            "tool_call" => {
                if calls.insert(id.clone(), false).is_some() {
                    return Err(format!("tool call id {id} used twice in {turn_id}"));
                }
                tally.tool_calls += 1;
            }
            "tool_result" => {
                if !open {
                    return Err(format!("a tool_result without an open tool_call in {turn_id}: {event}"));
                }
                if event["isError"] != false {
                    return Err(format!("a call failed in {turn_id}: {event}"));
                }
                calls.insert(id, true);
            }
            "permission_request" | "permission_decision" | "edit_proposed" | "edit_applied" if !open => {
                return Err(format!("{} outside its call in {turn_id}: {event}", kind(event)));
            }
            "permission_decision" if event["source"] == "user" => tally.approvals += 1,
            "edit_applied" => tally.edits_applied += 1,
            // Long histories outgrow the window: compaction is expected then.
            "compaction" => tally.compactions += 1,
            "edit_rejected" | "error" | "loop_detected" | "retry" => {
                return Err(format!("unexpected {} in {turn_id}: {event}", kind(event)));
            }
            _ => {}
        }
    }
    if let Some((id, _)) = calls.iter().find(|(_, done)| !**done) {
        return Err(format!("call {id} of {turn_id} has no tool_result"));
    }
    if tally.tool_calls == 0 {
        tally.turns_without_calls = 1;
    }
    Ok(tally)
}

/// Runs `turns` turns of one conversation, one after the other, answering its
/// approvals as they come (from this thread: sixteen drivers answer at once).
fn drive(
    client: &LspClient,
    conversation: &str,
    incoming: mpsc::Receiver<Incoming>,
    turns: usize,
    deadline: Instant,
    on_baseline: &dyn Fn(),
) -> Tally {
    let _stop = StopServerOnPanic(client);
    let mut tally = Tally::default();
    let mut seq = 0;
    for number in 1..=turns {
        let turn_id = client.turn(conversation, &format!("turn {number}: take the next item"));
        assert_eq!(turn_id, format!("turn_{number}"), "{conversation}");
        let mut events = Vec::new();
        // Call ids with a permission_request the client has not answered yet.
        let mut asked = BTreeSet::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "global timeout: {conversation} is stuck in {turn_id} after\n{}", brief(&events));
            let message = match incoming.recv_timeout(left.min(STALL)) {
                Ok(message) => message,
                Err(error) => {
                    panic!("{conversation} waited for {turn_id}'s events: {error}; so far\n{}", brief(&events))
                }
            };
            match message {
                Incoming::Event(event) => {
                    seq += 1;
                    assert_eq!(
                        event["seq"],
                        seq,
                        "{conversation}: seq out of order or lost, after\n{}",
                        brief(&events)
                    );
                    if event["kind"] == "permission_request" {
                        asked.insert(event["toolCallId"].as_str().unwrap_or("").to_string());
                    }
                    let done = event["kind"] == "turn_finished";
                    events.push(event);
                    if done {
                        break;
                    }
                }
                Incoming::Approval(request) => {
                    let params = &request["params"];
                    let id = params["toolCall"]["id"].as_str().unwrap_or("");
                    assert_eq!(params["turnId"], turn_id.as_str(), "{conversation}: {request}");
                    // Requests are sent only after the events before them.
                    assert!(asked.remove(id), "{conversation}: approval before its permission_request: {request}");
                    client.respond(request["id"].clone(), json!({ "decision": "allow" }));
                }
            }
        }
        let checked =
            check_turn(&events, &turn_id).unwrap_or_else(|e| panic!("{conversation}: {e}\n{}", brief(&events)));
        tally.add(checked);
        if number == BASELINE_TURN.min(turns) {
            on_baseline();
        }
    }
    tally
}

/// Takes everything that arrives and hands each conversation its own, in
/// arrival order, until every turn has finished. Returns the most approvals
/// that were in flight at once (asked by the server, not yet decided).
fn dispatch(client: &LspClient, routes: HashMap<String, mpsc::Sender<Incoming>>, turns_expected: usize) -> usize {
    let _stop = StopServerOnPanic(client);
    let route = |conversation: &Value, message: Incoming| {
        let conversation = conversation.as_str().unwrap_or("");
        let sender = routes.get(conversation).unwrap_or_else(|| panic!("a message for unknown {conversation:?}"));
        sender.send(message).unwrap_or_else(|_| panic!("the driver of {conversation} is gone"));
    };
    let (mut finished, mut in_flight, mut most_in_flight) = (0, 0usize, 0);
    while finished < turns_expected {
        // Taken out of the inbox so that it stays small and each wake only
        // looks at what is new.
        let (events, requests) = client.wait_for("events of the load run", |inbox| {
            (!inbox.events.is_empty() || !inbox.unanswered.is_empty())
                .then(|| (std::mem::take(&mut inbox.events), std::mem::take(&mut inbox.unanswered)))
        });
        // A conversation waiting for an approval sends nothing else, so its
        // events in this batch all came before its request.
        for event in events {
            if event["kind"] == "turn_finished" && is_main(&event) {
                finished += 1;
            }
            if event["kind"] == "permission_decision" && event["source"] == "user" {
                in_flight = in_flight.saturating_sub(1);
            }
            route(&event["conversationId"].clone(), Incoming::Event(event));
        }
        for request in requests {
            assert_eq!(request["method"], "tack/approveTool", "an unexpected request: {request}");
            in_flight += 1;
            most_in_flight = most_in_flight.max(in_flight);
            route(&request["params"]["conversationId"].clone(), Incoming::Approval(request));
        }
    }
    most_in_flight
}

#[test]
fn sixteen_conversations_run_scripted_turns_at_once_without_losing_or_reordering_anything() {
    let turns: usize = match std::env::var("TACK_LOAD_TURNS") {
        Ok(value) => value.parse().unwrap_or_else(|_| panic!("TACK_LOAD_TURNS={value:?} is not a number")),
        Err(_) => DEFAULT_TURNS,
    };
    assert!(turns > 0, "TACK_LOAD_TURNS must be at least 1");
    let items = CONVERSATIONS * turns;
    let started = Instant::now();
    // Generous: the default run takes about a fifth of this on 2 busy cores.
    let deadline = started + Duration::from_secs(60) + Duration::from_millis(1500) * turns as u32;

    let ws = tempfile::tempdir().unwrap();
    let aux = tempfile::tempdir().unwrap();
    workspace(ws.path(), items);
    let script_path = aux.path().join("script.json");
    std::fs::write(&script_path, script(items).to_string()).unwrap();
    let mut client = LspClient::start(
        ws.path(),
        json!({"model": {"backend": "scripted", "script": script_path, "contextWindow": 8192}, "permissionMode": "ask"}),
    );
    client.timeout = STALL;
    let pid = client.pid();

    let conversations: Vec<String> = (0..CONVERSATIONS).map(|_| client.new_conversation(Some("ask"))).collect();
    let mut routes = HashMap::new();
    let mut receivers = Vec::new();
    for conversation in &conversations {
        let (sender, receiver) = mpsc::channel();
        routes.insert(conversation.clone(), sender);
        receivers.push(receiver);
    }

    // Taken by the last conversation to finish its baseline turn.
    let at_baseline = AtomicUsize::new(0);
    let baseline_rss = AtomicUsize::new(0);
    let baseline_sessions = AtomicUsize::new(0);
    let on_baseline = || {
        if at_baseline.fetch_add(1, Ordering::SeqCst) + 1 == CONVERSATIONS {
            baseline_rss.store(rss_kb(pid) as usize, Ordering::SeqCst);
            baseline_sessions.store(session_bytes(ws.path()) as usize, Ordering::SeqCst);
        }
    };

    let (tally, most_in_flight) = std::thread::scope(|scope| {
        let client = &client;
        let dispatcher = scope.spawn(move || dispatch(client, routes, CONVERSATIONS * turns));
        let drivers: Vec<_> = conversations
            .iter()
            .zip(receivers)
            .map(|(conversation, receiver)| {
                let on_baseline = &on_baseline;
                scope.spawn(move || drive(client, conversation, receiver, turns, deadline, on_baseline))
            })
            .collect();
        let mut tally = Tally::default();
        for driver in drivers {
            tally.add(driver.join().unwrap_or_else(|_| panic!("a conversation failed (see its panic above)")));
        }
        let most_in_flight = dispatcher.join().unwrap_or_else(|_| panic!("the dispatcher failed (see above)"));
        (tally, most_in_flight)
    });
    let end_rss = rss_kb(pid) as usize;
    let end_sessions = session_bytes(ws.path()) as usize;
    let baseline_rss = baseline_rss.load(Ordering::SeqCst);
    let wall = started.elapsed();

    // Nothing is lost: the script's work was all done, once each.
    assert_eq!(tally.turns, items);
    assert_eq!(tally.tool_calls, CALLS_PER_ITEM * items, "tool calls");
    assert_eq!(tally.approvals, items, "approved commands");
    assert_eq!(tally.edits_applied, items, "edits applied");
    assert_eq!(client.apply_edits().len(), items, "workspace/applyEdit requests");
    for item in 0..items {
        let text = std::fs::read_to_string(ws.path().join(item_path(item))).unwrap();
        assert_eq!(text, format!("item {item}\nstatus = done {item}\n"), "{}", item_path(item));
    }
    // Concurrent approvals: with sixteen conversations some wait together.
    assert!(most_in_flight >= 2, "approvals never overlapped (at most {most_in_flight} at once)");

    let status = client.shutdown_and_exit();
    assert!(status.success(), "the server exited with {status}");
    // Everything the server wrote has been read; nothing came after the last turn.
    let stray = client.wait_for("the server's output to close", |inbox| {
        inbox.closed.then(|| (std::mem::take(&mut inbox.events), std::mem::take(&mut inbox.unanswered)))
    });
    assert!(stray.0.is_empty() && stray.1.is_empty(), "messages after the last turn: {stray:#?}");
    let stderr = client.stderr();
    assert!(!stderr.contains("panicked"), "the server panicked:\n{stderr}");

    let mb = |kb: usize| kb as f64 / 1024.0;
    println!(
        "load: {CONVERSATIONS} conversations x {turns} turns = {} turns ({} without calls of their own), \
         {} tool calls, {} approvals (at most {most_in_flight} in flight at once), {} edits",
        tally.turns, tally.turns_without_calls, tally.tool_calls, tally.approvals, tally.edits_applied
    );
    // Any lost or reordered event fails the run before this point.
    println!("load: {} events checked: 0 lost, 0 reordered; {} compactions", tally.events, tally.compactions);
    println!(
        "load: server RSS {:.1} MB after turn {}, {:.1} MB after turn {turns} (session files {:.1} MB, then {:.1} MB)",
        mb(baseline_rss),
        BASELINE_TURN.min(turns),
        mb(end_rss),
        mb(baseline_sessions.load(Ordering::SeqCst) / 1024),
        mb(end_sessions / 1024)
    );
    println!("load: wall time {:.1} s", wall.as_secs_f64());

    // The histories are kept whole, so the heap grows a little with every
    // turn: a heap profile (heaptrack) of an 80-turn run peaked at 8 MB and
    // left 21 kB at exit; the rest of the RSS is the binary and pages the
    // allocator keeps. A leak that scales with traffic (an event, request or
    // edit kept after it was sent) grows with the ~120k events and ~6k client
    // requests of a 200-turn run: at 1 kB per event, 120 MB. Doubling the
    // baseline leaves room for the allocator's kept pages, 64 MB for history.
    // The default run catches only a gross leak; TACK_LOAD_TURNS=200 a slow one.
    assert!(
        end_rss < 2 * baseline_rss + 64 * 1024,
        "the server's memory grew from {:.1} MB to {:.1} MB",
        mb(baseline_rss),
        mb(end_rss)
    );
}
