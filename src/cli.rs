//! Command-line surface of `svcdir` and `svcdir-search`: clap structs and help text only.
//!
//! Raw arguments never leave this module unvalidated: `config` turns them into the
//! configurations the library runs on.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Publishes the read-only directory API as static files, plus a search index.
#[derive(Debug, Parser)]
#[command(name = "svcdir", version, about, long_about = None)]
pub struct SvcdirCli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `svcdir`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read and validate a dataset, then write every non-search response under the output
    /// directory and the search index. A failed build changes nothing.
    Build(BuildArgs),
    /// Read and validate a dataset and report every problem, writing nothing.
    Validate(ValidateArgs),
    /// Write a deterministic synthetic dataset (for the embedded default and benchmarks).
    Sample(SampleArgs),
    /// Print an nginx.conf that serves a build and sends the two search paths to
    /// svcdir-search, with the routing, JSON/HTML negotiation and headers of the API.
    #[command(long_about = "Print a complete nginx.conf that serves the build in --public and sends \
/api/v4/services/ and /api/v3/search/ to the svcdir-search servers given with --search. It does the \
routing, the JSON/HTML negotiation, the headers and the errors of the API.\n\n\
Run it as `nginx -p PREFIX -c FILE` (add `-g 'daemon off;'` to stay in the foreground): the pid \
file, logs and temporary files go under PREFIX, so no root is needed.")]
    NginxConfig(NginxConfigArgs),
    /// Serve a build and its search index as the deployed API answers (nginx plus
    /// svcdir-search in one process), for trying it out locally.
    #[command(long_about = "Serve a build and its search index as the deployed API answers (nginx \
plus svcdir-search in one process), for trying it out locally.\n\n\
Files of --public are read per request, so a rebuild is served at once; send SIGHUP \
(`kill -HUP PID`) after a rebuild to read the search index again too (a missing or corrupt \
index is refused and the one in force kept). Logs go to stderr as for svcdir-search.")]
    Serve(ServeArgs),
    /// Print (or write) the JSON Schemas (draft 2020-12) of the dataset files, for editors and
    /// data maintainers' CI. Rules between files stay with `svcdir validate`.
    Schema(SchemaArgs),
    /// Turn saved pages of an existing deployment's /api/v4/import/ (v4.1 JSON) into a dataset
    /// directory, reporting what the import could not carry over.
    Convert(ConvertArgs),
    /// Copy a build to object storage (S3 and S3-compatible stores, GCS, Azure, a local
    /// folder), uploading only what changed and deleting what is gone.
    #[command(long_about = "Copy the build in --public to object storage, as the origin of a CDN: \
s3://BUCKET[/PREFIX] (AWS S3 and S3-compatible stores), gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX] \
or file:///DIR. Only new and changed files are uploaded and files gone from --public are deleted, \
each object with the Content-Type nginx would send, the Cache-Control of the API's cache policy and, \
for the precompressed .gz and .br variants, their Content-Encoding.\n\n\
Order: uploads (a file before the lists that link to it), then _manifest.json, then deletes: readers \
never meet a link to a missing object, and a failure part-way leaves the previous site whole. A \
publish killed at any moment and run again uploads only what is still missing or different.\n\n\
Credentials and settings come only from the standard environment: AWS_ACCESS_KEY_ID, \
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL (an S3-compatible store), \
AWS_ALLOW_HTTP=true (a plain-http endpoint); GOOGLE_SERVICE_ACCOUNT / GOOGLE_APPLICATION_CREDENTIALS \
for GCS; AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or AZURE_* tokens) for Azure. \
They are never printed. Throttling and server errors are retried with backoff.\n\n\
Exit status: 0 done (or nothing to do), 1 failed (missing bucket, refused credentials, too many \
deletes, a store or disk error), 2 bad usage.")]
    Publish(PublishArgs),
    /// Write the configuration of a CDN edge that answers the whole API as the nginx
    /// configuration does, from the published objects and svcdir-search.
    #[command(subcommand)]
    CdnConfig(CdnConfigCommand),
}

/// The CDNs `svcdir cdn-config` writes for.
#[derive(Debug, Subcommand)]
pub enum CdnConfigCommand {
    /// A Cloudflare Worker: DIR/worker.js (one ES module, no build step, no dependencies),
    /// DIR/wrangler.toml to deploy it (`npx wrangler deploy`), and DIR/workerd.capnp to run
    /// it locally (`workerd serve DIR/workerd.capnp`), where it may reach local and private
    /// addresses.
    Cloudflare(CloudflareArgs),
}

