//! Vector clocks (Lamport/Mattern, as Miri's data-race detector and
//! FastTrack use them), made cheap for GPU synchronisation.
//!
//! An *agent* is anything that accesses memory on its own: each thread of
//! the cluster being run (agents `0..threads`), and the asynchronous
//! agents the sanitizer adds — the copies completing on one mbarrier, the
//! bulk-group copies of one thread, the wgmma operations of one
//! warpgroup. Each agent has its own clock, which it advances after every
//! release. A [`VClock`] holds, per agent, the latest clock value whose
//! accesses are ordered before its holder.
//!
//! Clocks are dense vectors shared copy-on-write: after a CTA barrier
//! every participant holds the *same* vector (the join of all), and a
//! thread's own clock lives beside it ([`TClock::own`]), so that advancing
//! it does not copy the vector. A barrier phase therefore costs one join
//! per distinct vector among its participants, not one per participant.
//! Clusters are run one after another: accesses of earlier clusters are
//! ordered by the gpu-scope synchronisation a thread acquired, recorded as
//! intervals of cluster sequence numbers ([`Intervals`]).

use std::sync::Arc;

/// A vector clock over the agents of the cluster; an agent past its end
/// has clock 0.
#[derive(Clone, Debug, Default)]
pub struct VClock(Option<Arc<Vec<u32>>>);

