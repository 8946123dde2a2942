//! Every way untrusted bytes enter Hooke, behind one function: the mesh and
//! surface readers, the frame reader, the scene parser and the scene builder.
//! The coverage-guided fuzzers in `fuzz/` and the property tests of the normal
//! suite (tests/fuzz_inputs.rs) feed the same entry points, so a crash one finds
//! is a regression test for the other. Any input must give `Ok` or a clear
//! `Err`: never a panic, an abort or a hang.

use crate::scene::Scene;
use std::path::Path;

/// The targets, by name: one per reader, plus the scene parser and builder.
pub const TARGETS: [&str; 9] = [
    "tetgen",
    "medit",
    "gmsh",
    "obj",
    "stl",
    "ply",
    "vtu",
    "scene",
    "scene_build",
];

/// Generated meshes larger than this are not built by the `scene_build` target:
/// a fuzzer needs thousands of inputs a second, and the size limits
/// themselves are tested apart.
pub const BUILD_ELEMENT_BUDGET: usize = 20_000;

/// Feeds `data` to `target`; true when the input was accepted. Panics only
/// for an unknown target (a harness mistake, not an input).
pub fn feed(target: &str, data: &[u8]) -> bool {
    match target {
        // The two TetGen files, separated by the first zero byte.
        "tetgen" => {
            let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
            let (node, element) = (&data[..split], data.get(split + 1..).unwrap_or_default());
            crate::io::tetgen::parse_tetgen(Path::new("fuzz.node"), node, Path::new("fuzz.ele"), element).is_ok()
        }
        "medit" => crate::io::parse_mesh(Path::new("fuzz.mesh"), data).is_ok(),
        "gmsh" => crate::io::parse_mesh(Path::new("fuzz.msh"), data).is_ok(),
        "obj" | "stl" | "ply" => crate::io::parse_surface(Path::new(&format!("fuzz.{target}")), data).is_ok(),
        "vtu" => crate::output::parse_frame(Path::new("fuzz.vtu"), data).is_ok(),
        "scene" => Scene::from_text(&String::from_utf8_lossy(data), "fuzz.toml", ".".into()).is_ok(),
        "scene_build" => match Scene::from_text(&String::from_utf8_lossy(data), "fuzz.toml", ".".into()) {
            Ok(scene) if scene.file.generated_element_estimate() <= BUILD_ELEMENT_BUDGET => scene.build().is_ok(),
            _ => false,
        },
        other => panic!("unknown fuzz target {other:?}; the targets are {TARGETS:?}"),
    }
}
