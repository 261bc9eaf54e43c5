//! The shared memory of one launch: the module's static `.shared`
//! variables, then the launch's dynamic shared memory.
//!
//! A module that declares an unsized `.extern .shared` array has its
//! dynamic shared memory at [`decode::Program::dynamic_base`], after the
//! static variables and a red zone; a launch gives its size
//! ([`crate::launch::Launch::dynamic_shared`], `--shared-bytes`), and a red
//! zone follows it, so an access past the end of what the launch gave is
//! caught (S0020) instead of landing anywhere.
//!
//! kdslc places a kernel whose shared declarations exceed 48 KiB in dynamic
//! shared memory, every declaration at a fixed offset into the one array
//! (`src/ir/layout.rs`); a [`DynamicLayout`] names them, and each becomes a
//! variable of its own here, where [`super::dynamic`] places it.

use super::decode::{self, layout::owner_map, MemVar, Site, RED_ZONE};
use super::dynamic;
use crate::launch::DynamicLayout;

/// The shared memory of one CTA in one launch.
#[derive(Clone, Debug)]
pub(crate) struct SharedMap {
    /// Every variable with its place, for bounds and reports.
    pub vars: Vec<MemVar>,
    /// Bytes per CTA, red zones included.
    pub size: u32,
    /// The variable owning each byte (see [`owner_map`]).
    pub owner: Vec<u16>,
    /// The dynamic shared memory: where it starts and how many bytes the
    /// launch gave (`None` for a module without any).
    pub dynamic: Option<Dynamic>,
    /// Its declarations are kdslc's ([`DynamicLayout`], placed apart by
    /// [`dynamic`]): an access past one is an ordinary out-of-bounds access
    /// (S0002), never S0020.
    pub named: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dynamic {
    pub base: u32,
    pub bytes: u32,
}

impl Dynamic {
    /// Whether the CTA offset range `[offset, offset + size)` starts in the
    /// dynamic shared memory and ends past what the launch gave.
    pub fn overrun(&self, offset: u64, size: u64) -> bool {
        let base = u64::from(self.base);
        offset >= base && offset.saturating_add(size) > base + u64::from(self.bytes)
    }
}

impl SharedMap {
    /// The shared memory of a launch of a kernel of `prog` with `bytes` of
    /// dynamic shared memory, its declarations named by `layout` (kdslc's
    /// PTX) or else by the module's `.extern` arrays, each as large as the
    /// launch gave.
    pub fn new(prog: &decode::Program, bytes: u32, layout: Option<&DynamicLayout>) -> SharedMap {
        let Some(base) = prog.dynamic_base else {
            return SharedMap {
                vars: prog.shared.clone(),
                size: prog.shared_size,
                owner: prog.shared_owner.clone(),
                dynamic: None,
                named: false,
            };
        };
        let is_dynamic = |i: usize| prog.dynamic_vars.contains(&i);
        let mut vars: Vec<MemVar> = prog
            .shared
            .iter()
            .enumerate()
            .filter(|(i, _)| !is_dynamic(*i))
            .map(|(_, v)| v.clone())
            .collect();
        let externs = prog.dynamic_vars.iter().filter_map(|&i| prog.shared.get(i));
        let mut extent = bytes;
        match layout {
            Some(l) => {
                // Where the `.extern` array was declared, for the site of
                // the views (their spans are the kdsl declarations).
                let decl = externs.map(|v| v.decl.clone()).next();
                extent = extent.max(dynamic::placed_end(l));
                for (i, v) in l.vars.iter().enumerate() {
                    let site = decl.clone().map(|d| Site { span: v.span, ..d });
                    vars.push(MemVar {
                        name: v.name.clone(),
                        offset: base.saturating_add(dynamic::placed(l, i).unwrap_or(u32::MAX)),
                        size: v.size,
                        elem: v.elem,
                        decl: site.unwrap_or(Site {
                            pos: Default::default(),
                            loc: None,
                            span: v.span,
                            func: 0,
                        }),
                    });
                }
            }
            None => {
                for v in externs {
                    vars.push(MemVar {
                        size: bytes,
                        ..v.clone()
                    });
                }
            }
        }
        // Dynamic bytes are bounded by the launch check (at most 227 KiB,
        // plus 1 KiB per declaration) and the static variables end below
        // 8 MiB: this fits in 24 bits.
        let size = base.saturating_add(extent).saturating_add(RED_ZONE);
        let owner = owner_map(&vars, size);
        SharedMap {
            vars,
            size,
            owner,
            dynamic: Some(Dynamic { base, bytes }),
            named: layout.is_some(),
        }
    }

