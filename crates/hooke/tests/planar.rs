//! 2D (plane-strain) scenes: linear triangles with 2 DOFs per vertex through
//! the same model, integrators and outputs as 3D; 2-component vectors in
//! scenes; triangle meshes from Gmsh and OBJ; and clear errors for what is 3D only.

mod common;

use hooke::error::HookeError;
use hooke::fem::{ElementKind, LinearTriangle};
use hooke::integrate::IntegratorConfig;
use hooke::material::{IsotropicMaterial, Material, MaterialModel, StressDerivative, Want};
use hooke::mesh::rectangle_mesh;
use hooke::model::MassKind;
use hooke::model::Model;
use nalgebra::{Matrix3, Vector3};

fn scene(text: &str, base: &std::path::Path) -> hooke::Result<hooke::scene::BuiltScene> {
    hooke::scene::Scene::from_text(text, "planar.toml", base.to_path_buf())?.build()
}

const PLATE: &str = r#"
dimension = 2
[simulation]
duration = 0.05
time_step = 0.005
[[bodies]]
mesh = { rectangle = { size = [0.4, 0.1], cells = [8, 2] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }
"#;

/// The plate with a top-level key added (top-level keys precede the tables).
fn top(key: &str) -> String {
    PLATE.replacen("dimension = 2\n", &format!("dimension = 2\n{key}\n"), 1)
}

/// The triangle's element stiffness is the in-plane block of the 3D one: its
/// forces and Hessian match finite differences of its energy, for a material
/// evaluated through the plane-strain embedding.
#[test]
fn the_plane_strain_triangle_has_consistent_derivatives() {
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [2, 1]).unwrap();
    let material = IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &common::parameters(1e3, 0.3));
    let model = Model::planar(mesh, vec![material; 4], MassKind::Lumped).unwrap();
    let mut rng = common::Lcg::new(3);
    let x: Vec<f64> = model
        .rest_positions()
        .iter()
        .map(|p| p * 1.1 + 0.05 * rng.next())
        .collect();
    common::assert_potential_derivatives(&model, &x, 1e-6, 1e-6, "triangles");
    // Its 6×6 stiffness at rest is symmetric positive semi-definite with three rigid modes.
    let geometry = LinearTriangle::geometry(&[Vector3::zeros(), Vector3::x(), Vector3::y()]).unwrap();
    let derivative = IsotropicMaterial::new(MaterialModel::Linear, &common::parameters(1e3, 0.3))
        .evaluate(&Matrix3::identity(), Want::Derivative { project: false })
        .first_piola_derivative
        .unwrap();
    let StressDerivative::Matrix(_) = derivative else {
        panic!("linear gives a matrix")
    };
    let mut packed = [0.0; 21];
    LinearTriangle::stiffness(&geometry, &derivative, &mut packed);
    let k = nalgebra::DMatrix::from_fn(6, 6, |p, q| packed[p.max(q) * (p.max(q) + 1) / 2 + p.min(q)]);
    let eigenvalues = k.symmetric_eigenvalues();
    let zero = eigenvalues
        .iter()
        .filter(|l| l.abs() < 1e-9 * eigenvalues.amax())
        .count();
    assert_eq!(zero, 3, "two translations and one rotation: {eigenvalues}");
    assert!(eigenvalues.min() > -1e-9 * eigenvalues.amax());
}

/// A free plate spinning in its plane keeps its angular momentum (about z)
/// under implicit midpoint, and its linear momentum under every integrator
/// that runs a 2D model.
#[test]
fn a_spinning_plate_keeps_its_momenta() {
    let text = PLATE.replace(
        "[[bodies]]",
        "[[bodies]]\nangular_velocity = 3.0\nvelocity = [0.2, -0.1]",
    );
    for name in ["im", "be", "vm", "se", "rk4", "si", "siere", "ere", "bdf2", "nm"] {
        let mut config = IntegratorConfig::from_name(name).unwrap();
        if name == "siere" {
            config.settings.insert("modes".into(), toml::Value::Integer(2));
        }
        let full = format!(
            "{}\n[integrator]\n{}",
            text,
            toml::to_string(&toml::Table::from(config)).unwrap()
        );
        let mut built = scene(&full, std::path::Path::new(".")).unwrap();
        let model = &built.model;
        let mut state = built.initial_state.clone();
        let (linear, angular) = model.momentum(&state.positions, &state.velocities);
        assert!(angular.z.abs() > 1e-3 && angular.x == 0.0);
        let steps = if matches!(name, "se" | "rk4") { 50 } else { 10 };
        let h = 0.05 / steps as f64;
        for _ in 0..steps {
            built.integrator.step(model, &mut state, h).unwrap();
        }
        let (linear_after, angular_after) = model.momentum(&state.positions, &state.velocities);
        assert!(
            (linear_after - linear).norm() < 1e-8 * linear.norm(),
            "{name}: linear momentum"
        );
        if name == "im" || name == "vm" {
            assert!(
                (angular_after.z - angular.z).abs() < 1e-6 * angular.z.abs(),
                "{name}: angular momentum {} → {}",
                angular.z,
                angular_after.z
            );
        }
    }
}

