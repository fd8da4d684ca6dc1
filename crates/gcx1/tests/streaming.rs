//! Memory stays bounded by the longest line, never by the input: large payloads are generated
//! while they are read (nothing holds them whole), and a counting allocator records the most
//! bytes the decoders ever had allocated at once. No timing is measured.

use std::io::{self, BufReader, Read};

use agentwire_gcx1::{Options, RowReader, RowWriter};
use agentwire_testkit::alloc::{peak_during, Counting};
use serde_json::{json, Value};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A payload written while it is read: a header, then `rows` rows (or one endless line).
struct Generated {
    header: Vec<u8>,
    at_header: usize,
    rows: u64,
    row: u64,
    pending: Vec<u8>,
    at: usize,
    /// Instead of rows, one line of this many bytes without an end.
    long_line: Option<u64>,
}

impl Generated {
    fn rows(header: &str, rows: u64) -> Self {
        Generated {
            header: header.as_bytes().to_vec(),
            at_header: 0,
            rows,
            row: 0,
            pending: Vec::new(),
            at: 0,
            long_line: None,
        }
    }

    fn long_line(header: &str, bytes: u64) -> Self {
        Generated {
            long_line: Some(bytes),
            ..Self::rows(header, 0)
        }
    }

    /// Bytes handed out so far.
    fn refill(&mut self) -> bool {
        if let Some(left) = self.long_line.as_mut() {
            if *left == 0 {
                return false;
            }
            let n = (*left).min(8192);
            *left -= n;
            self.pending.clear();
            self.pending.resize(n as usize, b'x');
            self.at = 0;
            return true;
        }
        if self.row == self.rows {
            return false;
        }
        self.row += 1;
        self.pending.clear();
        let i = self.row;
        self.pending.extend_from_slice(
            format!("{i}\tname-{i}\t{}.{}\t{}\n", i % 1000, i % 7, i & 1 == 0).as_bytes(),
        );
        self.at = 0;
        true
    }
}

impl Read for Generated {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at_header < self.header.len() {
            let n = (self.header.len() - self.at_header).min(out.len());
            out[..n].copy_from_slice(&self.header[self.at_header..self.at_header + n]);
            self.at_header += n;
            return Ok(n);
        }
        if self.at == self.pending.len() && !self.refill() {
            return Ok(0);
        }
        let n = (self.pending.len() - self.at).min(out.len());
        out[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

const HEADER: &str = "GCX1 tool=t fields=id,name,score,even\n";
/// About 12 MB of rows.
const ROWS: u64 = 400_000;
/// What any of the readers may hold at once: far below the input.
const BOUND: usize = 512 * 1024;

#[test]
fn memory_is_bounded_by_the_longest_line() {
    // The row reader, one row at a time.
    let (count, peak) = peak_during(|| {
        let reader = RowReader::new(BufReader::new(Generated::rows(HEADER, ROWS)));
        let mut count = 0u64;
        for row in reader {
            let row = row.expect("a row");
            assert!(row.value.is_object());
            count += 1;
        }
        count
    });
    assert_eq!(count, ROWS);
    assert!(peak < BOUND, "the row reader held {peak} bytes at once");

    // validate runs the decoder without building the value.
    let (result, peak) = peak_during(|| Options::new().validate(Generated::rows(HEADER, ROWS)));
    result.expect("valid");
    assert!(peak < BOUND, "validate held {peak} bytes at once");

    // A long bad line costs the line limit (twice, while its buffer grows), not the line.
    let (result, peak) = peak_during(|| {
        Options::new().validate(Generated::long_line("GCX1 tool=t fields=a\n", 32 << 20))
    });
    assert_eq!(result.unwrap_err().code(), "line_too_long");
    assert!(
        peak < (8 << 20) + BOUND,
        "a 32 MiB line held {peak} bytes at once"
    );

    // Rows beyond a declared count stop decoding at once instead of piling up.
    let (result, peak) = peak_during(|| {
        Options::new().from_reader::<_, Value>(Generated::rows(
            "GCX1 tool=t fields=id,name,score,even rows=3\n",
            ROWS,
        ))
    });
    let e = result.unwrap_err();
    assert_eq!((e.code(), e.line()), ("row_count", Some(5)));
    assert!(peak < BOUND, "rows piled up: {peak} bytes");

    // The writer holds its window, not the stream.
    let (result, peak) = peak_during(|| {
        let mut writer = RowWriter::new(io::sink(), &Options::new().tool("t"));
        for i in 0..ROWS {
            writer.write(&json!({"id": i, "name": format!("name-{i}"), "even": i % 2 == 0}))?;
        }
        writer.finish().map(drop)
    });
    result.expect("written");
    assert!(peak < 2 * BOUND, "the writer held {peak} bytes at once");
}
