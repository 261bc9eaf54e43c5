//! Warpgroup operations: `set_max_regs` (`setmaxnreg`).

use super::error::{ErrorKind, Result};
use super::writer::{emit, Writer};
use crate::ir::StmtId;
use crate::target::Target;

/// The targets that have `setmaxnreg` (ptx-notes §11.4).
const SETMAXNREG: [Target; 2] = [Target::Sm90a, Target::Sm100a];

impl Writer<'_> {
    /// `set_max_regs(n)` (statement `id`): `setmaxnreg.inc` from a smaller
    /// count, `.dec` from a larger one, as the warpgroup facts of
    /// [`crate::analysis`] say.
    pub(super) fn set_max_regs(&mut self, id: StmtId, n: u32) -> Result<()> {
        self.require_arch(&SETMAXNREG, "setmaxnreg")?;
        self.need(8, 0);
        let facts = &self.info.warpgroups;
        let Some(entry) = facts.entry else {
            return Err(self.invalid("`set_max_regs` in a kernel without `block(...)`"));
        };
        let Some(change) = facts.regs.get(&id) else {
            return Err(self.error(ErrorKind::StaleInfo(
                "a `set_max_regs` the warpgroup facts do not know".into(),
            )));
        };
        let Some(inc) = change.increase(entry) else {
            return Err(self.invalid(
                "a `set_max_regs` that increases the count on one path and decreases it on another",
            ));
        };
        let dir = if inc { "inc" } else { "dec" };
        emit!(self, "setmaxnreg.{}.sync.aligned.u32 {};", dir, n);
        Ok(())
    }
}
