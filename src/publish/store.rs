//! Opening the object store named by `svcdir publish --to URL`, and turning its errors into
//! messages for the people running the publish (a missing bucket, refused credentials).
//!
//! Settings come only from the standard environment of each store (`AWS_*` for S3 and
//! S3-compatible stores, `GOOGLE_*` for GCS, `AZURE_*` for Azure), read by `object_store`'s
//! builders; this module never prints them, and the errors it reports carry the URL and
//! the store's answer, never a credential.

use std::sync::Arc;
#[cfg(feature = "cloud")]
use std::time::Duration;

use object_store::ObjectStore;
#[cfg(feature = "cloud")]
use object_store::aws::AmazonS3Builder;
#[cfg(feature = "cloud")]
use object_store::azure::MicrosoftAzureBuilder;
#[cfg(feature = "cloud")]
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
};
#[cfg(feature = "cloud")]
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
#[cfg(feature = "cloud")]
use object_store::{BackoffConfig, ClientConfigKey, ClientOptions, RetryConfig};

use super::PublishError;

/// An opened destination: the store, and the prefix the tree goes under.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// Where the tree goes inside the store (empty for the whole bucket).
    pub prefix: StorePath,
    /// The URL as given (it holds no credential: those come from the environment).
    pub url: String,
    /// Whether objects carry metadata (`Content-Type`, ...): every cloud store does, a
    /// local folder does not.
    pub attributes: bool,
}

impl Target {
    /// The location of the file `rel` (relative, `/`-separated) of the tree.
    pub(crate) fn location(&self, rel: &str) -> StorePath {
        let mut location = self.prefix.clone();
        for part in rel.split('/') {
            location = location.clone().join(part);
        }
        location
    }

    /// The path of `location` relative to the prefix, `None` when outside it.
    pub(crate) fn relative(&self, location: &StorePath) -> Option<String> {
        let parts: Vec<_> = location.prefix_match(&self.prefix)?.map(|p| p.as_ref().to_owned()).collect();
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

/// How hard the requests to a cloud store are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retries {
    /// A publish: throttling (429, S3's `SlowDown` 503) and server errors (5xx) are retried
    /// with exponential backoff and jitter, for at most three minutes.
    Publish,
    /// One poll of `svcdir-search --from`: a store that does not answer fails the poll
    /// within seconds (logged, counted, shown by `/healthz`), and the next poll tries again.
    Poll,
}

#[cfg(feature = "cloud")]
impl Retries {
    fn config(self) -> RetryConfig {
        match self {
            Retries::Publish => RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(50),
                    max_backoff: Duration::from_secs(10),
                    base: 2.0,
                },
                max_retries: 10,
                retry_timeout: Duration::from_secs(180),
            },
            Retries::Poll => RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(100),
                    max_backoff: Duration::from_secs(1),
                    base: 2.0,
                },
                max_retries: 2,
                retry_timeout: Duration::from_secs(5),
            },
        }
    }
}

/// Opens the store of `url`: `s3://BUCKET[/PREFIX]`, `gs://BUCKET[/PREFIX]`,
/// `az://CONTAINER[/PREFIX]` or `file:///DIR`.
pub(crate) fn open(url: &str) -> Result<Target, PublishError> {
    open_with(url, Retries::Publish)
}

