//! CUDA's device `printf` and `assert` (`vprintf`, `__assertfail`): the
//! text of each `printf` is formatted at the call (`sim::printf`) and kept
//! in the launch's printf buffer with who printed it; a failed `assert`
//! is a report and ends its thread, as `trap` does.

use super::events::{AccessKind, Issue};
use super::memory::{self, Fault, Target};
use super::sched::After;
use super::Machine;
use crate::sim::decode::ops::{Space, SyncOp};
use crate::sim::printf::{self, Args};

/// CUDA's default printf buffer (`cudaLimitPrintfFifoSize`): the text a
/// launch may print; a `printf` that does not fit any more is dropped.
pub const FIFO_BYTES: usize = 1 << 20;

/// What the launch's `printf`s printed.
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    pub records: Vec<Record>,
    bytes: usize,
    /// Calls whose text no longer fitted.
    pub dropped: u64,
    /// The first of them: its instruction, CTA and thread.
    pub first_dropped: Option<(u32, [u32; 3], u32)>,
}

impl Fifo {
    /// The bytes of text kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds the calls of a later part of the run (`--jobs`: a group run on
    /// its own), as if they had been made here in turn; the text of all
    /// must fit.
    pub fn merge(&mut self, later: &Fifo) {
        for r in &later.records {
            let seq = self.records.len() as u64 + self.dropped;
            self.bytes += r.text.len();
            self.records.push(Record { seq, ..r.clone() });
        }
        self.dropped += later.dropped;
    }
}

/// One `printf`: who printed what, and when.
#[derive(Clone, Debug)]
pub struct Record {
    pub ctaid: [u32; 3],
    pub tid: u32,
    /// The order of the calls in the run.
    pub seq: u64,
    pub text: Vec<u8>,
}

/// A failed `assert`: its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct AssertInfo {
    pub message: String,
    pub file: String,
    pub line: u32,
    pub function: String,
    /// The first failing thread's `%ctaid` and `%tid`, for the line a GPU
    /// prints.
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

/// The arguments of a `printf` from a thread's memory: the buffer at
/// `buf`, each argument at the next offset aligned to its size.
struct Reader<'a, 'p> {
    m: &'a Machine<'p>,
    t: u32,
    buf: u64,
    at: u64,
    fault: Option<(Fault, u64)>,
    /// What it read: (generic address, bytes at most).
    reads: Vec<(u64, u64)>,
}

impl Args for Reader<'_, '_> {
    fn next(&mut self, size: u32) -> Option<u64> {
        let size = u64::from(size);
        self.at = self.at.next_multiple_of(size);
        let addr = self.buf.wrapping_add(self.at);
        self.at += size;
        self.reads.push((addr, size));
        match self.m.peek(self.t, addr, size) {
            Ok(bytes) => Some(
                bytes
                    .iter()
                    .rev()
                    .fold(0u64, |v, &b| (v << 8) | u64::from(b)),
            ),
            Err(f) => {
                self.fault = Some((f, size));
                None
            }
        }
    }

    fn string(&mut self, addr: u64, max: usize) -> Option<Vec<u8>> {
        self.reads.push((addr, max as u64));
        match self.m.c_string(self.t, addr, max) {
            Ok(s) => Some(s),
            Err(f) => {
                self.fault = Some((f, 1));
                None
            }
        }
    }
}

