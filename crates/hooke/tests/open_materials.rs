//! The materials beyond the isotropic family: linear anisotropic (plain and
//! co-rotated) and the fibre term. Each is checked against finite differences,
//! against the isotropic models it must reduce to, for invariance and for its
//! PSD projection; the scene tables that make them are checked for bad input.

mod common;

use common::Lcg;
use hooke::material::registry::{self, MaterialContext, MaterialSource};
use hooke::material::{
    derivative_matrix, vec_index, AnisotropicLinear, ElasticityTensor, IsotropicMaterial, Lame, Material,
    MaterialModel, MaterialParameters, Matrix6, Want, WithFibre,
};
use nalgebra::{Matrix3, SymmetricEigen, Vector3};

const LAME: Lame = Lame { mu: 1.3, lambda: 4.7 };

/// A random symmetric positive definite 6×6 Voigt tensor with entries of order 1–10.
fn random_tensor(rng: &mut Lcg) -> ElasticityTensor {
    let g = Matrix6::from_fn(|_, _| rng.next());
    ElasticityTensor {
        voigt: g * g.transpose() + Matrix6::identity() * 2.0 + ElasticityTensor::isotropic(&LAME).voigt,
    }
}

/// Deformation gradients near and far from identity, one of them inverted.
fn gradients(rng: &mut Lcg) -> Vec<Matrix3<f64>> {
    let mut list: Vec<Matrix3<f64>> = [0.05, 0.3]
        .iter()
        .flat_map(|&scale| (0..4).map(move |_| scale))
        .map(|scale| rng.rotation() * (Matrix3::identity() + rng.matrix(scale)))
        .collect();
    list.push(Matrix3::new(0.9, 0.1, 0.0, -0.05, 1.1, 0.2, 0.1, 0.0, -0.6));
    list
}

fn energy(material: &dyn Material, f: &Matrix3<f64>) -> f64 {
    material.evaluate(f, Want::Energy).energy_density
}

fn stress(material: &dyn Material, f: &Matrix3<f64>) -> Matrix3<f64> {
    material.evaluate(f, Want::Stress).first_piola
}

/// P against central differences of ψ, and ∂P/∂F against central differences of P.
fn check_derivatives(material: &dyn Material, f: &Matrix3<f64>, what: &str) {
    let h = 1e-6;
    let p = stress(material, f);
    let c = derivative_matrix(material, f, false);
    for (row, col) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
        let mut plus = *f;
        let mut minus = *f;
        plus[(row, col)] += h;
        minus[(row, col)] -= h;
        let numeric = (energy(material, &plus) - energy(material, &minus)) / (2.0 * h);
        assert!(
            (numeric - p[(row, col)]).abs() < 1e-6 * p.norm().max(1.0),
            "{what} at F = {f}: P[{row},{col}] = {} vs {numeric}",
            p[(row, col)]
        );
        let numeric = (stress(material, &plus) - stress(material, &minus)) / (2.0 * h);
        for (a, b) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
            let analytic = c[(vec_index(a, b), vec_index(row, col))];
            assert!(
                (numeric[(a, b)] - analytic).abs() < 1e-6 * c.norm().max(1.0),
                "{what} at F = {f}: ∂P[{a},{b}]/∂F[{row},{col}] = {analytic} vs {}",
                numeric[(a, b)]
            );
        }
    }
}

fn assert_same_material(a: &dyn Material, b: &dyn Material, f: &Matrix3<f64>, what: &str) {
    let (ea, eb) = (energy(a, f), energy(b, f));
    assert!((ea - eb).abs() <= 1e-10 * ea.abs().max(1.0), "{what}: ψ {ea} vs {eb}");
    let (pa, pb) = (stress(a, f), stress(b, f));
    assert!(
        (pa - pb).norm() <= 1e-10 * pa.norm().max(1.0),
        "{what}: P\n{pa}\nvs\n{pb}"
    );
    let (ca, cb) = (derivative_matrix(a, f, false), derivative_matrix(b, f, false));
    assert!(
        (ca - cb).norm() <= 1e-9 * ca.norm().max(1.0),
        "{what}: ∂P/∂F\n{ca}\nvs\n{cb}"
    );
}

