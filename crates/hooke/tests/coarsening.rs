//! Numerical coarsening (Kharevych 2010 thesis, ch. 4): a homogeneous body
//! coarsens to its own material (the sanity check of §4.5), the
//! tensors are symmetric positive definite and satisfy the energy identity
//! (4.2) for every pair of probes, springs in series give the harmonic mean,
//! and layers make a body anisotropic in the right direction.

mod common;

use hooke::coarsen::simplex::Simplex;
use hooke::coarsen::{coarsen, voigt_tensor, CoarseningSettings};
use hooke::material::{IsotropicMaterial, MaterialModel, MaterialRef};
use hooke::mesh::{box_mesh, rectangle_mesh, BoxMeshOptions, Mesh, TetsPerHex};
use hooke::model::MassKind;
use hooke::model::Model;
use nalgebra::{DMatrix, Vector3};

fn linear(youngs_modulus: f64, poisson_ratio: f64) -> MaterialRef {
    IsotropicMaterial::shared(
        MaterialModel::Linear,
        &common::parameters(youngs_modulus, poisson_ratio),
    )
}

fn block(origin: [f64; 3], size: [f64; 3], cells: [usize; 3]) -> hooke::mesh::TetMesh {
    box_mesh(&BoxMeshOptions {
        origin: Vector3::from(origin),
        size: Vector3::from(size),
        cells,
        tets_per_hex: TetsPerHex::Six,
    })
    .unwrap()
}

/// A fine box model whose element materials depend on their centroids.
fn fine_box(cells: [usize; 3], size: [f64; 3], material: impl Fn(Vector3<f64>) -> MaterialRef) -> Model {
    let mesh = block([0.0; 3], size, cells);
    let materials = (0..mesh.tet_count()).map(|e| material(mesh.centroid(e))).collect();
    Model::new(mesh, materials, MassKind::Lumped).unwrap()
}