impl VClock {
    #[inline]
    pub fn get(&self, agent: u32) -> u32 {
        self.0
            .as_ref()
            .and_then(|v| v.get(agent as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The entries it holds (the agents it has a clock for).
    pub fn entries(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.len())
    }

    /// The same vector (not only equal).
    pub fn same(&self, o: &VClock) -> bool {
        match (&self.0, &o.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// `self ⊑ o`.
    #[cfg(test)]
    pub fn le(&self, o: &VClock) -> bool {
        match (&self.0, &o.0) {
            (None, _) => true,
            (Some(a), None) => a.iter().all(|&x| x == 0),
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b)
                    || a.iter()
                        .enumerate()
                        .all(|(i, &x)| x <= b.get(i).copied().unwrap_or(0))
            }
        }
    }

    /// `self = self ⊔ o`, sharing `o`'s vector when it is the larger.
    pub fn join(&mut self, o: &VClock) {
        let Some(ov) = &o.0 else { return };
        let Some(sv) = &mut self.0 else {
            self.0 = Some(ov.clone());
            return;
        };
        if Arc::ptr_eq(sv, ov) {
            return;
        }
        if o.le_vec(sv) {
            return;
        }
        if VClock::le_slices(sv, ov) {
            *sv = ov.clone();
            return;
        }
        let v = Arc::make_mut(sv);
        if v.len() < ov.len() {
            v.resize(ov.len(), 0);
        }
        for (a, b) in v.iter_mut().zip(ov.iter()) {
            if *b > *a {
                *a = *b;
            }
        }
    }

    fn le_vec(&self, b: &[u32]) -> bool {
        match &self.0 {
            None => true,
            Some(a) => VClock::le_slices(a, b),
        }
    }

    fn le_slices(a: &[u32], b: &[u32]) -> bool {
        a.iter()
            .enumerate()
            .all(|(i, &x)| x <= b.get(i).copied().unwrap_or(0))
    }

    /// Raises `agent`'s entry to at least `clock`.
    pub fn raise(&mut self, agent: u32, clock: u32) {
        if self.get(agent) >= clock {
            return;
        }
        let v = Arc::make_mut(self.0.get_or_insert_with(Default::default));
        let i = agent as usize;
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        if let Some(x) = v.get_mut(i) {
            *x = clock;
        }
    }
}

/// Sets of cluster sequence numbers: the earlier clusters all of whose
/// accesses are ordered before the holder (half-open ranges, sorted,
/// disjoint, not adjacent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Intervals(Vec<(u32, u32)>);

impl Intervals {
    #[inline]
    pub fn contains(&self, seq: u32) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let i = self.0.partition_point(|&(lo, _)| lo <= seq);
        i > 0 && self.0.get(i - 1).is_some_and(|&(_, hi)| seq < hi)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ranges it holds.
    pub fn ranges(&self) -> usize {
        self.0.len()
    }

    pub fn insert(&mut self, seq: u32) {
        self.add(seq, seq.saturating_add(1));
    }

    fn add(&mut self, lo: u32, hi: u32) {
        if lo >= hi {
            return;
        }
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let (mut nlo, mut nhi) = (lo, hi);
        let mut placed = false;
        for &(a, b) in &self.0 {
            if b < nlo {
                out.push((a, b));
            } else if a > nhi {
                if !placed {
                    out.push((nlo, nhi));
                    placed = true;
                }
                out.push((a, b));
            } else {
                nlo = nlo.min(a);
                nhi = nhi.max(b);
            }
        }
        if !placed {
            out.push((nlo, nhi));
        }
        self.0 = out;
    }

    pub fn union(&mut self, o: &Intervals) {
        if o.0.is_empty() || *self == *o {
            return;
        }
        for &(lo, hi) in &o.0 {
            self.add(lo, hi);
        }
    }
}

/// What a synchronising object (a barrier phase, an mbarrier, an atomic
/// location) has received from the releases into it: the releasers'
/// clocks, their async-proxy views, the earlier clusters they had
/// synchronised with. Releases are kept pending (distinct vectors, and
/// the releasers' own clocks) and joined once, when something acquires.
#[derive(Clone, Debug, Default)]
pub struct SyncClock {
    pub vc: VClock,
    pub avc: VClock,
    pub old: Intervals,
    bases: Vec<VClock>,
    abases: Vec<VClock>,
    owns: Vec<(u32, u32)>,
    aowns: Vec<(u32, u32)>,
}

/// The most distinct vectors a clock keeps pending before it joins them.
const MAX_PENDING: usize = 16;

impl SyncClock {
    pub fn is_empty(&self) -> bool {
        self.vc.0.is_none()
            && self.avc.0.is_none()
            && self.old.is_empty()
            && self.bases.is_empty()
            && self.owns.is_empty()
    }

    fn add_base(vc: &VClock, bases: &mut Vec<VClock>, b: &VClock) {
        if b.0.is_none() || vc.same(b) || bases.iter().any(|x| x.same(b)) {
            return;
        }
        bases.push(b.clone());
    }

    /// Receives the release of a clock `vc` with the agent `agent` at
    /// `own` (its own entry, kept beside the vector), and the async view.
    pub fn release(
        &mut self,
        agent: u32,
        vc: &VClock,
        own: u32,
        avc: &VClock,
        avc_own: u32,
        old: &Intervals,
    ) {
        SyncClock::add_base(&self.vc, &mut self.bases, vc);
        self.owns.push((agent, own));
        SyncClock::add_base(&self.avc, &mut self.abases, avc);
        if avc_own > 0 {
            self.aowns.push((agent, avc_own));
        }
        self.old.union(old);
        if self.bases.len() > MAX_PENDING || self.owns.len() > 4096 {
            self.settle();
        }
    }

    /// Receives the accesses of agent `agent` up to `epoch` (an
    /// asynchronous agent whose completion releases into it).
    pub fn raise(&mut self, agent: u32, epoch: u32) {
        self.owns.push((agent, epoch));
    }

    /// Receives another sync clock's content.
    pub fn absorb(&mut self, o: &SyncClock) {
        let mut o = o.clone();
        o.settle();
        SyncClock::add_base(&self.vc, &mut self.bases, &o.vc);
        SyncClock::add_base(&self.avc, &mut self.abases, &o.avc);
        self.old.union(&o.old);
        if self.bases.len() > MAX_PENDING {
            self.settle();
        }
    }

    /// Joins what is pending.
    pub fn settle(&mut self) {
        for b in std::mem::take(&mut self.bases) {
            self.vc.join(&b);
        }
        for (a, c) in std::mem::take(&mut self.owns) {
            self.vc.raise(a, c);
        }
        for b in std::mem::take(&mut self.abases) {
            self.avc.join(&b);
        }
        for (a, c) in std::mem::take(&mut self.aowns) {
            self.avc.raise(a, c);
        }
    }
}

/// A thread's clocks at one moment, as an asynchronous agent it issued
/// (a copy, a wgmma) sees them: shared, not copied.
#[derive(Clone, Debug, Default)]
pub struct Snap {
    pub me: u32,
    pub base: VClock,
    pub own: u32,
    pub avc: VClock,
    pub avc_own: u32,
    pub old: Intervals,
}

impl Snap {
    #[inline]
    pub fn vc(&self, u: u32) -> u32 {
        if u == self.me {
            self.own
        } else {
            self.base.get(u)
        }
    }

    #[inline]
    pub fn avc(&self, u: u32) -> u32 {
        if u == self.me {
            self.avc_own
        } else {
            self.avc.get(u)
        }
    }

    /// Releases it into `s`, with the agent `agent` at `epoch`.
    pub fn release_into(&self, s: &mut SyncClock, agent: u32, epoch: u32) {
        s.release(
            self.me,
            &self.base,
            self.own,
            &self.avc,
            self.avc_own,
            &self.old,
        );
        s.owns.push((agent, epoch));
    }
}

/// A thread's clocks.
#[derive(Clone, Debug, Default)]
pub struct TClock {
    /// What the thread has acquired (its own entry aside).
    pub base: VClock,
    /// Its own clock: the accesses it makes now carry this value.
    pub own: u32,
    /// Its async-proxy view: the accesses ordered before its async-proxy
    /// operations (TMA copies, wgmma) — those behind a `fence.proxy.async`.
    pub avc: VClock,
    /// Its own clock at its latest `fence.proxy.async` (0: none).
    pub avc_own: u32,
    /// Earlier clusters it has synchronised with (gpu scope).
    pub old: Intervals,
    /// Its clocks at its latest release fence, with the fence's scope:
    /// what a later relaxed atomic write publishes.
    pub fence_rel: Option<(SyncClock, crate::sim::decode::sem::Scope)>,
    /// What its relaxed atomic reads since its latest acquire fence read
    /// from: an acquire fence acquires it.
    pub fence_acq: SyncClock,
}

impl TClock {
    pub fn new() -> TClock {
        TClock {
            own: 1,
            ..TClock::default()
        }
    }

    /// Its clock for agent `u` (itself being `me`).
    #[inline]
    pub fn view(&self, me: u32, u: u32) -> u32 {
        if u == me {
            self.own
        } else {
            self.base.get(u)
        }
    }

    /// Its async-proxy view of agent `u`.
    #[inline]
    pub fn async_view(&self, me: u32, u: u32) -> u32 {
        if u == me {
            self.avc_own
        } else {
            self.avc.get(u)
        }
    }

    /// Releases into `s` and advances its own clock.
    pub fn release_into(&mut self, me: u32, s: &mut SyncClock) {
        s.release(me, &self.base, self.own, &self.avc, self.avc_own, &self.old);
        self.own += 1;
    }

    /// Acquires what `s` received.
    pub fn acquire(&mut self, s: &mut SyncClock) {
        s.settle();
        self.base.join(&s.vc);
        self.avc.join(&s.avc);
        self.old.union(&s.old);
    }

    /// Acquires `s`, which holds every release of this thread's clocks
    /// (a barrier it arrived at): its vectors are shared, not joined.
    pub fn acquire_superset(&mut self, s: &mut SyncClock) {
        s.settle();
        self.base = s.vc.clone();
        self.avc = s.avc.clone();
        self.old.union(&s.old);
    }

    /// Its clocks now, shared (for an asynchronous agent it issues).
    pub fn snap(&self, me: u32) -> Snap {
        Snap {
            me,
            base: self.base.clone(),
            own: self.own,
            avc: self.avc.clone(),
            avc_own: self.avc_own,
            old: self.old.clone(),
        }
    }

    /// Its clocks now, as a sync clock (for a release fence).
    pub fn snapshot(&self, me: u32) -> SyncClock {
        let mut s = SyncClock::default();
        s.release(me, &self.base, self.own, &self.avc, self.avc_own, &self.old);
        s.settle();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_join_and_share() {
        let mut a = TClock::new();
        let mut b = TClock::new();
        let mut bar = SyncClock::default();
        a.release_into(0, &mut bar);
        b.release_into(1, &mut bar);
        a.acquire_superset(&mut bar);
        b.acquire_superset(&mut bar);
        assert!(a.base.same(&b.base));
        assert_eq!(a.view(0, 1), 1);
        assert_eq!(a.view(0, 0), 2);
        assert_eq!(b.view(1, 0), 1);
        let mut c = VClock::default();
        c.raise(3, 7);
        let mut d = a.base.clone();
        d.join(&c);
        assert_eq!((d.get(1), d.get(3)), (1, 7));
        assert!(a.base.le(&d) && !d.le(&a.base));
    }

    #[test]
    fn intervals_merge() {
        let mut i = Intervals::default();
        i.insert(3);
        i.insert(5);
        assert!(i.contains(3) && !i.contains(4) && i.contains(5));
        i.insert(4);
        assert_eq!(i, Intervals(vec![(3, 6)]));
        let mut j = Intervals::default();
        j.insert(0);
        j.union(&i);
        assert_eq!(j, Intervals(vec![(0, 1), (3, 6)]));
    }
}