#[test]
fn an_isotropic_tensor_reproduces_linear_and_corotational_elasticity() {
    let mut rng = Lcg::new(1);
    let tensor = ElasticityTensor::isotropic(&LAME);
    for (corotated, model) in [(false, MaterialModel::Linear), (true, MaterialModel::Corotational)] {
        let anisotropic = AnisotropicLinear {
            tensor,
            corotated,
            density: 1.0,
        };
        let isotropic = IsotropicMaterial {
            model,
            lame: LAME,
            density: 1.0,
        };
        for f in gradients(&mut rng) {
            assert_same_material(&anisotropic, &isotropic, &f, &format!("{model:?}"));
        }
    }
}

#[test]
fn anisotropic_derivatives_match_finite_differences() {
    let mut rng = Lcg::new(2);
    for corotated in [false, true] {
        for _ in 0..3 {
            let material = AnisotropicLinear {
                tensor: random_tensor(&mut rng),
                corotated,
                density: 1.0,
            };
            for f in gradients(&mut rng) {
                check_derivatives(&material, &f, &format!("anisotropic (co-rotated: {corotated})"));
            }
        }
    }
}

#[test]
fn the_co_rotated_tensor_is_rotation_invariant_and_the_plain_one_is_not() {
    let mut rng = Lcg::new(3);
    let tensor = random_tensor(&mut rng);
    let corotated = AnisotropicLinear {
        tensor,
        corotated: true,
        density: 1.0,
    };
    let plain = AnisotropicLinear {
        corotated: false,
        ..corotated
    };
    assert!(corotated.capabilities().rotation_invariant && !plain.capabilities().rotation_invariant);
    for f in gradients(&mut rng) {
        let q = rng.rotation();
        let (a, b) = (energy(&corotated, &f), energy(&corotated, &(q * f)));
        assert!((a - b).abs() <= 1e-10 * a.max(1.0), "ψ(QF) = {b}, ψ(F) = {a}");
    }
    assert!(energy(&plain, &rng.rotation()) > 1e-3);
    // Anisotropy: stretching along x and along y cost differently for a tensor with C₁₁ ≠ C₂₂.
    let mut voigt = ElasticityTensor::isotropic(&LAME).voigt;
    voigt[(0, 0)] *= 10.0;
    let stiff_x = AnisotropicLinear {
        tensor: ElasticityTensor { voigt },
        corotated: true,
        density: 1.0,
    };
    let along_x = energy(&stiff_x, &Matrix3::from_diagonal(&Vector3::new(1.1, 1.0, 1.0)));
    let along_y = energy(&stiff_x, &Matrix3::from_diagonal(&Vector3::new(1.0, 1.1, 1.0)));
    assert!(along_x > 5.0 * along_y, "{along_x} vs {along_y}");
}

#[test]
fn projected_anisotropic_and_fibre_derivatives_are_positive_semidefinite() {
    let mut rng = Lcg::new(4);
    let compressed = Matrix3::from_diagonal(&Vector3::new(0.5, 0.6, 1.3)) * rng.rotation();
    let corotated = AnisotropicLinear {
        tensor: random_tensor(&mut rng),
        corotated: true,
        density: 1.0,
    };
    let fibre = WithFibre {
        base: IsotropicMaterial::shared(
            MaterialModel::StableNeoHookean,
            &MaterialParameters {
                youngs_modulus: 1e3,
                poisson_ratio: 0.3,
                density: 1.0,
            },
        ),
        direction: Vector3::new(1.0, 1.0, 0.0).normalize(),
        stiffness: 1e4,
    };
    for material in [&corotated as &dyn Material, &fibre] {
        let unprojected = derivative_matrix(material, &compressed, false);
        assert!(
            SymmetricEigen::new(unprojected).eigenvalues.min() < 0.0,
            "{}: the test state must be indefinite",
            material.name()
        );
        let projected = derivative_matrix(material, &compressed, true);
        let lowest = SymmetricEigen::new(projected).eigenvalues.min();
        assert!(lowest >= -1e-9 * projected.norm(), "{}: {lowest:e}", material.name());
    }
}

