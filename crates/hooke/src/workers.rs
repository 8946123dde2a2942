//! Keeping the worker pool awake through an iterative solve.
//!
//! An iteration of Newton, L-BFGS or local/global alternates short parallel
//! loops (the elements, the gather, the triangular solves) with short serial
//! work (the two-loop recursion, the line search, a solve's top separators).
//! A rayon worker left idle for a few tens of microseconds goes to sleep, and
//! the next parallel loop must wake it through the kernel: on this project's
//! two-core machine that cost a 10k-tet L-BFGS frame about a fifth of its
//! time. [`with_workers_awake`] runs a solve with the other workers waiting
//! for work in a loop instead, picking up each parallel loop's jobs as soon
//! as they appear.
//!
//! A waiting worker gives up after [`IDLE_LIMIT`] without a job and falls
//! back to rayon's own sleep. The limit also bounds the one way two solves
//! running at once on the same pool could stall each other: each one's
//! waiting worker stacked on top of the other solve's thread, waiting for a
//! body it is blocking.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a waiting worker stays without a job before it returns to the
/// pool's own sleep: longer than the serial stretches of an iteration at the
/// sizes where waking costs count (tens of thousands of elements), short
/// next to a frame.
pub const IDLE_LIMIT: Duration = Duration::from_millis(1);

/// Spins between looks at the clock.
const SPINS_PER_CLOCK_READ: u32 = 64;

/// Runs `body` on the current thread while the pool's other workers wait
/// for its parallel jobs in a loop; they stop when it returns. Outside the
/// pool, or with one thread, it only runs `body`.
pub fn with_workers_awake<R>(body: impl FnOnce() -> R) -> R {
    let threads = rayon::current_num_threads();
    let Some(owner) = rayon::current_thread_index() else {
        return body();
    };
    if threads < 2 {
        return body();
    }
    let done = AtomicBool::new(false);
    rayon::in_place_scope(|scope| {
        for _ in 1..threads {
            let done = &done;
            scope.spawn(move |_| {
                wait_for_jobs(owner, done);
            });
        }
        let result = body();
        done.store(true, Ordering::Release);
        result
    })
}

/// Why a waiting worker stopped.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The body returned.
    Done,
    /// It was started on the owner's own thread.
    Owner,
    /// It went [`IDLE_LIMIT`] without a job.
    Idle,
}

/// A worker's loop: runs the pool's jobs as they come until `done` is set or
/// it has been idle for [`IDLE_LIMIT`]. On the owner's own thread (the owner
/// took the task back while waiting for a job of its own) it returns at once,
/// since `done` is set only by the body beneath it.
fn wait_for_jobs(owner: usize, done: &AtomicBool) -> Stop {
    if rayon::current_thread_index() == Some(owner) {
        return Stop::Owner;
    }
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = Instant::now();
            spins = 0;
            continue;
        }
        std::hint::spin_loop();
        spins += 1;
        if spins == SPINS_PER_CLOCK_READ {
            spins = 0;
            if idle_since.elapsed() >= IDLE_LIMIT {
                return Stop::Idle;
            }
        }
    }
    Stop::Done
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn sum_of_squares(n: u64) -> u64 {
        (0..n).into_par_iter().map(|i| i * i).sum()
    }

    #[test]
    fn the_body_runs_once_and_its_parallel_loops_give_the_same_results() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let expected: Vec<u64> = (0..50).map(sum_of_squares).collect();
        let mut runs = 0;
        let got = pool.install(|| {
            with_workers_awake(|| {
                runs += 1;
                (0..50).map(sum_of_squares).collect::<Vec<_>>()
            })
        });
        assert_eq!(runs, 1);
        assert_eq!(got, expected);
    }

    #[test]
    fn outside_the_pool_and_with_one_thread_it_only_runs_the_body() {
        assert_eq!(with_workers_awake(|| sum_of_squares(100)), 328_350);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        assert_eq!(pool.install(|| with_workers_awake(|| sum_of_squares(100))), 328_350);
    }

    /// `work` on a thread of its own; None if it has not finished in 20 s
    /// (a hang is a failure, not a stuck test run).
    fn finishes<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(work()));
        receiver.recv_timeout(Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_waiting_worker_stops_when_the_body_is_done_on_its_owner_thread_or_after_the_idle_limit() {
        let stops = finishes(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                let here = rayon::current_thread_index().unwrap();
                let done = AtomicBool::new(true);
                let finished = wait_for_jobs(here + 1, &done);
                let owner = wait_for_jobs(here, &AtomicBool::new(false));
                let started = Instant::now();
                let idle = wait_for_jobs(here + 1, &AtomicBool::new(false));
                (finished, owner, idle, started.elapsed())
            })
        })
        .expect("every wait ends");
        assert_eq!((stops.0, stops.1, stops.2), (Stop::Done, Stop::Owner, Stop::Idle));
        assert!(stops.3 >= IDLE_LIMIT, "gave up after {:?}", stops.3);
    }

    #[test]
    fn many_solves_on_one_pool_at_once_all_finish() {
        // A solve's waiting worker may be stacked on another solve's thread
        // while that solve's waits on this one's: the idle limit ends it.
        let totals = finishes(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                (0..16u64)
                    .into_par_iter()
                    .map(|k| with_workers_awake(|| (0..100).map(|n| sum_of_squares(n + k)).sum::<u64>()))
                    .collect::<Vec<u64>>()
            })
        })
        .expect("all solves finish");
        let expected: Vec<u64> = (0..16u64)
            .map(|k| (0..100).map(|n| sum_of_squares(n + k)).sum::<u64>())
            .collect();
        assert_eq!(totals, expected);
    }
}
