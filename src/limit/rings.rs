//! The logs of in-process quota clients with three or more requests in the
//! window: rings of 4-byte millisecond offsets from the client's anchor.
//!
//! For the usual small limits (up to [`ARENA_MAX_LIMIT`]) every ring is a
//! fixed stride of one per-shard arena, so a ring costs exactly 4 bytes per
//! request it can hold and no allocation of its own; its head and length
//! live in the client's entry (`meta`). Larger limits, where a fixed stride
//! would reserve too much for a client that made three requests, use one
//! growable `VecDeque` per ring.

use std::collections::VecDeque;

/// The largest limit whose rings live in the fixed-stride arena.
pub const ARENA_MAX_LIMIT: usize = 64;

/// The rings of one shard.
#[derive(Debug)]
pub enum Rings {
    /// Fixed-stride rings: ring `slot` is `cells[slot*stride..][..stride]`;
    /// `meta` is `head << 16 | len`.
    Arena {
        /// Cells per ring (the limit).
        stride: usize,
        /// All rings, back to back.
        cells: Vec<u32>,
        /// Slots free for reuse.
        free: Vec<u32>,
    },
    /// One deque per ring (`meta` is unused).
    Deques {
        /// The rings.
        rings: Vec<VecDeque<u32>>,
        /// Slots free for reuse.
        free: Vec<u32>,
    },
}

fn head_len(meta: u32) -> (usize, usize) {
    ((meta >> 16) as usize, (meta & 0xffff) as usize)
}

fn pack(head: usize, len: usize) -> u32 {
    ((head as u32) << 16) | len as u32
}

impl Rings {
    /// Rings for clients of `limit` requests per window.
    pub fn new(limit: usize) -> Self {
        if limit <= ARENA_MAX_LIMIT {
            Rings::Arena {
                stride: limit.max(1),
                cells: Vec::new(),
                free: Vec::new(),
            }
        } else {
            Rings::Deques {
                rings: Vec::new(),
                free: Vec::new(),
            }
        }
    }

    /// A new ring holding `entries` (at most the limit); returns its slot
    /// and sets `meta`.
    pub fn alloc(&mut self, entries: &[u32], meta: &mut u32) -> u32 {
        match self {
            Rings::Arena {
                stride,
                cells,
                free,
            } => {
                let slot = free.pop().unwrap_or_else(|| {
                    cells.resize(cells.len() + *stride, 0);
                    (cells.len() / *stride - 1) as u32
                });
                let base = slot as usize * *stride;
                cells[base..base + entries.len()].copy_from_slice(entries);
                *meta = pack(0, entries.len());
                slot
            }
            Rings::Deques { rings, free } => {
                let ring: VecDeque<u32> = entries.iter().copied().collect();
                match free.pop() {
                    Some(slot) => {
                        rings[slot as usize] = ring;
                        slot
                    }
                    None => {
                        rings.push(ring);
                        (rings.len() - 1) as u32
                    }
                }
            }
        }
    }

    /// Returns `slot` for reuse.
    pub fn release(&mut self, slot: u32) {
        match self {
            Rings::Arena { free, .. } => free.push(slot),
            Rings::Deques { rings, free } => {
                rings[slot as usize] = VecDeque::new();
                free.push(slot);
            }
        }
    }

    /// How many entries ring `slot` holds.
    pub fn len(&self, slot: u32, meta: u32) -> usize {
        match self {
            Rings::Arena { .. } => head_len(meta).1,
            Rings::Deques { rings, .. } => rings[slot as usize].len(),
        }
    }

    /// The `i`-th oldest entry of ring `slot`.
    pub fn get(&self, slot: u32, meta: u32, i: usize) -> Option<u32> {
        match self {
            Rings::Arena { stride, cells, .. } => {
                let (head, len) = head_len(meta);
                (i < len).then(|| cells[slot as usize * stride + (head + i) % stride])
            }
            Rings::Deques { rings, .. } => rings[slot as usize].get(i).copied(),
        }
    }

    /// The oldest entry.
    pub fn front(&self, slot: u32, meta: u32) -> Option<u32> {
        self.get(slot, meta, 0)
    }

    /// The newest entry.
    pub fn back(&self, slot: u32, meta: u32) -> Option<u32> {
        self.len(slot, meta)
            .checked_sub(1)
            .and_then(|last| self.get(slot, meta, last))
    }

    /// Drops the oldest entry.
    pub fn pop_front(&mut self, slot: u32, meta: &mut u32) {
        match self {
            Rings::Arena { stride, .. } => {
                let (head, len) = head_len(*meta);
                if len > 0 {
                    *meta = pack((head + 1) % *stride, len - 1);
                }
            }
            Rings::Deques { rings, .. } => {
                rings[slot as usize].pop_front();
            }
        }
    }

    /// Adds a newest entry (the caller keeps the length within the limit).
    pub fn push_back(&mut self, slot: u32, meta: &mut u32, entry: u32) {
        match self {
            Rings::Arena { stride, cells, .. } => {
                let (head, len) = head_len(*meta);
                cells[slot as usize * *stride + (head + len) % *stride] = entry;
                *meta = pack(head, len + 1);
            }
            Rings::Deques { rings, .. } => rings[slot as usize].push_back(entry),
        }
    }

    /// Subtracts `by` from every entry (when the anchor moves up).
    pub fn shift(&mut self, slot: u32, meta: u32, by: u32) {
        match self {
            Rings::Arena { stride, cells, .. } => {
                let (head, len) = head_len(meta);
                for i in 0..len {
                    let cell = &mut cells[slot as usize * *stride + (head + i) % *stride];
                    *cell = cell.saturating_sub(by);
                }
            }
            Rings::Deques { rings, .. } => {
                for entry in rings[slot as usize].iter_mut() {
                    *entry = entry.saturating_sub(by);
                }
            }
        }
    }
}
