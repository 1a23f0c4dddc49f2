//! What every exchange's stream links share: the wait between reconnects and the handle that
//! stops the running links.

use std::time::Duration;

/// The running links; dropping this stops them.
pub struct StreamTasks {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl StreamTasks {
    pub(crate) fn new(tasks: Vec<tokio::task::JoinHandle<()>>) -> Self {
        Self { tasks }
    }
}

impl Drop for StreamTasks {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Waits between reconnects: from 250 ms, doubling up to the maximum.
pub(crate) struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    pub(crate) fn new(max: Duration) -> Self {
        Self { next: Duration::from_millis(250), max }
    }

    pub(crate) fn reset(&mut self) {
        self.next = Duration::from_millis(250);
    }

    pub(crate) async fn wait(&mut self) {
        tokio::time::sleep(self.next).await;
        self.next = (self.next * 2).min(self.max);
    }
}