/// [`open`] with another retry policy: `svcdir-search --from` gives up on a poll within
/// seconds and tries again at the next one, where a publish keeps trying for minutes.
pub(crate) fn open_with(url: &str, retry: Retries) -> Result<Target, PublishError> {
    let bad = |reason: &str| PublishError::BadUrl { url: url.to_owned(), reason: reason.to_owned() };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme (s3://, gs://, az:// or file:///)"))?;
    if scheme == "file" {
        let dir = rest.strip_prefix('/').map(|_| rest).ok_or_else(|| bad("a file URL is file:///ABSOLUTE/DIR"))?;
        if !std::path::Path::new(dir).is_dir() {
            return Err(PublishError::NoBucket { url: url.to_owned(), detail: format!("{dir} is not a directory") });
        }
        let store = LocalFileSystem::new_with_prefix(dir)
            .map_err(|source| PublishError::Store { url: url.to_owned(), detail: redact(&source.to_string()) })?
            .with_automatic_cleanup(true);
        return Ok(Target {
            store: Arc::new(store),
            prefix: StorePath::default(),
            url: url.to_owned(),
            attributes: false,
        });
    }
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("no bucket name"));
    }
    let prefix =
        StorePath::parse(prefix.trim_matches('/')).map_err(|_| bad("the prefix is not a valid object path"))?;
    let store = open_cloud(url, scheme, bucket, retry)?;
    Ok(Target { store, prefix, url: url.to_owned(), attributes: true })
}

/// The cloud store of `scheme` (`s3`, `gs`, `az`) for `bucket`.
#[cfg(feature = "cloud")]
fn open_cloud(url: &str, scheme: &str, bucket: &str, retry: Retries) -> Result<Arc<dyn ObjectStore>, PublishError> {
    let bad = |reason: &str| PublishError::BadUrl { url: url.to_owned(), reason: reason.to_owned() };
    // The cloud builders build their HTTP client now: rustls needs its provider first.
    crate::tls::install_crypto_provider();
    Ok(match scheme {
        "s3" => Arc::new(
            AmazonS3Builder::from_env()
                .with_http_connector(NoRedirects)
                .with_bucket_name(bucket)
                .with_retry(retry.config())
                .build()
                .map_err(|source| PublishError::Store { url: url.to_owned(), detail: redact(&source.to_string()) })?,
        ),
        "gs" => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_http_connector(NoRedirects)
                .with_bucket_name(bucket)
                .with_retry(retry.config())
                .build()
                .map_err(|source| PublishError::Store { url: url.to_owned(), detail: redact(&source.to_string()) })?,
        ),
        "az" => Arc::new(
            MicrosoftAzureBuilder::from_env()
                .with_http_connector(NoRedirects)
                .with_container_name(bucket)
                .with_retry(retry.config())
                .build()
                .map_err(|source| PublishError::Store { url: url.to_owned(), detail: redact(&source.to_string()) })?,
        ),
        _ => return Err(bad("unknown scheme: use s3://, gs://, az:// or file:///")),
    })
}

/// The HTTP client of every cloud store: reqwest set up from the store's [`ClientOptions`]
/// as `object_store` does, except that a redirect is never followed (it would carry the
/// signed headers, the session token among them, and a `Referer` naming the bucket to the
/// origin it names) and fails the request, unretried, saying where it pointed.
#[cfg(feature = "cloud")]
#[derive(Debug)]
struct NoRedirects;

#[cfg(feature = "cloud")]
impl HttpConnector for NoRedirects {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let value = |key: ClientConfigKey| options.get_config_value(&key);
        let flag = |key| {
            value(key).is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes" | "y"))
        };
        // object_store writes its durations as humantime does ("30s", "5s").
        let duration = |key| value(key).and_then(|v| humantime::parse_duration(&v).ok());
        let generic =
            |source: reqwest::Error| object_store::Error::Generic { store: "HTTP client", source: Box::new(source) };
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .https_only(!flag(ClientConfigKey::AllowHttp))
            .user_agent(
                value(ClientConfigKey::UserAgent)
                    .unwrap_or_else(|| concat!("svcdir/", env!("CARGO_PKG_VERSION")).to_owned()),
            );
        if flag(ClientConfigKey::AllowInvalidCertificates) {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        if let Some(proxy) = value(ClientConfigKey::ProxyUrl) {
            let mut proxy = reqwest::Proxy::all(proxy).map_err(generic)?;
            if let Some(excludes) = value(ClientConfigKey::ProxyExcludes) {
                proxy = proxy.no_proxy(reqwest::NoProxy::from_string(&excludes));
            }
            if let Some(pem) = value(ClientConfigKey::ProxyCaCertificate) {
                let certificate = reqwest::tls::Certificate::from_pem(pem.as_bytes()).map_err(generic)?;
                builder = builder.tls_certs_merge(std::iter::once(certificate));
            }
            builder = builder.proxy(proxy);
        }
        if let Some(timeout) = duration(ClientConfigKey::Timeout) {
            builder = builder.timeout(timeout);
        }
        if let Some(timeout) = duration(ClientConfigKey::ConnectTimeout) {
            builder = builder.connect_timeout(timeout);
        }
        if let Some(timeout) = duration(ClientConfigKey::ReadTimeout) {
            builder = builder.read_timeout(timeout);
        }
        if let Some(timeout) = duration(ClientConfigKey::PoolIdleTimeout) {
            builder = builder.pool_idle_timeout(timeout);
        }
        if flag(ClientConfigKey::Http1Only) {
            builder = builder.http1_only();
        }
        if flag(ClientConfigKey::Http2Only) {
            builder = builder.http2_prior_knowledge();
        }
        Ok(HttpClient::new(Unredirected(builder.build().map_err(generic)?)))
    }
}

