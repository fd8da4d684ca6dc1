//! JSON-RPC over newline-delimited streams: bounded line reading, and parsing that tells a
//! good message from each kind of bad one, so that every bad one is answered as JSON-RPC 2.0
//! says (`-32700` for text that is not JSON, `-32600` for JSON that is not a message, `-32602`
//! for a known method with bad parameters).

use rmcp::model::{ErrorData, NumberOrString, RequestId};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What reading one line of the stream gave.
#[derive(Debug)]
pub(crate) enum Line {
    /// A whole line (without its `\n`).
    Whole,
    /// A line longer than the limit; it was skipped to its end.
    Oversized,
    /// The stream ended.
    Eof,
    /// Reading failed.
    Io(std::io::Error),
}

/// Reads lines of at most `limit` bytes into a reused buffer; cancel-safe (a cancelled read
/// keeps its partial line for the next call).
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    limit: usize,
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, limit: usize) -> Self {
        LineReader {
            reader,
            buf: Vec::new(),
            limit,
            discarding: false,
        }
    }

    /// The next line; its bytes are in [`line`](Self::line) until the next call.
    pub(crate) async fn next(&mut self) -> Line {
        if !self.discarding {
            // The previous line was handed out; a partial one (cancelled read) stays.
            if self.buf.last() == Some(&b'\n') {
                self.buf.clear();
            }
        }
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(available) => available,
                Err(e) => return Line::Io(e),
            };
            if available.is_empty() {
                if self.buf.is_empty() || self.discarding {
                    return Line::Eof;
                }
                // A last line without its newline is still a message.
                self.buf.push(b'\n');
                return Line::Whole;
            }
            let newline = memchr_newline(available);
            let take = newline.map_or(available.len(), |i| i + 1);
            if self.discarding {
                self.reader.consume(take);
                if newline.is_some() {
                    self.discarding = false;
                    self.buf.clear();
                }
                continue;
            }
            if self.buf.len() + take > self.limit.saturating_add(1) {
                self.reader.consume(take);
                self.buf.clear();
                if newline.is_none() {
                    self.discarding = true;
                }
                return Line::Oversized;
            }
            self.buf.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            if newline.is_some() {
                return Line::Whole;
            }
        }
    }

    /// The last line read, without its line end.
    pub(crate) fn line(&self) -> &[u8] {
        let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        line.strip_suffix(b"\r").unwrap_or(line)
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// What a line holds.
#[derive(Debug)]
pub(crate) enum Parsed<M> {
    /// A valid message.
    Message(M),
    /// An invalid message the sender must be answered for, with this error and id (`None`
    /// answers with `"id": null`).
    Reply(ErrorData, Option<RequestId>),
    /// A response to one of our requests that is not a valid response: that request fails.
    BadResponse(RequestId, ErrorData),
    /// Nothing to answer: a blank line, or an invalid notification or response without an id
    /// (JSON-RPC never answers those).
    Ignore(String),
}

/// Parses one line as a message of type `M`.
pub(crate) fn parse<M: DeserializeOwned>(line: &[u8]) -> Parsed<M> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Ignore("blank line".into());
    }
    let error = match serde_json::from_slice::<M>(line) {
        Ok(message) => return Parsed::Message(message),
        Err(error) => error,
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Parsed::Reply(
                ErrorData::parse_error(format!("Parse error: {e}"), None),
                None,
            )
        }
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a JSON-RPC batch (MCP sends one message per line)"
        } else {
            "not a JSON object"
        };
        return Parsed::Reply(
            ErrorData::invalid_request(format!("Invalid Request: {what}"), None),
            None,
        );
    };
    let id = match object.get("id") {
        Some(Value::String(s)) => Some(NumberOrString::String(s.as_str().into())),
        Some(Value::Number(n)) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    };
    let invalid =
        |message: String| Parsed::Reply(ErrorData::invalid_request(message, None), id.clone());
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("Invalid Request: `jsonrpc` must be \"2.0\"".into());
    }
    match object.get("method") {
        Some(Value::String(method)) => match (&id, object.contains_key("id")) {
            (Some(_), _) => Parsed::Reply(
                ErrorData::invalid_params(format!("Invalid params for `{method}`: {error}"), None),
                id,
            ),
            (None, true) => invalid("Invalid Request: `id` must be a string or an integer".into()),
            (None, false) => Parsed::Ignore(format!("invalid `{method}` notification: {error}")),
        },
        Some(_) => invalid("Invalid Request: `method` must be a string".into()),
        None if object.contains_key("result") || object.contains_key("error") => match id {
            Some(id) => Parsed::BadResponse(
                id,
                ErrorData::internal_error(format!("malformed response: {error}"), None),
            ),
            None => Parsed::Ignore(format!("response without a usable id: {error}")),
        },
        None => invalid("Invalid Request: neither a request, a notification nor a response".into()),
    }
}

