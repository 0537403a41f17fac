//! The byte length a point cache's header promises (PC2, MDD), in u64 with checks: header counts
//! of up to 2³¹ − 1 each must neither wrap into a plausible length nor overflow (a panic in a debug
//! build).

/// Bytes of a cache with a `fixed` part (header, MDD's frame times) and `samples` samples of
/// `points` points of 12 bytes each, if that fits in a u64.
pub(crate) fn expected_len(fixed: u64, samples: u64, points: u64) -> Option<u64> {
    samples
        .checked_mul(points)?
        .checked_mul(12)?
        .checked_add(fixed)
}

/// [`expected_len`] for an error message: the number, or "more than 2^64".
pub(crate) fn describe(expected: Option<u64>) -> String {
    expected.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_overflow_give_none() {
        let max = i32::MAX as u64;
        assert_eq!(expected_len(32, 2, 3), Some(32 + 72));
        assert_eq!(expected_len(8 + 4 * max, max, max), None);
        assert_eq!(expected_len(u64::MAX - 11, 1, 1), None);
        assert_eq!(describe(None), "more than 2^64");
    }
}