/// Options of `svcdir cdn-config cloudflare`.
#[derive(Debug, Args)]
pub struct CloudflareArgs {
    /// Base URL of the published objects: the object of the file P of the build is
    /// `{URL}/P` (e.g. the bucket's endpoint and prefix). An answer of 403 or 404 means "no
    /// such object".
    #[arg(long, value_name = "URL")]
    pub static_origin: String,
    /// Base URL of svcdir-search (the two search paths go there, query and Accept unchanged).
    #[arg(long, value_name = "URL")]
    pub search_origin: String,
    /// Directory to write worker.js, wrangler.toml and workerd.capnp into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Address `workerd serve DIR/workerd.capnp` listens on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8787")]
    pub listen: String,
    /// An HTTP service holding workerd's Cache API (workerd.capnp's `cacheApiOutbound`), so
    /// that the Worker's cache of search answers works in workerd too.
    #[arg(long, value_name = "HOST:PORT")]
    pub cache_service: Option<String>,
}

/// Options of `svcdir publish`.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The build to publish (`svcdir build --output`).
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub public: PathBuf,
    /// Destination: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX] or
    /// file:///DIR.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// Print what would be uploaded and deleted; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Stop before changing anything when more than N objects would be deleted.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_deletes: usize,
    /// Transfers at once.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: u16,
    /// Check the store object by object instead of trusting its manifest: list it, compare
    /// each object's size (and its ETag, when that is the MD5 of the bytes) with the local
    /// file, and upload what is missing or different.
    #[arg(long)]
    pub verify: bool,
    /// Print one JSON object on stdout: ok, dry_run, uploaded, deleted, unchanged, bytes,
    /// seconds (and `error` when ok is false). No progress bar.
    #[arg(long)]
    pub json: bool,
}

/// Options of `svcdir convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Saved import pages (`/api/v4/import/?format=json&page=N`), one file each.
    #[arg(long = "from-import", value_name = "FILE", required = true, num_args = 1..)]
    pub from_import: Vec<PathBuf>,
    /// Dataset directory to write (created when missing; its dataset files overwritten).
    /// `--out` is accepted too.
    #[arg(long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// categories.json to use instead of the fixed list.
    #[arg(long, value_name = "FILE")]
    pub categories: Option<PathBuf>,
    /// service_areas.json to use instead of the fixed list.
    #[arg(long, value_name = "FILE")]
    pub service_areas: Option<PathBuf>,
    /// Folder of NRS postcode CSV extracts to copy into the dataset's postcodes/.
    #[arg(long, value_name = "DIR")]
    pub postcodes: Option<PathBuf>,
}

/// Options of `svcdir schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write one `<file>.schema.json` per dataset file (categories, service_areas,
    /// organisations, locations, services) into DIR, created when missing. Without it, one
    /// JSON object mapping those file names to their schemas is printed. `--out` is
    /// accepted too.
    #[arg(long = "output", alias = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Options of `svcdir build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Dataset directory (categories.json, service_areas.json, *.jsonl, postcodes/*.csv).
    #[arg(long, value_name = "DIR", default_value = "input")]
    pub input: PathBuf,
    /// Output directory. Replaced as a whole, and only when the build succeeds.
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub output: PathBuf,
    /// Where to write the search index read by svcdir-search (a copy of the output's
    /// `_search/<hash>.idx`, replaced by each build).
    #[arg(long, value_name = "FILE", default_value = "build/search.idx")]
    pub index: PathBuf,
    /// Public origin of the API, e.g. `https://directory.example.org`. Every absolute URL in
    /// every response (next, previous, permalink, directory_url) starts with it.
    #[arg(long, value_name = "URL", env = "SVCDIR_BASE_URL")]
    pub base_url: String,
    /// Origin of the human-facing directory site used in permalink and directory_url.
    /// Defaults to the base URL.
    #[arg(long, value_name = "URL")]
    pub site_url: Option<String>,
    /// Services per page of /api/v4/import/ (and items per page of the Open Referral UK
    /// lists under /openreferral/).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub import_page_size: usize,
    /// Where the previous build's change record is read from, to continue it
    /// (public/changes/): the published site's origin (`https://directory.example.org`,
    /// reading /changes/state.json and /changes/?page=N) or a build's output folder.
    /// Defaults to the output directory itself; give it where a run starts without the
    /// previous output, as CI does from a fresh clone.
    #[arg(long, value_name = "URL|DIR")]
    pub previous: Option<String>,
    /// Also write `.gz` and `.br` beside each JSON and HTML file of 256 bytes or more, for
    /// nginx's gzip_static and CDNs that serve stored encodings.
    #[arg(long)]
    pub precompress: bool,
    /// Publish even when the build has no service, or fewer than half of the services the
    /// output holds now. Without it such a build stops with exit 1 and changes nothing: an
    /// empty or truncated export must never empty the live site.
    #[arg(long)]
    pub allow_shrink: bool,
    /// No progress bar and no summary line; errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one JSON object on stdout instead of the summary line: the build summary
    /// (services, organisations, postcodes, files, bytes, changed, unchanged, removed,
    /// written, index_bytes, up_to_date, seconds), or on failure `{"ok": false, "errors":
    /// [{file, line, field, value, message}], "more": N}`. No progress bar.
    #[arg(long)]
    pub json: bool,
}

