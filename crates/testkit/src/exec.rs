//! The round-trip oracle for `agentwire-exec`'s decoders: the JSONL event reader, the SSE
//! decoder and the normalizer that turns any upstream stream into the promised protocol.

use agentwire_exec::{
    assemble, from_str, to_string, Assembler, EventReader, Normalizer, RequestOptions, SseDecoder,
};

use crate::{Bug, Roundtrip};

/// The SSE event-size limit used by [`sse`], small so that fuzzing reaches it.
pub const SSE_LIMIT: usize = 4096;

/// Reads `input` as JSONL events. Every event that reads writes back to a line that reads
/// as the same event; bad lines are typed errors and reading continues after them; the
/// assembler takes whatever the reader produced without panicking.
pub fn jsonl(input: &[u8]) -> Result<Roundtrip, Bug> {
    let mut reader = EventReader::new(input).max_line_bytes(64 * 1024);
    let mut assembler = Assembler::new().max_output_bytes(1 << 20);
    let mut rejected = None;
    let mut lines_seen = 0;
    loop {
        match reader.read_event() {
            Ok(None) => break,
            Ok(Some(event)) => {
                let line = to_string(&event);
                let back = from_str(&line)
                    .map_err(|e| Bug(format!("written event does not read back: {e}\n{line}")))?;
                if to_string(&back) != line {
                    return Err(Bug(format!(
                        "event changes on a second round trip:\n{line}\n{}",
                        to_string(&back)
                    )));
                }
                let _ = assembler.push(&event);
            }
            Err(e) => {
                if e.line().is_none() {
                    return Err(Bug(format!("reader error without a line number: {e}")));
                }
                rejected.get_or_insert_with(|| e.to_string());
            }
        }
        lines_seen += 1;
        if lines_seen > input.len() + 1 {
            return Err(Bug("the reader does not advance".to_owned()));
        }
    }
    let _ = assembler.finish();
    Ok(rejected.map_or(Roundtrip::Ok, Roundtrip::Rejected))
}

/// Decodes `input` as an SSE body, whole and split at `split`: both give the same events (or
/// both fail), no event's data exceeds [`SSE_LIMIT`], and the normalizer turns the events into
/// a well-formed stream (consecutive sequence numbers, exactly one terminal event, last) that
/// the assembler accepts.
pub fn sse(input: &[u8], split: usize) -> Result<Roundtrip, Bug> {
    let decode = |chunks: &[&[u8]]| {
        let mut decoder = SseDecoder::new().max_event_bytes(SSE_LIMIT);
        let mut events = Vec::new();
        for chunk in chunks {
            decoder
                .feed(chunk, &mut events)
                .map_err(|e| e.to_string())?;
        }
        decoder.finish();
        Ok::<_, String>(events)
    };
    let split = split.min(input.len());
    let whole = decode(&[input]);
    let parts = decode(&[&input[..split], &input[split..]]);
    let events = match (whole, parts) {
        (Ok(a), Ok(b)) if a == b => a,
        (Err(_), Err(_)) => return Ok(Roundtrip::Rejected("sse".to_owned())),
        (a, b) => {
            return Err(Bug(format!(
                "chunking changes the SSE result (split at {split}):\n{a:?}\n{b:?}"
            )))
        }
    };
    if let Some(big) = events.iter().find(|e| e.data.len() > SSE_LIMIT) {
        return Err(Bug(format!(
            "an event of {} bytes passed the {SSE_LIMIT}-byte limit",
            big.data.len()
        )));
    }
    let mut options = RequestOptions::new();
    options.prompt = Some("hi".to_owned());
    let request = options
        .build()
        .map_err(|e| Bug(format!("a prompt-only request does not build: {e}")))?;
    let mut normalizer = Normalizer::new(&request);
    let mut out = Vec::new();
    for event in &events {
        out.extend(normalizer.push_sse(event));
    }
    out.extend(normalizer.finish());
    if out.iter().filter(|e| e.is_terminal()).count() != 1
        || !out.last().is_some_and(|e| e.is_terminal())
    {
        return Err(Bug(
            "the normalized stream has no single, final terminal event".into(),
        ));
    }
    for (n, event) in out.iter().enumerate() {
        if event.sequence_number() != Some(n as u64) {
            return Err(Bug(format!(
                "event {n} has sequence number {:?}",
                event.sequence_number()
            )));
        }
    }
    let jsonl: String = out.iter().map(|e| to_string(e) + "\n").collect();
    assemble(jsonl.as_bytes()).map_err(|e| {
        Bug(format!(
            "the normalized stream does not assemble: {e}\n{jsonl}"
        ))
    })?;
    Ok(Roundtrip::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_normalizes() {
        let jsonl = b"{\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\nnot json\n";
        assert!(matches!(jsonl_check(jsonl), Roundtrip::Rejected(_)));
        let body = b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"Hi\"}\n\n";
        for split in 0..body.len() {
            assert_eq!(sse(body, split), Ok(Roundtrip::Ok), "split at {split}");
        }
    }

    fn jsonl_check(input: &[u8]) -> Roundtrip {
        jsonl(input).unwrap()
    }
}
