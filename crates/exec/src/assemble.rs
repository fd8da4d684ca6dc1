//! Folding a stream of events into what a consumer wants: the text and the tool calls.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Serialize;

use crate::event::{ContentPart, ErrorEvent, Event, OutputItem, Response, Usage};
use crate::{Error, ErrorKind, EventReader, Outcome};

/// The final text of one message item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Message {
    /// The item id.
    pub item_id: String,
    /// The item's position in the output.
    pub output_index: u64,
    /// The text of its `output_text` parts, concatenated.
    pub text: String,
}

/// A completed function call: what the orchestrator runs, and answers with a
/// `function_call_output` carrying the same `call_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The item id.
    pub item_id: String,
    /// The item's position in the output.
    pub output_index: u64,
    /// The id to answer with.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// The arguments, a JSON text exactly as streamed.
    pub arguments: String,
}

/// What a stream amounted to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Transcript {
    /// How the stream ended; `None` when it was truncated (no terminal event).
    #[serde(serialize_with = "serialize_outcome")]
    pub outcome: Option<Outcome>,
    /// The response id, when the stream named one.
    pub response_id: Option<String>,
    /// The message items, in output order.
    pub messages: Vec<Message>,
    /// The completed function calls, in output order.
    pub tool_calls: Vec<ToolCall>,
    /// Items that were announced but never finished (a truncated or failed stream).
    pub unfinished: Vec<String>,
    /// The `error` events.
    #[serde(serialize_with = "serialize_errors")]
    pub errors: Vec<ErrorEvent>,
    /// The usage of the terminal event.
    pub usage: Option<Usage>,
    /// Events read, of every type.
    pub events: u64,
    /// Events of types this crate does not model.
    pub other_events: u64,
    /// The terminal event's response object.
    #[serde(skip)]
    pub response: Option<Response>,
    /// Every output item in its final form, in output order: messages, function calls,
    /// reasoning items (with their `encrypted_content` when it was asked for), ... An
    /// orchestrator appends them, followed by a `function_call_output` per call, to the
    /// conversation it sends next turn.
    #[serde(skip)]
    pub items: Vec<OutputItem>,
    /// Where a final value contradicted what came before it (deltas, an earlier done event) and
    /// won, one sentence each; empty for a consistent stream.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn serialize_outcome<S: serde::Serializer>(
    outcome: &Option<Outcome>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(outcome.map_or("truncated", Outcome::status))
}

fn serialize_errors<S: serde::Serializer>(
    errors: &[ErrorEvent],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(errors.len()))?;
    for error in errors {
        #[derive(Serialize)]
        struct Brief<'a> {
            code: Option<&'a str>,
            message: Option<&'a str>,
        }
        seq.serialize_element(&Brief {
            code: error.code_text(),
            message: error.text(),
        })?;
    }
    seq.end()
}

impl Transcript {
    /// The text of every message, joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.messages.iter().map(|m| m.text.as_str()).collect();
        texts.join("\n")
    }

    /// Whether the stream ended with `response.completed`.
    pub fn is_completed(&self) -> bool {
        self.outcome == Some(Outcome::Completed)
    }

    /// Whether the stream stopped before a terminal event.
    pub fn is_truncated(&self) -> bool {
        self.outcome.is_none()
    }
}

#[derive(Debug)]
struct Item {
    id: String,
    output_index: u64,
    kind: Kind,
    done: bool,
    /// The item as its last `output_item.done` (or the terminal response) gave it.
    last: Option<OutputItem>,
}

#[derive(Debug)]
enum Kind {
    Message {
        parts: Vec<PartText>,
    },
    Call {
        call_id: String,
        name: String,
        arguments: String,
        deltas: bool,
        final_arguments: Option<String>,
    },
    Other(String),
}

impl Kind {
    fn admits(&self, item: &OutputItem) -> bool {
        match (self, item) {
            (Kind::Message { .. }, OutputItem::Message(_))
            | (Kind::Call { .. }, OutputItem::FunctionCall(_)) => true,
            (Kind::Other(item_type), OutputItem::Other(_)) => item_type == item.item_type(),
            _ => false,
        }
    }
}

