//! Bad input must give an error that says what is wrong and where (key, element,
//! file, line), with the right `HookeError` variant, and must never panic.

use hooke::scene::{BuiltScene, Scene};
use hooke::HookeError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A small valid scene; tests replace one piece of it.
const VALID_SCENE: &str = r#"name = "bad_input_base"
gravity = [0.0, 0.0, -9.81]

[simulation]
duration = 0.1
time_step = 0.01

[[bodies]]
mesh = { box = { size = [1.0, 0.2, 0.2], cells = [4, 1, 1] } }
material = { model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
"#;

/// The valid base scene with `from` replaced by `to` (which must occur).
fn scene_with(from: &str, to: &str) -> String {
    assert!(VALID_SCENE.contains(from), "base scene has no {from:?}");
    VALID_SCENE.replacen(from, to, 1)
}

/// A fresh directory under the system temp folder, removed when dropped.
struct ScratchDirectory(PathBuf);

impl ScratchDirectory {
    fn new(test_name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!("hooke-bad-input-{}-{test_name}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("create scratch directory");
        ScratchDirectory(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write test file");
        path
    }
}

impl Drop for ScratchDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Parses and builds a scene, turning a library panic into a test failure that says so.
fn load_and_build(text: &str, base_directory: &Path) -> Result<BuiltScene, HookeError> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        Scene::from_text(text, "test.toml", base_directory.to_path_buf())?.build()
    }));
    match outcome {
        Ok(result) => result,
        Err(_) => panic!("the library panicked on this scene instead of returning an error:\n{text}"),
    }
}

/// The error a scene must fail with.
fn build_error(text: &str, base_directory: &Path) -> HookeError {
    match load_and_build(text, base_directory) {
        Ok(_) => panic!("the scene was accepted but should fail:\n{text}"),
        Err(error) => error,
    }
}

/// 1-based number of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("{needle:?} is not in the scene"))
}

/// Asserts a parse error of the scene text that names `key` at the line holding it.
fn assert_unknown_key(text: &str, key: &str) {
    let error = build_error(text, Path::new("."));
    let message = error.to_string();
    match &error {
        HookeError::Parse { path, line, reason } => {
            assert_eq!(path, Path::new("test.toml"), "{message}");
            assert!(reason.contains(key), "reason does not name {key}: {message}");
            // serde says "unknown field" for structs and "unexpected keys" for
            // the struct variants of an enum (a selection, a motion).
            assert!(
                reason.contains("unknown field") || reason.contains("unexpected key"),
                "{message}"
            );
            assert_eq!(*line, Some(line_of(text, key)), "wrong line in: {message}");
        }
        other => panic!("expected HookeError::Parse, got {other:?}"),
    }
    assert!(message.contains("test.toml"), "{message}");
}

/// Asserts a `Scene` error on exactly `expected_key`.
fn assert_scene_error(error: &HookeError, expected_key: &str) {
    match error {
        HookeError::Scene { key, .. } => assert_eq!(key, expected_key, "{error}"),
        other => panic!("expected HookeError::Scene on {expected_key}, got {other:?}"),
    }
    assert!(error.to_string().contains(expected_key), "{error}");
    assert!(error.is_user_error());
}

/// Asserts a `Material` error whose context is `expected_context`, and whose
/// message names `parameter`.
fn assert_material_error(error: &HookeError, expected_context: &str, parameter: &str) {
    match error {
        HookeError::Material { context, reason } => {
            assert_eq!(context, expected_context, "{error}");
            assert!(reason.contains(parameter), "{error}");
        }
        other => panic!("expected HookeError::Material, got {other:?}"),
    }
    assert!(error.to_string().contains(expected_context), "{error}");
    assert!(error.is_user_error());
}

// ---- unknown keys -------------------------------------------------------------

// Regression: the line of an unknown key at the start of its line was once off by one.

#[test]
fn unknown_top_level_key_names_key_and_line() {
    let text = scene_with("gravity =", "gravty =");
    assert_unknown_key(&text, "gravty");
}

