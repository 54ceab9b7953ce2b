//! Cache hints: ask the CPU to start loading memory that is about to be read.
//!
//! The simulator knows which node handles each of its next events (they wait in its event
//! queue), and a large network's state does not fit in the cache, so it asks for that node's
//! memory a few events ahead and the loads overlap instead of stalling one after another
//! (`docs/PERFORMANCE.md`). A hint changes no value anywhere: results are the same
//! with or without it, and on targets other than x86-64 it compiles to nothing.
//!
//! This is the simulator's one `unsafe` block (the C interface, `crates/ffi`, has the others; the protocol crate forbids `unsafe`; its token
//! nodes only say where their memory is, `heap_regions`). `_mm_prefetch` is `unsafe` only because it is a
//! `#[target_feature(enable = "sse")]` function (SSE is part of the x86-64 baseline); it does
//! not dereference its pointer, so it cannot fault or read freed memory, whatever the address.

/// The cache line size assumed (x86-64's).
const LINE: usize = 64;

/// Ask for every cache line overlapping the `len` bytes at `start`.
#[inline(always)]
pub(crate) fn bytes(start: *const u8, len: usize) {
    let first = start as usize & !(LINE - 1);
    let lines = (start as usize)
        .saturating_add(len)
        .saturating_sub(first)
        .div_ceil(LINE);
    for i in 0..lines {
        line(start.wrapping_add((first + i * LINE).wrapping_sub(start as usize)));
    }
}

/// Ask for the memory of `value` itself (not what it points to).
#[inline(always)]
pub(crate) fn value<T>(value: &T) {
    bytes((value as *const T).cast(), core::mem::size_of::<T>());
}

/// Ask for the memory of every element of `items`.
#[inline(always)]
pub(crate) fn slice<T>(items: &[T]) {
    bytes(items.as_ptr().cast(), core::mem::size_of_val(items));
}

/// Ask for the cache line holding `at`.
#[inline(always)]
fn line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: a prefetch never dereferences its address (any address is allowed and none
    // faults), and SSE, the feature it needs, is in every x86-64 target's baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_change_nothing_and_accept_any_extent() {
        let items: alloc::vec::Vec<u64> = (0..100).collect();
        slice(&items);
        slice(&items[..0]);
        value(&items);
        bytes(core::ptr::null(), 0);
        // A dangling, unaligned extent: a hint never reads it.
        bytes(usize::MAX as *const u8, 3);
        assert_eq!(items, (0..100).collect::<alloc::vec::Vec<u64>>());
    }
}
