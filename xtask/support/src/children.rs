//! The processes an xtask command starts (the demo's service and license server, the contract
//! host) stop when the command stops: when it returns, fails, or gets SIGINT or SIGTERM. Before
//! this, `kill <xtask pid>` ended the xtask at once and left its children holding their ports
//! (8000 and 8090), because Rust runs no destructors when a signal's default action exits.

use std::io;
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use signal_hook::consts::{SIGINT, SIGTERM};

/// Time a child gets between SIGTERM and SIGKILL: the service finishes its open requests and
/// its store within it.
const GRACE: Duration = Duration::from_secs(10);
/// How often a wait looks at a child and at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// Owns a started child and stops it when dropped: SIGTERM (the service shuts down
/// gracefully on it), SIGKILL if it is still running after [`GRACE`], then reaps it.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = kill_process(Pid::from_child(&self.0), Signal::TERM);
            let deadline = Instant::now() + GRACE;
            while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Turns SIGINT and SIGTERM into a request to stop that the command polls, so that it returns
/// normally and its [`Guard`]s stop the children.
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Replaces the default action of SIGINT and SIGTERM (exit at once) for this process.
    pub fn install() -> io::Result<Self> {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            signal_hook::flag::register(signal, Arc::clone(&flag))?;
        }
        Ok(Self(flag))
    }

    /// Whether SIGINT or SIGTERM arrived.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Waits until `child` exits (`Some` of its status) or a stop is requested (`None`).
    pub fn wait(&self, child: &mut Child) -> io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(Some(status));
            }
            if self.requested() {
                return Ok(None);
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    use rustix::process::test_kill_process;

    use super::*;

    /// What the demo does, with two `sleep`s as the service and the license server: runs in a
    /// process of its own, started by [`signal_stops_every_child`], which signals it.
    #[test]
    #[ignore = "run by sigterm_stops_every_child and sigint_stops_every_child in a process of its own"]
    fn supervise_two_sleepers() {
        let stop = Stop::install().unwrap();
        let mut service = Guard(Command::new("sleep").arg("300").spawn().unwrap());
        let license_server = Guard(Command::new("sleep").arg("300").spawn().unwrap());
        println!("pids {} {}", service.0.id(), license_server.0.id());
        let ended = stop.wait(&mut service.0).unwrap();
        assert!(ended.is_none(), "the child ended by itself: {ended:?}");
    }

    #[test]
    fn sigterm_stops_every_child() {
        signal_stops_every_child(Signal::TERM);
    }

    #[test]
    fn sigint_stops_every_child() {
        signal_stops_every_child(Signal::INT);
    }

    /// Starts this test binary running [`supervise_two_sleepers`], sends it `signal` once its
    /// children run, and checks that it exits cleanly within seconds with both children gone.
    fn signal_stops_every_child(signal: Signal) {
        let test = "children::tests::supervise_two_sleepers";
        let mut supervisor = Guard(
            Command::new(std::env::current_exe().unwrap())
                .args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let stdout = supervisor.0.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
        let pids: Vec<Pid> = lines
            .find_map(|line| {
                // libtest prints the test's name on the same line first.
                let (_, pids) = line.split_once("pids ")?;
                pids.split(' ').map(|pid| Pid::from_raw(pid.parse().ok()?)).collect()
            })
            .expect("the supervisor printed its children's pids");
        assert_eq!(pids.len(), 2);
        // Keep reading, so that the supervisor's last lines never meet a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));

        let started = Instant::now();
        kill_process(Pid::from_child(&supervisor.0), signal).unwrap();
        let status = loop {
            if let Some(status) = supervisor.0.try_wait().unwrap() {
                break status;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "the supervisor did not stop");
            std::thread::sleep(POLL);
        };
        assert!(status.success(), "the supervisor ended with {status}");
        for pid in pids {
            assert!(test_kill_process(pid).is_err(), "child {pid:?} still runs");
        }
    }
}
