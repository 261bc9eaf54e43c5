//! Which run-time checks a run makes (`kdslc sim --checks`): the findings
//! of `machine::sanitizer` — data races, reads of uninitialised memory,
//! transaction-count overflows, barrier divergence. All on by default;
//! off, the simulator runs its fastest and reports only what it always
//! does (deadlocks, out-of-bounds accesses, protocol violations).

use std::fmt;

/// One kind of check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Data races on shared, global and distributed shared memory (S0030,
    /// S0031).
    Races,
    /// Reads of shared or local memory nothing wrote (S0032).
    Uninit,
    /// More transaction bytes completing in an mbarrier phase than it
    /// expects (S0033).
    Tx,
    /// CTA barriers reached by part of the threads they count (S0034).
    Barriers,
}

impl Check {
    pub const ALL: [Check; 4] = [Check::Races, Check::Uninit, Check::Tx, Check::Barriers];

    pub fn name(self) -> &'static str {
        match self {
            Check::Races => "races",
            Check::Uninit => "uninit",
            Check::Tx => "tx",
            Check::Barriers => "barriers",
        }
    }
}

/// The set of checks a run makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    pub races: bool,
    pub uninit: bool,
    pub tx: bool,
    pub barriers: bool,
}

impl Default for Checks {
    /// Every check: a run is checked unless asked otherwise.
    fn default() -> Checks {
        Checks::all()
    }
}

impl Checks {
    pub fn all() -> Checks {
        Checks {
            races: true,
            uninit: true,
            tx: true,
            barriers: true,
        }
    }

    pub fn none() -> Checks {
        Checks {
            races: false,
            uninit: false,
            tx: false,
            barriers: false,
        }
    }

    pub fn any(self) -> bool {
        self.races || self.uninit || self.tx || self.barriers
    }

    pub fn has(self, c: Check) -> bool {
        match c {
            Check::Races => self.races,
            Check::Uninit => self.uninit,
            Check::Tx => self.tx,
            Check::Barriers => self.barriers,
        }
    }

    fn set(&mut self, c: Check) {
        match c {
            Check::Races => self.races = true,
            Check::Uninit => self.uninit = true,
            Check::Tx => self.tx = true,
            Check::Barriers => self.barriers = true,
        }
    }

    /// `all`, `none`, or a comma-separated list of check names.
    pub fn parse(text: &str) -> Result<Checks, String> {
        match text {
            "all" => return Ok(Checks::all()),
            "none" => return Ok(Checks::none()),
            _ => {}
        }
        let mut on = Checks::none();
        for word in text.split(',').map(str::trim) {
            match Check::ALL.iter().find(|c| c.name() == word) {
                Some(c) => on.set(*c),
                None => {
                    let names: Vec<&str> = Check::ALL.iter().map(|c| c.name()).collect();
                    return Err(format!(
                        "no check `{word}`; the checks are {} (or `all`, `none`)",
                        names.join(", ")
                    ));
                }
            }
        }
        Ok(on)
    }
}

impl fmt::Display for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Checks::all() {
            return write!(f, "all");
        }
        let names: Vec<&str> = Check::ALL
            .iter()
            .filter(|c| self.has(**c))
            .map(|c| c.name())
            .collect();
        if names.is_empty() {
            write!(f, "none")
        } else {
            write!(f, "{}", names.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        assert_eq!(Checks::parse("all"), Ok(Checks::all()));
        assert_eq!(Checks::parse("none"), Ok(Checks::none()));
        let c = Checks::parse("races, tx").expect("a list");
        assert!(c.races && c.tx && !c.uninit && !c.barriers);
        assert_eq!(c.to_string(), "races,tx");
        assert!(Checks::parse("race").is_err_and(|e| e.contains("races, uninit, tx, barriers")));
        assert_eq!(Checks::none().to_string(), "none");
    }
}
