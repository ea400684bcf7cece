//! Figures both modes print: nearest-rank percentiles, `NA` for a
//! missing value, milliseconds to three decimals, and the capped list of
//! violation messages.

/// Nearest-rank percentile of sorted values.
pub(crate) fn percentile<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The value, or `NA` when there is none.
pub(crate) fn or_na<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "NA".to_string(), |v| v.to_string())
}

/// Milliseconds to three decimals, or `NA`.
pub(crate) fn ms3(v: Option<f64>) -> String {
    or_na(v.map(|v| format!("{v:.3}")))
}

/// Keeps `msg` if fewer than `cap` messages are kept, else counts it as
/// dropped: a run with thousands of violations prints the first ones.
pub(crate) fn push_capped(messages: &mut Vec<String>, dropped: &mut u64, cap: usize, msg: String) {
    if messages.len() < cap {
        messages.push(msg);
    } else {
        *dropped += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7u64], 1.0), Some(7));
        assert_eq!(percentile::<u64>(&[], 50.0), None);
    }

    #[test]
    fn na_and_milliseconds() {
        assert_eq!(or_na(Some(3)), "3");
        assert_eq!(or_na::<u64>(None), "NA");
        assert_eq!(ms3(Some(1.23456)), "1.235");
        assert_eq!(ms3(None), "NA");
    }

    #[test]
    fn messages_are_capped_and_counted() {
        let (mut m, mut dropped) = (Vec::new(), 0);
        for i in 0..5 {
            push_capped(&mut m, &mut dropped, 3, i.to_string());
        }
        assert_eq!((m, dropped), (vec!["0".into(), "1".into(), "2".into()], 2));
    }
}
