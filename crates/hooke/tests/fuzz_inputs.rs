//! The fuzzers' entry points (`hooke::studies::fuzz_targets`) under proptest, on the
//! stable toolchain in the normal suite: random bytes, and the fuzzers' seed
//! files (fuzz/seeds) with random bytes replaced, inserted and removed. Every
//! input must give a result or a clear error; a panic fails the test with the
//! input that caused it. fuzz/README.md says how to run the coverage-guided
//! fuzzers themselves.

use hooke::studies::fuzz_targets::{feed, TARGETS};
use proptest::prelude::*;
use std::path::PathBuf;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files.into_iter().map(|path| std::fs::read(path).unwrap()).collect()
}

/// An edit of a seed: at a position (a fraction of its length), replace,
/// insert or remove a byte.
#[derive(Clone, Debug)]
enum Edit {
    Replace(f64, u8),
    Insert(f64, u8),
    Remove(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0, any::<u8>()).prop_map(|(at, byte)| Edit::Replace(at, byte)),
        // Digits and separators are what text formats are made of.
        (0.0..1.0, prop::sample::select(b"0123456789-.e \n#/\"=[]{}".to_vec()))
            .prop_map(|(at, byte)| Edit::Insert(at, byte)),
        (0.0..1.0).prop_map(Edit::Remove),
    ]
}

fn mutated(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for edit in edits {
        let at = |fraction: f64, length: usize| ((fraction * length as f64) as usize).min(length.saturating_sub(1));
        match *edit {
            Edit::Replace(fraction, byte) if !bytes.is_empty() => {
                let i = at(fraction, bytes.len());
                bytes[i] = byte;
            }
            Edit::Insert(fraction, byte) => {
                let i = at(fraction, bytes.len() + 1);
                bytes.insert(i, byte);
            }
            Edit::Remove(fraction) if !bytes.is_empty() => {
                let i = at(fraction, bytes.len());
                bytes.remove(i);
            }
            _ => {}
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(target in prop::sample::select(TARGETS.to_vec()), data in prop::collection::vec(any::<u8>(), 0..300)) {
        feed(target, &data);
    }

    #[test]
    fn edited_seeds_never_panic(
        target in prop::sample::select(TARGETS.iter().copied().filter(|&t| t != "scene_build").collect::<Vec<_>>()),
        choice in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        let seeds = seeds(target);
        let seed = &seeds[choice.index(seeds.len())];
        feed(target, &mutated(seed, &edits));
    }
}

proptest! {
    // Building is slower than parsing: fewer cases.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn edited_scenes_build_or_fail_cleanly(choice in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..6)) {
        let seeds = seeds("scene_build");
        let seed = &seeds[choice.index(seeds.len())];
        feed("scene_build", &mutated(seed, &edits));
    }
}

/// Inputs the fuzzers once crashed on (fuzz/regressions/<target>/): each must
/// now give a result or an error.
#[test]
fn former_crashes_are_errors_now() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut count = 0;
    for target in TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| feed(target, &data));
            assert!(outcome.is_ok(), "{} panics the {target} target", path.display());
            count += 1;
        }
    }
    assert!(count > 0, "no regression inputs found in {}", root.display());
}

/// The seeds themselves are valid inputs (so the fuzzers start from inputs
/// that reach deep into each reader).
#[test]
fn every_seed_is_accepted() {
    for target in TARGETS {
        for (i, seed) in seeds(target).iter().enumerate() {
            assert!(feed(target, seed), "seed {i} of {target} is rejected");
        }
    }
}