fn relative(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

#[test]
fn a_homogeneous_body_coarsens_to_its_own_material() {
    let material = linear(1e4, 0.3);
    let c = voigt_tensor(material.as_ref(), 3);
    let fine = fine_box([6, 6, 6], [1.0, 1.0, 1.0], |_| material.clone());
    // A coarse mesh nested in the fine one, and one that is not (inside it,
    // its vertices off the fine grid), with and without the coarse-normal tweak.
    let nested = Mesh::Tetrahedra(block([0.0; 3], [1.0, 1.0, 1.0], [2, 2, 2]));
    let inside = Mesh::Tetrahedra(block([0.07, 0.11, 0.05], [0.8, 0.75, 0.85], [2, 1, 2]));
    for (coarse, name) in [(&nested, "nested"), (&inside, "inside")] {
        for fine_normals in [false, true] {
            let result = coarsen(
                &fine,
                coarse,
                CoarseningSettings {
                    fine_normals,
                    held_pins: false,
                },
            )
            .unwrap();
            for (q, tensor) in result.tensors.iter().enumerate() {
                assert!(
                    relative(tensor, &c) < 1e-10,
                    "{name}, element {q}: ℂ differs from C by {:e}",
                    relative(tensor, &c)
                );
                assert!(
                    (result.coverage[q] - 1.0).abs() < 1e-12,
                    "{name}: coverage {}",
                    result.coverage[q]
                );
                assert!((result.densities[q] - 1000.0).abs() < 1e-9);
            }
        }
    }
    // In 2D too.
    let mesh = rectangle_mesh([0.0, 0.0], [2.0, 1.0], [8, 4]).unwrap();
    let count = mesh.triangle_count();
    let fine = Model::planar(mesh, vec![material.clone(); count], MassKind::Lumped).unwrap();
    let coarse = Mesh::Triangles(rectangle_mesh([0.1, 0.05], [1.7, 0.8], [2, 1]).unwrap());
    let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
    let c2 = voigt_tensor(material.as_ref(), 2);
    for tensor in &result.tensors {
        assert!(relative(tensor, &c2) < 1e-10, "2D: {:e}", relative(tensor, &c2));
    }
}

#[test]
fn held_pins_hold_the_affine_field_and_keep_a_homogeneous_material() {
    use hooke::model::{Motion, Pin};
    let settings = CoarseningSettings {
        fine_normals: false,
        held_pins: true,
    };
    let planar = |material: &dyn Fn(f64) -> MaterialRef| {
        let mesh = rectangle_mesh([0.0, 0.0], [2.0, 1.0], [8, 4]).unwrap();
        let materials = (0..mesh.triangle_count())
            .map(|e| material(mesh.centroid(e).x))
            .collect();
        Model::planar(mesh, materials, MassKind::Lumped).unwrap()
    };
    let coarse = Mesh::Triangles(rectangle_mesh([0.0, 0.0], [2.0, 1.0], [2, 1]).unwrap());
    // A homogeneous body clamped at x = 0 still coarsens to its own material.
    let material = linear(1e4, 0.3);
    let mut fine = planar(&|_| material.clone());
    let clamped = common::clamp_left_end(&mut fine, Motion::Fixed {}, None);
    let result = coarsen(&fine, &coarse, settings).unwrap();
    let c = voigt_tensor(material.as_ref(), 2);
    for tensor in &result.tensors {
        assert!(
            relative(tensor, &c) < 1e-10,
            "homogeneous, held: {:e}",
            relative(tensor, &c)
        );
    }
    // Two materials: every probe keeps the clamped edge at E_αβ x exactly,
    // where the free-boundary problems (the default) move it off the line.
    let mut fine = planar(&|x| if x < 1.0 { linear(1e6, 0.3) } else { linear(2e4, 0.3) });
    common::clamp_left_end(&mut fine, Motion::Fixed {}, None);
    let held = coarsen(&fine, &coarse, settings).unwrap();
    let free = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
    let rest = fine.rest_positions();
    let pairs = hooke::coarsen::simplex::voigt_pairs(2);
    let mut free_departure: f64 = 0.0;
    for (j, &(alpha, beta)) in pairs.iter().enumerate() {
        // The affine field through the first clamped vertex, fitted to the free one's.
        for &v in &clamped {
            let x = [rest[2 * v], rest[2 * v + 1]];
            for a in 0..2 {
                let affine = 0.5 * (if a == alpha { x[beta] } else { 0.0 } + if a == beta { x[alpha] } else { 0.0 });
                assert!(
                    (held.harmonic[j][2 * v + a] - affine).abs() < 1e-14,
                    "probe {j}, vertex {v}"
                );
            }
        }
        // Along the clamped edge x = 0 the held fields are affine in y (zero
        // second differences) and the free-boundary fields are not.
        let departure = |fields: &[Vec<f64>]| {
            let scale = fields[j].iter().fold(0.0f64, |m, h| m.max(h.abs()));
            let mut edge: Vec<(f64, f64)> = clamped.iter().map(|&v| (rest[2 * v + 1], fields[j][2 * v])).collect();
            edge.sort_by(|a, b| a.0.total_cmp(&b.0));
            let bend = edge
                .windows(3)
                .fold(0.0f64, |m, w| m.max((w[0].1 - 2.0 * w[1].1 + w[2].1).abs()));
            bend / scale
        };
        assert!(departure(&held.harmonic) < 1e-12, "probe {j}: held edge bent");
        free_departure = free_departure.max(departure(&free.harmonic));
    }
    assert!(
        free_departure > 1e-4,
        "the free problems bend the edge ({free_departure:e})"
    );
    // Pins that leave the body free to turn are refused, naming the pins.
    let mut fine = planar(&|_| material.clone());
    fine.add_pin(Pin::new(vec![0], Motion::Fixed {}, None));
    let error = coarsen(&fine, &coarse, settings).unwrap_err().to_string();
    assert!(error.contains("pins") && error.contains("rigid motion"), "{error}");
    // As are pins released during the run (they do not hold for its whole length).
    let mut fine = planar(&|_| material.clone());
    common::clamp_left_end(&mut fine, Motion::Fixed {}, Some(0.5));
    let error = coarsen(&fine, &coarse, settings).unwrap_err().to_string();
    assert!(error.contains("no pin holds for the whole run"), "{error}");
}

/// A cube of soft (1e3) and stiff (1e6) layers stacked along z (four of
/// them), coarsened onto one hexahedron of six tetrahedra.
fn layered_cube() -> (Model, hooke::coarsen::Coarsening) {
    let fine = fine_box([4, 4, 8], [1.0, 1.0, 1.0], |p| {
        if ((p.z * 4.0) as usize) % 2 == 0 {
            linear(1e3, 0.3)
        } else {
            linear(1e6, 0.3)
        }
    });
    let coarse = Mesh::Tetrahedra(block([0.0; 3], [1.0, 1.0, 1.0], [1, 1, 1]));
    let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
    (fine, result)
}

#[test]
fn coarse_tensors_are_symmetric_positive_definite_and_keep_the_harmonic_energies() {
    let (fine, result) = layered_cube();
    let coarse = Mesh::Tetrahedra(block([0.0; 3], [1.0, 1.0, 1.0], [1, 1, 1]));
    let materials = fine.materials();
    for (q, tensor) in result.tensors.iter().enumerate() {
        // Major symmetry before the final symmetrisation (minor symmetry is Voigt's form).
        let inverse = result.coarse_mollifiers[q].clone().try_inverse().unwrap();
        let raw = inverse.transpose() * &result.averages[q] * &inverse;
        assert!(relative(&raw.transpose(), &raw) < 1e-12);
        let eigenvalues = tensor.clone().symmetric_eigen().eigenvalues;
        assert!(eigenvalues.min() > 0.0, "element {q}: {eigenvalues}");
        // Eq. 4.2 for all 21 pairs, from the fields themselves: ∫ ε(h_a):C:ε(h_b) over
        // the coarse element (fine strains weighted by the exact overlaps) against
        // |𝕋| ε(ℍ_a)·ℂ ε(ℍ_b) from the strains of the sampled fields.
        let element = Simplex::of(&coarse, q).unwrap();
        let corners = |s: &Simplex| [s.corners[0], s.corners[1], s.corners[2], s.corners[3]];
        let mut fine_side = DMatrix::<f64>::zeros(6, 6);
        for p in 0..fine.mesh().element_count() {
            let simplex = Simplex::of(fine.mesh(), p).unwrap();
            let shared = hooke::coarsen::clip::tetrahedra_overlap(&corners(&simplex), &corners(&element));
            if shared == 0.0 {
                continue;
            }
            let strains: Vec<_> = result
                .harmonic
                .iter()
                .map(|h| {
                    let local: Vec<f64> = fine
                        .mesh()
                        .element(p)
                        .iter()
                        .flat_map(|&v| (0..3).map(move |a| h[3 * v + a]))
                        .collect();
                    simplex.strain(&local)
                })
                .collect();
            let c = voigt_tensor(materials[p].as_ref(), 3);
            for a in 0..6 {
                for b in 0..6 {
                    fine_side[(a, b)] += shared * (strains[a].transpose() * &c * &strains[b])[(0, 0)];
                }
            }
        }
        let coarse_strains: Vec<_> = result
            .coarse_harmonic
            .iter()
            .map(|h| {
                let local: Vec<f64> = coarse
                    .element(q)
                    .iter()
                    .flat_map(|&v| (0..3).map(move |a| h[3 * v + a]))
                    .collect();
                element.strain(&local)
            })
            .collect();
        for a in 0..6 {
            for b in a..6 {
                let coarse_side =
                    element.measure * (coarse_strains[a].transpose() * tensor * &coarse_strains[b])[(0, 0)];
                assert!(
                    (coarse_side - fine_side[(a, b)]).abs() < 1e-10 * fine_side.amax(),
                    "element {q}, pair ({a}, {b}): {coarse_side} vs {}",
                    fine_side[(a, b)]
                );
            }
        }
    }
}

/// The layered cube of the Kharevych 2010 thesis (Figs. 4.2–4.3, 4.5): a laminate of 16 layers (E
/// 1e5 and 1e6, ν = 0.3) along z on one coarse hexahedron. The coarse body's
/// tensor (the volume mean of its elements', what a uniform coarse strain
/// feels) matches the Backus average of the layers: across the layers
/// (C₃₃, C₄₄) harmonic-mean-like, along them (C₁₁, C₆₆) arithmetic-like. A
/// few thick layers of a strong contrast stiffen the in-plane terms past the
/// Voigt bound (corners sampled in one layer's surface bulge), but keep the
/// direction: softest across.
#[test]
fn a_laminate_coarsens_to_its_backus_average() {
    let laminate = |layers: usize, soft: f64| {
        let fine = fine_box([4, 4, 2 * layers], [1.0, 1.0, 1.0], |p| {
            linear(
                if ((p.z * layers as f64) as usize) % 2 == 0 {
                    soft
                } else {
                    1e6
                },
                0.3,
            )
        });
        let coarse = Mesh::Tetrahedra(block([0.0; 3], [1.0, 1.0, 1.0], [1, 1, 1]));
        let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
        result.tensors.iter().fold(DMatrix::zeros(6, 6), |sum, t| sum + t) / result.tensors.len() as f64
    };
    let lame = |e: f64| (e * 0.3 / (1.3 * 0.4), e / 2.6);
    let mean = |f: &dyn Fn(f64, f64) -> f64, soft: f64| {
        let ((l1, m1), (l2, m2)) = (lame(soft), lame(1e6));
        0.5 * (f(l1, m1) + f(l2, m2))
    };
    let soft = 1e5;
    let c33 = 1.0 / mean(&|l, m| 1.0 / (l + 2.0 * m), soft);
    let c13 = mean(&|l, m| l / (l + 2.0 * m), soft) * c33;
    let c11 =
        mean(&|l, m| 4.0 * m * (l + m) / (l + 2.0 * m), soft) + mean(&|l, m| l / (l + 2.0 * m), soft).powi(2) * c33;
    let c44 = 1.0 / mean(&|_, m| 1.0 / m, soft);
    let c66 = mean(&|_, m| m, soft);
    let coarse = laminate(16, soft);
    for (name, value, expected, tolerance) in [
        ("C33", coarse[(2, 2)], c33, 0.01),
        ("C44", coarse[(3, 3)], c44, 0.01),
        ("C55", coarse[(4, 4)], c44, 0.01),
        ("C11", coarse[(0, 0)], c11, 0.05),
        ("C22", coarse[(1, 1)], c11, 0.05),
        ("C13", coarse[(0, 2)], c13, 0.05),
        ("C66", coarse[(5, 5)], c66, 0.1),
    ] {
        assert!(
            (value / expected - 1.0).abs() < tolerance,
            "{name}: coarse {value:e}, Backus {expected:e}"
        );
    }
    // Strong contrast, four layers: still softest across (near the harmonic mean).
    let coarse = laminate(4, 1e3);
    let compliance = coarse.try_inverse().unwrap();
    let (along, across) = (1.0 / compliance[(0, 0)], 1.0 / compliance[(2, 2)]);
    let harmonic = 2.0 / (1.0 / 1e3 + 1.0 / 1e6);
    assert!(across < 0.01 * along, "across {across:e}, along {along:e}");
    assert!(
        (across / harmonic - 1.0).abs() < 0.35,
        "across {across:e}, harmonic {harmonic:e}"
    );
}

#[test]
fn springs_in_series_give_the_harmonic_mean() {
    // A 2D rigid–soft–rigid bar along x (ν = 0, thirds of E 1e6, 1e3, 1e6) on
    // one coarse cell: its axial modulus is 1/Σ(fᵢ/Eᵢ), not Σ fᵢEᵢ.
    let mesh = rectangle_mesh([0.0, 0.0], [3.0, 0.3], [30, 3]).unwrap();
    let materials = (0..mesh.triangle_count())
        .map(|e| {
            let x = mesh.centroid(e).x;
            linear(if (1.0..2.0).contains(&x) { 1e3 } else { 1e6 }, 0.0)
        })
        .collect();
    let fine = Model::planar(mesh, materials, MassKind::Lumped).unwrap();
    let coarse = Mesh::Triangles(rectangle_mesh([0.0, 0.0], [3.0, 0.3], [1, 1]).unwrap());
    let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
    let harmonic = 1.0 / (1.0 / 3e6 + 1.0 / 3e3 + 1.0 / 3e6);
    let arithmetic = (1e6 + 1e3 + 1e6) / 3.0;
    for tensor in &result.tensors {
        let axial = 1.0 / tensor.clone().try_inverse().unwrap()[(0, 0)];
        assert!(
            (axial / harmonic - 1.0).abs() < 0.1,
            "axial {axial:e} against harmonic {harmonic:e} (arithmetic {arithmetic:e})"
        );
    }
}

#[test]
fn the_coarse_mass_integrates_the_fine_density() {
    let fine = fine_box([4, 4, 4], [1.0, 1.0, 1.0], |p| {
        let mut parameters = common::parameters(1e4, 0.3);
        parameters.density = if p.x < 0.5 { 500.0 } else { 2000.0 };
        IsotropicMaterial::shared(MaterialModel::Linear, &parameters)
    });
    // A coarse box sticking out of the fine one by 0.2 in x.
    let coarse = Mesh::Tetrahedra(block([0.0; 3], [1.2, 1.0, 1.0], [3, 2, 2]));
    let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
    let mut total = 0.0;
    for q in 0..coarse.element_count() {
        total += result.densities[q] * Simplex::of(&coarse, q).unwrap().measure;
    }
    assert!((total - 1250.0).abs() < 1e-9, "{total}");
    assert!(result.lost_mass_fraction.abs() < 1e-12);
    assert!(
        result.coverage.iter().any(|&c| c < 0.99),
        "some coarse elements stick out"
    );
}

/// The display map (Kharevych 2010 thesis, §4.4.3): at rest the fine mesh is at rest, a
/// rigid motion of the coarse mesh moves it rigidly, and a coarse motion along
/// the sampled harmonic fields shows the fine harmonic fields themselves.
#[test]
fn the_display_map_reproduces_rest_rigid_motion_and_harmonic_shapes() {
    use hooke::coarsen::display::DisplayMap;
    for three_d in [true, false] {
        let (fine, coarse) = if three_d {
            let fine = fine_box([4, 4, 8], [1.0, 1.0, 1.0], |p| {
                linear(if p.z < 0.5 { 1e3 } else { 1e5 }, 0.3)
            });
            (fine, Mesh::Tetrahedra(block([0.0; 3], [1.0, 1.0, 1.0], [1, 1, 2])))
        } else {
            let mesh = rectangle_mesh([0.0, 0.0], [2.0, 0.5], [16, 4]).unwrap();
            let materials = (0..mesh.triangle_count())
                .map(|e| linear(if mesh.centroid(e).x < 1.0 { 1e3 } else { 1e5 }, 0.3))
                .collect();
            let fine = Model::planar(mesh, materials, MassKind::Lumped).unwrap();
            (
                fine,
                Mesh::Triangles(rectangle_mesh([0.0, 0.0], [2.0, 0.5], [2, 1]).unwrap()),
            )
        };
        let d = fine.dimension();
        let result = coarsen(&fine, &coarse, CoarseningSettings::default()).unwrap();
        let map = DisplayMap::new(fine.mesh(), &coarse, &result).unwrap();
        let rest: Vec<f64> = map.coarse_positions.clone();
        let fine_rest = map.fine_positions.clone();
        let shown = map.reconstruct(&rest).unwrap();
        let scale = 1.0;
        assert!(
            shown.iter().zip(&fine_rest).all(|(a, b)| (a - b).abs() < 1e-12 * scale),
            "{d}D at rest"
        );
        // A rigid motion.
        let turn = |p: &[f64]| -> Vec<f64> {
            let (c, s) = (0.3f64.cos(), 0.3f64.sin());
            let mut q = vec![c * p[0] - s * p[1] + 0.5, s * p[0] + c * p[1] - 0.2];
            if d == 3 {
                q.push(p[2] + 0.1);
            }
            q
        };
        let moved: Vec<f64> = rest.chunks(d).flat_map(turn).collect();
        let expected: Vec<f64> = fine_rest.chunks(d).flat_map(turn).collect();
        let shown = map.reconstruct(&moved).unwrap();
        let worst = shown
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "{d}D rigid: {worst:e}");
        // A small motion along the harmonic fields: coarse vertices at rest + Σ tⱼ ℍⱼ
        // (large ones can have other exact fits, with another rotation: the
        // fields carry rotations of their own).
        let weights: Vec<f64> = (0..result.harmonic.len()).map(|j| 1e-5 * (j as f64 + 1.0)).collect();
        let norm = result.harmonic.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        let combine = |fields: &[Vec<f64>], base: &[f64]| -> Vec<f64> {
            (0..base.len())
                .map(|i| base[i] + fields.iter().zip(&weights).map(|(f, w)| w * f[i] / norm).sum::<f64>())
                .collect()
        };
        let shown = map.reconstruct(&combine(&result.coarse_harmonic, &rest)).unwrap();
        let expected = combine(&result.harmonic, &fine_rest);
        let worst = shown
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "{d}D harmonic: {worst:e}");
    }
}
