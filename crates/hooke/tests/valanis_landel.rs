//! Materials in Valanis–Landel form (Liu 2018 thesis, §7.1): the closed-form models
//! rebuilt from a, b, c agree with Hooke's own; spline materials have
//! consistent derivatives; splines interpolate smoothly; scenes name them.

mod common;

use common::Lcg;
use hooke::material::valanis_landel::{Profile, Spline, ValanisLandel, ValanisLandelEnergy};
use hooke::material::{derivative_matrix, evaluate, Lame, Material, MaterialModel, Want};
use nalgebra::Matrix3;

const LAME: Lame = Lame { mu: 3e5, lambda: 1.2e6 };

fn material(energy: ValanisLandelEnergy) -> ValanisLandel {
    ValanisLandel {
        name: "test".into(),
        energy,
        density: 1000.0,
    }
}

fn samples(inverted: bool) -> Vec<Matrix3<f64>> {
    let mut rng = Lcg::new(11);
    (0..60)
        .map(|k| {
            let mut f = rng.rotation() * (Matrix3::identity() + rng.matrix(0.35)) * rng.rotation();
            if inverted && k % 3 == 0 {
                f.column_mut(1).neg_mut();
            }
            f
        })
        .filter(|f| inverted || f.determinant() > 0.2)
        .collect()
}

/// Neo-Hookean, St. Venant–Kirchhoff and fixed corotated, written as a, b, c,
/// give Hooke's closed forms' ψ, P and ∂P/∂F.
#[test]
fn closed_forms_rebuilt_from_a_b_c_agree() {
    for (model, energy) in [
        (MaterialModel::NeoHookean, ValanisLandelEnergy::neo_hookean(&LAME)),
        (
            MaterialModel::StVenantKirchhoff,
            ValanisLandelEnergy::st_venant_kirchhoff(&LAME, 0.0),
        ),
        (
            MaterialModel::FixedCorotational,
            ValanisLandelEnergy::fixed_corotated(&LAME),
        ),
    ] {
        let ours = material(energy);
        for f in samples(false) {
            let expected = evaluate(model, &f, &LAME, Want::Derivative { project: false });
            let got = ours.evaluate(&f, Want::Derivative { project: false });
            let scale = LAME.lambda * (1.0 + f.norm_squared()).powi(2);
            assert!(
                (got.energy_density - expected.energy_density).abs() < 1e-9 * scale,
                "{model:?} ψ"
            );
            assert!(
                (got.first_piola - expected.first_piola).amax() < 1e-9 * scale,
                "{model:?} P"
            );
            let (c_got, c_expected) = (
                derivative_matrix(&ours, &f, false),
                hooke::material::first_piola_derivative(model, &f, &LAME, false),
            );
            assert!((c_got - c_expected).amax() < 1e-8 * scale, "{model:?} ∂P/∂F");
        }
    }
}

/// P is the derivative of ψ and ∂P/∂F that of P (central differences) for
/// the spline materials, the polynomial one, and St. Venant–Kirchhoff with its
/// anti-inversion term, at compressed, stretched and inverted F.
#[test]
fn derivatives_match_finite_differences() {
    let custom = ValanisLandelEnergy {
        a: Profile::Spline(Spline::new(&[[0.3, 2e5], [0.8, 1e4], [1.0, 0.0], [1.3, 3e4], [2.0, 4e5]], "a").unwrap()),
        b: Profile::Zero,
        c: Profile::Zero,
    };
    let energies = [
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 2.0, 1.0).unwrap(),
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 1.0, 2.0).unwrap(),
        ValanisLandelEnergy::polynomial(LAME.mu),
        ValanisLandelEnergy::st_venant_kirchhoff(&LAME, 1e6),
        custom,
    ];
    let h = 1e-6;
    for (n, energy) in energies.into_iter().enumerate() {
        let m = material(energy);
        let inverted = m.capabilities().defined_under_inversion;
        for f in samples(inverted) {
            let at = |f: &Matrix3<f64>| m.evaluate(f, Want::Stress);
            let here = m.evaluate(&f, Want::Derivative { project: false });
            let stiffness = derivative_matrix(&m, &f, false);
            let scale = here.first_piola.norm().max(stiffness.norm()).max(1.0);
            for k in 0..9 {
                let (row, col) = (k % 3, k / 3);
                let mut plus = f;
                let mut minus = f;
                plus[(row, col)] += h;
                minus[(row, col)] -= h;
                let dpsi = (at(&plus).energy_density - at(&minus).energy_density) / (2.0 * h);
                assert!(
                    (dpsi - here.first_piola[(row, col)]).abs() < 1e-5 * scale,
                    "material {n}: P[{row},{col}] at {f}"
                );
                let dp = (at(&plus).first_piola - at(&minus).first_piola) / (2.0 * h);
                for j in 0..9 {
                    let analytic = stiffness[(
                        hooke::material::vec_index(j % 3, j / 3),
                        hooke::material::vec_index(row, col),
                    )];
                    assert!(
                        (dp[(j % 3, j / 3)] - analytic).abs() < 1e-5 * scale,
                        "material {n}: ∂P/∂F at {f}"
                    );
                }
            }
        }
    }
}

