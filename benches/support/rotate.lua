-- wrk script of `make bench-search` (benches/search_load.rs): each connection's requests
-- rotate through the lines of a query file (the first script argument), each thread
-- starting at its own place in it, so that every target sees the same mixed queries.
-- `done` prints one machine-readable line for the bench to read.

local threads = 0
function setup(thread)
  thread:set("first", threads)
  threads = threads + 1
end

function init(args)
  paths = {}
  for line in io.lines(args[1]) do
    if line ~= "" then
      paths[#paths + 1] = line
    end
  end
  n = ((first or 0) * 7919) % #paths
end

function request()
  n = n % #paths + 1
  return wrk.format("GET", paths[n])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "svcdir-wrk requests=%d duration_us=%d bytes=%d non2xx=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
