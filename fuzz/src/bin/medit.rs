//! Fuzz target `medit`: see `hooke::studies::fuzz_targets` and fuzz/README.md.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        hooke::studies::fuzz_targets::feed("medit", data);
    });
}
