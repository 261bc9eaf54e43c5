//! `--bench N`: the median and minimum of N timed launches, and the
//! effective bandwidth.
//!
//! The bandwidth is the bytes a launch must move at least once (every array
//! argument read, every writable one also written: see
//! `config::traffic_bytes`) divided by the median time. It is a lower
//! bound on the traffic: a kernel that reads an element twice from DRAM
//! moves more than it is credited with.

/// The statistics of one `--bench` run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Summary {
    pub launches: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub bytes: u64,
    /// Bytes per second / 1e9, from the median; `None` without arrays.
    pub gb_per_s: Option<f64>,
}

impl Summary {
    /// From launch times in microseconds (at least one).
    pub(crate) fn of(times_us: &[f64], bytes: u64) -> Summary {
        let mut t: Vec<f64> = times_us.to_vec();
        t.sort_by(f64::total_cmp);
        let n = t.len();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => t.get(n / 2).copied().unwrap_or(0.0),
            _ => {
                (t.get(n / 2 - 1).copied().unwrap_or(0.0) + t.get(n / 2).copied().unwrap_or(0.0))
                    / 2.0
            }
        };
        let min = t.first().copied().unwrap_or(0.0);
        let gb_per_s = (bytes > 0 && median > 0.0).then(|| bytes as f64 / (median * 1e-6) / 1e9);
        Summary {
            launches: n,
            median_us: median,
            min_us: min,
            bytes,
            gb_per_s,
        }
    }

    /// `saxpy on NVIDIA H200: 100 launches, median 12.35 us, min 11.90 us,
    /// 12.58 MB moved, 1018.6 GB/s effective`.
    pub(crate) fn human(&self, kernel: &str, device: &str) -> String {
        let mut s = format!(
            "{kernel} on {device}: {}, median {:.2} us, min {:.2} us",
            crate::diagnostics::plural(self.launches, "launch"),
            self.median_us,
            self.min_us
        );
        if let Some(bw) = self.gb_per_s {
            s.push_str(&format!(
                ", {:.2} MB moved, {bw:.1} GB/s effective",
                self.bytes as f64 / 1e6
            ));
        }
        s
    }

    /// One JSON object (`"type": "bench"`), for scripts.
    pub(crate) fn json(&self, kernel: &str, device: &str) -> String {
        serde_json::json!({
            "type": "bench",
            "kernel": kernel,
            "device": device,
            "launches": self.launches,
            "median_us": self.median_us,
            "min_us": self.min_us,
            "bytes": self.bytes,
            "gb_per_s": self.gb_per_s,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_minimum_and_bandwidth() {
        let s = Summary::of(&[30.0, 10.0, 20.0], 4_000_000);
        assert_eq!((s.launches, s.median_us, s.min_us), (3, 20.0, 10.0));
        // 4 MB in 20 us = 200 GB/s.
        assert!((s.gb_per_s.unwrap() - 200.0).abs() < 1e-9);
        let even = Summary::of(&[4.0, 1.0, 3.0, 2.0], 0);
        assert_eq!(
            (even.median_us, even.min_us, even.gb_per_s),
            (2.5, 1.0, None)
        );
    }

    #[test]
    fn formats() {
        let s = Summary::of(&[12.345, 11.9, 13.0], 12_582_912);
        assert_eq!(
            s.human("saxpy", "NVIDIA H200"),
            "saxpy on NVIDIA H200: 3 launches, median 12.35 us, min 11.90 us, 12.58 MB moved, 1019.3 GB/s effective"
        );
        let j: serde_json::Value = serde_json::from_str(&s.json("saxpy", "NVIDIA H200")).unwrap();
        assert_eq!(j["type"], "bench");
        assert_eq!(j["launches"], 3);
        assert_eq!(j["median_us"], 12.345);
        assert_eq!(j["bytes"], 12_582_912);
        let one = Summary::of(&[5.0], 0);
        assert_eq!(
            one.human("k", "GPU"),
            "k on GPU: 1 launch, median 5.00 us, min 5.00 us"
        );
    }
}
