//! The queue of [`StreamParser::take_queued`](crate::StreamParser): input bytes that wait,
//! unparsed, while nothing in them could become final.
//!
//! A token-sized chunk is appended on every update of a token stream, so the append is the
//! hot loop of streaming. The buffer is initialized whole and the bytes in use are counted
//! apart (`len`), so that an append of 4 to 8 bytes is one bounds test and one word store,
//! with no capacity arithmetic and no truncation after it (decision 82). The bytes past
//! `len` are stale and never read.

/// Input bytes waiting unparsed: `buf[..len]`.
#[derive(Default)]
pub(crate) struct Queue {
    /// Only `..len` holds queued bytes. (A boxed slice, not a `Vec`: its length is its
    /// size, and it is a word smaller inline.)
    buf: Box<[u8]>,
    /// Bytes queued. (32 bits: the queue holds at most a few KiB (`QUEUE_MAX` and a
    /// joined chunk), and a 32-bit length widened cannot overflow when a word's end is
    /// added to it, so the word store needs no overflow test: decision 98.)
    len: u32,
}

impl Queue {
    /// The queued bytes.
    // Bounds: `len <= buf.len()` always (every append that does not fit grows `buf`).
    #[allow(clippy::indexing_slicing)]
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops the bytes past the first `len` (an append that is taken back).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len as u32);
    }

    /// Empties the queue, keeping its buffer.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// The buffer's size.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Room for `first` bytes in one step, if the queue has no buffer yet (decision 49).
    /// Filled with spaces, not zeros (the bytes past `len` are never read): a zeroed buffer
    /// is allocated as such (`calloc`), which bypasses the allocator's per-thread cache
    /// and cost about 500 instructions per new stream (decision 90).
    pub(crate) fn reserve_first(&mut self, first: usize) {
        if self.buf.is_empty() {
            self.buf = vec![b' '; first].into_boxed_slice();
        }
    }

    /// Appends `chunk`, of 4 to 8 bytes, given as the word `w` that holds it
    /// ([`text::word_of`](crate::text::word_of)): one store of the whole word, whose padding
    /// lands past the new end, where nothing is read.
    #[inline(always)]
    pub(crate) fn push_word(&mut self, w: u64, chunk: &[u8]) {
        let at = self.len as usize;
        match self.buf.get_mut(at..at + 8) {
            Some(room) => room.copy_from_slice(&w.to_le_bytes()),
            None => self.append_growing(chunk),
        }
        self.len = (at + chunk.len()) as u32;
    }

    /// Appends one byte.
    #[inline(always)]
    pub(crate) fn push_byte(&mut self, c: u8) {
        let at = self.len as usize;
        match self.buf.get_mut(at) {
            Some(room) => *room = c,
            None => self.append_growing(&[c]),
        }
        self.len = (at + 1) as u32;
    }

    /// Appends `chunk`, of 9 bytes or more: up to 16 as two 8-byte copies that overlap, with
    /// no call to `memcpy`.
    #[inline]
    pub(crate) fn push_long(&mut self, chunk: &[u8]) {
        let at = self.len as usize;
        let end = at + chunk.len();
        match (
            self.buf.get_mut(at..end),
            chunk.first_chunk::<8>(),
            chunk.last_chunk::<8>(),
        ) {
            (Some(room), Some(head), Some(tail)) if chunk.len() <= 16 => {
                if let Some(r) = room.first_chunk_mut::<8>() {
                    *r = *head;
                }
                if let Some(r) = room.last_chunk_mut::<8>() {
                    *r = *tail;
                }
            }
            (Some(room), _, _) => room.copy_from_slice(chunk),
            (None, _, _) => self.append_growing(chunk),
        }
        self.len = end as u32;
    }

    /// Appends `chunk`.
    #[inline(always)]
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        let at = self.len as usize;
        let end = at + chunk.len();
        match self.buf.get_mut(at..end) {
            Some(room) => room.copy_from_slice(chunk),
            None => self.append_growing(chunk),
        }
        self.len = end as u32;
    }

    /// Appends `chunk` where the buffer has no room for it (or for the word that carries
    /// it): the buffer grows as a `Vec` grows (in place where the allocator can), and is
    /// initialized up to its new capacity. The caller sets `len`.
    #[cold]
    #[inline(never)]
    fn append_growing(&mut self, chunk: &[u8]) {
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.truncate(self.len as usize);
        buf.extend_from_slice(chunk);
        // Room for a word past the end, so that the next word append fits without another
        // growth whenever a byte append would.
        buf.reserve(8);
        buf.resize(buf.capacity(), 0);
        // (Length and capacity agree: no reallocation.)
        self.buf = buf.into_boxed_slice();
    }
}

impl std::fmt::Debug for Queue {
    /// The queued bytes only, not the stale ones past them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("queued", &self.as_slice())
            .field("size", &self.buf.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every append, from every length, keeps exactly the bytes appended, across growth.
    #[test]
    fn appends_keep_the_bytes_across_growth() {
        let mut q = Queue::default();
        let mut model = Vec::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let n = (state % 40) as usize;
            let chunk: Vec<u8> = (0..n)
                .map(|i| (state >> (i % 8 * 8)) as u8 ^ i as u8)
                .collect();
            match (n, crate::text::word_of(&chunk)) {
                (1, _) => q.push_byte(chunk[0]),
                (_, Some(w)) => q.push_word(w, &chunk),
                (9.., _) => q.push_long(&chunk),
                _ => q.push(&chunk),
            }
            model.extend_from_slice(&chunk);
            assert_eq!(q.as_slice(), &model[..], "round {round}");
            assert_eq!(q.len(), model.len());
            assert!(q.capacity() >= q.len());
            if round % 400 == 399 {
                q.clear();
                model.clear();
                assert!(q.is_empty());
            }
        }
    }

    #[test]
    fn the_first_room_comes_in_one_step_and_only_once() {
        let mut q = Queue::default();
        assert_eq!(q.capacity(), 0);
        q.reserve_first(512);
        assert_eq!(q.capacity(), 512);
        q.push(&[7; 100]);
        q.clear();
        q.reserve_first(64);
        assert_eq!(q.capacity(), 512);
        assert!(q.is_empty());
        // What was cleared is not shown.
        q.push(b"ab");
        assert_eq!(format!("{q:?}"), "Queue { queued: [97, 98], size: 512 }");
    }
}
