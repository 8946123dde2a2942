//! Runs third-party parsing code that may panic on malformed input, turning a
//! panic into a value without the "thread 'main' panicked" text the default
//! hook would print: the caller reports the failure as a parse error.

use std::cell::Cell;
use std::panic::{catch_unwind, UnwindSafe};
use std::sync::Once;

thread_local! {
    /// True while this thread runs code whose panics are expected and caught.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work`; a panic inside it returns `Err` with the panic's message, and
/// nothing is printed. Panics elsewhere (other threads, later) still reach the
/// hook that was installed before, unchanged.
pub fn catch_quietly<R>(work: impl FnOnce() -> R + UnwindSafe) -> Result<R, String> {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET.with(|quiet| quiet.replace(true));
    let outcome = catch_unwind(work);
    QUIET.with(|quiet| quiet.set(was_quiet));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_becomes_its_message_and_the_flag_is_restored() {
        assert_eq!(catch_quietly(|| 7), Ok(7));
        let caught = catch_quietly(|| -> usize { panic!("index {} out of range", 3) });
        assert_eq!(caught, Err("index 3 out of range".to_string()));
        assert!(!QUIET.with(Cell::get));
    }
}
