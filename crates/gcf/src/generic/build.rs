//! Builds a `serde_json::Value` from the decoder: what `from_str::<Value>` runs.
//!
//! It makes the values serde_json's own `Value` visitor makes, from the same visitor calls,
//! but reserves each array and object for the elements and members GCF declares (a table's
//! row count, a row's present cells, a schema's fields) instead of growing them one insert at
//! a time. A declared count is taken only as far as the rest of the input can hold that many
//! elements, and the reservation is capped at a MiB (the bound serde itself puts on size
//! hints), so an untrusted count cannot make it allocate more than the input backs.
//!
//! With serde_json's `arbitrary_precision` on, a number the decoder cannot hold as `u64`,
//! `i64` or `f64` arrives as serde_json's private number map, read here as serde_json reads
//! it; input that holds serde_json's private tokens itself goes to serde_json's visitor (see
//! `DecoderOptions::from_str`).

use std::fmt;
use std::num::NonZeroU64;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserialize as _;
use serde_json::{Map, Number, Value};

/// The most elements or members reserved up front.
const MAX_RESERVE: usize = (1 << 20) / size_of::<Value>();

/// The members reserved for an object whose size is not declared (member lines). Four, the
/// first capacity `Vec::push` takes: with serde_json's `preserve_order`, eight made every
/// configuration object a block of about a kilobyte, which glibc's allocator served slowly once
/// earlier work had fragmented the heap (a third slower decodes of the deep configuration in
/// the benchmark run, against serde_json, which grows its maps from nothing).
pub(crate) const UNKNOWN_MEMBERS: usize = 4;

/// Builds a `serde_json::Value` (the seed and its visitor).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Build;

impl<'de> DeserializeSeed<'de> for Build {
    type Value = Value;

    #[inline]
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(Build)
    }
}

impl<'de> Visitor<'de> for Build {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    #[inline]
    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    #[inline]
    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    #[inline]
    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        // As serde_json has it (an error past 64 bits without `arbitrary_precision`).
        Number::deserialize(de::value::I128Deserializer::new(value)).map(Value::Number)
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        Number::deserialize(de::value::U128Deserializer::new(value)).map(Value::Number)
    }

    #[inline]
    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(float(value))
    }

    #[inline]
    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    #[inline]
    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    #[inline]
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(Build)
    }

    #[inline]
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(array_capacity(seq.size_hint()));
        while let Some(item) = seq.next_element_seed(Build)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::with_capacity(reserve(map.size_hint()));
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(members));
        };
        if first == super::tape::NUMBER_TOKEN && super::arbitrary_precision() {
            // serde_json's private number map (the decoder gives one for a number lexeme
            // when `arbitrary_precision` is on): its value is the lexeme, as serde_json's
            // visitor reads it.
            let lexeme: String = map.next_value()?;
            return lexeme
                .parse::<Number>()
                .map(Value::Number)
                .map_err(de::Error::custom);
        }
        let value = map.next_value_seed(Build)?;
        members.insert(first, value);
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Build)?;
            // The decoder rejects a repeated key before this sees it.
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// What to reserve for a declared size.
#[inline]
pub(crate) fn reserve(hint: Option<usize>) -> usize {
    hint.map_or(UNKNOWN_MEMBERS, |n| n.min(MAX_RESERVE))
}

/// A float as serde_json's `Value` holds it: NaN and the infinities become `null`. (Not
/// `map_or(Value::Null, ..)`, which makes and then drops a `Value` for every number.)
#[inline]
pub(crate) fn float(value: f64) -> Value {
    match Number::from_f64(value) {
        Some(n) => Value::Number(n),
        None => Value::Null,
    }
}

/// What to reserve for an array of a declared size ([`reserve`], the size already bounded by
/// the input): nothing for none, else at least four, the first block `Vec::push` takes and so
/// the one serde_json's visitor ends with for a short array. Exact blocks of one to three
/// elements cost glibc's allocator more work on every allocation after them, once the previous
/// document is freed (callgrind, deep_config: 2.7 % fewer instructions per decode with four;
/// exact two-row blocks made every allocation of a table-heavy decode a third dearer).
///
/// And at most [`SMALL_BLOCK`] elements: a larger array grows as it is read, as serde_json's
/// do. Reserving a long table's block up front is glibc's first "large" request of the decode,
/// which consolidates every small chunk the previous document freed into large free blocks,
/// and every small allocation after it is then carved from those instead of reused from the
/// fast bins (callgrind, orders_2k decode: 46.9M -> 43.6M instructions per call, 7 % fewer;
/// rows_10k 1 % more).
#[inline]
pub(crate) fn array_capacity(hint: Option<usize>) -> usize {
    match reserve(hint) {
        0 => 0,
        n => n.clamp(4, SMALL_BLOCK),
    }
}

