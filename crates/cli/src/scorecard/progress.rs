//! A one-line progress bar on standard error, drawn only when standard error is a terminal
//! and the run has lasted long enough to be worth one, and erased at the end.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Wait this long before drawing, so that quick runs print nothing.
const DELAY: Duration = Duration::from_millis(300);
/// Redraw at most this often.
const INTERVAL: Duration = Duration::from_millis(80);
const WIDTH: usize = 30;

#[derive(Debug)]
pub(crate) struct Progress {
    enabled: bool,
    total: usize,
    done: usize,
    started: Instant,
    last_draw: Option<Instant>,
}

impl Progress {
    pub(crate) fn new(total: usize) -> Self {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total,
            done: 0,
            started: Instant::now(),
            last_draw: None,
        }
    }

    /// One more item is done; `current` names it.
    pub(crate) fn advance(&mut self, current: &str) {
        self.done += 1;
        self.draw(current);
    }

    /// Nothing finished since the last call, but time passed: draw the bar if it is due, so
    /// that it appears even while the first items (and the tokenizers) are still loading.
    pub(crate) fn tick(&mut self) {
        if self.last_draw.is_none() {
            self.draw("");
        }
    }

    fn draw(&mut self, current: &str) {
        if !self.enabled || self.started.elapsed() < DELAY {
            return;
        }
        if self.last_draw.is_some_and(|t| t.elapsed() < INTERVAL) && self.done < self.total {
            return;
        }
        self.last_draw = Some(Instant::now());
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let name: String = current.chars().take(40).collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2Kscorecard [{}{}] {}/{} {name}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.done,
            self.total
        );
        let _ = err.flush();
    }

    /// Erases the bar, if one was drawn.
    pub(crate) fn finish(&mut self) {
        if self.last_draw.take().is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
