//! `kxml`'s global allocator: the system allocator behind a per-thread cache of small
//! blocks (DESIGN.md, decision 107).
//!
//! A 64 KiB update of prose makes about 370 annotations (one allocation a tag), and the
//! events that hold them are dropped together once the update's output is read: a burst of
//! frees of one size, then a burst of allocations of it in the next update. glibc's own
//! per-thread cache keeps 7 blocks of a size, so the rest of each burst takes its slow
//! paths (sorting into bins, merging neighbours), which in a multi-threaded process also
//! take the arena's lock. Here a freed block of up to [`MAX_SMALL`] bytes goes onto its
//! thread's list for its size class, up to [`CLASS_BYTES`] of them, and the next
//! allocation of that class takes it back: a load and a store each way.
//!
//! ```text
//! LISTS (per thread)   class 0 (1..=16 B):   head ─▶ block ─▶ block ─▶ null   len 2
//!                      class 1 (17..=32 B):  head ─▶ null                     len 0
//!                      …                     (a free block's first word: the next one)
//!                      class 15 (241..=256 B)
//! ```
//!
//! # Soundness
//!
//! - Every block of a class is allocated from [`System`] with one layout, the class's
//!   (`size` rounded up to [`STEP`], alignment [`ALIGN`]), whatever the requested layout in
//!   that class was. A request in the class has `size <= class size` and `align <= ALIGN`,
//!   so a block of the class satisfies it; and since `dealloc` receives the layout the
//!   block was allocated with (the `GlobalAlloc` contract), it computes the same class,
//!   so a block goes back to [`System`] with the layout [`System`] gave it.
//! - A listed block is owned by nobody else: it was passed to `dealloc`, so its user gave
//!   it up, and it is on one list of one thread until one `alloc` takes it off. Only the
//!   list writes and reads its first word (the link), which fits: every block is at least
//!   `STEP` = 16 bytes, aligned to 16, and a pointer is 8 bytes aligned to 8. Blocks come
//!   from one process-wide allocator, so a block freed on another thread than the one
//!   that allocated it serves as well as any.
//! - The lists live in thread-local storage that is const-initialized and has no
//!   destructor, so reaching them never allocates (no reentry into this allocator) and
//!   does not fail while the thread runs; `try_with` still falls back to [`System`] if it
//!   ever did. A thread's listed blocks are not given back when it exits (at most
//!   `CLASS_BYTES` a class, 2 MiB in all): `kxml`'s threads live as long as the count
//!   they run.
//! - Nothing here unwinds or calls back into the allocator.
//!
//! It is `kxml`'s allocator on Linux with glibc only (`main.rs`): the one it was measured
//! against, and a target whose thread-locals are native, so that reaching one never
//! allocates (where they are emulated, the first access on a thread allocates).
#![cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;

/// Largest size served from the lists.
const MAX_SMALL: usize = 256;
/// Size classes are multiples of this (glibc's own granularity).
const STEP: usize = 16;
/// Alignment of every listed block: enough for any request in a class.
const ALIGN: usize = 16;
const CLASSES: usize = MAX_SMALL / STEP;
/// Bytes of free blocks a thread keeps per class (for annotations, 682 blocks: an update
/// of prose frees about 370).
const CLASS_BYTES: usize = 128 << 10;

/// One thread's lists: for each class, the first free block and how many there are.
struct Lists {
    head: [Cell<*mut u8>; CLASSES],
    len: [Cell<usize>; CLASSES],
}

thread_local! {
    static LISTS: Lists = const {
        Lists {
            head: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            len: [const { Cell::new(0) }; CLASSES],
        }
    };
}

/// Size of the block [`keep_heap_top`] allocates and frees.
const KEEP_TOP: usize = 1 << 20;

/// Makes glibc keep up to `2 * KEEP_TOP` of free memory at the top of its heap instead of
/// giving it back to the system after every burst of frees.
///
/// glibc returns the heap's top to the system once more than its trim threshold (128 KiB
/// at first) is free there; the count's larger buffers (an update's text, its events) come
/// and go at the top, so a 100 MB count shrank and regrew the heap about 500 times and
/// faulted its pages back in: 3,434 page faults on one thread against 249 with this
/// (decision 107). Freeing a block that glibc had to map on its own (past its mapping
/// threshold, 128 KiB at first) raises both thresholds: the mapping threshold to the
/// block's size and the trim threshold to twice that (glibc's dynamic mapping threshold,
/// `mallopt(3)`). Another allocator merely maps and unmaps 1 MiB here.
pub fn keep_heap_top() {
    let block: Vec<u8> = Vec::with_capacity(KEEP_TOP);
    // (So that the allocation and its free are not optimized away.)
    std::hint::black_box(&block);
}

