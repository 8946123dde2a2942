//! Keeping the worker pool awake through an iterative solve.
//!
//! An iteration of Newton, L-BFGS or local/global alternates short parallel
//! loops (the elements, the gather, the triangular solves) with short serial
//! work (the two-loop recursion, the line search, a solve's top separators).
//! A rayon worker left idle for a few tens of microseconds goes to sleep, and
//! the next parallel loop must wake it through the kernel: on this project's
//! two-core machine that cost a 10k-tet L-BFGS frame about a fifth of its
//! time. While [`with_workers_awake`] runs a solve, every other worker of the
//! pool, once free, waits for work in a loop instead (running any job of the
//! pool it finds), so each parallel loop's jobs are taken as soon as they
//! appear.
//!
//! A waiting worker leaves the loop, for good, when the solve returns (or
//! unwinds), when it has found no job for [`IDLE_LIMIT`] (a long serial
//! stretch), or as soon as two solves are running at once. The last rule
//! keeps two solves on one pool from stalling each other: one solve's
//! waiting worker could otherwise sit on top of the other solve's thread
//! while that solve's waits on top of this one's. With several solves there
//! is work enough to keep the workers from sleeping anyway.
//!
//! Small solves (below [`SMALLEST_AWAKE_UNKNOWNS`]) run without them: their
//! loops hardly split. The waiting workers are sent detached (`spawn_broadcast`), so the solve
//! never waits for them; between their look-ups they yield the core to the
//! operating system, which matters only when the pool has more threads than
//! the machine has cores. Results do not depend on which thread runs a job:
//! the parallel loops write per-element slots and sum in a fixed order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use web_time::Instant;

/// How long a waiting worker stays without a job before it returns to the
/// pool's own sleep: longer than the serial stretches of an iteration at the
/// sizes where waking costs count (tens of thousands of elements), short
/// next to a frame.
pub const IDLE_LIMIT: Duration = Duration::from_millis(1);

/// Unknowns below which a solve is run without waiting workers: its
/// element pass (split in runs of 256 elements) and its solves are mostly
/// on one thread, so they would only spin beside it.
pub const SMALLEST_AWAKE_UNKNOWNS: usize = 3000;

/// Spins between looks at the clock (and yields of the core).
const SPINS_PER_CLOCK_READ: u32 = 64;

/// Solves inside [`with_workers_awake`] at this moment, in any pool.
static SOLVES: AtomicUsize = AtomicUsize::new(0);

/// Runs `body`, a solve of `unknowns` unknowns, on the current thread while
/// the pool's other workers wait for its parallel jobs in a loop. Outside a
/// pool, with one thread, or below [`SMALLEST_AWAKE_UNKNOWNS`], it only runs
/// `body`.
pub fn with_workers_awake<R>(unknowns: usize, body: impl FnOnce() -> R) -> R {
    if unknowns < SMALLEST_AWAKE_UNKNOWNS {
        return body();
    }
    awake_while(body, IDLE_LIMIT, &SOLVES, |_| {})
}

/// What a waiting worker reports to [`awake_while`]'s observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Started,
    Stopped(Stop),
}

/// Why a waiting worker stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The body returned or unwound.
    Done,
    /// It went the idle limit without a job.
    Idle,
    /// Another solve was running at the same time.
    Concurrent,
}

/// Marks one solve running in `solves`; on drop (return or unwind)
/// releases its waiting workers and unmarks it.
struct Running {
    done: Arc<AtomicBool>,
    solves: &'static AtomicUsize,
}

impl Running {
    fn start(done: Arc<AtomicBool>, solves: &'static AtomicUsize) -> Running {
        solves.fetch_add(1, Ordering::AcqRel);
        Running { done, solves }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        self.solves.fetch_sub(1, Ordering::AcqRel);
    }
}

/// [`with_workers_awake`] with the idle limit and the count of running
/// solves given, and each waiting worker's start and stop told to
/// `observe` (tests, which count their own solves apart from the others
/// running beside them).
fn awake_while<R>(
    body: impl FnOnce() -> R,
    idle_limit: Duration,
    solves: &'static AtomicUsize,
    observe: impl Fn(Event) + Send + Sync + 'static,
) -> R {
    let Some(owner) = rayon::current_thread_index() else {
        return body();
    };
    if rayon::current_num_threads() < 2 {
        return body();
    }
    let done = Arc::new(AtomicBool::new(false));
    let _running = Running::start(Arc::clone(&done), solves);
    rayon::spawn_broadcast(move |context| {
        if context.index() != owner && !done.load(Ordering::Acquire) {
            observe(Event::Started);
            observe(Event::Stopped(wait_for_jobs(&done, idle_limit, solves)));
        }
    });
    body()
}