    /// The variable holding CTA offset `offset`.
    pub fn var_at(&self, offset: u32) -> Option<&MemVar> {
        // Dynamic `.extern` arrays alias: the last declared is as good a
        // name as any, and a zero-size one still names its first byte.
        self.vars
            .iter()
            .find(|v| offset >= v.offset && offset < v.offset + v.size.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::DynamicVar;
    use crate::sim::{load, PtxSource};

    const PTX: &str = "\
.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 128 .b8 dsmem[];
.shared .align 4 .b8 small[12];
.visible .entry k()
{
    .shared .align 8 .b64 bar;
    ret;
}
";

    #[test]
    fn dynamic_memory_follows_the_static_variables() {
        let p = load(PTX, PtxSource::Kdsl { line_spans: &[] }).unwrap();
        let code = &p.code;
        // small at 1024 (12 bytes + 32 red zone), bar at 1072 (8 + 32),
        // then the dynamic memory at the next multiple of 128.
        let base = code.dynamic_base.unwrap();
        assert_eq!(base, 1152);
        assert!(base >= code.shared_size);
        let m = SharedMap::new(code, 100, None);
        assert_eq!(m.dynamic, Some(Dynamic { base, bytes: 100 }));
        assert_eq!(m.size, base + 100 + RED_ZONE);
        let d = m.var_at(base + 99).unwrap();
        assert_eq!((d.name.as_str(), d.size), ("dsmem", 100));
        assert!(m.var_at(base + 100).is_none());
        assert_ne!(m.owner[(base + 99) as usize], 0);
        assert_eq!(m.owner[(base + 100) as usize], 0);
        assert!(m.dynamic.unwrap().overrun(u64::from(base) + 96, 8));
        assert!(!m.dynamic.unwrap().overrun(u64::from(base) + 96, 4));
        // No dynamic memory at all: the module's own layout.
        let m0 = SharedMap::new(code, 0, None);
        assert_eq!(m0.size, base + RED_ZONE);
        assert!(m0.var_at(base).is_some_and(|v| v.size == 0));
    }

    #[test]
    fn a_kdsl_layout_names_each_declaration() {
        let p = load(PTX, PtxSource::Kdsl { line_spans: &[] }).unwrap();
        let layout = DynamicLayout {
            bytes: 300,
            vars: vec![
                DynamicVar {
                    name: "$b_full".into(),
                    offset: 0,
                    size: 16,
                    elem: 8,
                    span: None,
                },
                DynamicVar {
                    name: "$s_tile".into(),
                    offset: 128,
                    size: 172,
                    elem: 4,
                    span: None,
                },
            ],
        };
        let base = p.code.dynamic_base.unwrap();
        let m = SharedMap::new(&p.code, 300, Some(&layout));
        assert_eq!(m.var_at(base + 8).unwrap().name, "$b_full");
        // The tile moves one gap further: a red zone after each declaration.
        let tile = 128 + dynamic::GAP;
        assert_eq!(dynamic::remap(&layout, 128), i64::from(tile));
        assert_eq!(dynamic::remap(&layout, 128 + 171), i64::from(tile) + 171);
        assert_eq!(dynamic::remap(&layout, 8), 8);
        // Padding stays with the declaration before it.
        assert_eq!(dynamic::remap(&layout, 100), 100);
        assert_eq!(m.var_at(base + tile).unwrap().name, "$s_tile");
        assert!(m.var_at(base + 128).is_none());
        assert!(m.var_at(base + 16).is_none());
        assert_eq!(m.owner[(base + 16) as usize], 0);
        assert_eq!(m.owner[(base + tile - 1) as usize], 0);
        assert!(m.var_at(base + tile + 172).is_none());
        assert_eq!(m.size, base + tile + 172 + RED_ZONE);
        assert!(m.vars.iter().all(|v| v.name != "dsmem"));
    }
}