#[derive(Debug, Default)]
struct PartText {
    text: String,
    deltas: bool,
}

/// Folds events, one at a time, into a [`Transcript`], checking the stream as it goes:
///
/// - argument deltas name an item that `output_item.added` announced;
/// - an item keeps its kind (an id is never used for two kinds of item, a call keeps its
///   `call_id`);
/// - `sequence_number`s, where present, increase;
/// - exactly one terminal event (`response.completed`, `response.failed`,
///   `response.incomplete`), and nothing after it.
///
/// Final values win, as they do for the Responses API's own clients: final arguments
/// (`function_call_arguments.done`, `output_item.done`) and final text (`output_text.done`,
/// `content_part.done`, `output_item.done`) replace what the deltas gave, and the terminal
/// response's `output` has the last word on every item it lists; each such correction is
/// noted in [`Transcript::notes`]. [`strict_deltas`](Assembler::strict_deltas) makes a final
/// value that differs from the concatenated deltas an error instead.
///
/// It is tolerant where the protocol's dialects differ: text deltas without an `item_id`
/// belong to the open message, items may appear only in `output_item.done` or only in the
/// terminal response's `output`, the text of `content_part.added` is ignored (the API sends
/// `""`; the text comes as deltas), and unknown event types are counted and skipped.
///
/// ```
/// let jsonl = r#"{"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"web_fetch"}}
/// {"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"url\":"}
/// {"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"\"https://example.com\"}"}
/// {"type":"response.output_item.done","item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"web_fetch","arguments":"{\"url\":\"https://example.com\"}"}}
/// {"type":"response.completed","response":{"usage":{"input_tokens":128,"output_tokens":9,"cached_tokens":0}}}
/// "#;
/// let transcript = agentwire_exec::assemble(jsonl.as_bytes())?;
/// assert!(transcript.is_completed());
/// let call = &transcript.tool_calls[0];
/// assert_eq!((call.call_id.as_str(), call.name.as_str()), ("call_1", "web_fetch"));
/// assert_eq!(call.arguments, r#"{"url":"https://example.com"}"#);
/// assert_eq!(transcript.usage.unwrap().input_tokens, 128);
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Assembler {
    items: Vec<Item>,
    by_id: HashMap<String, usize>,
    current_message: Option<usize>,
    outcome: Option<Outcome>,
    terminal_seen: bool,
    response_id: Option<String>,
    response: Option<Response>,
    errors: Vec<ErrorEvent>,
    last_sequence: Option<u64>,
    events: u64,
    other_events: u64,
    /// What is spent of the output limit.
    spent: usize,
    max_output_bytes: Option<usize>,
    strict: bool,
    notes: Vec<String>,
}

/// What an item and a content part count against the output limit.
const ITEM_COST: usize = 256;
const PART_COST: usize = 128;

impl Assembler {
    /// An empty assembler, with the default output limit
    /// ([`DEFAULT_MAX_OUTPUT_BYTES`](crate::DEFAULT_MAX_OUTPUT_BYTES)).
    pub fn new() -> Self {
        Assembler::default()
    }

    /// Sets the most output the assembler holds: text and arguments, plus a small allowance
    /// per item and content part. Past it, [`push`](Assembler::push) fails with
    /// `output_too_large`, so that memory stays bounded whatever the stream holds.
    #[must_use]
    pub fn max_output_bytes(mut self, limit: usize) -> Self {
        self.max_output_bytes = Some(limit);
        self
    }

