//! Transport-independent pieces of talking to a provider: which failures to retry, how long to
//! wait, and what an HTTP error body says.

use std::time::Duration;

use serde_json::Value;

use crate::UpstreamFailure;

/// Bounded retries with exponential backoff, for HTTP 408, 429 and 5xx answers and for
/// connections that could not be made. A request is retried only before its stream starts:
/// once events have been emitted, a failure ends the turn.
///
/// ```
/// use std::time::Duration;
/// use agentwire_exec::RetryPolicy;
///
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_retries, 2);
/// assert_eq!(policy.delay(0, None), Duration::from_millis(500));
/// assert_eq!(policy.delay(1, None), Duration::from_millis(1000));
/// // A server's Retry-After wins, up to the cap.
/// assert_eq!(policy.delay(0, Some(Duration::from_secs(3))), Duration::from_secs(3));
/// assert_eq!(policy.delay(0, Some(Duration::from_secs(3600))), policy.max_delay);
/// assert!(policy.should_retry(429, "rate_limit_exceeded"));
/// assert!(!policy.should_retry(429, "insufficient_quota"));
/// assert!(!policy.should_retry(400, "invalid_request_error"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// The wait before the first retry; it doubles for each further retry.
    pub base_delay: Duration,
    /// The longest wait, whatever the backoff or the server ask for.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy with these bounds.
    pub fn new(max_retries: u32, base_delay: Duration, max_delay: Duration) -> Self {
        RetryPolicy {
            max_retries,
            base_delay,
            max_delay,
        }
    }

    /// Whether an HTTP answer with this status and error code is worth another attempt:
    /// 408, 429 and 5xx, except a 429 for an exhausted quota (`insufficient_quota`), which
    /// waiting does not fix.
    pub fn should_retry(&self, status: u16, code: &str) -> bool {
        match status {
            429 => code != "insufficient_quota",
            408 | 500..=599 => true,
            _ => false,
        }
    }

    /// The wait before retry number `retry` (0 for the first), honouring a server's
    /// `Retry-After`, never longer than `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(16)));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }
}

/// The wait a server asks for: `retry-after-ms` (milliseconds, sent by OpenAI) or
/// `Retry-After` in seconds. HTTP dates are not supported and give `None`.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(agentwire_exec::parse_retry_after(Some("2"), None), Some(Duration::from_secs(2)));
/// assert_eq!(agentwire_exec::parse_retry_after(Some("2"), Some("150")), Some(Duration::from_millis(150)));
/// assert_eq!(agentwire_exec::parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT"), None), None);
/// ```
pub fn parse_retry_after(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
        }
    }
    let seconds = retry_after?.trim().parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// The failure an HTTP error answer stands for.
///
/// The OpenAI error body `{"error": {"message", "type", "code", "param"}}` gives the message and
/// the code (`code`, else `type`), and is kept whole as the failure's
/// [`details`](UpstreamFailure::details) (so `param` and `type` reach the `error` event and the
/// failed response); another body gives its first 500 characters; the code is `http_error`
/// when the body names none. The status is kept as `http_status`. Servers that send a number as
/// `code` (llama.cpp's `{"error": {"code": 400, ...}}`) are read the same way, by `type`.
///
/// ```
/// let failure = agentwire_exec::http_failure(
///     401,
///     r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#,
/// );
/// assert_eq!(failure.code, "invalid_api_key");
/// assert_eq!(failure.message, "HTTP 401: Incorrect API key provided.");
/// assert_eq!(failure.http_status, Some(401));
/// assert_eq!(failure.error_type(), Some("invalid_request_error"));
/// assert_eq!(agentwire_exec::http_failure(502, "").message, "HTTP 502");
/// ```
pub fn http_failure(status: u16, body: &str) -> UpstreamFailure {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |key: &str| error.and_then(|e| e.get(key)).and_then(Value::as_str);
    let code = field("code")
        .or_else(|| field("type"))
        .unwrap_or("http_error");
    let detail = match field("message").or_else(|| error.and_then(Value::as_str)) {
        Some(message) => message.to_owned(),
        None => {
            let body = body.trim();
            let cut: String = body.chars().take(500).collect();
            if cut.len() < body.len() {
                format!("{cut}…")
            } else {
                cut
            }
        }
    };
    let message = if detail.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {detail}")
    };
    let failure = UpstreamFailure::new(code, message).with_http_status(status);
    match error {
        Some(details @ Value::Object(_)) => failure.with_details(details.clone()),
        _ => failure,
    }
}