/// A 2D run writes triangle frames that read back and render.
#[test]
fn a_planar_run_writes_triangle_frames() {
    let directory = std::env::temp_dir().join(format!("hooke-planar-run-{}", std::process::id()));
    let text = format!(
        "{}[[pins]]\nselect = {{ plane = {{ point = [0, 0], normal = [-1, 0] }} }}\n[output]\ndirectory = \"{}\"\nplot = false\n",
        top("gravity = [0.0, -9.81]"),
        directory.display()
    );
    let scene = hooke::scene::Scene::from_text(&text, "planar.toml", ".".into()).unwrap();
    let mut built = scene.build().unwrap();
    let settings = scene.run_settings(None);
    let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    let (first, last) = (&outcome.records[0], outcome.records.last().unwrap());
    assert!(last.gravitational < first.gravitational, "the plate sags");
    let frame = hooke::output::read_frame(&directory.join("frame_0010.vtu")).unwrap();
    let mesh = frame.mesh.triangles().expect("a triangle frame");
    assert_eq!(mesh.triangle_count(), 32);
    assert!(frame.positions.iter().all(|p| p.z == 0.0));
    let image = hooke::output::render(
        &hooke::output::RenderInput {
            mesh: &frame.mesh,
            positions: &frame.positions,
            element_values: &frame.strain_energy_density,
            edges: &[],
            obstacles: &[],
        },
        &hooke::output::RenderSettings::default().with_view("top").unwrap(),
    )
    .unwrap();
    assert!(image.pixels.iter().any(|p| *p != image.pixels[0]), "the plate is drawn");
    std::fs::remove_dir_all(directory).ok();
}