#[test]
fn the_fibre_term_has_consistent_derivatives_and_resists_stretch_along_its_fibre() {
    let mut rng = Lcg::new(5);
    let base = IsotropicMaterial::shared(
        MaterialModel::Corotational,
        &MaterialParameters {
            youngs_modulus: 10.0,
            poisson_ratio: 0.3,
            density: 1.0,
        },
    );
    let material = WithFibre {
        base: base.clone(),
        direction: Vector3::new(0.3, -0.5, 0.8).normalize(),
        stiffness: 7.0,
    };
    for f in gradients(&mut rng) {
        check_derivatives(&material, &f, "corotational + fibre");
    }
    assert!(energy(&material, &Matrix3::identity()).abs() < 1e-14);
    // Stretching by s along the fibre adds (κ/2)(s − 1)²; across it, nothing.
    let d = material.direction;
    let s = 1.2;
    let stretch_along = Matrix3::identity() + d * d.transpose() * (s - 1.0);
    let extra = energy(&material, &stretch_along) - energy(base.as_ref(), &stretch_along);
    assert!((extra - 0.5 * 7.0 * 0.04).abs() < 1e-12, "{extra}");
    let across = d.cross(&Vector3::x()).normalize();
    let stretch_across = Matrix3::identity() + across * across.transpose() * (s - 1.0);
    let extra = energy(&material, &stretch_across) - energy(base.as_ref(), &stretch_across);
    assert!(extra.abs() < 1e-12, "{extra}");
    assert!(material.name().contains("fibre"));
}

fn context<'a>(key: &'a str, dimension: usize, base: &'a std::path::Path) -> MaterialContext<'a> {
    MaterialContext {
        key,
        dimension,
        base_directory: base,
    }
}

fn parse(text: &str, dimension: usize) -> hooke::Result<MaterialSource> {
    let table: toml::Table = toml::from_str(text).unwrap();
    registry::parse(&table, &context("material", dimension, std::path::Path::new(".")))
}