impl Machine<'_> {
    pub(super) fn printf_op(&mut self, t: u32, pc: u32, op: &SyncOp) -> After {
        match op {
            SyncOp::Vprintf { fmt, args, ret } => {
                let fmt_addr = self.fparam_u64(t, *fmt, 8);
                let buf = self.fparam_u64(t, *args, 8);
                let result = if fmt_addr == 0 {
                    -1
                } else {
                    self.vprintf(t, pc, fmt_addr, buf)
                };
                if let Some(r) = ret {
                    self.set_fparam(t, *r, result as u32);
                }
                self.advance(t);
            }
            SyncOp::AssertFail {
                message,
                file,
                line,
                function,
            } => {
                let text = |m: &Self, off: u32| {
                    let addr = m.fparam_u64(t, off, 8);
                    m.c_string(t, addr, 4096)
                        .map(|s| String::from_utf8_lossy(&s).into_owned())
                        .unwrap_or_default()
                };
                for off in [*message, *file, *function] {
                    let addr = self.fparam_u64(t, off, 8);
                    self.note_read(t, addr, 4096);
                }
                let info = AssertInfo {
                    message: text(self, *message),
                    file: text(self, *file),
                    line: self.fparam_u64(t, *line, 4) as u32,
                    function: text(self, *function),
                    block: self.special3(t, "%ctaid"),
                    thread: self.special3(t, "%tid"),
                };
                self.record(t, pc, Issue::Assert(Box::new(info)));
                self.exit(t);
            }
            _ => self.advance(t),
        }
        After::Continue
    }

    /// Formats one `printf` into the buffer; its result (the arguments
    /// read, -2 when the text could not be made whole).
    fn vprintf(&mut self, t: u32, pc: u32, fmt_addr: u64, buf: u64) -> i32 {
        self.note_read(t, fmt_addr, printf::MAX_STRING as u64);
        let fmt = match self.c_string(t, fmt_addr, printf::MAX_STRING) {
            Ok(f) => f,
            Err(fault) => {
                self.record(
                    t,
                    pc,
                    Issue::Access {
                        fault,
                        kind: AccessKind::Load,
                        size: 1,
                    },
                );
                return -2;
            }
        };
        let mut reader = Reader {
            m: self,
            t,
            buf,
            at: 0,
            fault: None,
            reads: Vec::new(),
        };
        let out = printf::format(&fmt, &mut reader);
        let fault = reader.fault.take();
        for (addr, len) in std::mem::take(&mut reader.reads) {
            self.note_read(t, addr, len);
        }
        if let Some((fault, size)) = fault {
            self.record(
                t,
                pc,
                Issue::Access {
                    fault,
                    kind: AccessKind::Load,
                    size,
                },
            );
        }
        let r = self.tref(t);
        let fifo = &mut self.mem.printf;
        let seq = fifo.records.len() as u64 + fifo.dropped;
        if fifo.bytes + out.text.len() > FIFO_BYTES {
            fifo.dropped += 1;
            if fifo.first_dropped.is_none() {
                fifo.first_dropped = Some((pc, r.ctaid, r.tid));
            }
        } else {
            fifo.bytes += out.text.len();
            fifo.records.push(Record {
                ctaid: r.ctaid,
                tid: r.tid,
                seq,
                text: out.text,
            });
        }
        if out.error.is_some() {
            -2
        } else {
            out.args as i32
        }
    }

    /// Notes a read of at most `len` bytes at the generic address `addr`
    /// (`--jobs`).
    fn note_read(&mut self, t: u32, addr: u64, len: u64) {
        if self.mem.track.is_none() {
            return;
        }
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let ext = &self.mem.ext;
        if let Ok(p) = memory::resolve(Space::Generic, addr, 1, 1, own, ext, &self.mem.allocs) {
            let room = match p.target {
                Target::Global(i) => self.mem.allocs.get(i).map_or(0, |a| a.data.len() as u64),
                _ => 0,
            };
            if let Some(tr) = self.mem.track.as_deref_mut() {
                tr.note(p, len.min(room.saturating_sub(p.offset)), false);
            }
        }
    }

    /// The `.x`, `.y`, `.z` of the special register `name` of thread `t`.
    fn special3(&self, t: u32, name: &str) -> [u32; 3] {
        ["x", "y", "z"].map(|c| {
            crate::sim::decode::specials::slot(&format!("{name}.{c}"))
                .map_or(0, |slot| self.reg(t, slot) as u32)
        })
    }

    /// `size` (at most 8) bytes of thread `t`'s parameter area at `off`.
    fn fparam_u64(&self, t: u32, off: u32, size: u64) -> u64 {
        self.cluster
            .threads
            .get(t as usize)
            .and_then(|th| memory::read(&th.fparam, u64::from(off), size))
            .unwrap_or(0)
    }

    fn set_fparam(&mut self, t: u32, off: u32, v: u32) {
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            memory::write(&mut th.fparam, u64::from(off), 4, u64::from(v));
        }
    }

    /// The bytes of a thread's memory from the generic address `addr` to
    /// the end of its store.
    fn store_from(&self, t: u32, addr: u64) -> Result<&[u8], Fault> {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let p = memory::resolve(
            Space::Generic,
            addr,
            1,
            1,
            own,
            &self.mem.ext,
            &self.mem.allocs,
        )?;
        let th = self.cluster.threads.get(t as usize);
        let store: &[u8] = match p.target {
            Target::Global(i) => self.mem.allocs.get(i).map_or(&[], |a| a.data.as_slice()),
            Target::Shared(r) => self
                .cluster
                .ctas
                .get(r as usize)
                .map_or(&[], |c| c.shared.as_slice()),
            Target::Local => th.map_or(&[], |th| th.local.as_slice()),
            Target::FuncParam => th.map_or(&[], |th| th.fparam.as_slice()),
            Target::Param => self.mem.params.as_slice(),
        };
        Ok(store.get(p.offset as usize..).unwrap_or(&[]))
    }

    /// `size` bytes at the generic address `addr`.
    fn peek(&self, t: u32, addr: u64, size: u64) -> Result<Vec<u8>, Fault> {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        memory::resolve(
            Space::Generic,
            addr,
            size,
            1,
            own,
            &self.mem.ext,
            &self.mem.allocs,
        )?;
        let bytes = self.store_from(t, addr)?;
        Ok(bytes.get(..size as usize).unwrap_or(&[]).to_vec())
    }

    /// The NUL-terminated string at the generic address `addr`, at most
    /// `max` bytes of it; a string that runs past its store is out of
    /// bounds.
    fn c_string(&self, t: u32, addr: u64, max: usize) -> Result<Vec<u8>, Fault> {
        let bytes = self.store_from(t, addr)?;
        match bytes.iter().take(max).position(|&b| b == 0) {
            Some(n) => Ok(bytes.get(..n).unwrap_or(&[]).to_vec()),
            None if bytes.len() >= max => Ok(bytes.get(..max).unwrap_or(&[]).to_vec()),
            None => Err(Fault::OutOfBounds {
                space: memory::generic_space(addr),
                addr: addr.wrapping_add(bytes.len() as u64),
                target: None,
            }),
        }
    }
}
