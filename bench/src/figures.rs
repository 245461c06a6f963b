//! A measurement's median and 90th percentile, what every in-process benchmark reports.

/// A median and a 90th percentile of samples in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// The median.
    pub median_us: f64,
    /// The 90th percentile (the sample at 90% of the sorted samples).
    pub p90_us: f64,
    /// How many samples.
    pub samples: usize,
}

impl Figures {
    /// The figures of `samples` (any order); `NaN` when there are none.
    #[must_use]
    pub fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        let at = |share: usize| samples.get(samples.len() * share / 100).copied().unwrap_or(f64::NAN);
        Self {
            median_us: at(50),
            p90_us: at(90),
            samples: samples.len(),
        }
    }

    /// The figures a LangGraph script printed under `name` (`median_us`, `p90_us`), of `samples`.
    #[must_use]
    pub fn from_json(part: Option<&serde_json::Value>, samples: usize) -> Option<Self> {
        let part = part?;
        Some(Self {
            median_us: part.get("median_us")?.as_f64()?,
            p90_us: part.get("p90_us")?.as_f64()?,
            samples,
        })
    }
}