#[test]
fn unknown_key_in_simulation_table_names_key_and_line() {
    let text = scene_with("duration = 0.1", "durration = 1");
    assert_unknown_key(&text, "durration");
}

#[test]
fn unknown_key_in_inline_body_material_names_key_and_line() {
    let text = scene_with("poisson_ratio = 0.3", "poison_ratio = 0.3");
    assert_unknown_key(&text, "poison_ratio");
}

#[test]
fn unknown_key_in_body_material_table_names_key_and_line() {
    let material =
        r#"material = { model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }"#;
    let table = "[bodies.material]\nmodel = \"neo_hookean\"\nyoungs_modulus = 1e5\n\
                 poisson_ratio = 0.3\ndensiti = 1000.0\n";
    let text = scene_with(material, table);
    assert_unknown_key(&text, "densiti");
}

#[test]
fn unknown_key_in_pin_selection_names_key_and_line() {
    let text = scene_with("normal = [-1.0, 0.0, 0.0]", "normals = [-1.0, 0.0, 0.0]");
    assert_unknown_key(&text, "normals");
}

// ---- material parameters ---------------------------------------------------------

#[test]
fn negative_youngs_modulus_is_a_material_error() {
    let text = scene_with("youngs_modulus = 1e5", "youngs_modulus = -1e5");
    let error = build_error(&text, Path::new("."));
    assert_material_error(&error, "bodies[0].material", "youngs_modulus");
}

#[test]
fn poisson_ratio_one_half_is_a_material_error() {
    let text = scene_with("poisson_ratio = 0.3", "poisson_ratio = 0.5");
    let error = build_error(&text, Path::new("."));
    assert_material_error(&error, "bodies[0].material", "poisson_ratio");
}

#[test]
fn poisson_ratio_above_one_half_is_a_material_error() {
    let text = scene_with("poisson_ratio = 0.3", "poisson_ratio = 0.7");
    let error = build_error(&text, Path::new("."));
    assert_material_error(&error, "bodies[0].material", "poisson_ratio");
}

#[test]
fn bad_region_material_names_the_region() {
    let text = format!(
        "{VALID_SCENE}\n[[bodies.regions]]\nselect = {{ box = {{ min = [0.5, -1.0, -1.0], max = [2.0, 1.0, 1.0] }} }}\n\
         material = {{ model = \"linear\", youngs_modulus = 1e6, poisson_ratio = 0.7, density = 1000.0 }}\n"
    );
    let error = build_error(&text, Path::new("."));
    assert_material_error(&error, "bodies[0].regions[0].material", "poisson_ratio");
}

// ---- scene values -----------------------------------------------------------------

#[test]
fn zero_time_step_names_simulation_time_step() {
    let text = scene_with("time_step = 0.01", "time_step = 0.0");
    assert_scene_error(&build_error(&text, Path::new(".")), "simulation.time_step");
}

#[test]
fn negative_time_step_names_simulation_time_step() {
    let text = scene_with("time_step = 0.01", "time_step = -0.01");
    assert_scene_error(&build_error(&text, Path::new(".")), "simulation.time_step");
}

#[test]
fn scene_without_bodies_names_bodies() {
    let text = "[simulation]\nduration = 1.0\ntime_step = 0.01\n";
    assert_scene_error(&build_error(text, Path::new(".")), "bodies");
}

#[test]
fn pin_selecting_nothing_names_the_pin() {
    // The plane x ≥ 5 lies beyond the 1 m long bar.
    let text = scene_with(
        "point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0]",
        "point = [5.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0]",
    );
    let error = build_error(&text, Path::new("."));
    assert_scene_error(&error, "pins[0].select");
    assert!(error.to_string().contains("selects no"), "{error}");
}

#[test]
fn second_pin_selecting_nothing_names_that_pin() {
    let text =
        format!("{VALID_SCENE}\n[[pins]]\nselect = {{ box = {{ min = [3.0, 3.0, 3.0], max = [4.0, 4.0, 4.0] }} }}\n");
    assert_scene_error(&build_error(&text, Path::new(".")), "pins[1].select");
}