/// Many elements at once (the trace form and the SVDs in vector lanes)
/// give each element's ψ and P bit for bit as one at a time, for energies
/// and stresses: near-rest elements the trace form serves, large strains,
/// inverted, flat, needle-like and non-finite F mixed in each run of
/// sixteen, and a count that leaves partial runs.
#[test]
fn many_elements_at_once_equal_one_at_a_time() {
    let mut rng = Lcg::new(29);
    let mut f: Vec<Matrix3<f64>> = (0..45)
        .map(|k| {
            let strain = [0.02, 0.04, 0.35][k % 3];
            rng.rotation() * (Matrix3::identity() + rng.matrix(strain)) * rng.rotation()
        })
        .collect();
    f[5] = Matrix3::zeros();
    f[7] = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.2, 0.8, 0.0));
    f[11] = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.95));
    f[20][(1, 2)] = f64::NAN;
    f[26] = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.2, 2e-3, 2e-3));
    f[33] = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, 1e-5));
    for energy in [
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 2.0, 1.0).unwrap(),
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 1.0, 2.0).unwrap(),
        ValanisLandelEnergy::polynomial(LAME.mu),
        ValanisLandelEnergy::st_venant_kirchhoff(&LAME, 1e6),
    ] {
        let m = material(energy);
        for count in [f.len(), 37, 9] {
            let f = &f[..count];
            for want in [Want::Energy, Want::Stress] {
                let mut energies = vec![0.0; f.len()];
                let mut stresses = vec![Matrix3::zeros(); f.len()];
                m.evaluate_stresses(f, want, &mut energies, &mut stresses);
                for (i, f) in f.iter().enumerate() {
                    let alone = m.evaluate(f, want);
                    assert_eq!(energies[i].to_bits(), alone.energy_density.to_bits(), "element {i}");
                    for k in 0..9 {
                        assert_eq!(stresses[i][k].to_bits(), alone.first_piola[k].to_bits(), "element {i}");
                    }
                }
            }
        }
    }
}

