//! The real `svcdir-search` binary as a test fixture: started on a free loopback port, its
//! log collected, signalled, and killed on drop if the test did not stop it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_svcdir-search");

/// A running server.
pub struct Server {
    /// The process.
    pub child: Child,
    /// `HOST:PORT` it listens on.
    pub address: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    /// Starts the binary on `index` with extra arguments; waits (at most 20 s) for its
    /// listening line.
    pub fn start(index: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["--index", index.to_str().expect("utf-8 path"), "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svcdir-search starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let lines = log.clone();
        // Drain stderr for the server's whole life, so that its log never blocks it.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(address) = line.split("listening on http://").nth(1) {
                    let _ = tx.send(address.trim().to_owned());
                }
                lines.lock().expect("log lock").push(line);
            }
        });
        let mut server = Server { child, address: String::new(), log };
        server.address = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no listening line; stderr: {:?}", server.log()));
        server
    }

    /// Every log line so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }

    /// Sends a signal by name, e.g. `-TERM` or `-HUP`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").args([name, &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success());
    }

    /// Waits (at most 20 s) until a log line contains `needle`, counting from line `from`.
    pub fn wait_for_log(&self, from: usize, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(line) = self.log().into_iter().skip(from).find(|l| l.contains(needle)) {
                return line;
            }
            assert!(Instant::now() < deadline, "no log line with {needle:?}: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (at most 20 s) for the process to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "did not stop: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("-TERM");
        self.wait_exit()
    }
}
