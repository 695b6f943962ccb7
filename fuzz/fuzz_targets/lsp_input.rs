//! The filter in front of the LSP transport (`src/lsp/stdin.rs`), read in
//! arbitrary pieces. It must never panic or stop early: what comes out is
//! always a clean stream of `Content-Length` frames, each a message the
//! transport decodes (tower-lsp's own types are the judge: the transport
//! stops reading at the first it cannot), and a bad message costs only itself.
//!
//! Input: byte 0 picks the mode (bit 0); byte 1 says how many of the next
//! bytes give the sizes of the reads (cycled). The rest is either the raw
//! client stream (checked for shape only), or, in the structured mode, a
//! script of messages good and bad, whose exact filtered form is known: every
//! good message passes through whole and in order, every bad one becomes one
//! `$/tack/malformed` notification, and a body cut off by the end of input
//! ends the stream.

#![no_main]

use std::cell::RefCell;
use std::pin::Pin;
use std::task::{Context, Poll};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tack::lsp::fuzzing::{MALFORMED, filtered};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tower_lsp_server::jsonrpc::{Request, Response};

thread_local! {
    static RUNTIME: RefCell<tokio::runtime::Runtime> =
        RefCell::new(tokio::runtime::Builder::new_current_thread().build().unwrap());
}

fuzz_target!(|data: &[u8]| {
    let [mode, count, rest @ ..] = data else { return };
    let count = usize::from(*count % 8).min(rest.len());
    let (sizes, payload) = rest.split_at(count);
    let sizes: Vec<usize> = sizes.iter().map(|&b| usize::from(b) + 1).collect();

    let (stream, expected) = if mode & 1 == 0 { (payload.to_vec(), None) } else { script(payload) };
    let whole = filter(&stream, &[stream.len().max(1)]);
    let pieces = filter(&stream, if sizes.is_empty() { &[1] } else { &sizes });
    assert_eq!(pieces, whole, "the read sizes changed the output");

    let bodies = frames(&whole);
    for body in &bodies {
        assert!(decodes(body), "the transport would stop on {:?}", String::from_utf8_lossy(body));
    }
    if let Some(expected) = expected {
        let shown: Vec<Option<&[u8]>> =
            bodies.iter().map(|body| (!is_malformed(body)).then_some(body.as_slice())).collect();
        let wanted: Vec<Option<&[u8]>> = expected.iter().map(|body| body.as_deref()).collect();
        assert_eq!(shown, wanted, "None stands for a malformed notification");
    }
});

/// The filter's output for `input` read in pieces of the given sizes.
fn filter(input: &[u8], sizes: &[usize]) -> Vec<u8> {
    let reader = Pieces { data: input.to_vec(), at: 0, sizes: sizes.to_vec(), next: 0 };
    RUNTIME.with(|runtime| {
        runtime.borrow().block_on(async {
            let mut out = Vec::new();
            filtered(reader).read_to_end(&mut out).await.unwrap();
            out
        })
    })
}

/// A reader that hands out its data in pieces of the sizes it was given.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl AsyncRead for Pieces {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let end = (self.at + size).min(self.data.len()).min(self.at + buf.remaining());
        buf.put_slice(&self.data[self.at..end]);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

/// Splits the output into frame bodies; anything else in it is a failure.
fn frames(mut out: &[u8]) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    while !out.is_empty() {
        let header_end = out.windows(4).position(|w| w == b"\r\n\r\n").expect("a frame without a header end");
        let header = std::str::from_utf8(&out[..header_end]).expect("a header that is not UTF-8");
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a header that is not one Content-Length: {header:?}"));
        let body = &out[header_end + 4..];
        assert!(body.len() >= length, "a frame cut short");
        bodies.push(body[..length].to_vec());
        out = &body[length..];
    }
    bodies
}

/// Whether the transport decodes the body: its decoder reads a UTF-8 string
/// and then a response or a request, and ends the input on anything else.
fn decodes(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else { return false };
    serde_json::from_str::<Response>(text).is_ok() || serde_json::from_str::<Request>(text).is_ok()
}

