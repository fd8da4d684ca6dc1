//! A counting allocator for memory-bound tests: install [`Counting`] as the test binary's
//! `#[global_allocator]`, then [`peak_during`] gives the most bytes a closure had allocated at
//! once. Tests that use it measure one at a time (the counters are global), never time.
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: agentwire_testkit::alloc::Counting = agentwire_testkit::alloc::Counting;
//! let (_, peak) = agentwire_testkit::alloc::peak_during(|| vec![0u8; 1000]);
//! assert!(peak >= 1000);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// The system allocator, counting the bytes allocated now and the most since the last reset.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call is forwarded to the system allocator unchanged; only counters change.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The result of `f` and the most bytes allocated at once while it ran, beyond what was
/// allocated before. Calls are serialized (the counters are global); the count is only
/// meaningful with [`Counting`] installed as the global allocator.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(PoisonError::into_inner);
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}
