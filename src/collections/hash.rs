//! A fast hasher for integer keys the crate chooses itself (durations).
//!
//! `std`'s SipHash resists hash flooding by untrusted keys; the duration
//! map's keys are timer durations, which an attacker could at most spread
//! over 2^31 values, and one multiply-and-rotate per lookup is several times
//! cheaper on the insert/clear hot paths.
#![forbid(unsafe_code)]

use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one `u64` with a multiply (Fibonacci hashing) and a rotate, so
/// that both the low bits (which hashbrown's buckets use) and the high bits
/// mix.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for non-integer keys; fold bytes in FNV style.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

/// A `BuildHasher` for [`IntHasher`].
pub type BuildIntHasher = BuildHasherDefault<IntHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn consecutive_keys_spread_over_low_bits() {
        let b = BuildIntHasher::default();
        let mut buckets = [0u32; 64];
        for k in 0..6400u64 {
            buckets[(b.hash_one(k) & 63) as usize] += 1;
        }
        assert!(
            buckets.iter().all(|&n| (50..=150).contains(&n)),
            "{buckets:?}"
        );
    }
}
