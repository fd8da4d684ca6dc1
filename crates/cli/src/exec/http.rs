//! The real upstream: `POST {base_url}/responses` over HTTPS, with bounded retries.

use std::io::Read;
use std::time::Duration;

use agentwire_exec::{http_failure, parse_retry_after, RetryPolicy, UpstreamFailure};

/// The longest error body read from a failed answer.
const MAX_ERROR_BODY: u64 = 64 * 1024;

/// Where and how to send requests.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// `{base_url}/responses`.
    pub(crate) url: String,
    pub(crate) api_key: String,
    /// `OpenAI-Organization` and `OpenAI-Project`, from the environment.
    pub(crate) organization: Option<String>,
    pub(crate) project: Option<String>,
    pub(crate) retry: RetryPolicy,
    pub(crate) connect_timeout: Duration,
    /// The whole exchange of one attempt, body included.
    pub(crate) timeout: Duration,
}

/// What happened before the stream could start, for diagnostics.
pub(crate) struct Retrying<'a> {
    pub(crate) failure: &'a UpstreamFailure,
    pub(crate) attempt: u32,
    pub(crate) attempts: u32,
    pub(crate) delay: Duration,
}

/// Sends `body` and returns the streaming response body, retrying failures the policy allows.
/// `on_retry` hears about each retry before its wait.
pub(crate) fn open(
    endpoint: &Endpoint,
    body: &str,
    on_retry: &mut dyn FnMut(Retrying<'_>),
) -> Result<Box<dyn Read + Send>, UpstreamFailure> {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(endpoint.connect_timeout))
        .timeout_global(Some(endpoint.timeout))
        .user_agent(concat!("agentwire/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let attempts = endpoint.retry.max_retries.saturating_add(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut request = agent
            .post(&endpoint.url)
            .header("Authorization", format!("Bearer {}", endpoint.api_key))
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream");
        if let Some(organization) = &endpoint.organization {
            request = request.header("OpenAI-Organization", organization);
        }
        if let Some(project) = &endpoint.project {
            request = request.header("OpenAI-Project", project);
        }
        let (failure, retryable, retry_after) = match request.send(body) {
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
                if (200..300).contains(&status) && !content_type.starts_with("application/json") {
                    return Ok(Box::new(response.into_body().into_reader()));
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
                    (failure, false, None)
                } else {
                    let failure = http_failure(status, &text);
                    let retryable = endpoint.retry.should_retry(status, &failure.code);
                    (failure, retryable, retry_after)
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
                let failure =
                    UpstreamFailure::new(code, format!("cannot reach {}: {error}", endpoint.url));
                (failure, retryable, None)
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