/// The trace form (powers of the stretch U, no SVD) serves the polynomial
/// material wherever F is not inverted, and a spline material while F's
/// stretches stay in one piece of its a (rest is mid-piece for spline A and
/// B); where it serves it gives the SVD's ψ and P to rounding, so nothing
/// jumps where an element passes from one form to the other.
#[test]
fn the_trace_form_agrees_with_the_svd() {
    use hooke::material::StretchEnergy;
    let uneven = ValanisLandelEnergy {
        a: Profile::Spline(Spline::new(&[[0.3, 2e5], [0.8, 1e4], [1.15, 1e3], [1.6, 3e4], [2.0, 4e5]], "a").unwrap()),
        b: Profile::Zero,
        c: Profile::LogPolynomial(vec![0.0, 0.0, 1e5]),
    };
    let energies = [
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 2.0, 1.0).unwrap(),
        ValanisLandelEnergy::neo_hookean_spline(&LAME, 1.0, 2.0).unwrap(),
        ValanisLandelEnergy::polynomial(LAME.mu),
        uneven,
    ];
    let mut rng = Lcg::new(3);
    let mut deformations: Vec<Matrix3<f64>> = (0..200)
        .map(|k| {
            let strain = [0.01, 0.04, 0.08, 0.3][k % 4];
            rng.rotation() * (Matrix3::identity() + rng.matrix(strain)) * rng.rotation()
        })
        .collect();
    deformations.extend(samples(false));
    for (n, energy) in energies.into_iter().enumerate() {
        let m = material(energy.clone());
        let (mut served, mut not_served) = (0, 0);
        for f in &deformations {
            match energy.direct(f, &LAME, true) {
                Some(_) => served += 1,
                None => not_served += 1,
            }
            // Stress alone takes the trace form where it serves; with the
            // derivative, the SVD always.
            let fast = m.evaluate(f, Want::Stress);
            let svd = m.evaluate(f, Want::Derivative { project: false });
            let scale = svd.first_piola.norm().max(LAME.mu * 1e-3);
            assert!(
                (fast.energy_density - svd.energy_density).abs() < 1e-11 * scale,
                "material {n}: ψ {} against {} at {f}",
                fast.energy_density,
                svd.energy_density
            );
            assert!(
                (fast.first_piola - svd.first_piola).amax() < 1e-10 * scale,
                "material {n}: P at {f}"
            );
        }
        assert!(
            served > 50,
            "material {n}: the trace form served {served} of {}",
            deformations.len()
        );
        if n != 2 {
            assert!(not_served > 10, "material {n}: every F was served");
        }
    }
    // Spline A's middle piece is [0.9, 1.1]: across 1.1 the SVD serves.
    let spline_a = ValanisLandelEnergy::neo_hookean_spline(&LAME, 2.0, 1.0).unwrap();
    let stretched = |x: f64| Matrix3::from_diagonal(&nalgebra::Vector3::new(x, 1.0, 0.99));
    assert!(spline_a.direct(&stretched(1.09), &LAME, true).is_some());
    assert!(spline_a.direct(&stretched(1.11), &LAME, true).is_none());
    let inverted = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.9));
    assert!(ValanisLandelEnergy::polynomial(LAME.mu)
        .direct(&inverted, &LAME, true)
        .is_none());
}

/// Lamé parameters of E = 1 and Poisson ratio ν.
fn lame_of(nu: f64) -> Lame {
    Lame {
        mu: 0.5 / (1.0 + nu),
        lambda: nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
    }
}

/// Spline A and B are stable at rest for every Poisson ratio: ∂P/∂F at F = I
/// has the three zero modes of rotation and six positive ones, none softer
/// than half Neo-Hookean's, and a small dilation or compression stores
/// energy. (Doubling the whole of Neo-Hookean's c above J = 1 once made B
/// unstable at rest below ν ≈ 0.45.)
#[test]
fn spline_materials_are_stable_at_rest_for_every_poisson_ratio() {
    let sorted_eigenvalues = |m: &ValanisLandel| {
        let mut values: Vec<f64> = derivative_matrix(m, &Matrix3::identity(), false)
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .copied()
            .collect();
        values.sort_by(f64::total_cmp);
        values
    };
    for nu in [0.0, 0.1, 0.2, 0.3, 0.4, 0.45, 0.49] {
        let lame = lame_of(nu);
        let neo_hookean = sorted_eigenvalues(&material(ValanisLandelEnergy::neo_hookean(&lame)));
        for (name, compression, tension) in [("A", 2.0, 1.0), ("B", 1.0, 2.0)] {
            let m = material(ValanisLandelEnergy::neo_hookean_spline(&lame, compression, tension).unwrap());
            let values = sorted_eigenvalues(&m);
            assert!(
                values[..3].iter().all(|v| v.abs() < 1e-6 * lame.mu),
                "{name} at ν = {nu}: rotations {values:?}"
            );
            for k in 3..9 {
                assert!(
                    values[k] > 0.5 * neo_hookean[k],
                    "{name} at ν = {nu}: mode {k} {} against Neo-Hookean {}",
                    values[k],
                    neo_hookean[k]
                );
            }
            for scale in [0.99, 1.01] {
                let psi = m.evaluate(&(Matrix3::identity() * scale), Want::Energy).energy_density;
                assert!(psi > 0.0, "{name} at ν = {nu}: ψ({scale} I) = {psi}");
            }
        }
    }
}