/// The most elements of an array block below glibc's large requests (1 KiB chunks).
const SMALL_BLOCK: usize = {
    let n = 1000 / size_of::<Value>();
    if n < 4 {
        4
    } else {
        n
    }
};

/// The most fields an object made from a [`Templates`] entry has; wider rows are built by
/// inserting each member.
const MAX_TEMPLATE_FIELDS: usize = 64;

/// Objects of the same keys (the rows of a table, of tables with the same fields) made by
/// cloning a template of their keys and moving the values in: a clone copies the map's
/// structure, where inserting each member searches the map (a `BTreeMap`) or hashes its key
/// (an `IndexMap`) again for every row.
#[derive(Debug, Default)]
pub(crate) struct Templates {
    list: Vec<Template>,
    /// The entry the next new template replaces, once the list is full.
    next: usize,
    /// How many templates were made: the next one's [`Template::id`].
    made: u64,
}

/// Where the template of a set of keys was found last time (its entry, and which template
/// the entry held then): a caller that makes objects of the same keys again and again (a
/// table's rows) keeps one, and skips comparing the keys with each template's. The list's
/// order of templates alternates as nested objects and tables come and go (an order, its
/// customer, its items), and that search was the decode's most mispredicted branch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hint {
    entry: usize,
    id: NonZeroU64,
}

#[derive(Debug)]
struct Template {
    /// Which template this is (unique per [`Templates`]: an entry replaced gets a new one, so
    /// a [`Hint`] to the entry's old template is seen to be stale).
    id: NonZeroU64,
    /// The keys in the order of the fields.
    names: Vec<String>,
    /// The keys with `null` values, in the map's own order.
    map: Map<String, Value>,
    /// For each member of `map` in its order, the index of its key in `names`.
    order: Vec<usize>,
}

impl Templates {
    const CAPACITY: usize = 8;

    /// The object with the keys `names` (distinct, in this order) and `values[i]` for key
    /// `i` (taken; a key whose value is `None` is absent), as inserting them in order makes it.
    pub(crate) fn object<S: AsRef<str>>(
        &mut self,
        names: &[S],
        values: &mut [Option<Value>],
    ) -> Map<String, Value> {
        self.object_hinted(&mut None, names, values)
    }

    /// [`Templates::object`], looking the template up by `hint` first, which must be `None`
    /// or have been given by a call with the same `names` (the hint is updated).
    pub(crate) fn object_hinted<S: AsRef<str>>(
        &mut self,
        hint: &mut Option<Hint>,
        names: &[S],
        values: &mut [Option<Value>],
    ) -> Map<String, Value> {
        debug_assert_eq!(names.len(), values.len());
        if names.len() > MAX_TEMPLATE_FIELDS || values.iter().any(Option::is_none) {
            let mut map = Map::with_capacity(names.len());
            for (name, value) in names.iter().zip(values) {
                if let Some(value) = value.take() {
                    map.insert(name.as_ref().to_owned(), value);
                }
            }
            return map;
        }
        let entry = match *hint {
            Some(Hint { entry, id }) if self.list.get(entry).is_some_and(|t| t.id == id) => entry,
            _ => {
                let entry = self.find(names);
                *hint = Some(Hint {
                    entry,
                    id: self.list[entry].id,
                });
                entry
            }
        };
        let template = &self.list[entry];
        debug_assert!(template
            .names
            .iter()
            .map(String::as_str)
            .eq(names.iter().map(AsRef::as_ref)));
        let mut map = template.map.clone();
        for (slot, &i) in map.values_mut().zip(&template.order) {
            if let Some(value) = values[i].take() {
                // The slot holds the template's `null`, which owns nothing: forgetting it
                // instead of dropping saves a call per cell.
                #[allow(clippy::mem_forget, reason = "a `null` owns nothing to leak")]
                std::mem::forget(std::mem::replace(slot, value));
            }
        }
        map
    }

    /// The entry of the template of `names`, made if there is none.
    #[inline(never)]
    fn find<S: AsRef<str>>(&mut self, names: &[S]) -> usize {
        let found = self.list.iter().position(|t| {
            t.names.len() == names.len() && t.names.iter().zip(names).all(|(a, b)| a == b.as_ref())
        });
        match found {
            Some(i) => i,
            None => self.add(names),
        }
    }

