//! A background loop the service owns and stops on shutdown: the loop gets a receiver that
//! fires when it should end, and the owner waits for it to have let go of the other areas.

use std::future::Future;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running background loop. Dropping it without [`Background::stop`] ends the loop at its
/// next look at the stop signal.
pub struct Background {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Background {
    /// Spawns `run`, which should end soon after the receiver it is given fires.
    pub fn spawn<F, Fut>(run: F) -> Self
    where
        F: FnOnce(oneshot::Receiver<()>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel();
        Self { stop: Some(stop), task: tokio::spawn(run(stopped)) }
    }

    /// Tells the loop to end and waits until it has.
    pub async fn stop(mut self) {
        self.signal();
        let _ = (&mut self.task).await;
    }

    /// As [`Background::stop`], but cancels the loop if it takes longer than `grace`.
    pub async fn stop_within(mut self, grace: Duration) {
        self.signal();
        if tokio::time::timeout(grace, &mut self.task).await.is_err() {
            self.task.abort();
            let _ = (&mut self.task).await;
        }
    }

    fn signal(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
