//! Per-call statistics: a JSON line per tool call, and the totals for the summary at exit.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::Error;

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallStatus {
    /// A result that is not an error.
    Ok,
    /// A result with `isError: true` (passed on unchanged).
    ToolError,
    /// A JSON-RPC error (from the upstream, or the proxy's own when the upstream is gone).
    Error,
    /// The client cancelled the call.
    Cancelled,
}

/// One tool call, as `--stats` writes it (one JSON object per line).
///
/// ```json
/// {"time":"2026-01-02T03:04:05.678Z","upstream":"memory","tool":"read_graph","status":"ok",
///  "format":"gcf","tokens_before":1820,"tokens_after":702,"encode_ms":3.1,"total_ms":9.4}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// When the call ended, UTC, RFC 3339 with milliseconds.
    pub time: String,
    /// The upstream's name.
    pub upstream: String,
    /// The tool's name.
    pub tool: String,
    /// How the call ended.
    pub status: CallStatus,
    /// The format the result's JSON text was re-encoded in (`gcf`, `gcx1`, `toon`, `json`;
    /// several joined by `+` when items differ), `unchanged` when its JSON text was kept, and
    /// `null` when the result had no JSON text.
    pub format: Option<String>,
    /// Tokens of the result's JSON text items as the server wrote them.
    pub tokens_before: u64,
    /// Tokens of the same items as the client received them.
    pub tokens_after: u64,
    /// Milliseconds spent choosing and writing encodings (token counting included).
    pub encode_ms: f64,
    /// Milliseconds from the client's request to the proxy's answer.
    pub total_ms: f64,
}

impl CallRecord {
    pub(crate) fn new(upstream: &str, tool: &str, status: CallStatus) -> Self {
        CallRecord {
            time: rfc3339(SystemTime::now()),
            upstream: upstream.to_owned(),
            tool: tool.to_owned(),
            status,
            format: None,
            tokens_before: 0,
            tokens_after: 0,
            encode_ms: 0.0,
            total_ms: 0.0,
        }
    }
}

/// The totals of a run, printed as one line at exit.
///
/// ```
/// let summary = agentwire_mcp::Summary::default();
/// assert_eq!(summary.to_string(), "0 tool calls");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Summary {
    /// Tool calls answered.
    pub calls: u64,
    /// Calls whose result had a JSON text that was replaced.
    pub reencoded: u64,
    /// Calls that ended in a JSON-RPC error.
    pub errors: u64,
    /// Re-encoded calls by format (`gcf`, `gcx1`, `toon`, `json`).
    pub by_format: BTreeMap<String, u64>,
    /// Tokens of every JSON text as the servers wrote them.
    pub tokens_before: u64,
    /// Tokens of the same texts as the client received them.
    pub tokens_after: u64,
    /// Time spent choosing and writing encodings.
    pub encode_time: Duration,
    /// The first failure to write the statistics file, if any.
    pub stats_error: Option<String>,
}

impl fmt::Display for Summary {
    /// `12 tool calls, 9 re-encoded (gcf 5, gcx1 3, json 1), 1 error; JSON results 45210 ->
    /// 20118 tokens (-55.5%); 38.2 ms encoding`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        write!(f, "{} tool call{}", self.calls, plural(self.calls))?;
        if self.calls == 0 {
            return Ok(());
        }
        write!(f, ", {} re-encoded", self.reencoded)?;
        if !self.by_format.is_empty() {
            let parts: Vec<String> = self
                .by_format
                .iter()
                .map(|(format, n)| format!("{format} {n}"))
                .collect();
            write!(f, " ({})", parts.join(", "))?;
        }
        if self.errors > 0 {
            write!(f, ", {} error{}", self.errors, plural(self.errors))?;
        }
        if self.tokens_before > 0 {
            let change = (self.tokens_after as f64 - self.tokens_before as f64) * 100.0
                / self.tokens_before as f64;
            write!(
                f,
                "; JSON results {} -> {} tokens ({change:+.1}%)",
                self.tokens_before, self.tokens_after
            )?;
        }
        write!(
            f,
            "; {:.1} ms encoding",
            self.encode_time.as_secs_f64() * 1000.0
        )
    }
}

/// Collects the records of every session: totals, and the JSON Lines file when one is given.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    totals: Mutex<Summary>,
    file: Option<Mutex<File>>,
}

impl Stats {
    /// Statistics that append to `path` (created when missing) when it is given.
    pub(crate) fn open(path: Option<&Path>) -> Result<Self, Error> {
        let file = match path {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| {
                        Error::io(
                            format!("cannot open the statistics file {}", path.display()),
                            e,
                        )
                    })?,
            )),
            None => None,
        };
        Ok(Stats {
            totals: Mutex::default(),
            file,
        })
    }

    /// Adds a call to the totals and writes its line.
    pub(crate) fn record(&self, record: &CallRecord) {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        totals.calls += 1;
        if record.status == CallStatus::Error {
            totals.errors += 1;
        }
        if let Some(format) = &record.format {
            if format != "unchanged" {
                totals.reencoded += 1;
                *totals.by_format.entry(format.clone()).or_default() += 1;
            }
        }
        totals.tokens_before += record.tokens_before;
        totals.tokens_after += record.tokens_after;
        totals.encode_time += Duration::from_secs_f64(record.encode_ms / 1000.0);
        if let Some(file) = &self.file {
            let mut line = serde_json::to_vec(record).unwrap_or_default();
            line.push(b'\n');
            // One write per line, so that concurrent sessions never interleave within a line.
            let written = file
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write_all(&line);
            if let Err(e) = written {
                totals
                    .stats_error
                    .get_or_insert_with(|| format!("cannot write the statistics file: {e}"));
            }
        }
    }

    /// The totals so far.
    pub(crate) fn summary(&self) -> Summary {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs() as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_times() {
        let at = |secs: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_767_323_045, 678), "2026-01-02T03:04:05.678Z");
    }

    #[test]
    fn totals_and_lines() {
        let dir = std::env::temp_dir().join(format!("agentwire-mcp-stats-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let stats = Stats::open(Some(&dir)).unwrap();
        let mut gcf = CallRecord::new("memory", "read_graph", CallStatus::Ok);
        gcf.format = Some("gcf".into());
        gcf.tokens_before = 200;
        gcf.tokens_after = 100;
        gcf.encode_ms = 1.5;
        stats.record(&gcf);
        let mut kept = CallRecord::new("memory", "search", CallStatus::Ok);
        kept.format = Some("unchanged".into());
        kept.tokens_before = 10;
        kept.tokens_after = 10;
        stats.record(&kept);
        stats.record(&CallRecord::new("memory", "nope", CallStatus::Error));
        let summary = stats.summary();
        assert_eq!(
            summary.to_string(),
            "3 tool calls, 1 re-encoded (gcf 1), 1 error; JSON results 210 -> 110 tokens (-47.6%); 1.5 ms encoding"
        );
        let text = std::fs::read_to_string(&dir).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["format"], "gcf");
        assert_eq!(lines[0]["tokens_after"], 100);
        assert_eq!(lines[2]["status"], "error");
        assert!(lines[2]["format"].is_null());
        // Appends, never truncates.
        drop(stats);
        let again = Stats::open(Some(&dir)).unwrap();
        again.record(&gcf);
        assert_eq!(std::fs::read_to_string(&dir).unwrap().lines().count(), 4);
        let _ = std::fs::remove_file(&dir);
    }
}
