//! A criterion measurement of the benchmarking thread's CPU time, shared by the benches that
//! report ratios on a machine other jobs share: wall time also counts the waits for a core.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

/// CPU time of the calling thread in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), formatted as
/// durations like criterion's wall time.
pub struct ThreadTime(pub WallTime);

/// The calling thread's CPU time (ns).
fn thread_time() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable `timespec`, and the clock id is a constant of libc.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Measurement for ThreadTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_time()
    }

    fn end(&self, start: u64) -> u64 {
        thread_time() - start
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self.0.formatter()
    }
}