#[test]
fn region_selecting_nothing_names_the_region() {
    let text = format!(
        "{VALID_SCENE}\n[[bodies.regions]]\nselect = {{ box = {{ min = [5.0, 5.0, 5.0], max = [6.0, 6.0, 6.0] }} }}\n\
         material = {{ model = \"linear\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}\n"
    );
    let error = build_error(&text, Path::new("."));
    assert_scene_error(&error, "bodies[0].regions[0].select");
    assert!(error.to_string().contains("selects no"), "{error}");
}

#[test]
fn region_label_absent_from_the_mesh_names_the_region() {
    // A generated box has label 0 everywhere.
    let text = format!(
        "{VALID_SCENE}\n[[bodies.regions]]\nselect = {{ label = 3 }}\n\
         material = {{ model = \"linear\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000.0 }}\n"
    );
    assert_scene_error(&build_error(&text, Path::new(".")), "bodies[0].regions[0].select");
}

#[test]
fn seven_tets_per_hex_names_the_key() {
    let text = scene_with("cells = [4, 1, 1] }", "cells = [4, 1, 1], tets_per_hex = 7 }");
    let error = build_error(&text, Path::new("."));
    assert_scene_error(&error, "bodies[0].mesh.box.tets_per_hex");
    assert!(error.to_string().contains('7'), "{error}");
}

// ---- mesh files -------------------------------------------------------------------

/// The base scene with its generated box replaced by a mesh file.
fn scene_with_mesh_file(file: &str) -> String {
    scene_with(
        "{ box = { size = [1.0, 0.2, 0.2], cells = [4, 1, 1] } }",
        &format!("{{ file = \"{file}\" }}"),
    )
}

/// Two disjoint unit corner tets, the second shifted 3 m along x; both positively
/// oriented unless `second_tet` says otherwise.
fn two_tet_medit(second_tet: &str) -> String {
    format!(
        "MeshVersionFormatted 2\nDimension 3\nVertices\n8\n\
         0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n\
         3 0 0 0\n4 0 0 0\n3 1 0 0\n3 0 1 0\n\
         Tetrahedra\n2\n1 2 3 4 1\n{second_tet}\nEnd\n"
    )
}