/// What the filter lets through: a JSON-RPC 2.0 request, notification or response.
fn check(body: &[u8]) -> Result<(), &'static str> {
    let value: Value = serde_json::from_slice(body).map_err(|_| "not JSON")?;
    let object = value.as_object().ok_or("not an object")?;
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("no jsonrpc 2.0");
    }
    let call = object.get("method").is_some_and(Value::is_string);
    let response = object.contains_key("id") && (object.contains_key("result") || object.contains_key("error"));
    if call || response { Ok(()) } else { Err("neither a call nor a response") }
}

fn is_malformed(body: &[u8]) -> bool {
    let value: Value = serde_json::from_slice(body).unwrap();
    value.get("method").and_then(Value::as_str) == Some(MALFORMED)
}

/// Reads the next byte of the script, or 0 past its end.
struct Script<'a>(&'a [u8]);

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    /// A run of bytes whose length is the next byte.
    fn bytes(&mut self) -> Vec<u8> {
        let len = usize::from(self.byte()).min(self.0.len());
        let (taken, rest) = self.0.split_at(len);
        self.0 = rest;
        taken.to_vec()
    }
}

/// The client stream a script describes, and the bodies the filter must let
/// through in order (`None`: a malformed notification in that place).
fn script(payload: &[u8]) -> (Vec<u8>, Option<Vec<Option<Vec<u8>>>>) {
    let mut script = Script(payload);
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    while !script.0.is_empty() {
        let kind = script.byte();
        match kind % 8 {
            // A request, a notification or a response, in one of the framings clients use.
            0 | 1 | 7 => {
                let text = String::from_utf8_lossy(&script.bytes()).into_owned();
                let body = match kind % 3 {
                    0 => serde_json::json!({"jsonrpc": "2.0", "id": kind, "method": "tack/turn", "params": {"prompt": text}}),
                    1 => serde_json::json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": text}}),
                    _ => serde_json::json!({"jsonrpc": "2.0", "id": text, "result": null}),
                };
                let body = body.to_string().into_bytes();
                let header = match (kind >> 3) % 5 {
                    0 => format!("Content-Length: {}\r\n\r\n", body.len()),
                    1 => format!("content-length:{}\r\n\r\n", body.len()),
                    2 => format!("Content-Length: {}\n\n", body.len()),
                    3 => format!(
                        "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length:  {} \r\n\r\n",
                        body.len()
                    ),
                    _ => {
                        // An unknown header whose value is any bytes but a line end.
                        let mut junk = b"X-Junk: ".to_vec();
                        junk.extend(script.bytes().into_iter().filter(|&b| b != b'\n'));
                        stream.extend(junk);
                        format!("\r\nContent-Length: {}\r\n\r\n", body.len())
                    }
                };
                stream.extend(header.into_bytes());
                stream.extend(&body);
                expected.push(Some(body));
            }
            // A blank line between messages.
            2 => stream.extend(b"\r\n"),
            // Any body under a right Content-Length.
            3 => {
                let body = script.bytes();
                stream.extend(format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes());
                stream.extend(&body);
                expected.push(check(&body).is_ok().then_some(body));
            }
            // A line that is not a header (any bytes but a line end or a colon).
            4 => {
                stream.push(b'?');
                stream.extend(script.bytes().into_iter().filter(|&b| b != b'\n' && b != b':'));
                stream.extend(b"\r\n\r\n");
                expected.push(None);
            }
            // A Content-Length that is not a number.
            5 => {
                stream.extend(b"Content-Length: x");
                stream.extend(script.bytes().into_iter().filter(|&b| b != b'\n'));
                stream.extend(b"\r\n\r\n");
                expected.push(None);
            }
            // A body cut off by the end of input: the client went away.
            _ => {
                let body = script.bytes();
                stream.extend(format!("Content-Length: {}\r\n\r\n", body.len() + 1).into_bytes());
                stream.extend(&body);
                break;
            }
        }
    }
    (stream, Some(expected))
}
