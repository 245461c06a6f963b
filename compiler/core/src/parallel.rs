//! Work split over threads, failing closed: a panic in a worker is resumed in the caller, so a
//! crash can never silently drop a worker's items or diagnostics and let a program pass.

use std::thread::ScopedJoinHandle;

/// Waits for a scoped worker and returns its result; if the worker panicked, the panic
/// continues in the caller.
pub(crate) fn join<T>(handle: ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `items.map(work)` on up to `threads` threads, in order: the result does not depend on the
/// number of threads. A panic in any worker panics the caller.
pub(crate) fn map_in_threads<I: Sync, T: Send>(items: &[I], threads: usize, work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    let per_thread = items.len().div_ceil(threads.max(1)).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per_thread)
            .map(|group| scope.spawn(move || group.iter().map(work).collect::<Vec<T>>()))
            .collect();
        handles.into_iter().flat_map(join).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::map_in_threads;

    #[test]
    fn results_keep_their_order() {
        let items: Vec<u32> = (0..1000).collect();
        assert_eq!(
            map_in_threads(&items, 4, |n| n * 2),
            items.iter().map(|n| n * 2).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<u32> = (0..100).collect();
        let outcome = std::panic::catch_unwind(|| {
            map_in_threads(&items, 4, |&n| {
                assert!(n != 77, "injected failure");
                n
            })
        });
        assert!(outcome.is_err(), "a worker's panic was swallowed");
    }
}
