//! The sanitizer over a launch: made for its shape, reset at each cluster,
//! forked for a worker of `--jobs` with the global state saved and put
//! back per byte range, and the gpu-scope releases of a finished cluster
//! kept for later ones.

use super::clock::{SyncClock, TClock};
use super::fast::FastMap as HashMap;
use super::finding::Mem;
use super::shadow::Shadow;
use super::{BarState, Sanitizer, Saved, Shape};
use crate::sim::checks::Checks;
use crate::sim::decode::sem::Scope;

impl Sanitizer {
    /// The checks `on` for a launch of this shape, with allocations of
    /// these lengths, shared and local memories of these sizes.
    pub fn new(on: Checks, shape: Shape, allocs: &[u64], shared: u64, local: u64) -> Sanitizer {
        let nthreads = shape.block[0] * shape.block[1] * shape.block[2];
        let csize = shape.cluster[0] * shape.cluster[1] * shape.cluster[2];
        Sanitizer {
            on,
            shape,
            nthreads: nthreads.max(1),
            csize: csize.max(1),
            seq: 0,
            ctaids: Vec::new(),
            threads: Vec::new(),
            agents: Vec::new(),
            agent_index: HashMap::default(),
            shared: Vec::new(),
            shared_init: Vec::new(),
            local_init: Vec::new(),
            shared_bytes: shared,
            preset: Vec::new(),
            local_bytes: local,
            global: allocs.iter().map(|_| None).collect(),
            global_len: allocs.to_vec(),
            bars: Vec::new(),
            cbar: SyncClock::default(),
            cbar_done: SyncClock::default(),
            mbars: HashMap::default(),
            shared_locs: HashMap::default(),
            global_locs: HashMap::default(),
            copies: Vec::new(),
            free_copies: Vec::new(),
            current_copy: None,
            landing: false,
            same_store: false,
            exits: Vec::new(),
            bulk_landed: HashMap::default(),
            cp_landed: HashMap::default(),
            wg_instances: HashMap::default(),
            wg_pending: HashMap::default(),
            log: None,
        }
    }

    /// A new cluster starts: `seq` counts clusters from 0, `ctaids` are
    /// its CTAs by rank.
    /// A cooperative launch runs the whole grid as one group: its CTAs
    /// are the group's ranks, as a cluster's are.
    pub fn set_group_size(&mut self, ctas: u32) {
        self.csize = ctas.max(1);
    }

    /// Shared memory `(offset, size)` ranges that every CTA starts with
    /// initialised (the reserved shared memory).
    pub fn preset_shared(&mut self, ranges: Vec<(u64, u64)>) {
        self.preset = ranges;
    }

    pub fn begin_cluster(&mut self, seq: u32, ctaids: Vec<[u32; 3]>) {
        self.seq = seq;
        for s in self.global.iter_mut().flatten() {
            s.restart();
        }
        let n = (self.nthreads * self.csize) as usize;
        self.threads.clear();
        self.threads.resize(n, TClock::new());
        self.agents.clear();
        self.agent_index.clear();
        let ranks = ctaids.len();
        self.ctaids = ctaids;
        self.shared.clear();
        self.shared_init.clear();
        for _ in 0..ranks {
            self.shared.push(if self.on.races {
                Shadow::new(self.shared_bytes)
            } else {
                None
            });
            self.shared_init.push(if self.on.uninit {
                vec![0u64; self.shared_bytes.div_ceil(64) as usize]
            } else {
                Vec::new()
            });
        }
        if self.on.uninit {
            for r in 0..ranks as u32 {
                for &(off, size) in &self.preset.clone() {
                    self.initialise(
                        0,
                        Mem::Shared {
                            rank: r,
                            offset: off,
                        },
                        size,
                    );
                }
            }
        }
        self.local_init.clear();
        if self.on.uninit && self.local_bytes > 0 {
            self.local_init
                .resize(n, vec![0u64; self.local_bytes.div_ceil(64) as usize]);
        }
        self.bars.clear();
        self.bars.resize(ranks * 16, BarState::default());
        self.cbar = SyncClock::default();
        self.cbar_done = SyncClock::default();
        self.mbars.clear();
        self.shared_locs.clear();
        self.copies.clear();
        self.free_copies.clear();
        self.current_copy = None;
        self.exits.clear();
        self.exits.resize(n, None);
        self.bulk_landed.clear();
        self.cp_landed.clear();
        self.wg_instances.clear();
        self.wg_pending.clear();
    }

