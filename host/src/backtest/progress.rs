//! Progress of a run on stderr: a bar redrawn in place when stderr is a terminal, a plain
//! line every 10 % otherwise (logs, CI), nothing when hidden (tests, library use).

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Hidden,
    Bar,
    Lines,
}

pub struct Progress {
    mode: Mode,
    /// The command whose progress it is, at the start of each plain line.
    command: &'static str,
    total: usize,
    last_shown: Option<usize>,
    started: Instant,
}

impl Progress {
    /// A bar on a terminal, lines otherwise.
    pub fn stderr() -> Self {
        let mode = if std::io::stderr().is_terminal() { Mode::Bar } else { Mode::Lines };
        Self::with_mode(mode)
    }

    pub fn hidden() -> Self {
        Self::with_mode(Mode::Hidden)
    }

    pub fn with_mode(mode: Mode) -> Self {
        Progress { mode, command: "backtest", total: 0, last_shown: None, started: Instant::now() }
    }

    /// The same, for another command's lines (`optimize 40% ...`).
    pub fn of(self, command: &'static str) -> Self {
        Progress { command, ..self }
    }

    /// A message line (loading history, ...).
    pub fn note(&mut self, text: &str) {
        if self.mode != Mode::Hidden {
            eprintln!("{text}");
        }
    }

    /// The replay starts: `total` steps.
    pub fn start(&mut self, total: usize) {
        self.total = total.max(1);
        self.last_shown = None;
        self.started = Instant::now();
    }

    /// `done` steps are done; `label` describes where the replay stands.
    pub fn update(&mut self, done: usize, label: &str) {
        let percent = done * 100 / self.total;
        match self.mode {
            Mode::Hidden => {}
            Mode::Bar => {
                // Redraw at most 200 times a run.
                let slot = done * 200 / self.total;
                if self.last_shown == Some(slot) && done != self.total {
                    return;
                }
                self.last_shown = Some(slot);
                let width = 30;
                let filled = done * width / self.total;
                let bar = format!("{}{}", "#".repeat(filled), ".".repeat(width - filled));
                let elapsed = self.started.elapsed().as_secs_f64();
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r[{bar}] {percent:3}% {label} ({elapsed:.1} s)\x1b[K");
                let _ = err.flush();
            }
            Mode::Lines => {
                let decile = percent / 10;
                if self.last_shown.is_some_and(|d| d >= decile) {
                    return;
                }
                self.last_shown = Some(decile);
                eprintln!("{} {:3}% {label}", self.command, decile * 10);
            }
        }
    }

    /// The replay ended.
    pub fn finish(&mut self) {
        if self.mode == Mode::Bar {
            eprintln!();
        }
    }
}
