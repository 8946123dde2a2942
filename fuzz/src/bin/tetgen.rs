//! Fuzz target `tetgen`: see `hooke::fuzz_targets` and fuzz/README.md.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        hooke::fuzz_targets::feed("tetgen", data);
    });
}
