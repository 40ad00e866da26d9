//! The deployment recipes of `deploy/` (issue 14): the systemd units pass `systemd-analyze
//! verify`, and their command lines, run as written (paths moved under a temporary
//! directory), build, and serve `/healthz`, the search server following the output folder
//! (`--from`) from before the first build to the next one; the container image
//! built by `deploy/container/build.sh` runs and answers. Each skips, saying why, where its
//! tool is missing (`.ci/run` installs systemd, podman and runc).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use svcdir_testkit::process::listening_port;

use crate::support::{self, BASE_URL, Build};

const UNITS: [&str; 4] = ["svcdir-search.service", "svcdir-build.service", "svcdir-build.timer", "svcdir-build.path"];
/// Where the units keep everything.
const STATE: &str = "/var/lib/svcdir";

fn units_dir() -> PathBuf {
    support::repo().join("deploy/systemd")
}

fn unit(name: &str) -> String {
    fs::read_to_string(units_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The unit's text with the installed binaries' paths replaced by the ones cargo built.
fn with_built_binaries(text: &str) -> String {
    text.replace("/usr/local/bin/svcdir-search", env!("CARGO_BIN_EXE_svcdir-search"))
        .replace("/usr/local/bin/svcdir ", &format!("{} ", env!("CARGO_BIN_EXE_svcdir")))
}

/// The value of `key=` in a unit (the last one, as systemd takes it for these keys).
fn setting(text: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    text.lines().rev().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_else(|| panic!("no {key}=")).to_owned()
}

fn where_is(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/usr/sbin".into(), "/bin".into()])
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn systemd_units_pass_systemd_analyze_verify() {
    let Some(analyze) = where_is("systemd-analyze") else {
        svcdir::test_support::skipped("systemd-analyze is not installed (.ci/run installs the systemd package)");
        return;
    };
    let work = tempfile::tempdir().expect("temp dir");
    for name in UNITS {
        // verify checks that each ExecStart binary exists: point them at the built ones.
        fs::write(work.path().join(name), with_built_binaries(&unit(name))).expect("write unit");
    }
    let output = Command::new(analyze)
        .arg("verify")
        .args(UNITS.map(|name| work.path().join(name)))
        .env("SYSTEMD_LOG_COLOR", "0")
        .output()
        .expect("systemd-analyze runs");
    // It exits 0 on settings it ignores, but names them: nothing may be said about our units.
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let about_ours: Vec<&str> = said.lines().filter(|l| l.contains("svcdir")).collect();
    assert!(about_ours.is_empty(), "systemd-analyze verify:\n{said}");

    // The hardening the issue asks for; the server follows the output folder (issue 21),
    // nothing reloads it.
    let search = unit("svcdir-search.service");
    for line in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "User=svcdir",
        "CapabilityBoundingSet=",
    ] {
        assert!(search.lines().any(|l| l == line), "svcdir-search.service lacks {line}");
    }
    assert!(setting(&search, "ExecStart").contains(&format!("--from {STATE}/public ")));
    assert!(!search.lines().any(|l| l.starts_with("ExecReload=")));
    assert!(
        !unit("svcdir-build.service").lines().any(|l| l.starts_with("ExecStartPost=")),
        "the build reloads nothing"
    );
    assert!(!search.lines().any(|l| l.starts_with("ReadWritePaths=") || l.starts_with("StateDirectory=")));
}

fn wait_until(what: &str, log: &Path, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}; log:\n{}", fs::read_to_string(log).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The units' `ExecStart` lines, run as written with `/var/lib/svcdir` moved to a temporary
/// directory: the search server, started before any build, answers 503; the build writes
/// the state; the server follows it (`--from`), reports its index in `/healthz`, and puts a
/// rebuild's index in force within its poll interval.
#[test]
fn the_units_command_lines_build_and_serve_what_they_build() {
    let work = tempfile::tempdir().expect("temp dir");
    let state = work.path().join("state");
    let input = state.join("input");
    fs::create_dir_all(&input).expect("mkdir");
    let copy_fixture = |fixture: &str| {
        for entry in walkdir::WalkDir::new(support::repo().join("tests/fixtures").join(fixture)).min_depth(1) {
            let entry = entry.expect("fixture entry");
            let rel = entry.path().strip_prefix(support::repo().join("tests/fixtures").join(fixture)).unwrap();
            if entry.file_type().is_dir() {
                fs::create_dir_all(input.join(rel)).expect("mkdir");
            } else {
                fs::copy(entry.path(), input.join(rel)).expect("copy");
            }
        }
    };
    copy_fixture("small");
    // The unit's port, 8081, becomes port 0: the port is read back from the server's log.
    let command_of = |unit_name: &str, key: &str| -> Vec<String> {
        let line = setting(&with_built_binaries(&unit(unit_name)), key);
        let line = line.trim_start_matches(['+', '-']).replace(STATE, state.to_str().expect("utf-8"));
        line.split_whitespace().map(|word| word.replace("127.0.0.1:8081", "127.0.0.1:0")).collect()
    };
    let run_build = || {
        let build = command_of("svcdir-build.service", "ExecStart");
        let output = Command::new(&build[0]).args(&build[1..]).env_remove("SVCDIR_BASE_URL").output().expect("runs");
        assert!(output.status.success(), "{build:?}:\n{}", text(&output));
    };
    let manifest_index = || {
        let manifest: serde_json::Value =
            serde_json::from_slice(&fs::read(state.join("public/_manifest.json")).expect("manifest")).expect("JSON");
        manifest["index"].as_str().expect("index hash").to_owned()
    };

    let search = command_of("svcdir-search.service", "ExecStart");
    let log = work.path().join("search.log");
    let child = Command::new(&search[0])
        .args(&search[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log).expect("log"))
        .spawn()
        .expect("svcdir-search starts");
    let _server = svcdir_testkit::KillOnDrop(child);
    let mut port = 0;
    wait_until("svcdir-search does not listen", &log, || {
        port = listening_port(&fs::read_to_string(&log).unwrap_or_default()).unwrap_or(0);
        port != 0
    });
    assert_eq!(support::request(port, "GET", "/healthz", &[]).status, 503, "no build yet");

    run_build();
    wait_until("the first build's index is not in force", &log, || {
        support::request(port, "GET", "/healthz", &[]).json()["index_hash"] == manifest_index()
    });
    let health = support::request(port, "GET", "/healthz", &[]).json();
    assert_eq!((&health["status"], &health["services"]), (&"ok".into(), &6.into()), "{health}");
    // --log-format json, as the unit says: every line one JSON object.
    let logged = fs::read_to_string(&log).expect("log");
    assert!(logged.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{logged}");

    // A new dataset, rebuilt by the unit's command: followed, nothing reloaded.
    copy_fixture("xss");
    run_build();
    assert_ne!(health["index_hash"], manifest_index());
    wait_until("the new index is not in force", &log, || {
        support::request(port, "GET", "/healthz", &[]).json()["index_hash"] == manifest_index()
    });
}

/// `deploy/kubernetes/` passes `kubernetes-validate` (PyPI, installed by `.ci/run` into
/// target/k8s-venv), and its Deployment runs the server as this repository means it:
/// following a bucket, probed on /healthz.
#[test]
fn the_kubernetes_manifests_validate() {
    let validate = support::repo().join("target/k8s-venv/bin/kubernetes-validate");
    if !validate.is_file() {
        svcdir::test_support::skipped(
            "kubernetes-validate is not installed (.ci/run installs it into target/k8s-venv)",
        );
        return;
    }
    let file = support::repo().join("deploy/kubernetes/svcdir-search.yaml");
    let output = Command::new(&validate).args(["--strict"]).arg(&file).output().expect("kubernetes-validate runs");
    assert!(output.status.success(), "{}", text(&output));
    let yaml = fs::read_to_string(&file).expect("manifest");
    for kind in ["Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"] {
        assert!(yaml.lines().any(|l| l == format!("kind: {kind}")), "no {kind}");
    }
    for needle in ["- --from", "- s3://", "path: /healthz", "readinessProbe:", "livenessProbe:"] {
        assert!(yaml.contains(needle), "the Deployment lacks {needle}");
    }
}

/// The container engines that can run a container here, and the options they need: none
/// (or `None`, printed, when no container can run on this machine).
fn container_engine(image: &str) -> Option<Vec<String>> {
    let candidates: [&[&str]; 3] = [
        &[],
        &["--runtime", "runc"],
        // In a container without the right to raise limits or to use cgroup v2 alone.
        &["--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"],
    ];
    let mut failures = Vec::new();
    for options in candidates {
        let (global, run): (Vec<&str>, Vec<&str>) = match options.iter().position(|&o| o == "--ulimit") {
            Some(at) => (options[..at].to_vec(), options[at..].to_vec()),
            None => (options.to_vec(), Vec::new()),
        };
        let output = Command::new("podman")
            .args(global)
            .args(["run", "--rm", "--network", "host"])
            .args(&run)
            .args([image, "--version"])
            .output()
            .expect("podman runs");
        if output.status.success() && String::from_utf8_lossy(&output.stdout).contains("svcdir-search") {
            return Some(options.iter().map(|&o| o.to_owned()).collect());
        }
        failures.push(format!("podman {options:?}: {}", text(&output).trim()));
    }
    svcdir::test_support::skipped(&format!(
        "podman built the image but cannot run a container here:\n{}",
        failures.join("\n")
    ));
    None
}

/// The image of `deploy/container/build.sh`, built from the svcdir-search cargo built, with
/// the podman options that run it here; removed on drop.
struct Image {
    tag: String,
    /// Options before the podman command (`--runtime runc`).
    global: Vec<String>,
    /// Options of `podman run` (`--ulimit ...`).
    run: Vec<String>,
}

/// Held while an image is built or removed: `podman rmi --force` of one test's image while
/// another test's `podman build` runs can remove a layer that build is using ("layer not
/// known").
static IMAGE_STORE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn image_store() -> std::sync::MutexGuard<'static, ()> {
    // A test that panicked while holding it left nothing half-done that the next one needs.
    IMAGE_STORE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Image {
    /// Built under a tag of its own (`purpose` and this process); `None`, after saying why,
    /// when podman is not installed or cannot run a container here.
    fn build(purpose: &str) -> Option<Image> {
        if where_is("podman").is_none() {
            svcdir::test_support::skipped("podman is not installed (.ci/run installs it)");
            return None;
        }
        let tag = format!("localhost/svcdir-search-{purpose}:{}", std::process::id());
        let output = {
            let _store = image_store();
            Command::new("bash")
                .arg(support::repo().join("deploy/container/build.sh"))
                .args([env!("CARGO_BIN_EXE_svcdir-search"), &tag])
                .output()
                .expect("build.sh runs")
        };
        assert!(output.status.success(), "build.sh:\n{}", text(&output));
        // Removed on drop from here, with the engine's options or without them.
        let mut image = Image { tag, global: Vec::new(), run: Vec::new() };
        let options = container_engine(&image.tag)?;
        (image.global, image.run) = match options.iter().position(|o| o == "--ulimit") {
            Some(at) => (options[..at].to_vec(), options[at..].to_vec()),
            None => (options.clone(), Vec::new()),
        };
        Some(image)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _store = image_store();
        podman_quietly(&["rmi", "--force", &self.tag]);
    }
}

/// `deploy/container/build.sh` builds an image that serves a build's index from a read-only
/// volume, reloads on SIGHUP and stops with exit 0 on `podman stop`.
#[test]
fn the_container_image_builds_runs_and_reloads() {
    let Some(image) = Image::build("test") else { return };
    let (tag, global, run) = (&image.tag, &image.global, &image.run);

    let build = Build::new("small", BASE_URL);
    let name = format!("svcdir-search-test-{}", std::process::id());
    let output = Command::new("podman")
        .args(global)
        .args(["run", "--detach", "--name", &name, "--network", "host"])
        .args(run)
        .arg("--volume")
        .arg(format!("{}:/data:ro", build.dir().display()))
        .arg(tag)
        .args(["--index", "/data/search.idx", "--listen", "127.0.0.1:0", "--log-format", "json"])
        .output()
        .expect("podman run");
    assert!(output.status.success(), "podman run:\n{}", text(&output));
    let _container = Cleanup([global.clone(), vec!["rm".into(), "--force".into(), name.clone()]].concat());
    let logs = || text(&Command::new("podman").args(global).args(["logs", &name]).output().expect("podman logs"));
    // On the host's network, port 0: the port read back from the server's log.
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        if let Some(port) = listening_port(&logs()) {
            break port;
        }
        assert!(Instant::now() < deadline, "the container does not listen:\n{}", logs());
        std::thread::sleep(Duration::from_millis(50));
    };
    let health = support::request(port, "GET", "/healthz", &[]).json();
    let hash = svcdir::write::content_hash(&fs::read(&build.index).expect("index"));
    assert_eq!((&health["services"], &health["index_hash"]), (&6.into(), &hash.clone().into()), "{health}");
    let search = support::request(port, "GET", "/api/v4/services/?postcode=G2+1AL", &[]);
    assert_eq!(search.status, 200, "{}", search.text());

    // SIGHUP through podman reads the (rebuilt) index again.
    build.rebuild("xss", BASE_URL);
    let new_hash = svcdir::write::content_hash(&fs::read(&build.index).expect("index"));
    assert_ne!(hash, new_hash);
    let status = Command::new("podman").args(global).args(["kill", "--signal", "HUP", &name]).status().expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while support::request(port, "GET", "/healthz", &[]).json()["index_hash"] != new_hash.as_str() {
        assert!(Instant::now() < deadline, "not reloaded:\n{}", logs());
        std::thread::sleep(Duration::from_millis(50));
    }
    // podman stop sends SIGTERM: drained, exit 0.
    let status = Command::new("podman")
        .args(global)
        .args(["stop", "--time", "20", &name])
        .stdout(Stdio::null())
        .status()
        .expect("stop");
    assert!(status.success());
    let exit = Command::new("podman")
        .args(global)
        .args(["inspect", "--format", "{{.State.ExitCode}}", &name])
        .output()
        .expect("inspect");
    assert_eq!(String::from_utf8_lossy(&exit.stdout).trim(), "0", "{}", logs());
    assert!(logs().contains("\"message\":\"stopped\""), "{}", logs());
}

/// A `podman` command run on drop (removing what a test made).
struct Cleanup(Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        podman_quietly(&self.0);
    }
}

/// Runs `podman` with `args`, its output and its failure ignored (removing what may be gone).
fn podman_quietly(args: &[impl AsRef<std::ffi::OsStr>]) {
    let _ = Command::new("podman").args(args).stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// Replaces the one line of `text` whose content (after the indentation) starts with `key`
/// by the lines `by` makes of that content, at the same indentation; panics unless exactly one line matches, so a change
/// of the manifest cannot make an edit silently miss.
fn edit_line(text: &str, key: &str, by: impl FnOnce(&str) -> Vec<String>) -> String {
    let matching: Vec<usize> =
        text.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with(key)).map(|(i, _)| i).collect();
    assert_eq!(matching.len(), 1, "the Deployment has {} lines starting with {key:?}", matching.len());
    let mut out = String::new();
    let mut by = Some(by);
    for (i, line) in text.lines().enumerate() {
        if i == matching[0] {
            let indent = &line[..line.len() - line.trim_start().len()];
            for new in by.take().expect("one line")(line.trim_start()) {
                out.push_str(&format!("{indent}{new}\n"));
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Removes the block that starts at the one line `key` (the line and the deeper-indented
/// lines after it).
fn remove_block(text: &str, key: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim() == key).collect();
    assert_eq!(starts.len(), 1, "the Deployment has {} lines {key:?}", starts.len());
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[starts[0]]);
    let end = (starts[0] + 1..lines.len()).find(|&i| indent(lines[i]) <= depth).unwrap_or(lines.len());
    lines[..starts[0]].iter().chain(&lines[end..]).map(|l| format!("{l}\n")).collect()
}

/// The Deployment of `deploy/kubernetes/svcdir-search.yaml` as a local `podman kube play`
/// needs it, nothing else changed: its own name, the local image, one replica, the test's
/// bucket, the store's environment given directly (podman 4's secrets do not take the
/// manifest's `kubectl create secret`), and the container port published on 127.0.0.1:`port`.
fn local_deployment(name: &str, image: &str, source: &str, env: &[(&str, String)], port: u16) -> String {
    let manifest = fs::read_to_string(support::repo().join("deploy/kubernetes/svcdir-search.yaml")).expect("manifest");
    let deployment = manifest.split("\n---\n").next().expect("first document");
    assert!(deployment.lines().any(|l| l == "kind: Deployment"), "the first document is not the Deployment");
    let quoted = |value: &str| serde_json::to_string(value).expect("JSON string"); // a YAML scalar too
    let mut yaml = deployment.to_owned();
    // metadata.name names the pod: one of its own, so that runs at the same time never meet.
    let at = yaml.find("\nmetadata:\n  name: svcdir-search\n").expect("metadata.name");
    yaml.replace_range(
        at..at + "\nmetadata:\n  name: svcdir-search\n".len(),
        &format!("\nmetadata:\n  name: {name}\n"),
    );
    yaml = edit_line(&yaml, "replicas:", |_| vec!["replicas: 1".into()]);
    yaml = edit_line(&yaml, "image:", |_| vec![format!("image: {}", quoted(image))]);
    yaml = edit_line(&yaml, "- s3://", |_| vec![format!("- {}", quoted(source))]);
    yaml = remove_block(&yaml, "envFrom:");
    let mut with_env = vec!["env:".to_owned()];
    for (key, value) in env {
        with_env.push(format!("  - name: {key}"));
        with_env.push(format!("    value: {}", quoted(value)));
    }
    yaml = edit_line(&yaml, "env:", |_| with_env);
    // The container port, published on the host's loopback.
    yaml = edit_line(&yaml, "containerPort:", |line| {
        vec![line.to_owned(), format!("hostPort: {port}"), "hostIP: 127.0.0.1".into()]
    });
    yaml
}

/// `podman kube down` of a played file, run on drop.
struct KubeDown {
    global: Vec<String>,
    conf: PathBuf,
    file: PathBuf,
}

impl Drop for KubeDown {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .env("CONTAINERS_CONF", &self.conf)
            .args(&self.global)
            .args(["kube", "down"])
            .arg(&self.file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The Deployment of `deploy/kubernetes/` played by `podman kube play` (the local image, one
/// replica, the test's moto bucket): the pod follows the tree `svcdir publish` put in the
/// bucket, its /healthz says 200 with the published index, and it answers a search with
/// the services of the build.
#[test]
fn the_kubernetes_deployment_runs_in_podman_and_answers_searches() {
    if where_is("podman").is_none() {
        svcdir::test_support::skipped("podman is not installed (.ci/run installs it)");
        return;
    }
    let Some(s3) = svcdir_testkit::s3::S3Server::shared() else { return };
    let Some(image) = Image::build("kube") else { return };
    let build = Build::new("small", BASE_URL);
    let bucket = s3.bucket("kube");
    let source = format!("s3://{bucket}/site");
    let output = svcdir_testkit::s3::publish(
        &build.public,
        &source,
        &svcdir_testkit::s3::S3Server::env_for(&s3.endpoint()),
        &[],
    );
    assert!(output.status.success(), "svcdir publish:\n{}", text(&output));
    let index = build.json("_manifest.json")["index"].as_str().expect("index").to_owned();

    // The pod is on slirp4netns, which forwards 10.0.2.2 to the host's loopback, where moto is.
    let env = svcdir_testkit::s3::S3Server::env_for(&format!("http://10.0.2.2:{}", s3.port));
    let port = support::free_port();
    let name = format!("svcdir-search-kube-{}", std::process::id());
    let file = build.dir().join("deployment.yaml");
    fs::write(&file, local_deployment(&name, &image.tag, &source, &env, port)).expect("write");
    // kube play has no --ulimit: the run options container_engine found go in containers.conf.
    let conf = build.dir().join("containers.conf");
    let ulimits: Vec<String> = image.run.chunks(2).map(|pair| format!("{:?}", pair[1])).collect();
    fs::write(&conf, format!("[containers]\ndefault_ulimits = [{}]\n", ulimits.join(", "))).expect("write");
    let _down = KubeDown { global: image.global.clone(), conf: conf.clone(), file: file.clone() };
    let started = Instant::now();
    let output = Command::new("podman")
        .env("CONTAINERS_CONF", &conf)
        .args(&image.global)
        .args(["kube", "play", "--network", "slirp4netns:allow_host_loopback=true"])
        .arg(&file)
        .output()
        .expect("podman kube play");
    assert!(output.status.success(), "podman kube play:\n{}", text(&output));
    let logs = || {
        let container = format!("{name}-pod-0-svcdir-search");
        text(&Command::new("podman").args(&image.global).args(["logs", &container]).output().expect("podman logs"))
    };

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match support::try_request(port, "GET", "/healthz", &[]) {
            Ok(health) if health.status == 200 => {
                let body = health.json();
                assert_eq!((&body["index_hash"], &body["services"]), (&index.clone().into(), &6.into()), "{body}");
                break;
            }
            Ok(health) => assert_eq!(health.status, 503, "{}", health.text()),
            Err(_) => {} // the server in the pod does not listen yet
        }
        assert!(Instant::now() < deadline, "the pod is not healthy after 60 s:\n{}", logs());
        std::thread::sleep(Duration::from_millis(100));
    }
    let healthy = started.elapsed();
    // The pod's answer is the one svcdir-search gives here on the index of the build.
    let target = "/api/v4/services/?postcode=G2+1AL";
    let search = support::request(port, "GET", target, &[]);
    assert_eq!(search.status, 200, "{}", search.text());
    let local = svcdir_testkit::search_server::Server::start(&build.index, &["--base-url", BASE_URL]);
    let (status, _, expected) = local.get(target);
    assert_eq!(status, 200);
    assert_eq!(search.text(), String::from_utf8_lossy(&expected));
    let found = search.json();
    let names: Vec<&str> =
        found["data"].as_array().expect("data").iter().map(|s| s["name"].as_str().expect("name")).collect();
    assert!(names.contains(&"Argyle St Lunch Club"), "{names:?}");
    eprintln!("podman kube play: pod healthy {:.2} s after play; search found {names:?}", healthy.as_secs_f64());
}