/// Uniaxial stress at stretch s with the lateral stretch t left free (the
/// t minimising ψ(diag(s, t, t)), by golden sections), by central differences
/// of that energy in s.
fn uniaxial_stress(m: &ValanisLandel, s: f64) -> f64 {
    let relaxed = |s: f64| {
        let psi = |t: f64| {
            m.evaluate(&Matrix3::from_diagonal(&nalgebra::Vector3::new(s, t, t)), Want::Energy)
                .energy_density
        };
        let (mut low, mut high) = (0.3, 2.0);
        let ratio = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..200 {
            let (left, right) = (high - ratio * (high - low), low + ratio * (high - low));
            if psi(left) < psi(right) {
                high = right;
            } else {
                low = left;
            }
        }
        psi(0.5 * (low + high))
    };
    let h = 1e-4;
    (relaxed(s + h) - relaxed(s - h)) / (2.0 * h)
}

/// Spline A resists compression more than Neo-Hookean, spline B tension
/// (as the Liu 2018 thesis, Fig. 7.1, defines them), pulled or pushed along one axis and free across.
#[test]
fn spline_a_resists_compression_and_spline_b_tension_more() {
    for nu in [0.0, 0.3, 0.45] {
        let lame = lame_of(nu);
        let neo_hookean = material(ValanisLandelEnergy::neo_hookean(&lame));
        let a = material(ValanisLandelEnergy::neo_hookean_spline(&lame, 2.0, 1.0).unwrap());
        let b = material(ValanisLandelEnergy::neo_hookean_spline(&lame, 1.0, 2.0).unwrap());
        let (compressed, stretched) = (uniaxial_stress(&neo_hookean, 0.7), uniaxial_stress(&neo_hookean, 1.3));
        assert!(compressed < 0.0 && stretched > 0.0);
        let a_compressed = uniaxial_stress(&a, 0.7);
        let b_stretched = uniaxial_stress(&b, 1.3);
        assert!(
            a_compressed < 1.4 * compressed,
            "ν = {nu}: A at 0.7 {a_compressed}, Neo-Hookean {compressed}"
        );
        assert!(
            b_stretched > 1.6 * stretched,
            "ν = {nu}: B at 1.3 {b_stretched}, Neo-Hookean {stretched}"
        );
        // The other side stays within a third of Neo-Hookean (the lateral
        // stretches of a pulled bar are compressed, so A stiffens a little there).
        let a_stretched = uniaxial_stress(&a, 1.3);
        assert!(
            (a_stretched - stretched).abs() < 0.35 * stretched,
            "ν = {nu}: A at 1.3 {a_stretched}, Neo-Hookean {stretched}"
        );
        let b_compressed = uniaxial_stress(&b, 0.7);
        assert!(
            (b_compressed - compressed).abs() < 0.35 * compressed.abs(),
            "ν = {nu}: B at 0.7 {b_compressed}, Neo-Hookean {compressed}"
        );
    }
}

/// A spline passes through its control points, has zero curvature at its
/// ends and continues along its end tangents, reproduces a straight line
/// exactly, and refuses stretches that do not increase.
#[test]
fn splines_interpolate_smoothly() {
    let points = [[0.5, 1.0], [0.9, -0.2], [1.0, 0.0], [1.4, 0.7], [2.0, 3.0]];
    let spline = Profile::Spline(Spline::new(&points, "a").unwrap());
    // Evaluate through a one-axis stretch: ψ(diag(x, 1, 1)) = a(x) + 2a(1) − 3a(1).
    let m = material(ValanisLandelEnergy {
        a: spline.clone(),
        b: Profile::Zero,
        c: Profile::Zero,
    });
    let a = |x: f64| {
        m.evaluate(
            &Matrix3::from_diagonal(&nalgebra::Vector3::new(x, 1.0, 1.0)),
            Want::Stress,
        )
    };
    for [x, y] in points {
        assert!((a(x).energy_density - y).abs() < 1e-12, "through ({x}, {y})");
    }
    // The first derivative (P₁₁) is continuous at the knots and past the ends.
    for x in [0.5, 0.9, 1.0, 1.4, 2.0] {
        let (left, right) = (a(x - 1e-9).first_piola[(0, 0)], a(x + 1e-9).first_piola[(0, 0)]);
        assert!((left - right).abs() < 1e-6, "slope jumps at {x}: {left} vs {right}");
    }
    // Beyond the ends: straight lines.
    let slope = a(2.5).first_piola[(0, 0)];
    assert!((a(3.0).energy_density - a(2.5).energy_density - 0.5 * slope).abs() < 1e-9);
    let line = Spline::new(&[[0.0, 1.0], [1.0, 3.0], [2.5, 6.0], [4.0, 9.0]], "line").unwrap();
    let m = material(ValanisLandelEnergy {
        a: Profile::Spline(line),
        b: Profile::Zero,
        c: Profile::Zero,
    });
    let x = 1.7;
    let psi = m.evaluate(
        &Matrix3::from_diagonal(&nalgebra::Vector3::new(x, 1.0, 1.0)),
        Want::Stress,
    );
    assert!(
        (psi.energy_density - (1.0 + 2.0 * x - 3.0)).abs() < 1e-12,
        "a line is not reproduced"
    );
    let error = Spline::new(&[[1.0, 0.0], [0.9, 1.0]], "bodies[0].material.a")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bodies[0].material.a[1]") && error.contains("increase"),
        "{error}"
    );
}

