//! The real upstream: `POST {base_url}/responses` (or `/chat/completions`) over HTTP(S), with
//! bounded retries and 307/308 redirects.

use std::io::Read;
use std::time::Duration;

use agentwire_exec::{http_failure, parse_retry_after, RetryPolicy, UpstreamFailure};

/// The longest error body read from a failed answer.
const MAX_ERROR_BODY: u64 = 64 * 1024;

/// The most redirects followed for one attempt.
const MAX_REDIRECTS: u32 = 5;

/// Where and how to send requests.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// `{base_url}/responses` or `{base_url}/chat/completions`.
    pub(crate) url: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub(crate) api_key: Option<String>,
    /// `OpenAI-Organization` and `OpenAI-Project`, from the environment.
    pub(crate) organization: Option<String>,
    pub(crate) project: Option<String>,
    /// `--header` values, in order; a name given here replaces the built-in header of that
    /// name.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) retry: RetryPolicy,
    pub(crate) connect_timeout: Duration,
    /// The whole exchange of one attempt, body included, when capped.
    pub(crate) timeout: Option<Duration>,
}

/// A retry about to happen, for diagnostics.
pub(crate) struct Retrying<'a> {
    pub(crate) failure: &'a UpstreamFailure,
    pub(crate) attempt: u32,
    pub(crate) attempts: u32,
    pub(crate) delay: Duration,
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find(['/', '?', '#']) {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Resolves a `Location` header against the URL it answered.
fn resolve(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    if let Some(rest) = location.strip_prefix("//") {
        let scheme = base.split("://").next().unwrap_or("https");
        return format!("{scheme}://{rest}");
    }
    if location.starts_with('/') {
        return format!("{}{location}", origin(base));
    }
    // Relative to the base's directory.
    let path_end = base.find(['?', '#']).unwrap_or(base.len());
    let base = &base[..path_end];
    let dir = match base.rfind('/') {
        Some(i) if i >= origin(base).len() => &base[..=i],
        _ => return format!("{base}/{location}"),
    };
    format!("{dir}{location}")
}

/// Sends `body` and returns the streaming response body, retrying failures the policy allows
/// and following 307/308 redirects (which keep the method and body; the credentials go only to
/// the origin they were meant for). `on_retry` hears about each retry before its wait.
pub(crate) fn open(
    endpoint: &Endpoint,
    body: &str,
    on_retry: &mut dyn FnMut(Retrying<'_>),
) -> Result<Box<dyn Read + Send>, UpstreamFailure> {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(endpoint.connect_timeout))
        .timeout_global(endpoint.timeout)
        .user_agent(concat!("agentwire/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let attempts = endpoint.retry.max_retries.saturating_add(1);
    let home = origin(&endpoint.url).to_owned();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut url = endpoint.url.clone();
        let mut redirects = 0;
        let (failure, retryable, retry_after) = loop {
            let same_origin = origin(&url) == home;
            match send(&agent, endpoint, &url, body, same_origin) {
                Sent::Stream(reader) => return Ok(reader),
                Sent::Redirect(location) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    url = resolve(&url, &location);
                }
                Sent::Redirect(location) => {
                    break (
                        UpstreamFailure::new(
                            "too_many_redirects",
                            format!(
                                "the upstream redirected more than {MAX_REDIRECTS} times (last to {location})"
                            ),
                        ),
                        false,
                        None,
                    )
                }
                Sent::Failed {
                    failure,
                    retryable,
                    retry_after,
                } => break (failure, retryable, retry_after),
            }
        };
        if !retryable || attempt >= attempts {
            return Err(failure);
        }
        let delay = endpoint.retry.delay(attempt - 1, retry_after);
        on_retry(Retrying {
            failure: &failure,
            attempt,
            attempts,
            delay,
        });
        std::thread::sleep(delay);
    }
}

enum Sent {
    Stream(Box<dyn Read + Send>),
    /// A 307 or 308 to this `Location`.
    Redirect(String),
    Failed {
        failure: UpstreamFailure,
        retryable: bool,
        retry_after: Option<Duration>,
    },
}

fn send(
    agent: &ureq::Agent,
    endpoint: &Endpoint,
    url: &str,
    body: &str,
    same_origin: bool,
) -> Sent {
    let given = |name: &str| {
        endpoint
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let mut request = agent.post(url);
    if !given("Content-Type") {
        request = request.header("Content-Type", "application/json");
    }
    if !given("Accept") {
        request = request.header("Accept", "text/event-stream");
    }
    // Credentials and the caller's headers go only to the origin they were given for.
    if same_origin {
        if let (Some(key), false) = (&endpoint.api_key, given("Authorization")) {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        if let (Some(organization), false) = (&endpoint.organization, given("OpenAI-Organization"))
        {
            request = request.header("OpenAI-Organization", organization);
        }
        if let (Some(project), false) = (&endpoint.project, given("OpenAI-Project")) {
            request = request.header("OpenAI-Project", project);
        }
        for (name, value) in &endpoint.headers {
            request = request.header(name, value);
        }
    }
    match request.send(body) {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let content_type = header("content-type").unwrap_or_default();
            let retry_after = parse_retry_after(
                header("retry-after").as_deref(),
                header("retry-after-ms").as_deref(),
            );
            let location = header("location");
            if matches!(status, 307 | 308) {
                if let Some(location) = location {
                    return Sent::Redirect(location);
                }
            }
            if (200..300).contains(&status) && !content_type.starts_with("application/json") {
                return Sent::Stream(Box::new(response.into_body().into_reader()));
            }
            let mut text = Vec::new();
            // A body that cannot be read leaves the status to speak for itself.
            let _ = response
                .body_mut()
                .as_reader()
                .take(MAX_ERROR_BODY)
                .read_to_end(&mut text);
            let text = String::from_utf8_lossy(&text);
            if (200..300).contains(&status) {
                let mut failure = http_failure(status, &text);
                failure.code = "unexpected_content_type".to_owned();
                failure.message = format!(
                    "the upstream answered with JSON instead of an event stream: {}",
                    failure.message
                );
                return Sent::Failed {
                    failure,
                    retryable: false,
                    retry_after: None,
                };
            }
            let mut failure = http_failure(status, &text);
            if (300..400).contains(&status) {
                let location = location.unwrap_or_default();
                failure.message = format!(
                    "{}: a {status} redirect to `{location}` is not followed (only 307 and 308 \
                     keep the request's method and body; use the new address as --base-url)",
                    failure.message
                );
            }
            let retryable = endpoint.retry.should_retry(status, &failure.code);
            Sent::Failed {
                failure,
                retryable,
                retry_after,
            }
        }
        Err(error) => {
            let retryable = matches!(
                error,
                ureq::Error::ConnectionFailed | ureq::Error::HostNotFound | ureq::Error::Io(_)
            );
            let code = match error {
                ureq::Error::Timeout(_) => "timeout",
                _ => "transport_error",
            };
            Sent::Failed {
                failure: UpstreamFailure::new(code, format!("cannot reach {url}: {error}")),
                retryable,
                retry_after: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_resolve_against_the_url() {
        let base = "http://127.0.0.1:8080/v1/responses";
        assert_eq!(origin(base), "http://127.0.0.1:8080");
        assert_eq!(
            resolve(base, "/v2/responses"),
            "http://127.0.0.1:8080/v2/responses"
        );
        assert_eq!(resolve(base, "other"), "http://127.0.0.1:8080/v1/other");
        assert_eq!(
            resolve(base, "https://example.com/x"),
            "https://example.com/x"
        );
        assert_eq!(resolve(base, "//example.com/x"), "http://example.com/x");
        assert_eq!(origin("https://example.com"), "https://example.com");
    }
}