/// Triangle meshes from Gmsh 4.1 (surface physical groups become labels) and OBJ.
#[test]
fn planar_meshes_are_read_from_gmsh_and_obj() {
    let directory = std::env::temp_dir().join(format!("hooke-planar-files-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 1 0\n3 0 0 0 1 1 0 1 5 0\n$EndEntities\n\
$Nodes\n1 4 1 4\n2 3 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n\
$Elements\n1 2 1 2\n2 3 2 2\n1 1 2 3\n2 1 4 3\n$EndElements\n";
    std::fs::write(directory.join("square.msh"), msh).unwrap();
    std::fs::write(
        directory.join("square.obj"),
        "v 0 0 7\nv 1 0 7\nv 1 1 7\nv 0 1 7\nf 1 2 3 4\n",
    )
    .unwrap();
    let gmsh = hooke::io::read_planar_mesh(&directory.join("square.msh")).unwrap();
    assert_eq!((gmsh.vertex_count(), gmsh.triangle_count()), (4, 2));
    assert_eq!(gmsh.labels, vec![5, 5]);
    let obj = hooke::io::read_planar_mesh(&directory.join("square.obj")).unwrap();
    assert_eq!(obj.triangle_count(), 2);
    assert!(obj.vertices.iter().all(|p| p.z == 0.0), "z is ignored");
    // As a scene body, the clockwise second Gmsh triangle is re-oriented with a note.
    let text = PLATE.replace(
        "mesh = { rectangle = { size = [0.4, 0.1], cells = [8, 2] } }",
        "mesh = { file = \"square.msh\" }",
    );
    let built = scene(&text, &directory).unwrap();
    assert!(
        built.notes.iter().any(|n| n.contains("re-oriented 1")),
        "{:?}",
        built.notes
    );
    assert!(hooke::io::read_planar_mesh(&directory.join("missing.mesh")).is_err());
    std::fs::remove_dir_all(directory).ok();
}

/// 2D scenes take 2-component vectors everywhere and refuse what exists in 3D only,
/// naming the key; 3D scenes refuse 2D vectors and meshes.
#[test]
fn dimension_mismatches_are_errors_that_name_the_key() {
    let with = |extra: &str| format!("{PLATE}{extra}");
    let cases = [
        (top("gravity = [0, 0, -9.81]"), "gravity"),
        (with("[[pins]]\nselect = { box = { min = [0, 0, 0], max = [1, 1, 1] } }\n"), "pins[0].select.box.min"),
        (with("[[pins]]\nselect = \"all\"\ncomponents = [\"z\"]\n"), "pins[0].components"),
        (with("[[pins]]\nselect = \"all\"\nmotion = { kind = \"rotation\", axis = [0, 0, 1], center = [0, 0], angular_velocity = 1.0 }\n"), "pins[0].motion.axis"),
        (with("[[forces]]\nselect = \"all\"\ntotal = [1, 0, 0]\n"), "forces[0].total"),
        (with("[[networks]]\nshape = { rope = { start = [0, 0, 0], end = [1, 0, 0], segments = 2 } }\nstiffness = 1.0\ndensity = 1.0\n"), "networks"),
        (with("[[obstacles]]\nshape = { sphere = { center = [0, 0, 0], radius = 1 } }\nstiffness = 1e3\n"), "obstacles[0].shape.sphere.center"),
        (PLATE.replace("rectangle = { size = [0.4, 0.1], cells = [8, 2] }", "box = { size = [1, 1, 1], cells = [1, 1, 1] }"), "bodies[0].mesh.box"),
        (PLATE.replace("[[bodies]]", "[[bodies]]\nangular_velocity = [0, 0, 1]"), "bodies[0].angular_velocity"),
        (PLATE.replace("dimension = 2", "dimension = 4"), "dimension"),
        (PLATE.replace("dimension = 2\n", ""), "bodies[0].mesh.rectangle"),
        (with("[[bodies.regions]]\nselect = { shape = { ball = { center = [0, 0, 0], radius = 1 } } }\nmaterial = { model = \"linear\", youngs_modulus = 1.0, poisson_ratio = 0.3, density = 1.0 }\n"), "bodies[0].regions[0].select.shape"),
    ];
    for (text, key) in cases {
        match scene(&text, std::path::Path::new(".")) {
            Err(HookeError::Scene { key: found, reason }) => assert_eq!(found, key, "{reason}"),
            other => panic!("{key}: expected a scene error, got {:?}", other.err()),
        }
    }
    // MSSI (springs) is 3D only; the registry check says so for a 2D model.
    let text = with("[integrator]\nkind = \"mssi\"\n");
    assert!(scene(&text, std::path::Path::new(".")).is_err());
}

/// 2D obstacles and materials: a plate dropped onto a floor line rests on it;
/// a 3×3 anisotropic tensor and a 2-component fibre direction are accepted.
#[test]
fn planar_contact_and_anisotropic_materials() {
    let text = top("gravity = [0, -9.81]")
        .replace(
            r#"material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }"#,
            r#"material = { model = "anisotropic_linear", corotated = true, density = 1000.0, elasticity = [[3e5, 1e5, 0], [1e5, 2e5, 0], [0, 0, 5e4]], fibre = { direction = [1, 1], stiffness = 1e4 } }"#,
        )
        + "[[obstacles]]\nshape = { box = { min = [-1, -1], max = [1, 0] } }\nstiffness = 1e5\n[integrator]\nkind = \"be\"\n";
    let mut built = scene(&text, std::path::Path::new(".")).unwrap();
    let mut state = built.initial_state.clone();
    for _ in 0..40 {
        built.integrator.step(&built.model, &mut state, 0.005).unwrap();
    }
    let lowest = state.positions.chunks(2).map(|p| p[1]).fold(f64::INFINITY, f64::min);
    assert!(
        lowest < 0.0 && lowest > -0.01,
        "the plate rests on the floor line ({lowest})"
    );
    assert!(built.model.materials()[0].name().contains("fibre"));
}