/// The polynomial material is soft at rest (a″(1) = 0) but its Laplacian
/// weight, fitted over stretches 0.5–1.5, is 0.6μ (from eqs. 7.13–7.14 of the Liu 2018 thesis; the thesis prints no value).
#[test]
fn the_polynomial_material_gets_the_regression_weight() {
    use hooke::material::laplacian_weight::{laplacian_weight, StretchSamples};
    let m = material(ValanisLandelEnergy::polynomial(LAME.mu));
    let k = laplacian_weight(
        &m,
        StretchSamples {
            low: 0.5,
            high: 1.5,
            samples: 20001,
        },
    );
    assert!((k - 0.6 * LAME.mu).abs() < 1e-3 * LAME.mu, "{k}");
}

/// Scenes name the family: valanis_landel with stress-free curves runs; curves
/// with stress at rest, or curves given to spline_a, are refused with the key.
#[test]
fn scenes_name_valanis_landel_materials() {
    let scene = |material: &str| {
        format!(
            "gravity = [0.0, 0.0, -9.81]\n[simulation]\nduration = 0.02\ntime_step = 0.01\n[[bodies]]\nmesh = {{ box = {{ size = [0.4, 0.1, 0.1], cells = [4, 1, 1] }} }}\nmaterial = {material}\n[[pins]]\nselect = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}\n[integrator]\nkind = \"backward_euler\"\n"
        )
    };
    let run = |material: &str| -> hooke::Result<f64> {
        let built = hooke::scene::Scene::from_text(&scene(material), "vl.toml", ".".into())?.build()?;
        let mut state = built.initial_state.clone();
        let mut integrator = built.integrator;
        for _ in 0..2 {
            integrator.step(&built.model, &mut state, 0.01)?;
        }
        Ok(state
            .positions
            .iter()
            .zip(&built.initial_state.positions)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max))
    };
    let curves = "{ model = \"valanis_landel\", density = 1000.0, a = [[0.5, 2e4], [1.0, 0.0], [1.5, 2e4]], c = [[0.5, 5e4], [1.0, 0.0], [1.5, 5e4]] }";
    assert!(run(curves).unwrap() > 1e-6, "the body does not move");
    for model in ["polynomial", "spline_a", "spline_b"] {
        let moved = run(&format!(
            "{{ model = \"{model}\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}"
        ))
        .unwrap();
        assert!(moved > 1e-6, "{model}");
    }
    let stressed = "{ model = \"valanis_landel\", density = 1000.0, a = [[0.5, 0.0], [1.5, 1e4]] }";
    let error = run(stressed).unwrap_err().to_string();
    assert!(
        error.contains("bodies[0].material") && error.contains("free of stress"),
        "{error}"
    );
    let mixed = "{ model = \"spline_a\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0, a = [[0.5, 0.0], [1.5, 1.0]] }";
    let error = run(mixed).unwrap_err().to_string();
    assert!(error.contains("not curves"), "{error}");
}