    /// Makes a final value (arguments, text) that differs from the concatenated deltas an error
    /// (`arguments_mismatch`, `text_mismatch`) instead of a correction: for checking that a
    /// producer's deltas add up. Off by default.
    #[must_use]
    pub fn strict_deltas(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    fn note(&mut self, note: String) {
        if self.notes.len() < 64 {
            self.notes.push(note);
        }
    }

    fn spend(&mut self, bytes: usize) -> Result<(), Error> {
        let limit = self
            .max_output_bytes
            .unwrap_or(crate::DEFAULT_MAX_OUTPUT_BYTES);
        self.spent = self.spent.saturating_add(bytes);
        if self.spent > limit {
            return Err(Error::new(ErrorKind::OutputTooLarge { limit }));
        }
        Ok(())
    }

    /// Folds one event. After an error the stream is invalid; the assembler stays usable but
    /// what it has folded so far is unspecified.
    pub fn push(&mut self, event: &Event) -> Result<(), Error> {
        if self.terminal_seen {
            return Err(Error::new(ErrorKind::EventAfterTerminal {
                event_type: event.event_type().to_owned(),
            }));
        }
        if let Some(found) = event.sequence_number() {
            if let Some(previous) = self.last_sequence {
                if found <= previous {
                    return Err(Error::new(ErrorKind::SequenceNotIncreasing {
                        previous,
                        found,
                    }));
                }
            }
        }
        self.fold(event)?;
        if let Some(n) = event.sequence_number() {
            self.last_sequence = Some(n);
        }
        self.events += 1;
        Ok(())
    }

    fn fold(&mut self, event: &Event) -> Result<(), Error> {
        match event {
            Event::ResponseCreated(e) | Event::ResponseInProgress(e) => {
                if self.response_id.is_none() {
                    self.response_id.clone_from(&e.response.id);
                }
            }
            Event::OutputItemAdded(e) => {
                let index = self.announce(&e.item, e.output_index)?;
                if let (Kind::Call { arguments, .. }, OutputItem::FunctionCall(call)) =
                    (&mut self.items[index].kind, &e.item)
                {
                    // Arguments announced up front count as the first delta.
                    arguments.push_str(call.arguments.as_deref().unwrap_or(""));
                }
            }
            Event::ContentPartAdded(e) => {
                let index = self.message(e.item_id.as_deref(), e.output_index)?;
                let count = match &self.items[index].kind {
                    Kind::Message { parts } => parts.len() as u64,
                    _ => 0,
                };
                self.part(index, Some(e.content_index.unwrap_or(count)))?;
            }
            Event::OutputTextDelta(e) => {
                self.spend(e.delta.len())?;
                let index = self.message(e.item_id.as_deref(), e.output_index)?;
                let part = self.part(index, e.content_index)?;
                part.text.push_str(&e.delta);
                part.deltas = true;
            }
            Event::OutputTextDone(e) => {
                self.spend(e.text.len())?;
                let index = self.message(e.item_id.as_deref(), e.output_index)?;
                self.final_text(index, e.content_index, &e.text)?;
            }
            Event::ContentPartDone(e) => {
                if let ContentPart::OutputText(part) = &e.part {
                    let index = self.message(e.item_id.as_deref(), e.output_index)?;
                    self.final_text(index, e.content_index, &part.text)?;
                }
            }
            Event::FunctionCallArgumentsDelta(e) => {
                self.spend(e.delta.len())?;
                let index = self.call(&e.item_id)?;
                if let Kind::Call {
                    arguments, deltas, ..
                } = &mut self.items[index].kind
                {
                    arguments.push_str(&e.delta);
                    *deltas = true;
                }
            }
            Event::FunctionCallArgumentsDone(e) => {
                self.spend(e.arguments.len())?;
                let index = self.call(&e.item_id)?;
                self.final_arguments(index, &e.arguments)?;
            }
            Event::OutputItemDone(e) => {
                let index = self.find_item(&e.item, None);
                self.item_done(index, &e.item, e.output_index)?;
            }
            Event::ResponseCompleted(e)
            | Event::ResponseFailed(e)
            | Event::ResponseIncomplete(e) => {
                if let Some(output) = &e.response.output {
                    self.adopt_output(output, matches!(event, Event::ResponseCompleted(_)))?;
                }
                if self.response_id.is_none() {
                    self.response_id.clone_from(&e.response.id);
                }
                self.response = Some(e.response.clone());
                let outcome = match event {
                    Event::ResponseCompleted(_) => Outcome::Completed,
                    Event::ResponseFailed(_) => Outcome::Failed,
                    _ => Outcome::Incomplete,
                };
                if outcome == Outcome::Completed {
                    // A completed response's text is final, whether or not the stream closed
                    // its messages (v0 streams send bare deltas). Open calls stay open: their
                    // arguments were never confirmed.
                    for item in &mut self.items {
                        if matches!(item.kind, Kind::Message { .. }) {
                            item.done = true;
                        }
                    }
                }
                self.outcome = Some(outcome);
                self.terminal_seen = true;
            }
            Event::Error(e) => self.errors.push(e.clone()),
            _ => self.other_events += 1,
        }
        Ok(())
    }

    /// Ends the stream and returns what it amounted to. A stream without a terminal event is
    /// reported as truncated ([`Transcript::is_truncated`]), not as an error.
    pub fn finish(self) -> Transcript {
        let mut items: Vec<&Item> = self.items.iter().collect();
        items.sort_by_key(|item| item.output_index);
        let mut messages = Vec::new();
        let mut tool_calls = Vec::new();
        let mut unfinished = Vec::new();
        let mut finals = Vec::new();
        for item in items {
            if !item.done {
                unfinished.push(item.id.clone());
            } else {
                finals.push(item.final_form());
            }
            match &item.kind {
                Kind::Message { parts } => messages.push(Message {
                    item_id: item.id.clone(),
                    output_index: item.output_index,
                    text: parts.iter().map(|p| p.text.as_str()).collect(),
                }),
                Kind::Call {
                    call_id,
                    name,
                    arguments,
                    ..
                } if item.done => tool_calls.push(ToolCall {
                    item_id: item.id.clone(),
                    output_index: item.output_index,
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => {}
            }
        }
        Transcript {
            outcome: self.outcome,
            response_id: self.response_id,
            messages,
            tool_calls,
            unfinished,
            errors: self.errors,
            usage: self.response.as_ref().and_then(|r| r.usage.clone()),
            events: self.events,
            other_events: self.other_events,
            response: self.response,
            items: finals,
            notes: self.notes,
        }
    }

    fn next_output_index(&self) -> u64 {
        self.items
            .iter()
            .map(|item| item.output_index + 1)
            .max()
            .unwrap_or(0)
    }

    fn announce(&mut self, item: &OutputItem, output_index: Option<u64>) -> Result<usize, Error> {
        let output_index = output_index.unwrap_or_else(|| self.next_output_index());
        let id = match item.id() {
            Some(id) => {
                if let Some(&index) = self.by_id.get(id) {
                    if !self.items[index].kind.admits(item) {
                        return Err(Error::new(ErrorKind::ItemKindMismatch {
                            item_id: id.to_owned(),
                        }));
                    }
                    return Ok(index);
                }
                id.to_owned()
            }
            // An item without an id gets a fresh one.
            None => {
                let mut id = format!("item_{output_index}");
                while self.by_id.contains_key(&id) {
                    id.push('_');
                }
                id
            }
        };
        self.spend(ITEM_COST)?;
        let kind = match item {
            OutputItem::Message(_) => Kind::Message { parts: Vec::new() },
            OutputItem::FunctionCall(call) => Kind::Call {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                arguments: String::new(),
                deltas: false,
                final_arguments: None,
            },
            OutputItem::Other(_) => Kind::Other(item.item_type().to_owned()),
        };
        let index = self.items.len();
        if matches!(kind, Kind::Message { .. }) {
            self.current_message = Some(index);
        }
        self.items.push(Item {
            id: id.clone(),
            output_index,
            kind,
            done: false,
            last: None,
        });
        self.by_id.insert(id, index);
        Ok(index)
    }

    /// The message an event refers to, announcing one implicitly when needed.
    fn message(
        &mut self,
        item_id: Option<&str>,
        output_index: Option<u64>,
    ) -> Result<usize, Error> {
        let found = match item_id {
            Some(id) => self.by_id.get(id).copied(),
            None => self.current_message.filter(|&i| !self.items[i].done),
        };
        match found {
            Some(index) if matches!(self.items[index].kind, Kind::Message { .. }) => Ok(index),
            Some(index) if item_id.is_some() => Err(Error::new(ErrorKind::ItemKindMismatch {
                item_id: self.items[index].id.clone(),
            })),
            _ => {
                // An implicit message: under the event's id, or a fresh one when there is none.
                let mut id = match item_id {
                    Some(id) => id.to_owned(),
                    None => format!("item_{}", self.items.len()),
                };
                while self.by_id.contains_key(&id) {
                    id.push('_');
                }
                let mut message = crate::event::MessageItem::new();
                message.id = Some(id);
                self.announce(&OutputItem::Message(message), output_index)
            }
        }
    }

    fn part(&mut self, index: usize, content_index: Option<u64>) -> Result<&mut PartText, Error> {
        let count = match &self.items[index].kind {
            Kind::Message { parts } => parts.len(),
            _ => unreachable!("message() returns message items"),
        };
        // A part index far beyond the parts seen is clamped: memory stays bounded.
        let at = match content_index {
            Some(ci) => usize::try_from(ci).unwrap_or(usize::MAX).min(count + 64),
            None => count.saturating_sub(1),
        };
        self.spend(PART_COST * (at + 1).saturating_sub(count))?;
        let Kind::Message { parts } = &mut self.items[index].kind else {
            unreachable!("message() returns message items")
        };
        while parts.len() <= at {
            parts.push(PartText::default());
        }
        Ok(&mut parts[at])
    }

    fn final_text(
        &mut self,
        index: usize,
        content_index: Option<u64>,
        text: &str,
    ) -> Result<(), Error> {
        let item_id = self.items[index].id.clone();
        let strict = self.strict;
        let part = self.part(index, content_index)?;
        if part.deltas && part.text != text {
            if strict {
                return Err(Error::new(ErrorKind::TextMismatch { item_id }));
            }
            text.clone_into(&mut part.text);
            self.note(format!(
                "the final text of item `{item_id}` differs from what came before it; the final text wins"
            ));
        } else {
            text.clone_into(&mut part.text);
            part.deltas = true;
        }
        Ok(())
    }

    fn call(&self, item_id: &str) -> Result<usize, Error> {
        match self.by_id.get(item_id) {
            Some(&index) if matches!(self.items[index].kind, Kind::Call { .. }) => Ok(index),
            Some(_) => Err(Error::new(ErrorKind::ItemKindMismatch {
                item_id: item_id.to_owned(),
            })),
            None => Err(Error::new(ErrorKind::UnknownItem {
                item_id: item_id.to_owned(),
            })),
        }
    }

    fn final_arguments(&mut self, index: usize, value: &str) -> Result<(), Error> {
        let item_id = self.items[index].id.clone();
        let Kind::Call {
            arguments,
            deltas,
            final_arguments,
            ..
        } = &mut self.items[index].kind
        else {
            unreachable!("call() returns function calls")
        };
        let contradicts = (*deltas || final_arguments.is_some()) && arguments != value;
        value.clone_into(arguments);
        *final_arguments = Some(value.to_owned());
        if contradicts {
            if self.strict {
                return Err(Error::new(ErrorKind::ArgumentsMismatch { item_id }));
            }
            self.note(format!(
                "the final arguments of call `{item_id}` differ from what came before them; the final arguments win"
            ));
        }
        Ok(())
    }

    /// The item an `output_item.done` (or a terminal response's item at `position`) is about:
    /// by id, else a call by `call_id`, else the open message, else (for a terminal response's
    /// item without id) the item of the same kind at that position.
    fn find_item(&self, item: &OutputItem, position: Option<u64>) -> Option<usize> {
        if let Some(id) = item.id() {
            if let Some(&index) = self.by_id.get(id) {
                return Some(index);
            }
        }
        match item {
            OutputItem::FunctionCall(call) => self.items.iter().position(
                |i| matches!(&i.kind, Kind::Call { call_id, .. } if *call_id == call.call_id),
            ),
            _ if item.id().is_some() => None,
            OutputItem::Message(_) if position.is_none() => {
                self.current_message.filter(|&i| !self.items[i].done)
            }
            _ => position.and_then(|position| {
                self.items
                    .iter()
                    .position(|known| known.output_index == position && known.kind.admits(item))
            }),
        }
    }

    fn item_done(
        &mut self,
        found: Option<usize>,
        item: &OutputItem,
        output_index: Option<u64>,
    ) -> Result<(), Error> {
        let index = match found {
            Some(index) => index,
            None => self.announce(item, output_index)?,
        };
        if !self.items[index].kind.admits(item) {
            return Err(Error::new(ErrorKind::ItemKindMismatch {
                item_id: self.items[index].id.clone(),
            }));
        }
        match item {
            OutputItem::FunctionCall(call) => {
                if let Kind::Call { call_id, .. } = &self.items[index].kind {
                    if *call_id != call.call_id {
                        return Err(Error::new(ErrorKind::ItemKindMismatch {
                            item_id: self.items[index].id.clone(),
                        }));
                    }
                }
                if let Some(arguments) = call.arguments.as_deref().filter(|a| !a.is_empty()) {
                    self.final_arguments(index, arguments)?;
                }
            }
            OutputItem::Message(message) => {
                for (i, part) in message.content.iter().flatten().enumerate() {
                    if let ContentPart::OutputText(part) = part {
                        if !part.text.is_empty() {
                            self.final_text(index, Some(i as u64), &part.text)?;
                        }
                    }
                }
            }
            OutputItem::Other(_) => {}
        }
        self.items[index].done = true;
        self.items[index].last = Some(item.clone());
        if self.current_message == Some(index) {
            self.current_message = None;
        }
        Ok(())
    }

    /// Takes the terminal response's `output`: the last word on every item it lists, and the
    /// only word on items the stream never showed. On a completed response the items it lists
    /// are finished.
    fn adopt_output(&mut self, output: &[OutputItem], completed: bool) -> Result<(), Error> {
        for (i, item) in output.iter().enumerate() {
            let found = self.find_item(item, Some(i as u64));
            match found {
                Some(index) if !completed && !self.items[index].done => {
                    // A failed or incomplete response's snapshot of an unfinished item: its
                    // kind must hold, but it finishes nothing.
                    if !self.items[index].kind.admits(item) {
                        return Err(Error::new(ErrorKind::ItemKindMismatch {
                            item_id: self.items[index].id.clone(),
                        }));
                    }
                }
                _ if !completed && found.is_none() => {}
                _ => self.item_done(found, item, Some(i as u64))?,
            }
        }
        Ok(())
    }
}

impl Item {
    /// The item's final form: as the stream last gave it, with the text and arguments folded.
    fn final_form(&self) -> OutputItem {
        let mut item = self.last.clone().unwrap_or_else(|| match &self.kind {
            Kind::Message { .. } => OutputItem::Message(crate::event::MessageItem::new()),
            Kind::Call { call_id, name, .. } => {
                OutputItem::FunctionCall(crate::event::FunctionCallItem::new(call_id, name))
            }
            Kind::Other(item_type) => {
                let mut map = serde_json::Map::new();
                map.insert("type".to_owned(), item_type.as_str().into());
                OutputItem::Other(map)
            }
        });
        match (&mut item, &self.kind) {
            (OutputItem::Message(message), Kind::Message { parts }) => {
                message.id.get_or_insert_with(|| self.id.clone());
                let content = message.content.get_or_insert_with(Vec::new);
                for (i, part) in parts.iter().enumerate() {
                    match content.get_mut(i) {
                        Some(ContentPart::OutputText(p)) => p.text.clone_from(&part.text),
                        Some(ContentPart::Other(_)) => {}
                        None => content.push(ContentPart::OutputText(
                            crate::event::OutputTextPart::new(part.text.clone()),
                        )),
                    }
                }
            }
            (OutputItem::FunctionCall(call), Kind::Call { arguments, .. }) => {
                call.id.get_or_insert_with(|| self.id.clone());
                call.arguments = Some(arguments.clone());
            }
            (OutputItem::Other(map), _) => {
                map.entry("id").or_insert_with(|| self.id.clone().into());
            }
            _ => {}
        }
        item
    }
}

/// Reads JSONL events from `reader` and folds them. Errors carry the line of the offending
/// event.
pub fn assemble<R: BufRead>(reader: R) -> Result<Transcript, Error> {
    let mut reader = EventReader::new(reader);
    let mut assembler = Assembler::new();
    while let Some(event) = reader.read_event()? {
        assembler
            .push(&event)
            .map_err(|e| e.at_line(reader.line()))?;
    }
    Ok(assembler.finish())
}