/// The line answering an invalid message: a JSON-RPC 2.0 error response, `"id": null` when
/// the id could not be read.
pub(crate) fn error_line(error: &ErrorData, id: Option<&RequestId>) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": error,
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// A serialized message and its line end.
pub(crate) fn message_line<M: serde::Serialize>(message: &M) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use rmcp::model::ClientJsonRpcMessage;

    use super::*;

    fn reply(line: &str) -> (i32, Option<RequestId>) {
        match parse::<ClientJsonRpcMessage>(line.as_bytes()) {
            Parsed::Reply(error, id) => (error.code.0, id),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_bad_message_gets_its_json_rpc_answer() {
        assert_eq!(reply("{not json"), (-32700, None));
        assert_eq!(reply("[1,2]"), (-32600, None));
        assert_eq!(reply("42"), (-32600, None));
        assert_eq!(
            reply(r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#),
            (-32600, Some(NumberOrString::Number(4)))
        );
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":"a","method":7}"#),
            (-32600, Some(NumberOrString::String("a".into())))
        );
        // rmcp reads a standard method with bad parameters as a custom request: it is passed
        // on, and the server answers it.
        assert!(matches!(
            parse::<ClientJsonRpcMessage>(
                br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#
            ),
            Parsed::Message(_)
        ));
        // A message type without such a fallback gets -32602 for a known method.
        #[derive(Debug, serde::Deserialize)]
        #[serde(tag = "method", content = "params")]
        enum Strict {
            #[serde(rename = "add")]
            Add {
                #[allow(dead_code)]
                a: i32,
            },
        }
        match parse::<rmcp::model::JsonRpcMessage<Strict, Value, Strict>>(
            br#"{"jsonrpc":"2.0","id":6,"method":"add","params":{"a":"x"}}"#,
        ) {
            Parsed::Reply(error, id) => {
                assert_eq!(
                    (error.code.0, id),
                    (-32602, Some(NumberOrString::Number(6)))
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#),
            (-32600, None)
        );
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":9}"#),
            (-32600, Some(NumberOrString::Number(9)))
        );
        assert!(matches!(
            parse::<ClientJsonRpcMessage>(b"  \t"),
            Parsed::Ignore(_)
        ));
        assert!(matches!(
            parse::<rmcp::model::JsonRpcMessage<Strict, Value, Strict>>(
                br#"{"jsonrpc":"2.0","method":"add","params":{}}"#
            ),
            Parsed::Ignore(_)
        ));
        assert!(matches!(
            parse::<ClientJsonRpcMessage>(br#"{"jsonrpc":"2.0","id":3,"error":{"code":"x"}}"#),
            Parsed::BadResponse(NumberOrString::Number(3), _)
        ));
        assert!(matches!(
            parse::<ClientJsonRpcMessage>(
                b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
            ),
            Parsed::Message(_)
        ));
    }

    #[test]
    fn error_lines_are_json_rpc_2() {
        let line = error_line(&ErrorData::parse_error("Parse error", None), None);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
        );
    }

    #[tokio::test]
    async fn reads_bounded_lines() {
        let input: &[u8] = b"{\"a\":1}\r\n0123456789abcdef\nlast";
        let mut reader = LineReader::new(input, 10);
        assert!(matches!(reader.next().await, Line::Whole));
        assert_eq!(reader.line(), b"{\"a\":1}");
        assert!(matches!(reader.next().await, Line::Oversized));
        assert!(matches!(reader.next().await, Line::Whole));
        assert_eq!(reader.line(), b"last");
        assert!(matches!(reader.next().await, Line::Eof));
    }
}
