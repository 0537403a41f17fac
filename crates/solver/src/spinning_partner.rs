//! Keeping the thread pool's other worker awake while a frame is simulated.
//!
//! A substep is a chain of short parallel passes (a few hundred microseconds each on a garment of
//! a few thousand vertices), and between them rayon's idle worker soon goes to sleep; waking it
//! again for the next pass costs a futex wake-up and, on a virtual machine, the host's
//! rescheduling of the halted virtual CPU. [`with_partner_spinning`] runs the frame beside a job
//! that keeps the other worker looking for work (executing the frame's stolen pieces as they
//! come) until the frame ends. The work is split exactly as without it, so the results are the
//! same to the bit; only who runs a piece, and when, changes.
//!
//! Measured on the 2-core virtual machine of 2026-11-26 (BENCHMARKS.md, "A spinning partner"),
//! alternating bakes of the character bench exports, the bake report's wall time, this code
//! against the binary before it: dress-walk 7.86 → 7.36 s (mean of 6 pairs, lower in 4), skirt-walk
//! 3.89 → 3.57 s (lower in 5 of 6), user CPU 13.7 → 13.1 and 6.3 → 6.1 s; the 64×64 sheet
//! 1.24 → 1.38 s (lower in 4 of 6: one slow outlier; an earlier prototype 1.00 against 1.08 s),
//! no gain there.

use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `f` on the calling thread while, with two or more threads in the current pool, another
/// worker spins on the pool's pending jobs until `f` returns; returns `f`'s result. When idle the
/// spinner yields the processor to other processes (`std::thread::yield_now`), so a machine
/// shared with other jobs loses little to it. If no worker is free to take the spinner, it runs
/// after `f`, finds `f` done and returns at once.
pub(crate) fn with_partner_spinning<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_num_threads() < 2 {
        return f();
    }
    let done = AtomicBool::new(false);
    let (result, ()) = rayon::join(
        || {
            let result = f();
            done.store(true, Ordering::Release);
            result
        },
        || {
            while !done.load(Ordering::Acquire) {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
        },
    );
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::on_threads;

    /// The result comes back, parallel work inside runs to the end (the spinner takes pieces of
    /// it), on one, two and four threads, and with the other worker busy elsewhere.
    #[test]
    fn runs_the_work_and_returns_its_result() {
        for threads in [1, 2, 4] {
            let sum = on_threads(threads, || {
                with_partner_spinning(|| {
                    use rayon::prelude::*;
                    (0..100_000u64).into_par_iter().map(|i| i * i).sum::<u64>()
                })
            });
            assert_eq!(sum, (0..100_000u64).map(|i| i * i).sum::<u64>());
        }
        let (a, b) = on_threads(2, || {
            rayon::join(
                || with_partner_spinning(|| 6 * 7),
                || (0..1_000_000u64).fold(0u64, |s, i| s.wrapping_add(i ^ (i >> 3))),
            )
        });
        assert_eq!(a, 42);
        assert_eq!(
            b,
            (0..1_000_000u64).fold(0u64, |s, i| s.wrapping_add(i ^ (i >> 3)))
        );
    }
}
