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

#[cfg(test)]
mod tests {
    use super::*;

    /// One step of a ring's life.
    #[derive(Clone, Debug)]
    enum Step {
        Alloc(Vec<u32>),
        Push(usize, u32),
        Pop(usize),
        Shift(usize, u32),
        Release(usize),
    }

    fn step(limit: usize) -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::collection::vec(0u32..1_000_000, 0..=limit.min(4)).prop_map(Step::Alloc),
            (0usize..8, 0u32..1_000_000).prop_map(|(r, e)| Step::Push(r, e)),
            (0usize..8).prop_map(Step::Pop),
            (0usize..8, 0u32..2_000_000).prop_map(|(r, by)| Step::Shift(r, by)),
            (0usize..8).prop_map(Step::Release),
        ]
    }

    /// Runs `steps` on rings of `limit` and on plain deques; every ring
    /// holds what its deque holds, in order, after every step.
    fn follows_the_model(limit: usize, steps: &[Step]) {
        let mut rings = Rings::new(limit);
        // Live rings: (slot, meta, model).
        let mut live: Vec<(u32, u32, VecDeque<u32>)> = Vec::new();
        let mut slots_made = std::collections::HashSet::new();
        for step in steps {
            match step.clone() {
                Step::Alloc(entries) => {
                    let mut meta = 0;
                    let slot = rings.alloc(&entries, &mut meta);
                    assert!(
                        live.iter().all(|(s, _, _)| *s != slot),
                        "slot {slot} is in use"
                    );
                    slots_made.insert(slot);
                    live.push((slot, meta, entries.into_iter().collect()));
                }
                Step::Push(r, entry) if !live.is_empty() => {
                    let at = r % live.len();
                    let (slot, meta, model) = &mut live[at];
                    if model.len() < limit {
                        rings.push_back(*slot, meta, entry);
                        model.push_back(entry);
                    }
                }
                Step::Pop(r) if !live.is_empty() => {
                    let at = r % live.len();
                    let (slot, meta, model) = &mut live[at];
                    rings.pop_front(*slot, meta);
                    model.pop_front();
                }
                Step::Shift(r, by) if !live.is_empty() => {
                    let at = r % live.len();
                    let (slot, meta, model) = &mut live[at];
                    rings.shift(*slot, *meta, by);
                    for entry in model.iter_mut() {
                        *entry = entry.saturating_sub(by);
                    }
                }
                Step::Release(r) if !live.is_empty() => {
                    let (slot, _, _) = live.remove(r % live.len());
                    rings.release(slot);
                }
                _ => {}
            }
            for (slot, meta, model) in &live {
                assert_eq!(rings.len(*slot, *meta), model.len());
                let held: Vec<u32> = (0..model.len())
                    .map(|i| rings.get(*slot, *meta, i).unwrap())
                    .collect();
                assert_eq!(held, model.iter().copied().collect::<Vec<_>>());
                assert_eq!(rings.get(*slot, *meta, model.len()), None);
                assert_eq!(rings.front(*slot, *meta), model.front().copied());
                assert_eq!(rings.back(*slot, *meta), model.back().copied());
            }
        }
        // Released slots are reused: never more slots than rings alive at once.
        let most_alive = steps
            .iter()
            .scan(0i64, |alive, s| {
                match s {
                    Step::Alloc(_) => *alive += 1,
                    Step::Release(_) => *alive = (*alive - 1).max(0),
                    _ => {}
                }
                Some(*alive)
            })
            .max()
            .unwrap_or(0);
        assert!(
            slots_made.len() as i64 <= most_alive.max(0),
            "{} slots for {most_alive} rings",
            slots_made.len()
        );
    }

    proptest::proptest! {
        #[test]
        fn arena_rings_hold_what_a_deque_holds(
            steps in proptest::collection::vec(step(5), 1..120)
        ) {
            follows_the_model(5, &steps);
        }

        #[test]
        fn deque_rings_hold_what_a_deque_holds(
            steps in proptest::collection::vec(step(ARENA_MAX_LIMIT + 1), 1..120)
        ) {
            follows_the_model(ARENA_MAX_LIMIT + 1, &steps);
        }
    }

    #[test]
    fn a_released_slot_is_the_next_one_given_out() {
        for limit in [3, ARENA_MAX_LIMIT + 1] {
            let mut rings = Rings::new(limit);
            let (mut a, mut b) = (0, 0);
            let first = rings.alloc(&[1, 2, 3], &mut a);
            let second = rings.alloc(&[4], &mut b);
            assert_ne!(first, second);
            rings.release(first);
            let mut c = 0;
            assert_eq!(rings.alloc(&[5, 6], &mut c), first, "limit {limit}");
            assert_eq!((rings.len(first, c), rings.front(first, c)), (2, Some(5)));
        }
    }

    #[test]
    fn popping_an_empty_ring_leaves_it_empty() {
        for limit in [3, ARENA_MAX_LIMIT + 1] {
            let mut rings = Rings::new(limit);
            let mut meta = 0;
            let slot = rings.alloc(&[], &mut meta);
            rings.pop_front(slot, &mut meta);
            assert_eq!(rings.len(slot, meta), 0);
            rings.push_back(slot, &mut meta, 7);
            assert_eq!(
                (rings.len(slot, meta), rings.front(slot, meta)),
                (1, Some(7))
            );
        }
    }
}