/// Options of `svcdir validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Dataset directory.
    #[arg(long, value_name = "DIR", default_value = "input")]
    pub input: PathBuf,
    /// Print one JSON object on stdout instead of the summary line, as `build --json` does:
    /// `{"ok": true, services, organisations, locations, postcodes}`, or on failure
    /// `{"ok": false, "errors": [{file, line, field, value, message}], "more": N}`.
    #[arg(long)]
    pub json: bool,
}

/// Options of `svcdir sample`.
#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Number of services to generate (a few are unpublished).
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub services: usize,
    /// Seed of the generator: the same seed and size always give the same bytes.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Directory to write the dataset into; created when missing, its files overwritten.
    /// `--out` is accepted too.
    #[arg(long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
}

/// Answers the two search endpoints of the directory API, `/api/v4/services/` and
/// `/api/v3/search/` (GET, HEAD, OPTIONS), from an index written by `svcdir build`.
#[derive(Debug, Parser)]
#[command(
    name = "svcdir-search",
    version,
    about,
    long_about = "Answers the two search endpoints of the directory API, /api/v4/services/ and \
/api/v3/search/ (GET, HEAD, OPTIONS), from a search index written by `svcdir build --index FILE`. \
Every other path answers 404; put it behind the nginx configuration from `svcdir nginx-config`.\n\n\
For operators (not routed to it by the nginx configuration or the CDN edge): GET /healthz answers \
a JSON object (status \"ok\", services, index_hash, uptime_seconds, version) and GET /metrics the \
Prometheus text format (requests by route and status, latency histogram, requests in flight, index \
load time, services and hash, reloads, process memory and CPU).\n\n\
It logs to stderr, as text or JSON lines (--log-format), one event per request (method, path, \
query, status, duration_us, bytes) plus start-up, reload and shutdown; RUST_LOG filters them \
(default `info`; `RUST_LOG=info,svcdir::access=off` turns the access log off). It stops \
gracefully on SIGTERM or Ctrl-C, finishing the requests in flight (for at most the request \
time limit plus 5 s). On SIGHUP (`kill -HUP`, `systemctl reload`) it reads the index \
again and answers new requests from it, with no request dropped; when the file is missing or \
corrupt it logs an error and keeps the index it has. A path and query over 8 KiB gets 414, headers over 16 KiB get 431, a \
request over the time limit 408, and a request or connection past the limits 429 with Retry-After, \
each with a JSON body; a connection slow to send a request's headers, or idle that long, is closed. Exit \
status: 0 after a clean stop, 1 when the index is missing or unreadable or the address cannot be \
listened on, 2 on bad usage."
)]
pub struct SearchArgs {
    /// Search index written by `svcdir build --index FILE`. Rebuild it with the same version
    /// of svcdir when the server says its format version differs.
    #[arg(long, value_name = "FILE", default_value = "build/search.idx", conflicts_with = "from")]
    pub index: PathBuf,
    /// Serve the index of a publication instead of a file, and follow it: a built output
    /// folder (`svcdir build --output`) or a publish destination (`s3://BUCKET[/PREFIX]`,
    /// `gs://...`, `az://...`, `file:///DIR`, with the environment of `svcdir publish`). Its
    /// `_search/current.json` is read every --poll seconds; a new index is fetched, checked
    /// against its name and swapped in with no failed request. Until a first index is in
    /// force, /healthz and the searches answer 503. SIGHUP polls at once.
    #[arg(long, value_name = "SOURCE")]
    pub from: Option<String>,
    /// With --from: the folder the fetched indexes are kept in (at most the one in force, the
    /// one before and one fetch under way, which a later poll resumes). One process per
    /// folder; other files in it are left alone. Default: a new folder of the system's
    /// temporary directory, removed when the server stops.
    #[arg(long, value_name = "DIR", requires = "from")]
    pub cache: Option<PathBuf>,
    /// With --from: the largest index fetched or mapped, in bytes. A pointer naming a larger
    /// one is refused before any byte of it is read (size the cache volume for two indexes
    /// of this size and one fetch).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30, requires = "from",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_index_bytes: u64,
    /// With --from: seconds between two reads of the publication's pointer.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "from",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub poll: u64,
    /// Address to listen on, IP:PORT (port 0 picks a free port; the address is printed).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8081")]
    pub listen: std::net::SocketAddr,
    /// Public origin used in `next` and `previous` links, e.g. `https://directory.example.org`.
    /// Overrides the base URL recorded in the index by `svcdir build --base-url`.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Time allowed to answer one request, in milliseconds; a search still running then
    /// stops and is answered 408 `{"detail": "Request timed out."}`, and the connection closed.
    #[arg(long, value_name = "MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_ms: u64,
    /// Requests answered at once; one more gets 429 (with `Retry-After: 1`) at once instead
    /// of waiting.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent: u32,
    /// Connections served at once; the next 256 get one 429 answer and are closed, and more
    /// wait to be accepted until one closes.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Time a connection may take to send a request's headers, in milliseconds, counted from
    /// when the server is ready for the next request (so also the idle time allowed between
    /// kept-alive requests); past it the connection is closed. Keep it above the idle
    /// keep-alive time of the proxy in front (10 s in `svcdir nginx-config`).
    #[arg(long, value_name = "MS", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,
    /// How the log on stderr is written: `text` lines, or `json` lines (one object per
    /// event with `timestamp`, `level`, `target`, `message` and the event's fields), for a
    /// log pipeline. `auto`: text on a terminal, JSON otherwise. RUST_LOG filters the events.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t, env = "SVCDIR_LOG_FORMAT")]
    pub log_format: crate::server::log::LogFormat,
}