#[test]
fn material_tables_build_every_kind_and_refuse_bad_values() {
    let uniform = |text: &str| match parse(text, 3).unwrap() {
        MaterialSource::Uniform(m) => m,
        other => panic!("{other:?}"),
    };
    let iso = uniform(
        r#"model = "neo_hookean"
youngs_modulus = 1e5
poisson_ratio = 0.3
density = 1000.0"#,
    );
    assert_eq!(iso.name(), "neo_hookean");
    assert_eq!(iso.density(), 1000.0);
    assert!(!iso.capabilities().defined_under_inversion);
    let aniso = uniform(
        r#"model = "anisotropic_linear"
corotated = true
density = 500.0
elasticity = [[10, 1, 1, 0, 0, 0], [1, 10, 1, 0, 0, 0], [1, 1, 10, 0, 0, 0], [0, 0, 0, 4, 0, 0], [0, 0, 0, 0, 4, 0], [0, 0, 0, 0, 0, 4]]
fibre = { direction = [0, 0, 2], stiffness = 3.0 }"#,
    );
    assert!(aniso.name().contains("anisotropic_linear") && aniso.name().contains("fibre"));
    assert!(aniso.capabilities().rotation_invariant);
    // The fibre direction was normalised: stretching z by 1.1 adds 3/2 · 0.01.
    let stretch = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, 1.1));
    let base_energy = 0.5 * 10.0 * 0.01;
    assert!((energy(aniso.as_ref(), &stretch) - base_energy - 1.5 * 0.01).abs() < 1e-12);

    let error_of = |text: &str, dimension: usize| parse(text, dimension).unwrap_err().to_string();
    let cases = [
        (r#"model = "jelly""#, "unknown model"),
        (
            r#"model = "linear"
youngs_modulus = -1.0
poisson_ratio = 0.3
density = 1.0"#,
            "youngs_modulus",
        ),
        (
            r#"model = "anisotropic_linear"
density = 1.0"#,
            "exactly one of",
        ),
        (
            r#"model = "anisotropic_linear"
density = 1.0
elasticity = [[1, 0], [0, 1]]"#,
            "6 rows of 6",
        ),
        (
            r#"model = "anisotropic_linear"
density = 1.0
elasticity = [[1, 2, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]"#,
            "symmetric",
        ),
        (
            r#"model = "anisotropic_linear"
density = 1.0
elasticity = [[1, 2, 0, 0, 0, 0], [2, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]"#,
            "positive definite",
        ),
        (
            r#"model = "anisotropic_linear"
density = 0.0
elasticity = [[1]]"#,
            "density",
        ),
        (
            r#"model = "linear"
youngs_modulus = 1.0
poisson_ratio = 0.3
density = 1.0
fibre = { direction = [0, 0, 0], stiffness = 1.0 }"#,
            "fibre.direction",
        ),
        (
            r#"model = "linear"
youngs_modulus = 1.0
poisson_ratio = 0.3
density = 1.0
fibre = { direction = [1, 0], stiffness = 1.0 }"#,
            "3 components",
        ),
        (
            r#"model = "linear"
youngs_modulus = 1.0
poisson_ratio = 0.3
density = 1.0
fibre = { direction = [1, 0, 0], stiffness = -1.0 }"#,
            "fibre.stiffness",
        ),
    ];
    for (text, expected) in cases {
        let message = error_of(text, 3);
        assert!(message.contains(expected), "{text}\n→ {message}");
    }
    // In 2D the tensor is 3×3 (xx, yy, xy).
    assert!(parse(
        r#"model = "anisotropic_linear"
density = 1.0
elasticity = [[4, 1, 0], [1, 4, 0], [0, 0, 2]]"#,
        2
    )
    .is_ok());
    assert!(error_of(
        r#"model = "anisotropic_linear"
density = 1.0
elasticity = [[4, 1, 0], [1, 4, 0], [0, 0, 2]]"#,
        3
    )
    .contains("6 rows"));
}

#[test]
fn per_element_tensor_files_are_read_and_their_errors_name_the_line() {
    let directory = std::env::temp_dir().join(format!("hooke-tensors-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let row = |e: usize, c11: f64| {
        let mut values = [0.0; 21];
        // Upper triangle of a diagonal-dominant tensor: c11 c12 … c16 c22 … c66.
        let mut k = 0;
        for i in 0..6 {
            for j in i..6 {
                values[k] = if i == j {
                    c11
                } else if i < 3 && j < 3 {
                    1.0
                } else {
                    0.0
                };
                k += 1;
            }
        }
        format!(
            "{e},{}",
            values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
        )
    };
    let good = format!(
        "# coarse tensors\nelement,c11,...\n{}\n{}\n",
        row(1, 20.0),
        row(0, 10.0)
    );
    std::fs::write(directory.join("good.csv"), good).unwrap();
    let table: toml::Table = toml::from_str(
        r#"model = "anisotropic_linear"
elasticity_file = "good.csv"
density = 1.0"#,
    )
    .unwrap();
    let source = registry::parse(&table, &context("material", 3, &directory)).unwrap();
    let stiffness =
        |e: usize| derivative_matrix(source.for_element(e).unwrap().as_ref(), &Matrix3::identity(), false)[(0, 0)];
    assert_eq!((stiffness(0), stiffness(1)), (10.0, 20.0));
    assert!(source
        .for_element(2)
        .unwrap_err()
        .to_string()
        .contains("no tensor for element 2"));

    for (name, text, expected) in [
        (
            "twice.csv",
            format!("{}\n{}\n", row(0, 10.0), row(0, 10.0)),
            "line 2: element 0 appears twice",
        ),
        ("short.csv", "0,1,2,3\n".to_string(), "line 1"),
        ("word.csv", format!("{}\n0,x\n", row(1, 10.0)), "line 2"),
        ("negative.csv", row(0, -10.0), "positive definite"),
    ] {
        std::fs::write(directory.join(name), text).unwrap();
        let mut table = table.clone();
        table.insert("elasticity_file".into(), toml::Value::String(name.into()));
        let message = registry::parse(&table, &context("material", 3, &directory))
            .unwrap_err()
            .to_string();
        assert!(message.contains(name) && message.contains(expected), "{message}");
    }
    std::fs::remove_dir_all(directory).ok();
}

/// A scene body of anisotropic material from a per-element file, with a region
/// overriding part of it: every element gets the right material.
#[test]
fn scenes_assign_per_element_tensors_and_region_overrides() {
    let directory = std::env::temp_dir().join(format!("hooke-tensor-scene-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    // A 2×1×1 box of 6-tet cells: 12 elements; the file gives element e the stiffness 10 + e.
    let mut rows = String::new();
    for e in 0..12 {
        let c = 10.0 + e as f64;
        rows.push_str(&format!("{e},{c},1,1,0,0,0,{c},1,0,0,0,{c},0,0,0,{c},0,0,{c},0,{c}\n"));
    }
    std::fs::write(directory.join("tensors.csv"), rows).unwrap();
    let text = r#"
[simulation]
duration = 0.01
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.2, 0.1, 0.1], cells = [2, 1, 1] } }
material = { model = "anisotropic_linear", elasticity_file = "tensors.csv", corotated = true, density = 1000.0 }
[[bodies.regions]]
select = { box = { min = [0.1, -1, -1], max = [1, 1, 1] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
"#;
    let scene = hooke::scene::Scene::from_text(text, "tensors.toml", directory.clone()).unwrap();
    let built = scene.build().unwrap();
    let mesh = built.model.mesh();
    for (e, material) in built.model.materials().iter().enumerate() {
        if mesh.centroid(e).x > 0.1 {
            assert_eq!(material.name(), "stable_neo_hookean");
        } else {
            let c11 = derivative_matrix(material.as_ref(), &Matrix3::identity(), false)[(0, 0)];
            assert_eq!(c11, 10.0 + e as f64, "element {e}");
        }
    }
    // A model's unknown key is reported with its line.
    let bad = text.replace("corotated = true", "corotated = true, stiffness = 3");
    let error = hooke::scene::Scene::from_text(&bad, "tensors.toml", directory.clone()).unwrap_err();
    assert!(
        error.to_string().contains("line 7") && error.to_string().contains("stiffness"),
        "{error}"
    );
    std::fs::remove_dir_all(directory).ok();
}

/// Capability queries, not model names: the co-rotational reversible
/// integrator accepts any co-rotated quadratic material, and an anisotropic
/// tensor equal to the isotropic one moves exactly as `corotational` does.
#[test]
fn corotational_reversible_takes_any_corotated_quadratic_material() {
    use hooke::integrate::{CorotationalReversible, Integrator};
    let mesh = common::bar([0.3, 0.05, 0.05], [6, 1, 1], hooke::mesh::TetsPerHex::Six);
    let isotropic = IsotropicMaterial::shared(MaterialModel::Corotational, &common::parameters(1e5, 0.3));
    let lame = common::parameters(1e5, 0.3).lame();
    let anisotropic: hooke::material::MaterialRef = std::sync::Arc::new(AnisotropicLinear {
        tensor: ElasticityTensor::isotropic(&lame),
        corotated: true,
        density: 1000.0,
    });
    let run = |material: hooke::material::MaterialRef| {
        let count = mesh.tet_count();
        let model =
            hooke::model::Model::new(mesh.clone(), vec![material; count], hooke::model::MassKind::Lumped).unwrap();
        let mut state = model.initial_state();
        for (v, p) in model.mesh().vertices().iter().enumerate() {
            state.velocities[3 * v + 2] = p.x * p.x;
        }
        let mut integrator = CorotationalReversible::default();
        for _ in 0..20 {
            integrator.step(&model, &mut state, 2e-3).unwrap();
        }
        state.positions
    };
    let (a, b) = (run(isotropic), run(anisotropic));
    let difference = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert!(difference < 1e-12, "{difference:e}");
    // A material that is not a co-rotated quadratic is refused, by name.
    let snh = IsotropicMaterial::shared(MaterialModel::StableNeoHookean, &common::parameters(1e5, 0.3));
    let model = hooke::model::Model::new(
        mesh.clone(),
        vec![snh; mesh.tet_count()],
        hooke::model::MassKind::Lumped,
    )
    .unwrap();
    let error = CorotationalReversible::default().check(&model).unwrap_err().to_string();
    assert!(error.contains("stable_neo_hookean"), "{error}");
}