/// The class of a request, if it is listed, and the layout its blocks are allocated with.
#[inline(always)]
fn class(layout: Layout) -> Option<(usize, Layout)> {
    let size = layout.size();
    if size == 0 || size > MAX_SMALL || layout.align() > ALIGN {
        return None;
    }
    let c = (size - 1) / STEP;
    let block = Layout::from_size_align((c + 1) * STEP, ALIGN).ok()?;
    Some((c, block))
}

/// The allocator: blocks of up to [`MAX_SMALL`] bytes from the thread's lists, anything
/// else (and a class with an empty list) from [`System`].
pub struct Cached;

// SAFETY: see the module's documentation.
unsafe impl GlobalAlloc for Cached {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((c, block)) = class(layout) else {
            // SAFETY: the caller's layout, passed on.
            return unsafe { System.alloc(layout) };
        };
        let listed = LISTS.try_with(|l| {
            let (head, len) = (l.head.get(c)?, l.len.get(c)?);
            let p = head.get();
            if p.is_null() {
                return None;
            }
            // SAFETY: `p` is a listed block: ours, aligned to 16 and at least 16 bytes,
            // its first word the link written by `dealloc`.
            head.set(unsafe { p.cast::<*mut u8>().read() });
            len.set(len.get() - 1);
            Some(p)
        });
        match listed {
            Ok(Some(p)) => p,
            // SAFETY: a non-zero size (`class` excludes 0).
            _ => unsafe { System.alloc(block) },
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        let Some((c, block)) = class(layout) else {
            // SAFETY: allocated by `System` with this layout (above).
            return unsafe { System.dealloc(p, layout) };
        };
        let listed = LISTS.try_with(|l| {
            let (head, len) = (l.head.get(c)?, l.len.get(c)?);
            if len.get() >= CLASS_BYTES / block.size() {
                return None;
            }
            // SAFETY: the caller gave the block up; it is aligned to 16 and at least 16
            // bytes (its class's layout), room for the link.
            unsafe { p.cast::<*mut u8>().write(head.get()) };
            head.set(p);
            len.set(len.get() + 1);
            Some(())
        });
        if !matches!(listed, Ok(Some(()))) {
            // SAFETY: allocated by `System` with the class's layout (above).
            unsafe { System.dealloc(p, block) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class(layout).is_none() {
            // SAFETY: the caller's layout, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: the caller's layout; a non-null block has at least `size` bytes.
        unsafe {
            let p = self.alloc(layout);
            if !p.is_null() {
                ptr::write_bytes(p, 0, layout.size());
            }
            p
        }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // (The caller guarantees that this layout is valid; a failure is reported as the
        // allocation failing.)
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return ptr::null_mut();
        };
        match (class(layout), class(new_layout)) {
            // SAFETY: allocated by `System` with `layout` (above), never listed.
            (None, None) => unsafe { System.realloc(p, layout, new_size) },
            // The block already has the room and the alignment the new layout asks.
            (Some((a, _)), Some((b, _))) if a == b => p,
            _ => {
                // SAFETY: a new block for `new_layout`; then `p`'s first bytes, as many as
                // both hold, copied to it, and `p` given back with its own layout.
                unsafe {
                    let q = self.alloc(new_layout);
                    if !q.is_null() {
                        ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                        self.dealloc(p, layout);
                    }
                    q
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The annotations' layout in the count (`Arc<AnnotationData>`: 192 bytes, align 8).
    fn annotation() -> Layout {
        Layout::from_size_align(192, 8).unwrap()
    }

    fn listed(c: usize) -> usize {
        LISTS.with(|l| l.len[c].get())
    }

    /// Runs `f` on a thread of its own, whose lists nothing else uses meanwhile.
    fn on_a_new_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().unwrap();
    }

    #[test]
    fn classes_round_up_to_16_and_stop_at_256() {
        let block = |size, align| {
            class(Layout::from_size_align(size, align).unwrap()).map(|(c, b)| (c, b.size()))
        };
        assert_eq!(block(1, 1), Some((0, 16)));
        assert_eq!(block(16, 8), Some((0, 16)));
        assert_eq!(block(17, 8), Some((1, 32)));
        assert_eq!(block(192, 8), Some((11, 192)));
        assert_eq!(block(256, 16), Some((15, 256)));
        assert_eq!(block(257, 8), None);
        assert_eq!(block(0, 1), None);
        assert_eq!(block(64, 32), None, "stricter alignment than a block's");
    }

    #[test]
    fn a_freed_block_is_the_next_one_of_its_class_and_the_list_stops_at_its_cap() {
        let a = Cached;
        let layout = annotation();
        let cap = CLASS_BYTES / 192;
        on_a_new_thread(move || unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            let before = listed(11);
            a.dealloc(p, layout);
            assert_eq!(listed(11), before + 1);
            // A request of another size in the same class gets the same block.
            let q = a.alloc(Layout::from_size_align(180, 4).unwrap());
            assert_eq!(q, p);
            assert_eq!(q as usize % ALIGN, 0);
            a.dealloc(q, Layout::from_size_align(180, 4).unwrap());
            // A burst larger than the cap: the list keeps `cap`, the rest go back.
            let burst: Vec<*mut u8> = (0..cap + 50).map(|_| a.alloc(layout)).collect();
            assert!(burst.iter().all(|p| !p.is_null()));
            for &p in &burst {
                a.dealloc(p, layout);
            }
            assert_eq!(listed(11), cap);
            // They come back last freed first, and each is a distinct block.
            let again: Vec<*mut u8> = (0..cap).map(|_| a.alloc(layout)).collect();
            assert_eq!(listed(11), 0);
            let mut sorted = again.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), cap);
            assert_eq!(again.first(), burst.get(cap - 1));
            for p in again {
                a.dealloc(p, layout);
            }
        });
    }

    #[test]
    fn zeroed_blocks_are_zero_even_when_reused() {
        let a = Cached;
        on_a_new_thread(move || unsafe {
            let layout = Layout::from_size_align(100, 8).unwrap();
            let p = a.alloc(layout);
            ptr::write_bytes(p, 0xAB, 100);
            a.dealloc(p, layout);
            let q = a.alloc_zeroed(layout);
            assert_eq!(q, p, "the listed block is reused");
            assert!(std::slice::from_raw_parts(q, 100).iter().all(|&b| b == 0));
            a.dealloc(q, layout);
            let big = Layout::from_size_align(4096, 8).unwrap();
            let r = a.alloc_zeroed(big);
            assert!(std::slice::from_raw_parts(r, 4096).iter().all(|&b| b == 0));
            a.dealloc(r, big);
        });
    }

    #[test]
    fn realloc_keeps_the_bytes_within_a_class_across_classes_and_past_them() {
        let a = Cached;
        unsafe {
            let mut layout = Layout::from_size_align(3, 1).unwrap();
            let mut p = a.alloc(layout);
            ptr::copy_nonoverlapping(b"abc".as_ptr(), p, 3);
            // 3 -> 10 (class 0, same block) -> 200 (class 12) -> 5000 (System) -> 70
            // (class 4) -> 5 (class 0).
            for (size, same_block) in [
                (10, true),
                (200, false),
                (5000, false),
                (70, false),
                (5, false),
            ] {
                let q = a.realloc(p, layout, size);
                assert!(!q.is_null());
                assert_eq!(q == p, same_block, "to {size}");
                assert_eq!(std::slice::from_raw_parts(q, 3), b"abc", "to {size}");
                p = q;
                layout = Layout::from_size_align(size, 1).unwrap();
            }
            a.dealloc(p, layout);
        }
    }

    #[test]
    fn a_block_freed_on_another_thread_serves_there() {
        let a = Cached;
        let layout = annotation();
        let p = unsafe { a.alloc(layout) } as usize;
        unsafe { ptr::write_bytes(p as *mut u8, 7, 192) };
        on_a_new_thread(move || unsafe {
            a.dealloc(p as *mut u8, layout);
            let q = a.alloc(layout);
            assert_eq!(q as usize, p);
            ptr::write_bytes(q, 9, 192);
            a.dealloc(q, layout);
        });
    }
}