/// Options of `svcdir nginx-config`.
#[derive(Debug, Args)]
pub struct NginxConfigArgs {
    /// The build to serve (`svcdir build --output`); written as an absolute path.
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub public: PathBuf,
    /// Address nginx listens on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Address of a svcdir-search server; repeat the option for several (nginx spreads the
    /// searches over them and skips one that does not answer).
    #[arg(long = "search", value_name = "HOST:PORT", default_value = "127.0.0.1:8081")]
    pub search: Vec<String>,
    /// Write `daemon off;` into the configuration (nginx stays in the foreground).
    #[arg(long)]
    pub daemon_off: bool,
    /// Disk nginx may use for its cache of search answers, in MB; 0 turns the cache off.
    /// Each answer is kept for the max-age of its Cache-Control.
    #[arg(long, value_name = "MB", default_value_t = crate::nginx::SEARCH_CACHE_MB)]
    pub search_cache_mb: u32,
}

/// Options of `svcdir serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The build to serve (`svcdir build --output`).
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub public: PathBuf,
    /// The search index of the same build (`svcdir build --index`).
    #[arg(long, value_name = "FILE", default_value = "build/search.idx")]
    pub index: PathBuf,
    /// Address to listen on, IP:PORT (port 0 picks a free port; the URL is printed).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// How the log on stderr (one event per request, start-up, reload, shutdown) is
    /// written: `text`, or `json` lines; `auto`: text on a terminal, JSON otherwise.
    /// RUST_LOG filters the events (`RUST_LOG=info,svcdir::access=off`: no access log).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t, env = "SVCDIR_LOG_FORMAT")]
    pub log_format: crate::server::log::LogFormat,
}