    /// A sanitizer for the same launch with the same global state (the
    /// shadow of global memory and its atomic locations), for a worker of
    /// `--jobs`.
    pub fn fork(&self) -> Sanitizer {
        let mut s = Sanitizer::new(self.on, self.shape, &self.global_len, 0, 0);
        s.nthreads = self.nthreads;
        s.csize = self.csize;
        s.shared_bytes = self.shared_bytes;
        s.local_bytes = self.local_bytes;
        s.global = self.global.clone();
        s.global_locs = self.global_locs.clone();
        s
    }

    /// The global state of bytes `lo..hi` (whole granules) of allocation
    /// `alloc`.
    pub fn save_global(&self, alloc: usize, lo: u64, hi: u64) -> Saved {
        let (lo, hi) = ((lo / 4) as usize, hi.div_ceil(4) as usize);
        let cells = self
            .global
            .get(alloc)
            .and_then(Option::as_ref)
            .and_then(|s| s.cells(lo, hi))
            .map(<[_]>::to_vec);
        let locs = self
            .global_locs
            .iter()
            .filter(|((a, off), _)| *a == alloc && (lo..hi).contains(&((off / 4) as usize)))
            .map(|((_, off), l)| (*off, l.clone()))
            .collect();
        Saved {
            alloc,
            lo,
            hi,
            cells,
            locs,
        }
    }

    /// Puts back what [`Sanitizer::save_global`] saved (of another
    /// sanitizer of the launch).
    pub fn load_global(&mut self, saved: &Saved) {
        let Saved { alloc, lo, hi, .. } = *saved;
        match &saved.cells {
            Some(cells) => {
                if let Some(s) = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc)
                {
                    s.set_cells(lo, hi, Some(cells));
                }
            }
            None => {
                if let Some(s) = self.global.get_mut(alloc).and_then(Option::as_mut) {
                    s.set_cells(lo, hi, None);
                }
            }
        }
        if self.global_locs.is_empty() && saved.locs.is_empty() {
            return;
        }
        self.global_locs
            .retain(|(a, off), _| *a != alloc || !(lo..hi).contains(&((off / 4) as usize)));
        for (off, l) in &saved.locs {
            self.global_locs.insert((alloc, *off), l.clone());
        }
    }

    /// Copies the global state of bytes `lo..hi` (whole granules) of
    /// allocation `alloc` from another sanitizer of the launch: what
    /// [`Sanitizer::save_global`] and [`Sanitizer::load_global`] do,
    /// without the copy in between.
    pub fn copy_global(&mut self, from: &Sanitizer, alloc: usize, lo: u64, hi: u64) {
        let (glo, ghi) = ((lo / 4) as usize, hi.div_ceil(4) as usize);
        match from
            .global
            .get(alloc)
            .and_then(Option::as_ref)
            .and_then(|s| s.cells(glo, ghi))
        {
            Some(cells) => {
                if let Some(s) = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc)
                {
                    s.set_cells(glo, ghi, Some(cells));
                }
            }
            None => {
                if let Some(s) = self.global.get_mut(alloc).and_then(Option::as_mut) {
                    s.set_cells(glo, ghi, None);
                }
            }
        }
        if self.global_locs.is_empty() && from.global_locs.is_empty() {
            return;
        }
        let within = |a: usize, off: u64| a == alloc && (glo..ghi).contains(&((off / 4) as usize));
        self.global_locs.retain(|(a, off), _| !within(*a, *off));
        for ((a, off), l) in &from.global_locs {
            if within(*a, *off) {
                self.global_locs.insert((*a, *off), l.clone());
            }
        }
    }

    /// The cluster is done: what it released at gpu scope into atomic
    /// locations of global memory is kept as "cluster `seq`" for later
    /// clusters to acquire.
    pub fn end_cluster(&mut self) {
        let seq = self.seq;
        for loc in self.global_locs.values_mut() {
            if loc
                .entries
                .iter()
                .any(|(s, _, c)| *s >= Scope::Gpu && !c.is_empty())
            {
                loc.old.insert(seq);
            }
            for (s, _, c) in std::mem::take(&mut loc.entries) {
                if s >= Scope::Gpu {
                    loc.old.union(&c.old);
                }
            }
        }
        self.global_locs.retain(|_, l| !l.old.is_empty());
    }
}
