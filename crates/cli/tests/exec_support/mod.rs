//! Loopback stand-ins for the tests of `agentwire exec`: a scripted HTTP server on 127.0.0.1
//! that answers each connection with a reply (fixed, or computed from the request), and helpers
//! to run the command against it and read its JSONL.
#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

/// How the server ends an answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum End {
    /// Closes the connection after the body (a close-delimited body).
    Close,
    /// Sends the body with chunked encoding, then breaks off in the middle of a chunk.
    ChunkedCut,
    /// Sends the body, then keeps the connection open without a word for this long.
    Stall(Duration),
}

#[derive(Clone, Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) end: End,
    /// Sent in pieces of this many bytes, with this pause after each.
    pub(crate) pieces: usize,
    pub(crate) pause: Duration,
}

impl Reply {
    pub(crate) fn sse(body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            headers: vec![(
                "Content-Type".into(),
                "text/event-stream; charset=utf-8".into(),
            )],
            body: body.into(),
            end: End::Close,
            pieces: 700,
            pause: Duration::ZERO,
        }
    }

    /// An event-stream body of these `data:` payloads, each its own event.
    pub(crate) fn events<S: AsRef<str>>(data: &[S]) -> Self {
        let mut body = String::new();
        for d in data {
            body.push_str("data: ");
            body.push_str(d.as_ref());
            body.push_str("\n\n");
        }
        Reply::sse(body)
    }

    pub(crate) fn json(status: u16, body: &Value) -> Self {
        Reply {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
            end: End::Close,
            pieces: 700,
            pause: Duration::ZERO,
        }
    }

    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub(crate) fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }

    /// Sends the body slowly: `pieces` bytes at a time, `pause` after each.
    pub(crate) fn trickle(mut self, pieces: usize, pause: Duration) -> Self {
        self.pieces = pieces.max(1);
        self.pause = pause;
        self
    }
}

/// One request the server received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) request_line: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

type Handler = Box<dyn FnMut(&Received) -> Reply + Send>;

/// A scripted server: answers each connection with the next reply.
pub(crate) struct Server {
    pub(crate) base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Answers `replies.len()` connections, in order.
    pub(crate) fn start(replies: Vec<Reply>) -> Self {
        let count = replies.len();
        let mut replies = replies.into_iter();
        Server::with(count, move |_| replies.next().unwrap())
    }

    /// Answers `connections` connections with what `handler` makes of each request.
    pub(crate) fn with(
        connections: usize,
        handler: impl FnMut(&Received) -> Reply + Send + 'static,
    ) -> Self {
        let mut handler: Handler = Box::new(handler);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let thread = std::thread::spawn(move || {
            for _ in 0..connections {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                if let Some(request) = serve(stream, &mut handler) {
                    log.lock().unwrap().push(request);
                }
            }
        });
        Server {
            base_url,
            received,
            thread: Some(thread),
        }
    }

    /// Waits for the server to have answered every connection, and returns the requests.
    pub(crate) fn received(&mut self) -> Vec<Received> {
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.received.lock().unwrap().clone()
    }

    /// The requests so far, without waiting.
    pub(crate) fn received_so_far(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        request_line: request_line.trim_end().to_owned(),
        headers,
        body,
    })
}

fn serve(stream: TcpStream, handler: &mut Handler) -> Option<Received> {
    let request = read_request(&stream)?;
    let reply = handler(&request);
    let mut out = stream;
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match reply.end {
        End::Close | End::Stall(_) => head.push_str("Connection: close\r\n\r\n"),
        End::ChunkedCut => head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"),
    }
    // The client may hang up early (for instance after the terminal event): that is fine.
    let _ = out.write_all(head.as_bytes());
    match reply.end {
        End::Close | End::Stall(_) => {
            // Send in pieces, as a real stream arrives.
            for piece in reply.body.chunks(reply.pieces) {
                let _ = out.write_all(piece);
                let _ = out.flush();
                if !reply.pause.is_zero() {
                    std::thread::sleep(reply.pause);
                }
            }
            if let End::Stall(time) = reply.end {
                std::thread::sleep(time);
            }
        }
        End::ChunkedCut => {
            let _ = out.write_all(format!("{:x}\r\n", reply.body.len() + 100).as_bytes());
            let _ = out.write_all(&reply.body);
            let _ = out.flush();
        }
    }
    Some(request)
}

/// `agentwire exec` against `base_url`, with a test key and no proxy, as a plain process.
pub(crate) fn std_exec_at(base_url: &str) -> std::process::Command {
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("agentwire"));
    command
        .env("OPENAI_API_KEY", "sk-test-key")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_ORG_ID")
        .env_remove("OPENAI_PROJECT_ID")
        // Loopback must not go through a proxy configured on the machine.
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .args(["exec", "--base-url", base_url, "--retry-backoff-ms", "10"]);
    command
}

/// `agentwire exec` against `base_url`, with a test key and no proxy.
pub(crate) fn exec_at(base_url: &str) -> Command {
    Command::from_std(std_exec_at(base_url))
}

pub(crate) fn exec(server: &Server) -> Command {
    exec_at(&server.base_url)
}

/// Runs `agentwire exec` against `server` with `args`.
pub(crate) fn run(server: &Server, args: &[&str]) -> std::process::Output {
    exec(server).args(args).output().unwrap()
}

pub(crate) fn lines(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

pub(crate) fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

pub(crate) fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

pub(crate) fn fixture(path: &str) -> Value {
    let path = workspace().join("conformance/exec").join(path);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Writes `value` as JSON to `dir/name` and returns the path as a string.
pub(crate) fn write_json(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path.display().to_string()
}

/// The stream folds with the library's assembler, and that is what it amounts to.
pub(crate) fn assemble(stdout: &[u8]) -> agentwire_exec::Transcript {
    agentwire_exec::assemble(stdout).unwrap_or_else(|e| {
        panic!(
            "the output does not assemble: {e}\n{}",
            String::from_utf8_lossy(stdout)
        )
    })
}