#[test]
fn malformed_mesh_file_is_a_parse_error_with_file_and_line() {
    let scratch = ScratchDirectory::new("malformed-mesh");
    // Line 7 has a word where the y coordinate of vertex 2 belongs.
    let contents = "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n\
                    0 0 0 0\n1 0 0 0\n0 oops 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 4 1\nEnd\n";
    let file = scratch.write("broken.mesh", contents);
    let error = build_error(&scene_with_mesh_file("broken.mesh"), scratch.path());
    match &error {
        HookeError::Parse { path, line, reason } => {
            assert_eq!(path, &file, "{error}");
            assert_eq!(*line, Some(7), "{error}");
            assert!(reason.contains("oops"), "{error}");
        }
        other => panic!("expected HookeError::Parse, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("broken.mesh") && message.contains("line 7"),
        "{message}"
    );
}

#[test]
fn mesh_file_with_an_out_of_range_vertex_names_the_line() {
    let scratch = ScratchDirectory::new("out-of-range-mesh");
    let file = scratch.write("range.mesh", &two_tet_medit("5 6 7 9 1"));
    let error = build_error(&scene_with_mesh_file("range.mesh"), scratch.path());
    match &error {
        HookeError::Parse { path, line, reason } => {
            assert_eq!(path, &file, "{error}");
            assert_eq!(*line, Some(16), "{error}");
            assert!(reason.contains('9'), "{error}");
        }
        other => panic!("expected HookeError::Parse, got {other:?}"),
    }
}

#[test]
fn flat_tet_in_mesh_file_is_a_mesh_error_naming_the_element() {
    let scratch = ScratchDirectory::new("flat-mesh");
    // Second tet: its fourth vertex (3.5, 0.5, 0) lies in the plane of the other three.
    let contents = "MeshVersionFormatted 2\nDimension 3\nVertices\n8\n\
                    0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n\
                    3 0 0 0\n4 0 0 0\n3 1 0 0\n3.5 0.5 0 0\n\
                    Tetrahedra\n2\n1 2 3 4 1\n5 6 7 8 1\nEnd\n";
    scratch.write("flat.mesh", contents);
    let error = build_error(&scene_with_mesh_file("flat.mesh"), scratch.path());
    let message = error.to_string();
    assert!(
        matches!(error, HookeError::Mesh { .. }),
        "expected HookeError::Mesh, got {error:?}"
    );
    assert!(message.contains("element 1"), "{message}");
    assert!(message.contains("degenerate"), "{message}");
    assert!(message.contains("flat.mesh"), "{message}");
}

#[test]
fn inside_out_tet_is_reoriented_with_a_note() {
    let scratch = ScratchDirectory::new("inside-out-mesh");
    // The second tet lists vertices 3 and 4 swapped: negative volume by numbering only.
    scratch.write("inside_out.mesh", &two_tet_medit("5 6 8 7 1"));
    let built = load_and_build(&scene_with_mesh_file("inside_out.mesh"), scratch.path())
        .unwrap_or_else(|error| panic!("an inside-out tet should be re-oriented, got: {error}"));
    let mesh = built.model.mesh().tetrahedra().expect("a 3D scene");
    for element in 0..mesh.tet_count() {
        assert!(mesh.signed_volume(element, &mesh.vertices) > 0.0, "element {element}");
    }
    assert!(
        built
            .notes
            .iter()
            .any(|note| note.contains("re-oriented") && note.contains("inside_out.mesh")),
        "notes: {:?}",
        built.notes
    );
    assert!(
        built.notes.iter().any(|note| note.contains("[1]")),
        "notes: {:?}",
        built.notes
    );
}

// ---- inverted elements -------------------------------------------------------------

/// Builds the two-tet Neo-Hookean scene (no pins: the mesh is the whole story).
fn two_tet_neo_hookean(scratch: &ScratchDirectory) -> BuiltScene {
    scratch.write("two.mesh", &two_tet_medit("5 6 7 8 1"));
    let text = scene_with_mesh_file("two.mesh").replace(
        "[[pins]]\nselect = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }\n",
        "",
    );
    load_and_build(&text, scratch.path()).unwrap_or_else(|error| panic!("valid scene: {error}"))
}

/// Evaluates the potential's gradient, turning a panic into a test failure
/// that says so; returns the elastic energy when it succeeds.
fn gradient_result(built: &BuiltScene, positions: &[f64]) -> Result<f64, HookeError> {
    let mut gradient = vec![0.0; positions.len()];
    catch_unwind(AssertUnwindSafe(|| built.model.gradient(positions, 0.0, &mut gradient)))
        .unwrap_or_else(|_| panic!("the gradient panicked instead of returning an error"))
        .map(|_| built.model.elastic_energy(positions))
}

#[test]
fn neo_hookean_gradient_at_an_inverted_element_names_the_element() {
    let scratch = ScratchDirectory::new("inverted");
    let built = two_tet_neo_hookean(&scratch);
    let mut positions = built.model.rest_positions();
    // Vertex 7 is the apex (3, 0, 1) of element 1; pushing it to z = −0.5 turns
    // that tet inside out while element 0 stays at rest.
    positions[3 * 7 + 2] = -0.5;
    let error = gradient_result(&built, &positions).expect_err("element 1 is inverted");
    match &error {
        HookeError::InvalidDeformation { element, reason } => {
            assert_eq!(*element, 1, "{error}");
            assert!(reason.contains("neo_hookean"), "{error}");
        }
        other => panic!("expected HookeError::InvalidDeformation, got {other:?}"),
    }
    assert!(error.to_string().contains("element 1"), "{error}");
    assert!(!error.is_user_error());
    let energy = built.model.elastic_energy(&positions);
    assert_eq!(energy, f64::INFINITY);

    // At rest everything is defined and the energy is zero.
    let rest = built.model.rest_positions();
    let rest_energy = gradient_result(&built, &rest).expect("rest state is valid");
    assert!(rest_energy.abs() < 1e-9, "{rest_energy}");
}

#[test]
fn neo_hookean_gradient_at_a_flattened_element_names_the_element() {
    let scratch = ScratchDirectory::new("flattened");
    let built = two_tet_neo_hookean(&scratch);
    let mut positions = built.model.rest_positions();
    // J = 0 exactly: element 1's apex pushed into the plane of its base.
    positions[3 * 7 + 2] = 0.0;
    let error = gradient_result(&built, &positions).expect_err("element 1 is flat");
    assert!(
        matches!(error, HookeError::InvalidDeformation { element: 1, .. }),
        "expected InvalidDeformation on element 1, got {error:?}"
    );
    assert_eq!(built.model.elastic_energy(&positions), f64::INFINITY);
}

#[test]
fn neo_hookean_box_reports_the_first_inverted_element() {
    let built = load_and_build(VALID_SCENE, Path::new(".")).expect("valid scene");
    let mesh = built.model.mesh().tetrahedra().expect("a 3D scene");
    let mut positions = built.model.rest_positions();
    // Move the far corner vertex (1, 0.2, 0.2) back through the bar, past x = 0.5:
    // every element touching it turns inside out.
    let corner = (0..mesh.vertex_count())
        .max_by(|&a, &b| {
            let key = |v: usize| mesh.vertices[v].x + mesh.vertices[v].y + mesh.vertices[v].z;
            key(a).total_cmp(&key(b))
        })
        .expect("the mesh has vertices");
    positions[3 * corner] = 0.5;
    let points: Vec<_> = positions
        .chunks(3)
        .map(|c| nalgebra::Vector3::new(c[0], c[1], c[2]))
        .collect();
    let first_inverted = (0..mesh.tet_count())
        .find(|&e| mesh.signed_volume(e, &points) <= 0.0)
        .expect("moving the corner inverts an element");
    let error = gradient_result(&built, &positions).expect_err("an element is inverted");
    match error {
        HookeError::InvalidDeformation { element, .. } => assert_eq!(element, first_inverted),
        other => panic!("expected HookeError::InvalidDeformation, got {other:?}"),
    }
    assert_eq!(built.model.elastic_energy(&positions), f64::INFINITY);
}

// ---- missing checks found while writing these tests ---------------------------------

// Regression: an enormous generated box was once a capacity-overflow panic.
#[test]
fn absurd_box_cell_count_is_an_error_not_a_panic() {
    let text = scene_with("cells = [4, 1, 1]", "cells = [1000000, 1000000, 1000000]");
    let error = build_error(&text, Path::new("."));
    assert!(error.is_user_error(), "{error:?}");
    assert!(error.to_string().contains("bodies[0].mesh.box.cells"), "{error}");
}

// Regression: non-finite pin motions were once accepted and failed mid-run.
#[test]
fn non_finite_pin_motion_names_the_pin() {
    let text = format!("{VALID_SCENE}motion = {{ kind = \"translation\", velocity = [nan, 0.0, 0.0] }}\n");
    let error = build_error(&text, Path::new("."));
    assert!(
        matches!(&error, HookeError::Scene { key, .. } if key.starts_with("pins[0].motion")),
        "expected a Scene error on pins[0].motion, got {error:?}"
    );
}

// Regression: infinite damping was once accepted.
#[test]
fn infinite_damping_coefficient_names_damping() {
    let text = format!("{VALID_SCENE}\n[damping]\nstiffness_coefficient = inf\n");
    assert_scene_error(&build_error(&text, Path::new(".")), "damping.stiffness_coefficient");
}

/// Keys that a variant without settings, or a flattened settings table, does not know are still errors.
#[test]
fn unknown_keys_in_integrator_and_motion_tables_are_errors() {
    let base = |extra: &str| {
        format!(
            r#"
[simulation]
duration = 0.1
time_step = 0.01

[[bodies]]
mesh = {{ box = {{ size = [1.0, 0.2, 0.2], cells = [4, 1, 1] }} }}
material = {{ model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}
{extra}
"#
        )
    };
    for (extra, key) in [
        (
            "[integrator]\nkind = \"backward_euler\"\ntolerence = 1e-6\n",
            "tolerence",
        ),
        (
            "[integrator]\nkind = \"symplectic_euler\"\ntolerance = 1e-6\n",
            "tolerance",
        ),
        (
            "[[pins]]\nselect = \"all\"\nmotion = { kind = \"fixed\", velocity = [1.0, 0.0, 0.0] }\n",
            "velocity",
        ),
    ] {
        let error = hooke::scene::Scene::from_text(&base(extra), "test.toml", std::path::PathBuf::from("."))
            .expect_err("an unknown key must be refused");
        assert!(matches!(error, HookeError::Parse { .. }), "{error:?}");
        assert!(error.to_string().contains(key), "{error}");
    }
}

/// A release time between step boundaries is not silently moved: the build
/// notes the step it falls in and when the vertices go free; one on a boundary
/// (even one that is not a whole multiple in floating point) gets no note.
#[test]
fn release_time_inside_a_step_is_noted() {
    let scratch = ScratchDirectory::new("release_inside_step");
    let pinned = "normal = [-1.0, 0.0, 0.0] } }";
    let inside = load_and_build(
        &scene_with(pinned, &format!("{pinned}\nrelease_time = 0.035")),
        scratch.path(),
    )
    .unwrap();
    let note = inside
        .notes
        .iter()
        .find(|n| n.contains("pins[0].release_time"))
        .expect("a note");
    assert!(
        note.contains("0.03 to 0.04") && note.contains("free from t = 0.03"),
        "{note}"
    );
    let boundary = load_and_build(
        &scene_with(pinned, &format!("{pinned}\nrelease_time = 0.07")),
        scratch.path(),
    )
    .unwrap();
    assert!(
        !boundary.notes.iter().any(|n| n.contains("release_time")),
        "{:?}",
        boundary.notes
    );
}

/// Every generator bounds its output before allocating: cell or segment counts
/// whose product overflows or exceeds the limit are a scene error naming the
/// key, never an abort (a cloth of [2³², 10] cells once tried to allocate a
/// terabyte).
#[test]
fn oversized_generators_are_refused_before_allocating() {
    let scratch = ScratchDirectory::new("oversized_generators");
    let box_line = "mesh = { box = { size = [1.0, 0.2, 0.2], cells = [4, 1, 1] } }";
    let cases = [
        (
            scene_with(box_line, "mesh = { box = { size = [1.0, 0.2, 0.2], cells = [4294967296, 4294967296, 2] } }"),
            "bodies[0].mesh.box.cells",
        ),
        (
            scene_with(box_line, "mesh = { box = { size = [1.0, 0.2, 0.2], cells = [3000, 3000, 2] } }"),
            "bodies[0].mesh.box.cells",
        ),
        (
            scene_with(
                box_line,
                "mesh = { solid = { shape = { ball = { center = [0, 0, 0], radius = 1.0 } }, edge_length = 1e-3 } }",
            ),
            "bodies[0]",
        ),
        (
            format!(
                "{VALID_SCENE}\n[[networks]]\nshape = {{ cloth = {{ origin = [0, 0, 1], size = [1.0, 1.0], cells = [4294967296, 10] }} }}\nstiffness = 10.0\ndensity = 0.1\n"
            ),
            "networks[0].shape.cloth.cells",
        ),
        (
            format!(
                "{VALID_SCENE}\n[[networks]]\nshape = {{ rope = {{ start = [0, 0, 1], end = [1, 0, 1], segments = 1000000000000 }} }}\nstiffness = 10.0\ndensity = 0.1\n"
            ),
            "networks[0].shape.rope.segments",
        ),
        (
            format!(
                "{VALID_SCENE}\n[[networks]]\nshape = {{ helix = {{ center = [0, 0, 1], radius = 0.1, pitch = 0.1, turns = 3, segments = 20000000 }} }}\nstiffness = 10.0\ndensity = 0.1\n"
            ),
            "networks[0].shape.helix.segments",
        ),
    ];
    for (text, key) in cases {
        let error = build_error(&text, scratch.path());
        assert!(error.is_user_error(), "{error}");
        assert!(error.to_string().contains(key), "expected {key}: {error}");
        assert!(
            error.to_string().contains("10000000") || error.to_string().contains("1e7"),
            "{error}"
        );
    }
}

/// The library's generators check the same bounds (callers outside scenes).
#[test]
fn generator_functions_refuse_oversized_requests() {
    use hooke::fem::spring_networks::{cloth, helix_rope, straight_rope, ClothStiffness};
    use hooke::mesh::{box_mesh, rectangle_mesh, BoxMeshOptions, TetsPerHex};
    use nalgebra::Vector3;
    let huge = 1usize << 32;
    let stiffness = ClothStiffness {
        stretch: 1.0,
        shear: 0.0,
        bend: 0.0,
    };
    let errors = [
        box_mesh(&BoxMeshOptions {
            origin: Vector3::zeros(),
            size: Vector3::repeat(1.0),
            cells: [huge, huge, 1],
            tets_per_hex: TetsPerHex::Six,
        })
        .unwrap_err(),
        rectangle_mesh([0.0; 2], [1.0; 2], [huge, 10]).unwrap_err(),
        cloth(Vector3::zeros(), [1.0, 1.0], [huge, 10], stiffness, 0.1).unwrap_err(),
        straight_rope(Vector3::zeros(), Vector3::x(), huge).unwrap_err(),
        helix_rope(Vector3::zeros(), 0.1, 0.1, 2.0, huge).unwrap_err(),
    ];
    for error in errors {
        assert!(matches!(error, HookeError::Mesh { .. }), "{error}");
        assert!(error.to_string().contains("more than 10000000"), "{error}");
    }
}

/// Projective constraint ranges must contain 1 (the rest shape is free), and
/// `volume = {…}` belongs to strain limiting, not to the volume model itself.
#[test]
fn projective_constraint_ranges_are_checked() {
    let material = r#"model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0"#;
    let strain =
        r#"model = "strain_limit", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, min = 0.9, max = 1.1"#;
    let volume = r#"model = "volume", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0"#;
    for (replacement, key) in [
        (
            format!("{volume}, min = 1.1, max = 1.2"),
            "bodies[0].material".to_string(),
        ),
        (
            format!("{volume}, min = 0.0, max = 1.2"),
            "bodies[0].material".to_string(),
        ),
        (
            format!("{strain}, volume = {{ min = 0.9, max = 0.95 }}"),
            "bodies[0].material.volume".to_string(),
        ),
        (
            format!("{volume}, min = 0.9, max = 1.1, volume = {{ min = 0.9, max = 1.1 }}"),
            "bodies[0].material.volume".to_string(),
        ),
    ] {
        let text = scene_with(material, &replacement);
        assert_scene_error(&build_error(&text, Path::new(".")), &key);
    }
}

// ---- type errors in the user's words ------------------------------------------

/// Asserts a parse error at the line of `needle` whose reason is exactly `reason`, with no Rust type name.
fn assert_type_error(text: &str, needle: &str, reason_expected: &str) {
    let error = build_error(text, Path::new("."));
    let message = error.to_string();
    match &error {
        HookeError::Parse { line, reason, .. } => {
            assert_eq!(reason, reason_expected, "{message}");
            assert_eq!(*line, Some(line_of(text, needle)), "{message}");
        }
        other => panic!("expected HookeError::Parse, got {other:?}"),
    }
    for rust in ["f64", "usize", "u32", "i64", "bool", "struct ", "sequence"] {
        assert!(!message.contains(rust), "a Rust type name ({rust}) in: {message}");
    }
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_and_the_kind_expected() {
    assert_type_error(
        &scene_with("duration = 0.1", "duration = \"1 s\""),
        "\"1 s\"",
        "simulation.duration: expected a number, got the string \"1 s\"",
    );
    assert_type_error(
        &format!("{VALID_SCENE}\n[output]\nvtk_every = 50.5\n"),
        "50.5",
        "output.vtk_every: expected a whole number, 0 or more, got the number 50.5",
    );
    // A material's table is read by its model's own settings type, after the
    // scene's structure: the error names the key (the setting within it).
    let error = build_error(
        &scene_with("youngs_modulus = 1e5", "youngs_modulus = \"soft\""),
        Path::new("."),
    );
    assert_scene_error(&error, "bodies[0].material.youngs_modulus");
    assert!(
        error.to_string().contains("expected a number, got the string \"soft\""),
        "{error}"
    );
    assert!(!error.to_string().contains("f64"), "{error}");
    assert_type_error(
        &scene_with("cells = [4, 1, 1]", "cells = [4, 1.5, 1]"),
        "1.5",
        "bodies[0].mesh.box.cells[1]: expected a whole number, 0 or more, got the number 1.5",
    );
}

#[test]
fn a_missing_mesh_file_names_its_key_and_the_path_tried() {
    let scratch = ScratchDirectory::new("missing-mesh");
    let text = scene_with(
        "mesh = { box = { size = [1.0, 0.2, 0.2], cells = [4, 1, 1] } }",
        "mesh = { file = \"meshes/absent.mesh\" }",
    );
    let error = build_error(&text, scratch.path());
    assert_scene_error(&error, "bodies[0].mesh.file");
    let tried = scratch.path().join("meshes/absent.mesh");
    assert!(error.to_string().contains(&tried.display().to_string()), "{error}");
}

#[test]
fn more_eigenfit_modes_than_the_model_has_are_refused_at_once() {
    let text = format!(
        "{VALID_SCENE}\n[integrator]\nkind = \"backward_euler\"\n\n[eigenfit]\nreference = {{ box = {{ size = [1.0, 0.2, 0.2], cells = [8, 2, 2] }} }}\nmodes = 1000000000\n"
    );
    let started = std::time::Instant::now();
    let error = build_error(&text, Path::new("."));
    assert_scene_error(&error, "eigenfit.modes");
    assert!(error.to_string().contains("at most"), "{error}");
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "the refusal took {:?}",
        started.elapsed()
    );
}

#[test]
fn numbers_no_scene_means_are_refused_with_their_key() {
    let cases = [
        (
            scene_with("cells = [4, 1, 1] }", "cells = [4, 1, 1], origin = [-0.5, -0.5, inf] }"),
            "bodies[0].mesh.box.origin[2]",
        ),
        (
            scene_with("gravity = [0.0, 0.0, -9.81]", "gravity = [0.0, 0.0, -1e308]"),
            "gravity[2]",
        ),
        (
            scene_with("youngs_modulus = 1e5", "youngs_modulus = 1e-320"),
            "bodies[0].material.youngs_modulus",
        ),
        (scene_with("duration = 0.1", "duration = nan"), "simulation.duration"),
        (
            format!("{VALID_SCENE}\n[damping]\nstiffness_coefficient = 1e308\n"),
            "damping.stiffness_coefficient",
        ),
    ];
    for (text, key) in cases {
        let error = build_error(&text, Path::new("."));
        assert_scene_error(&error, key);
    }
}

#[test]
fn a_list_longer_than_its_meaning_is_refused_not_cut() {
    let text = scene_with("size = [1.0, 0.2, 0.2]", "size = [1.0, 0.2, 0.2, 0.5]");
    let error = build_error(&text, Path::new("."));
    assert_scene_error(&error, "bodies[0].mesh.box.size");
    assert!(error.to_string().contains("has 4 entries, but takes 3"), "{error}");
    // Mixed junk after the three numbers is refused too (by its type or its length).
    let text = scene_with("size = [1.0, 0.2, 0.2]", "size = [1.0, 0.2, 0.2, \"abc\", []]");
    let message = build_error(&text, Path::new(".")).to_string();
    assert!(message.contains("size"), "{message}");
    // Every shipped scene is as long as it is read.
    let scenes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    for entry in std::fs::read_dir(&scenes).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Err(error) = Scene::from_file(&path) {
                assert!(
                    !error.to_string().contains("entries, but takes"),
                    "{}: {error}",
                    path.display()
                );
            }
        }
    }
}
