# What the repository's shell scripts (tests/contract/run.sh, benches/follow.sh) share: a free
# loopback port, and the background processes and work folder they leave behind, stopped and
# removed at exit. Source it from the repository root, then start processes with
# `... & PIDS+=($!)` and set WORK to the folder to remove.
PIDS=()
WORK=""

# A port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