/// A worker's loop: runs the pool's jobs as they come until `done` is set,
/// another solve runs, or it has been idle for `idle_limit`.
fn wait_for_jobs(done: &AtomicBool, idle_limit: Duration, solves: &AtomicUsize) -> Stop {
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    loop {
        if done.load(Ordering::Acquire) {
            return Stop::Done;
        }
        if solves.load(Ordering::Acquire) > 1 {
            return Stop::Concurrent;
        }
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = Instant::now();
            spins = 0;
            continue;
        }
        std::hint::spin_loop();
        spins += 1;
        if spins == SPINS_PER_CLOCK_READ {
            spins = 0;
            if idle_since.elapsed() >= idle_limit {
                return Stop::Idle;
            }
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::Mutex;

    /// The events of the waiting workers of one test.
    #[derive(Clone, Default)]
    struct Events(Arc<Mutex<Vec<Event>>>);

    impl Events {
        fn observer(&self) -> impl Fn(Event) + Send + Sync + 'static + use<> {
            let events = Arc::clone(&self.0);
            move |event| events.lock().unwrap().push(event)
        }

        fn count(&self, event: Event) -> usize {
            self.0.lock().unwrap().iter().filter(|&&e| e == event).count()
        }

        /// Waits (at most 10 s) until `event` has happened `times` times.
        fn wait_for(&self, event: Event, times: usize) -> bool {
            let started = Instant::now();
            while self.count(event) < times {
                if started.elapsed() > Duration::from_secs(10) {
                    return false;
                }
                std::thread::yield_now();
            }
            true
        }
    }

    /// A count of running solves for one test alone.
    fn own_count() -> &'static AtomicUsize {
        Box::leak(Box::new(AtomicUsize::new(0)))
    }

    /// Per-slot values of a parallel loop, as the element passes write them.
    fn slots(n: usize) -> Vec<f64> {
        let mut out = vec![0.0; n];
        out.par_iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = (i as f64 * 0.37).sin() / (1.0 + i as f64));
        out
    }

    /// `work` on a thread of its own; None if it has not finished in 20 s
    /// (a hang is a failure, not a stuck test run).
    fn finishes<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(work()));
        receiver.recv_timeout(Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_waiting_worker_takes_the_parallel_jobs_and_stops_when_the_body_returns() {
        let expected: Vec<u64> = (0..20)
            .map(|n| {
                slots(1000 + n)
                    .iter()
                    .fold(0u64, |sum, v| sum.wrapping_add(v.to_bits()))
            })
            .collect();
        let events = Events::default();
        let (observed, after) = (events.clone(), events.clone());
        let got = finishes(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                awake_while(
                    || {
                        // The waiter is up before the parallel loops run.
                        assert!(observed.wait_for(Event::Started, 1));
                        (0..20)
                            .map(|n| {
                                slots(1000 + n)
                                    .iter()
                                    .fold(0u64, |sum, v| sum.wrapping_add(v.to_bits()))
                            })
                            .collect::<Vec<u64>>()
                    },
                    Duration::from_secs(60),
                    own_count(),
                    events.observer(),
                )
            })
        })
        .expect("the solve finishes");
        assert_eq!(got, expected, "the same bits as one thread");
        // With a 60 s idle limit, only the body's return stops the waiter in time.
        assert!(after.wait_for(Event::Stopped(Stop::Done), 1));
    }

    #[test]
    fn outside_the_pool_and_with_one_thread_it_only_runs_the_body() {
        let events = Events::default();
        assert_eq!(
            awake_while(|| slots(100), IDLE_LIMIT, own_count(), events.observer()),
            slots(100)
        );
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let alone = pool.install(|| awake_while(|| slots(100), IDLE_LIMIT, own_count(), events.observer()));
        assert_eq!(alone, slots(100));
        assert_eq!(events.count(Event::Started), 0);
    }

    #[test]
    fn a_waiting_worker_gives_up_after_the_idle_limit() {
        let events = Events::default();
        let observed = events.clone();
        let waited = finishes(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                awake_while(
                    || {
                        // A serial stretch: nothing for the waiter to do.
                        let started = Instant::now();
                        let gave_up = observed.wait_for(Event::Stopped(Stop::Idle), 1);
                        (gave_up, started.elapsed())
                    },
                    Duration::from_millis(5),
                    own_count(),
                    events.observer(),
                )
            })
        })
        .expect("the solve finishes");
        assert!(waited.0, "the waiter gave up while the body ran");
        assert!(waited.1 < Duration::from_secs(5));
    }

    #[test]
    fn a_panicking_body_releases_its_waiting_workers() {
        let events = Events::default();
        let (observed, after) = (events.clone(), events.clone());
        let outcome = finishes(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    awake_while(
                        || {
                            assert!(observed.wait_for(Event::Started, 1));
                            panic!("the body fails")
                        },
                        Duration::from_secs(60),
                        own_count(),
                        events.observer(),
                    )
                })
            }))
            .is_err()
        });
        assert_eq!(outcome, Some(true), "the panic reaches the caller");
        assert!(after.wait_for(Event::Stopped(Stop::Done), 1));
    }

    #[test]
    fn a_waiting_worker_leaves_at_once_while_another_solve_runs() {
        let stop = finishes(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let two = own_count();
            two.store(2, Ordering::Release);
            pool.install(|| wait_for_jobs(&AtomicBool::new(false), Duration::from_secs(60), two))
        });
        assert_eq!(stop, Some(Stop::Concurrent));
    }

    #[test]
    fn two_solves_at_once_on_one_pool_both_finish_with_their_results() {
        // Each solve's waiter may land on the other's thread; with a 60 s
        // idle limit only the rule above would release such a stacking in
        // the 20 s allowed (the timing does not force one to happen).
        let events = Events::default();
        let totals = finishes(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let both = Arc::new(AtomicUsize::new(0));
            let solves = own_count();
            let solve = |k: usize| {
                let both = Arc::clone(&both);
                awake_while(
                    move || {
                        both.fetch_add(1, Ordering::AcqRel);
                        let started = Instant::now();
                        while both.load(Ordering::Acquire) < 2 && started.elapsed() < Duration::from_secs(2) {
                            slots(64);
                        }
                        (0..50).map(|n| slots(500 + n + k).iter().sum::<f64>()).sum::<f64>()
                    },
                    Duration::from_secs(60),
                    solves,
                    events.observer(),
                )
            };
            pool.install(|| rayon::join(|| solve(0), || solve(1)))
        })
        .expect("both solves finish");
        let expected = |k: usize| (0..50).map(|n| slots(500 + n + k).iter().sum::<f64>()).sum::<f64>();
        assert_eq!(totals.0.to_bits(), expected(0).to_bits());
        assert_eq!(totals.1.to_bits(), expected(1).to_bits());
    }
}