    #[inline(never)]
    fn add<S: AsRef<str>>(&mut self, names: &[S]) -> usize {
        let mut map = Map::with_capacity(names.len());
        for name in names {
            map.insert(name.as_ref().to_owned(), Value::Null);
        }
        let order = map
            .keys()
            .map(|key| names.iter().position(|n| n.as_ref() == key).unwrap_or(0))
            .collect();
        self.made += 1;
        let template = Template {
            id: NonZeroU64::MIN.saturating_add(self.made),
            names: names.iter().map(|n| n.as_ref().to_owned()).collect(),
            map,
            order,
        };
        if self.list.len() < Self::CAPACITY {
            self.list.push(template);
            self.list.len() - 1
        } else {
            let i = self.next;
            self.next = (i + 1) % Self::CAPACITY;
            self.list[i] = template;
            i
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What inserting `names` and `values` in order makes.
    fn inserted(names: &[&str], values: &[Value]) -> Map<String, Value> {
        names
            .iter()
            .zip(values)
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect()
    }

    fn object(templates: &mut Templates, names: &[&str], values: &[Value]) -> Map<String, Value> {
        let mut slots: Vec<Option<Value>> = values.iter().cloned().map(Some).collect();
        let made = templates.object(names, &mut slots);
        assert!(slots.iter().all(Option::is_none), "every value is taken");
        made
    }

    #[test]
    fn templated_objects_are_what_inserting_makes() {
        let mut templates = Templates::default();
        // Keys out of sorted order, so that a sorted map's order differs from the fields'.
        let names = ["zeta", "alpha", "mid", "beta"];
        for round in 0..3 {
            let values = [
                Value::from(round),
                Value::from("a"),
                Value::Null,
                Value::from(vec![1, 2]),
            ];
            let made = object(&mut templates, &names, &values);
            let want = inserted(&names, &values);
            assert_eq!(made, want);
            // Same order of members as well (matters with `preserve_order`).
            assert!(made.keys().eq(want.keys()));
        }
        assert_eq!(templates.list.len(), 1, "one template, reused");
    }

    #[test]
    fn templates_are_replaced_when_full() {
        let mut templates = Templates::default();
        for i in 0..Templates::CAPACITY + 3 {
            let name = format!("k{i}");
            let made = object(
                &mut templates,
                &[name.as_str(), "v"],
                &[Value::from(i), Value::Null],
            );
            assert_eq!(
                made,
                inserted(&[&name, "v"], &[Value::from(i), Value::Null])
            );
        }
        assert_eq!(templates.list.len(), Templates::CAPACITY);
        // An evicted schema is made again correctly.
        let made = object(
            &mut templates,
            &["k0", "v"],
            &[Value::from(7), Value::from(8)],
        );
        assert_eq!(
            made,
            inserted(&["k0", "v"], &[Value::from(7), Value::from(8)])
        );
    }

    #[test]
    fn hints_find_their_template_and_notice_a_replaced_one() {
        let mut templates = Templates::default();
        let mut hint = None;
        let names = ["b", "a"];
        let make = |templates: &mut Templates, hint: &mut Option<Hint>, names: &[&str], i: i32| {
            let mut slots: Vec<Option<Value>> = (0..names.len())
                .map(|k| Some(Value::from(i + k as i32)))
                .collect();
            let made = templates.object_hinted(hint, names, &mut slots);
            let want: Vec<Value> = (0..names.len())
                .map(|k| Value::from(i + k as i32))
                .collect();
            assert_eq!(made, inserted(names, &want));
        };
        make(&mut templates, &mut hint, &names, 0);
        let first = hint.expect("a hint");
        make(&mut templates, &mut hint, &names, 10);
        assert_eq!(hint.map(|h| h.id), Some(first.id), "the same template");
        // Every entry replaced, the hint's among them: the hint is stale, and the object is
        // still made with the right keys (its template made again).
        for i in 0..Templates::CAPACITY {
            let name = format!("k{i}");
            make(&mut templates, &mut None, &[name.as_str(), "v"], 0);
        }
        assert!(templates.list.iter().all(|t| t.id != first.id));
        make(&mut templates, &mut hint, &names, 20);
        assert_ne!(hint.map(|h| h.id), Some(first.id), "a new template");
    }

    #[test]
    fn absent_values_leave_their_keys_out() {
        let mut templates = Templates::default();
        let mut slots = vec![Some(Value::from(1)), None, Some(Value::Null)];
        let made = templates.object(&["a", "b", "c"], &mut slots);
        assert_eq!(made, inserted(&["a", "c"], &[Value::from(1), Value::Null]));
        assert!(templates.list.is_empty());
    }

    #[test]
    fn wide_rows_are_inserted_member_by_member() {
        let mut templates = Templates::default();
        let names: Vec<String> = (0..MAX_TEMPLATE_FIELDS + 1)
            .map(|i| format!("f{i}"))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let values: Vec<Value> = (0..names.len()).map(Value::from).collect();
        assert_eq!(
            object(&mut templates, &names, &values),
            inserted(&names, &values)
        );
        assert!(templates.list.is_empty());
        // No fields: an empty object.
        assert!(object(&mut templates, &[], &[]).is_empty());
    }
}
