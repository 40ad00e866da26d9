//! Servers the tests run as child processes, on loopback ports: [`Process`] (stopped with
//! SIGTERM, then SIGKILL, on drop), and for the programs that cannot listen on port 0 and
//! say which port they got (nginx, workerd), [`free_port`] with [`retry_port`].
//! Moved here from the e2e suite's support module (issue 23), which re-exports them.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free on 127.0.0.1 a moment ago: bound, read, released. Another process
/// may take it before the child binds it: start the child with [`retry_port`]. A program
/// that can listen on port 0 and log its address should do that instead.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// Starts a process on a free port, again on another port if a parallel test took the
/// first one between its release and the child's bind (`start`'s error says "in use").
pub fn retry_port<T>(mut start: impl FnMut(u16) -> Result<T, String>) -> T {
    let mut failures = Vec::new();
    for _ in 0..3 {
        match start(free_port()) {
            Ok(process) => return process,
            Err(e) if e.to_ascii_lowercase().contains("in use") => failures.push(e),
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no free port after 3 tries:\n{}", failures.join("\n"))
}

/// A child process, stopped in `Drop` (SIGTERM, then SIGKILL after 5 s).
#[derive(Debug)]
pub struct Process {
    /// What it is, for messages.
    pub name: &'static str,
    /// The process.
    pub child: Child,
    /// Its stdout and stderr.
    pub log: PathBuf,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
}

impl Process {
    /// Spawns `command` with stdout and stderr to `log` and waits until it accepts
    /// connections on `port`; the error carries the log when it exits first.
    pub fn spawn(name: &'static str, command: Command, log: PathBuf, port: u16) -> Result<Process, String> {
        let mut process = Process::start(name, command, log, port);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(process);
            }
            if let Ok(Some(status)) = process.child.try_wait() {
                return Err(format!("{name} exited with {status} before listening:\n{}", process.log_text()));
            }
            if Instant::now() > deadline {
                panic!("{name} does not listen on {port} after 20 s:\n{}", process.log_text());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Spawns `command`, which listens on port 0 and logs `listening on http://ADDRESS`
    /// (svcdir-search, `svcdir serve`), with stdout and stderr to `log`, and reads the port
    /// back from the log: no port is picked and released first.
    pub fn spawn_on_port_0(name: &'static str, command: Command, log: PathBuf) -> Process {
        let mut process = Process::start(name, command, log, 0);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = process.log_text();
            if let Some(port) = listening_port(&text) {
                process.port = port;
                return process;
            }
            if let Ok(Some(status)) = process.child.try_wait() {
                panic!("{name} exited with {status} before listening:\n{text}");
            }
            assert!(Instant::now() < deadline, "{name} does not listen after 20 s:\n{text}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts `command` with no stdin and stdout and stderr to `log`.
    fn start(name: &'static str, mut command: Command, log: PathBuf, port: u16) -> Process {
        let file = fs::File::create(&log).expect("log file");
        let child = command
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Process { name, child, log, port }
    }

    /// What it wrote so far.
    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SIGTERM: nginx's master then stops its workers; the Rust servers stop gracefully.
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!("{} did not stop on SIGTERM; killing it", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of the first `listening on http://HOST:PORT` in a log, text or JSON lines (the
/// start-up event of svcdir-search and `svcdir serve`, address last).
pub fn listening_port(log: &str) -> Option<u16> {
    let rest = log.split("listening on http://").nth(1)?;
    let address = rest.split(|c: char| c == '"' || c.is_whitespace()).next()?;
    address.rsplit(':').next()?.parse().ok()
}

/// Where nginx is, if installed: on `PATH`, else in `/usr/sbin` or `/usr/local/sbin`.
pub fn nginx_binary() -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("nginx")).collect::<Vec<_>>())
        .unwrap_or_default();
    candidates.into_iter().chain(["/usr/sbin/nginx".into(), "/usr/local/sbin/nginx".into()]).find(|p| p.is_file())
}