/// A reqwest client that follows no redirect, turning one into an error.
#[cfg(feature = "cloud")]
#[derive(Debug)]
struct Unredirected(reqwest::Client);

/// A store answered a request with a redirect.
#[cfg(feature = "cloud")]
#[derive(Debug, thiserror::Error)]
#[error(
    "the store answered {status} with a redirect to {location}; redirects are refused (they would carry the request's \
     credentials elsewhere): point the store's endpoint (AWS_ENDPOINT_URL, ...) at the address that answers"
)]
struct Redirected {
    status: u16,
    location: String,
}

#[cfg(feature = "cloud")]
impl HttpService for Unredirected {
    fn call<'a, 'b>(
        &'a self,
        request: HttpRequest,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(async move {
            let response = HttpService::call(&self.0, request).await?;
            let status = response.status().as_u16();
            // 304 Not Modified is the answer to a conditional read, not a redirect.
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .map_or("nowhere (no Location)".to_owned(), |l| String::from_utf8_lossy(l.as_bytes()).into_owned());
                return Err(HttpError::new(HttpErrorKind::Unknown, Redirected { status, location }));
            }
            Ok(response)
        })
    }
}

/// Without the `cloud` feature only `file:///` stores exist: a cloud URL says how to get them.
#[cfg(not(feature = "cloud"))]
fn open_cloud(url: &str, scheme: &str, _bucket: &str, _retry: Retries) -> Result<Arc<dyn ObjectStore>, PublishError> {
    match scheme {
        "s3" | "gs" | "az" => Err(PublishError::NoCloud { url: url.to_owned(), scheme: scheme.to_owned() }),
        _ => Err(PublishError::BadUrl {
            url: url.to_owned(),
            reason: "unknown scheme: use s3://, gs://, az:// or file:///".to_owned(),
        }),
    }
}

/// Names what went wrong talking to the store: refused credentials and a missing bucket get
/// their own messages; anything else says what was being done.
pub(crate) fn classify(target: &Target, action: &'static str, what: &str, source: object_store::Error) -> PublishError {
    let text = source.to_string();
    let refused = ["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "InvalidToken"];
    if matches!(source, object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. })
        || refused.iter().any(|code| text.contains(code))
    {
        return PublishError::Credentials { url: target.url.clone(), detail: redact(&answer(&text)) };
    }
    for code in ["NoSuchBucket", "ContainerNotFound"] {
        if text.contains(code) {
            return PublishError::NoBucket { url: target.url.clone(), detail: format!("the store answered {code}") };
        }
    }
    PublishError::Remote { url: target.url.clone(), action, what: what.to_owned(), detail: redact(&text) }
}

