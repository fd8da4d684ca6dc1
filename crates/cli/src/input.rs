//! Reading the input of a subcommand: a file, or standard input when no file (or `-`) is given.

use std::io::Read;
use std::path::Path;

use crate::CliError;

/// Reads the whole input as UTF-8 text.
pub(crate) fn read_text(path: Option<&Path>) -> Result<String, CliError> {
    let (bytes, what) = match path {
        Some(path) if path != Path::new("-") => (
            std::fs::read(path).map_err(|source| CliError::Read {
                path: path.to_owned(),
                source,
            })?,
            path.display().to_string(),
        ),
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(CliError::Stdin)?;
            (bytes, "standard input".to_owned())
        }
    };
    String::from_utf8(bytes).map_err(|e| CliError::NotUtf8 {
        what,
        offset: e.utf8_error().valid_up_to(),
    })
}

/// The input as a buffered reader, and how messages name it: the file, or standard input
/// when no file (or `-`) is given. Nothing is read yet.
pub(crate) fn open(path: Option<&Path>) -> Result<(Box<dyn std::io::BufRead>, String), CliError> {
    match path {
        Some(path) if path != Path::new("-") => {
            let file = std::fs::File::open(path).map_err(|source| CliError::Read {
                path: path.to_owned(),
                source,
            })?;
            Ok((
                Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
                path.display().to_string(),
            ))
        }
        _ => Ok((
            Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin())),
            "standard input".to_owned(),
        )),
    }
}
