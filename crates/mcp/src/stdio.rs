//! The client side of the proxy over a byte stream (stdio): newline-delimited JSON-RPC, with
//! every malformed message answered as JSON-RPC 2.0 says.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, Line, LineReader, Parsed};
use crate::route::RawInitialize;

/// Longest message accepted from the client.
const MAX_CLIENT_MESSAGE: usize = 16 << 20;

/// rmcp's server transport over a reader and a writer.
pub(crate) struct StdioServer<R, W> {
    reader: LineReader<BufReader<R>>,
    writer: Arc<Mutex<W>>,
    /// Fires when the client's side of the stream ends.
    closed: CancellationToken,
    /// The `initialize` exchange as JSON: its params are kept on the way in, its result put
    /// back on the way out.
    raw: Arc<RawInitialize>,
}

impl<R, W> StdioServer<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(
        reader: R,
        writer: W,
        closed: CancellationToken,
        raw: Arc<RawInitialize>,
    ) -> Self {
        StdioServer {
            reader: LineReader::new(
                BufReader::with_capacity(1 << 16, reader),
                MAX_CLIENT_MESSAGE,
            ),
            writer: Arc::new(Mutex::new(writer)),
            closed,
            raw,
        }
    }

    /// The line for `item`: as rmcp serializes it, except the `initialize` result, which is
    /// the server's own JSON with the version rmcp negotiated.
    fn line(&self, item: &ServerJsonRpcMessage) -> std::io::Result<Vec<u8>> {
        if let ServerJsonRpcMessage::Response(response) = item {
            if let ServerResult::InitializeResult(result) = &response.result {
                let raw = self
                    .raw
                    .result
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                if let Some(Value::Object(mut raw)) = raw {
                    raw.insert(
                        "protocolVersion".into(),
                        Value::String(result.protocol_version.to_string()),
                    );
                    return jsonrpc::message_line(&serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": response.id,
                        "result": raw,
                    }));
                }
            }
        }
        jsonrpc::message_line(item)
    }

    /// Keeps the params of an `initialize` request as the client wrote them.
    fn keep_initialize(&self, line: &[u8]) {
        if let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) {
            if let Some(params) = message.remove("params") {
                *self.raw.request.lock().unwrap_or_else(|e| e.into_inner()) = Some(params);
            }
        }
    }

    /// Answers an invalid message. The write runs on its own task so that a `receive`
    /// cancelled by rmcp's select loop never leaves half a line behind.
    fn reply(&self, error: &ErrorData, id: Option<&rmcp::model::RequestId>) {
        let line = jsonrpc::error_line(error, id);
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let mut writer = writer.lock().await;
            let _ = writer.write_all(&line).await;
            let _ = writer.flush().await;
        });
    }
}

impl<R, W> Transport<RoleServer> for StdioServer<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = self.line(&item);
        let writer = self.writer.clone();
        async move {
            let line = line?;
            let mut writer = writer.lock().await;
            writer.write_all(&line).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.reader.next().await {
                Line::Whole => match jsonrpc::parse::<ClientJsonRpcMessage>(self.reader.line()) {
                    Parsed::Message(message) => {
                        if let ClientJsonRpcMessage::Request(request) = &message {
                            if matches!(request.request, ClientRequest::InitializeRequest(_)) {
                                self.keep_initialize(self.reader.line());
                            }
                        }
                        return Some(message);
                    }
                    Parsed::Reply(error, id) => self.reply(&error, id.as_ref()),
                    // The client answered one of the server's requests with something that is
                    // not an answer: that request fails.
                    Parsed::BadResponse(id, error) => {
                        return Some(ClientJsonRpcMessage::error(error, Some(id)))
                    }
                    Parsed::Ignore(reason) => {
                        tracing::debug!(%reason, "ignored a message from the client");
                    }
                },
                Line::Oversized => self.reply(
                    &ErrorData::invalid_request(
                        format!(
                            "Invalid Request: a message over {} MiB",
                            MAX_CLIENT_MESSAGE >> 20
                        ),
                        None,
                    ),
                    None,
                ),
                Line::Eof | Line::Io(_) => {
                    self.closed.cancel();
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