/// The store's own words from an error: the code and message of an S3-style XML body
/// when there is one, else the whole error.
fn answer(text: &str) -> String {
    let element = |name: &str| {
        let start = text.find(&format!("<{name}>"))? + name.len() + 2;
        let end = start + text[start..].find(&format!("</{name}>"))?;
        Some(text[start..end].to_owned())
    };
    match (element("Code"), element("Message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code,
        _ => text.to_owned(),
    }
}

/// Most bytes of a store's answer (or of any message quoting one) kept in an error, a log
/// line or `/healthz`: a store can answer with an error body of any size.
pub(crate) const DETAIL_LIMIT: usize = 512;

/// What marks a message cut at [`DETAIL_LIMIT`].
const CUT: &str = " [cut]";

/// What a signed URL's query encodes (RFC 3986: all but the unreserved characters).
const URI_COMPONENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Put in place of a credential.
const REDACTED: &str = "<redacted>";

/// Variables of the stores' environment whose values are secrets or name the caller.
const SECRET_VARIABLES: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
];

/// Elements of an S3 error body that quote the signed request (the session token and the
/// key id among it, in plain text or hex): dropped whole.
const SIGNED_ELEMENTS: &[&str] = &[
    "StringToSign",
    "StringToSignBytes",
    "CanonicalRequest",
    "CanonicalRequestBytes",
    "SignatureProvided",
    "AWSAccessKeyId",
];

/// Parameters (query or header form, compared without case) whose values are credentials.
const SECRET_PARAMETERS: &[&str] = &[
    "x-amz-security-token=",
    "x-amz-security-token:",
    "x-amz-credential=",
    "x-amz-signature=",
    "credential=",
    "signature=",
    "sig=",
];

/// `text` made fit to show and to log: the credentials of the environment, signing
/// parameters and the quoted signed request replaced, the user and password of every URL
/// removed, and the whole cut to [`DETAIL_LIMIT`] bytes (at a character boundary, marked).
pub(crate) fn redact(text: &str) -> String {
    let secrets: Vec<String> =
        SECRET_VARIABLES.iter().filter_map(|name| std::env::var(name).ok()).filter(|value| value.len() >= 4).collect();
    redact_with(text, &secrets)
}

/// [`redact`] with the secrets given.
fn redact_with(text: &str, secrets: &[String]) -> String {
    // Far more than is kept, so that a secret cut at this first bound is gone after the last.
    let mut text = cut(text, DETAIL_LIMIT * 64).0.to_owned();
    for secret in secrets {
        let encoded = percent_encoding::utf8_percent_encode(secret, URI_COMPONENT).to_string();
        for form in [secret.as_str(), encoded.as_str()] {
            text = text.replace(form, REDACTED);
        }
    }
    for name in SIGNED_ELEMENTS {
        text = drop_element(&text, name);
    }
    text = redact_parameters(&text);
    text = redact_userinfo(&text);
    // A text already cut here is left as it is (redacting twice changes nothing).
    if text.ends_with(CUT) && text.len() <= DETAIL_LIMIT + CUT.len() {
        return text;
    }
    match cut(&text, DETAIL_LIMIT) {
        (kept, true) => format!("{kept}{CUT}"),
        (kept, false) => kept.to_owned(),
    }
}

/// At most `limit` bytes of `text`, ending at a character boundary; true when cut.
fn cut(text: &str, limit: usize) -> (&str, bool) {
    if text.len() <= limit {
        return (text, false);
    }
    let end = (0..=limit).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    (&text[..end], true)
}

