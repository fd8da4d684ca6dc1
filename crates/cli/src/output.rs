//! Writing to standard output: a reader that closes the pipe early (`| head`) ends the
//! command quietly with status 0; any other write error is [`CliError::Write`].

use std::io::{self, Write};

use serde::Serialize;

use crate::CliError;

/// Maps a write error, treating a closed pipe as success.
pub(crate) fn written(result: io::Result<()>) -> Result<(), CliError> {
    match result {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::Write(e)),
        _ => Ok(()),
    }
}

/// Writes `text` to standard output as it is.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    written(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Writes `value` as JSON (compact, or pretty with two-space indentation) and a newline,
/// streamed to standard output.
pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<(), CliError> {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let result = if pretty {
        serde_json::to_writer_pretty(&mut out, value)
    } else {
        serde_json::to_writer(&mut out, value)
    };
    written(
        result
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush()),
    )
}
