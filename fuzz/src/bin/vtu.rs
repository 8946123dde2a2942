//! Fuzz target `vtu`: see `hooke::fuzz_targets` and fuzz/README.md.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        hooke::fuzz_targets::feed("vtu", data);
    });
}