/// `text` with the content of every `<name>...</name>` replaced (an unclosed one: to the end).
fn drop_element(text: &str, name: &str) -> String {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        out.push_str(&rest[..start + open.len()]);
        out.push_str(REDACTED);
        rest = &rest[start + open.len()..];
        match rest.find(&close) {
            Some(end) => rest = &rest[end..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// `text` with the value after every [`SECRET_PARAMETERS`] name replaced, up to the next
/// separator of a query, a header list or markup.
fn redact_parameters(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let found = SECRET_PARAMETERS
            .iter()
            .filter_map(|name| lower[at..].find(name).map(|i| (at + i, name.len())))
            .min_by_key(|&(i, _)| i);
        let Some((start, len)) = found else { break };
        let value = start + len;
        let end = text[value..]
            .find(|c: char| c == '&' || c == ',' || c == ';' || c == '"' || c == '\'' || c == '<' || c.is_whitespace())
            .map_or(text.len(), |i| value + i);
        out.push_str(&text[at..value]);
        if end > value {
            out.push_str(REDACTED);
        }
        at = end;
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

/// `text` with the user and password of every `scheme://user:pass@host` replaced.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let authority_start = i + 3;
        out.push_str(&rest[..authority_start]);
        rest = &rest[authority_start..];
        let authority_end = rest
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | ')') || c.is_whitespace())
            .unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            out.push_str(REDACTED);
            rest = &rest[at..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_answers_are_shortened_to_their_code_and_message() {
        let text = "403 Forbidden: <?xml version=\"1.0\"?><Error><Code>InvalidAccessKeyId</Code><Message>No such key.</Message><RequestId>x</RequestId></Error>";
        assert_eq!(answer(text), "InvalidAccessKeyId: No such key.");
        assert_eq!(answer("connection refused"), "connection refused");
    }

    #[test]
    fn credentials_are_redacted_and_answers_bounded() {
        let secrets = ["AKIAEXAMPLEKEY".to_owned(), "tok/en+with=signs-_".to_owned()];
        let text = "SignatureDoesNotMatch <AWSAccessKeyId>AKIAEXAMPLEKEY</AWSAccessKeyId><StringToSignBytes>41 4b</StringToSignBytes> \
            url http://user:hunter2@127.0.0.1:9/b?X-Amz-Security-Token=tok%2Fen%2Bwith%3Dsigns-_&X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abcd \
            header x-amz-security-token:tok/en+with=signs-_ path /b/tok%2Fen%2Bwith%3Dsigns-_/x Authorization: AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEKEY/x, Signature=ff00";
        let safe = redact_with(text, &secrets);
        for leak in ["AKIAEXAMPLEKEY", "tok/en", "tok%2Fen", "hunter2", "user:", "41 4b", "abcd", "ff00", "AKIA%2F1"] {
            assert!(!safe.contains(leak), "{leak} in {safe}");
        }
        assert!(safe.contains("http://<redacted>@127.0.0.1:9/b"), "{safe}");
        assert!(safe.starts_with("SignatureDoesNotMatch"), "{safe}");

        let huge = format!("{}{}", "é".repeat(DETAIL_LIMIT), "AKIAEXAMPLEKEY".repeat(100_000));
        let safe = redact_with(&huge, &secrets);
        assert!(safe.len() <= DETAIL_LIMIT + CUT.len() && safe.ends_with(CUT), "{}", safe.len());
        assert_eq!(redact_with(&safe, &secrets), safe);
        assert_eq!(redact_with("short", &secrets), "short");
    }

    #[test]
    fn urls_name_a_store_and_a_prefix() {
        let target = open("s3://bucket/site/v1/").unwrap();
        assert_eq!(target.prefix.as_ref(), "site/v1");
        assert_eq!(target.location("api/v4/import/index.json").as_ref(), "site/v1/api/v4/import/index.json");
        let listed = StorePath::parse("site/v1/api/x.json").unwrap();
        assert_eq!(target.relative(&listed).as_deref(), Some("api/x.json"));
        assert_eq!(target.relative(&StorePath::parse("other/x.json").unwrap()), None);
        let whole = open("s3://bucket").unwrap();
        assert_eq!(whole.location("a/b.json").as_ref(), "a/b.json");
        for bad in ["bucket/x", "ftp://host/x", "s3:///x", "file://relative"] {
            assert!(matches!(open(bad), Err(PublishError::BadUrl { .. })), "{bad}");
        }
        assert!(matches!(open("file:///no/such/dir/svcdir"), Err(PublishError::NoBucket { .. })));
    }
}
