//! The server's input, made safe to decode. The LSP transport stops reading
//! after a message it cannot decode, which would end the server on one bad
//! byte from a client; this filter passes well-formed messages through as they
//! came and turns the others into a `$/tack/malformed` notification, which the
//! server reports and survives.

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// The notification a malformed message becomes.
pub const MALFORMED: &str = "$/tack/malformed";

/// Headers of one message are at most this long; a longer block is garbage.
const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Larger bodies are refused rather than buffered.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Reads `input` in a task of its own and returns the filtered stream.
pub fn filtered(input: impl AsyncRead + Unpin + Send + 'static) -> DuplexStream {
    let (reader, mut writer) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        loop {
            let frame = match read_frame(&mut input).await {
                Ok(Some(frame)) => frame,
                // End of input (or a broken pipe): the server sees end of input.
                Ok(None) | Err(_) => break,
            };
            if writer.write_all(&frame).await.is_err() {
                break;
            }
        }
    });
    reader
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn malformed(problem: &str) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "method": MALFORMED, "params": {"problem": problem}});
    frame(body.to_string().as_bytes())
}

/// The next message, re-framed, or a `$/tack/malformed` notification in its
/// place; `None` at the end of input.
async fn read_frame(input: &mut (impl AsyncBufReadExt + Unpin)) -> std::io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut header_bytes = 0;
    let mut bad_header = None;
    loop {
        // Read as bytes: a header line that is not UTF-8 is a bad header
        // like any other, not the end of the input.
        let mut line = Vec::new();
        let read = input.read_until(b'\n', &mut line).await?;
        if read == 0 {
            return Ok(None);
        }
        header_bytes += read;
        if header_bytes > MAX_HEADER_BYTES {
            return Ok(Some(malformed("a header block longer than 8 KiB")));
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if length.is_none() && bad_header.is_none() && header_bytes <= 2 {
                // A stray blank line between messages.
                header_bytes = 0;
                continue;
            }
            break;
        }
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(format!("bad Content-Length `{}`", value.trim())),
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("not a header line: `{}`", line.chars().take(80).collect::<String>())),
        }
    }
    let Some(length) = length else {
        return Ok(Some(malformed(&bad_header.unwrap_or_else(|| "a message without Content-Length".into()))));
    };
    if length > MAX_BODY_BYTES {
        // Skip it without holding it.
        let mut skipped = input.take(length as u64);
        tokio::io::copy(&mut skipped, &mut tokio::io::sink()).await?;
        return Ok(Some(malformed(&format!("a message of {length} bytes, more than the server accepts"))));
    }
    // Held as it arrives, not allocated up front: a length is only a claim.
    let mut body = Vec::new();
    (&mut *input).take(length as u64).read_to_end(&mut body).await?;
    if body.len() < length {
        // The input ended inside the body.
        return Ok(None);
    }
    Ok(Some(match check(&body) {
        Ok(()) => frame(&body),
        Err(problem) => malformed(&problem),
    }))
}

/// The fields of a message that decide whether it can be decoded; the rest
/// (params, results: most of the bytes) is skipped without being built.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, deserialize_with = "is_string")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    id: bool,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// The field is there, whatever it holds (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

fn is_string<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(matches!(Value::deserialize(deserializer)?, Value::String(_)))
}

/// Whether the transport can decode `body` as a JSON-RPC message. Runs for
/// every message (each keystroke's didChange), so it builds no JSON tree.
fn check(body: &[u8]) -> Result<(), String> {
    // The transport reads the body as UTF-8 first: a bad byte anywhere, even
    // inside a string skipped below, would end it.
    let body = std::str::from_utf8(body).map_err(|e| format!("the body is not UTF-8: {e}"))?;
    if body.bytes().find(|b| !b.is_ascii_whitespace()) != Some(b'{') {
        return match serde_json::from_str::<serde::de::IgnoredAny>(body) {
            Ok(_) => Err("the body is not a JSON object".into()),
            Err(e) => Err(format!("the body is not JSON: {e}")),
        };
    }
    let envelope: Envelope = serde_json::from_str(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err("the message lacks \"jsonrpc\": \"2.0\"".into());
    }
    let is_response = envelope.id && (envelope.result || envelope.error);
    if !envelope.method && !is_response {
        return Err("the message is neither a request, a notification nor a response".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn filter(input: Vec<u8>) -> String {
        let mut out = String::new();
        filtered(std::io::Cursor::new(input)).read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn good_messages_pass_and_bad_ones_become_notifications() {
        let mut input = Vec::new();
        for body in [r#"{"jsonrpc":"2.0","id":1,"method":"a/b"}"#, "{not json", "[]"] {
            input.extend(frame(body.as_bytes()));
        }
        input.extend(b"Garbage\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":"c/d"}"#));
        let out = filter(input).await;
        assert!(out.starts_with("Content-Length: 39\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,"), "{out}");
        assert_eq!(out.matches(MALFORMED).count(), 3, "{out}");
        assert!(out.contains("not JSON") && out.contains("not a JSON object") && out.contains("not a header line"));
        assert!(out.ends_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"c/d\"}"), "{out}");
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/lsp_input.rs`): a header line that
    /// was not UTF-8 ended the input, and with it the server.
    #[tokio::test]
    async fn a_header_line_that_is_not_utf8_costs_only_its_message() {
        let mut input = frame(br#"{"jsonrpc":"2.0","id":1,"method":"a/b"}"#);
        input.extend(b"Garb\xbaage\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":"c/d"}"#));
        // A body the input ends inside of is the end of the input.
        input.extend(b"Content-Length: 100000000\r\n\r\n{");
        let out = filter(input).await;
        assert_eq!(out.matches(MALFORMED).count(), 1, "{out}");
        assert!(out.contains("not a header line"), "{out}");
        assert!(out.ends_with(r#"{"jsonrpc":"2.0","id":2,"method":"c/d"}"#), "{out}");
    }

    #[tokio::test]
    async fn a_body_with_a_bad_byte_in_a_skipped_string_costs_only_its_message() {
        // The envelope check skips "params" unread; the transport would not.
        let mut input = frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"a/b\",\"params\":{\"x\":\"\xff\"}}");
        input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":"c/d"}"#));
        let out = filter(input).await;
        assert_eq!(out.matches(MALFORMED).count(), 1, "{out}");
        assert!(out.contains("not UTF-8"), "{out}");
        assert!(out.ends_with(r#"{"jsonrpc":"2.0","id":2,"method":"c/d"}"#), "{out}");
    }
}
