//! Discontinuous Galerkin triangles (Chen 2019 thesis, §5.2 and Appendix A):
//! the split mesh and its interfaces, the Babuška–Zlámal and
//! interior-penalty interface terms (derivatives, rigid motions, consistency,
//! symmetry, coercivity of the default penalty, the η → ∞ limit), and scenes.

mod common;

use hooke::fem::Formulation;
use hooke::material::{IsotropicMaterial, MaterialModel, MaterialRef};
use hooke::mesh::{rectangle_mesh, DiscontinuousMesh, TriangleMesh};
use hooke::model::MassKind;
use hooke::model::Model;
use nalgebra::{DMatrix, Matrix2, Vector2};

fn material(model: MaterialModel) -> MaterialRef {
    IsotropicMaterial::shared(model, &common::parameters(1e4, 0.3))
}

fn dg_model(
    mesh: &TriangleMesh,
    model: MaterialModel,
    formulation: Formulation,
    penalty: Option<f64>,
) -> (Model, DiscontinuousMesh) {
    let materials = vec![material(model); mesh.triangle_count()];
    Model::discontinuous_planar(mesh, materials, MassKind::Consistent, formulation, penalty).expect("DG model")
}

fn cg_model(mesh: &TriangleMesh, model: MaterialModel) -> Model {
    let materials = vec![material(model); mesh.triangle_count()];
    Model::planar(mesh.clone(), materials, MassKind::Consistent).expect("CG model")
}

fn stiffness(model: &Model, x: &[f64]) -> DMatrix<f64> {
    let mut gradient = vec![0.0; x.len()];
    let mut values = vec![0.0; model.pattern().nonzeros()];
    model
        .hessian(x, 0.0, false, &mut gradient, &mut values, &mut Vec::new())
        .unwrap();
    common::dense(model.pattern(), &values)
}

/// Generalised eigenvalues of (K, M) at rest, ascending (dense: small meshes only).
fn eigenvalues(model: &Model) -> Vec<f64> {
    let k = stiffness(model, &model.rest_positions());
    let m = common::dense(model.pattern(), model.mass().values());
    let l = m.clone().cholesky().expect("M is positive definite").l();
    let l_inverse = l.clone().try_inverse().unwrap();
    let a = &l_inverse * k * l_inverse.transpose();
    let a = (&a + a.transpose()) * 0.5;
    let mut values: Vec<f64> = a.symmetric_eigenvalues().iter().copied().collect();
    values.sort_by(f64::total_cmp);
    values
}

/// The lowest eigenvalue above the three rigid modes of a free 2D body.
fn lowest_elastic(model: &Model) -> f64 {
    eigenvalues(model)[3]
}

#[test]
fn the_split_mesh_copies_each_corner_and_joins_interior_edges() {
    let mesh = rectangle_mesh([0.0, 0.0], [2.0, 1.0], [2, 1]).unwrap();
    let split = DiscontinuousMesh::new(&mesh).unwrap();
    assert_eq!(split.mesh.vertex_count(), 3 * mesh.triangle_count());
    // 2×1 cells: 4 triangles, 5 interior edges (two diagonals, one middle edge… counted from the mesh).
    let mut edges = std::collections::HashMap::new();
    for t in &mesh.triangles {
        for c in 0..3 {
            let (a, b) = (t[c].min(t[(c + 1) % 3]), t[c].max(t[(c + 1) % 3]));
            *edges.entry((a, b)).or_insert(0) += 1;
        }
    }
    let interior = edges.values().filter(|&&n| n == 2).count();
    assert_eq!(split.interfaces.len(), interior);
    for interface in &split.interfaces {
        // The two copies of each end sit at the same rest point.
        for k in 0..2 {
            let [a, b] = [0, 1].map(|s| split.mesh.vertices[interface.ends[s][k]]);
            assert_eq!(a, b);
            let [ca, cb] = [0, 1].map(|s| split.continuous_vertex[interface.ends[s][k]]);
            assert_eq!(ca, cb);
        }
        // The normal is a unit vector out of the minus triangle, toward the plus one.
        let [minus, plus] = interface.elements.map(|e| split.mesh.centroid(e).xy());
        assert!((interface.normal.norm() - 1.0).abs() < 1e-14);
        assert!(interface.normal.dot(&(plus - minus)) > 0.0);
        let ends = interface.ends[0].map(|v| split.mesh.vertices[v].xy());
        assert!((interface.length - (ends[1] - ends[0]).norm()).abs() < 1e-14);
        assert!(interface.normal.dot(&(ends[1] - ends[0])).abs() < 1e-14);
    }
    // Averaging the copies gives back the continuous positions.
    let rest: Vec<f64> = split.mesh.vertices.iter().flat_map(|p| [p.x, p.y]).collect();
    let average = split.average(&rest, 2);
    for (v, p) in mesh.vertices.iter().enumerate() {
        assert_eq!([average[2 * v], average[2 * v + 1]], [p.x, p.y]);
    }
}

#[test]
fn an_edge_of_three_triangles_is_refused_with_its_vertices() {
    let vertices = [[0.0, 0.0], [1.0, 0.0], [0.5, 1.0], [0.5, -1.0], [1.5, 0.5]]
        .map(|[x, y]| nalgebra::Vector3::new(x, y, 0.0))
        .to_vec();
    let mesh = TriangleMesh::new(vertices, vec![[0, 1, 2], [1, 0, 3], [0, 1, 4]], vec![0; 3]).unwrap();
    let error = DiscontinuousMesh::new(&mesh).unwrap_err().to_string();
    assert!(
        error.contains("vertices 0 and 1") && error.contains("3 triangles"),
        "{error}"
    );
}

/// A state with every copy moved on its own: the field jumps across every edge.
fn jumping_state(model: &Model, seed: u64, size: f64) -> Vec<f64> {
    let mut random = common::Lcg::new(seed);
    model
        .rest_positions()
        .iter()
        .map(|p| 1.05 * p + size * random.next())
        .collect()
}

#[test]
fn interface_forces_and_hessians_match_finite_differences() {
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [2, 2]).unwrap();
    for formulation in [Formulation::Bz, Formulation::Ip] {
        for material_model in [
            MaterialModel::Linear,
            MaterialModel::NeoHookean,
            MaterialModel::StableNeoHookean,
            MaterialModel::Corotational,
        ] {
            let (model, _) = dg_model(&mesh, material_model, formulation, Some(3e4));
            let x = jumping_state(&model, 7, 0.02);
            let what = format!("{formulation:?} with {material_model:?}");
            common::assert_potential_derivatives(&model, &x, 1e-6, 1e-6, &what);
        }
    }
}

#[test]
fn the_bz_term_is_its_exact_line_integral() {
    // Two triangles sharing the diagonal of the unit square; only one copy moves.
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 1.0], [1, 1]).unwrap();
    let eta = 7.0;
    let (model, split) = dg_model(&mesh, MaterialModel::Linear, Formulation::Bz, Some(eta));
    let interface = &split.interfaces[0];
    let mut x = model.rest_positions();
    let moved = interface.ends[0][0];
    x[2 * moved] += 0.3;
    x[2 * moved + 1] -= 0.1;
    let elastic = model.terms()[0].energy(&x, 0.0);
    let interface_energy = model.energy(&x, 0.0) - elastic;
    // ⟦x⟧ falls linearly from j₀ = (0.3, −0.1) to 0 along the edge: ∫‖⟦x⟧‖² = L ‖j₀‖²/3.
    let expected = eta * 2f64.sqrt() * (0.09 + 0.01) / 3.0;
    assert!(
        (interface_energy - expected).abs() < 1e-12 * expected,
        "{interface_energy} vs {expected}"
    );
}

#[test]
fn rigid_motions_store_no_interface_energy_and_give_no_force() {
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [3, 2]).unwrap();
    let rotation = Matrix2::new(0.6, -0.8, 0.8, 0.6);
    for formulation in [Formulation::Bz, Formulation::Ip] {
        let (model, _) = dg_model(&mesh, MaterialModel::StableNeoHookean, formulation, None);
        let rest = model.rest_positions();
        let x: Vec<f64> = rest
            .chunks(2)
            .flat_map(|p| {
                let q = rotation * Vector2::new(p[0], p[1]) + Vector2::new(0.3, -2.0);
                [q.x, q.y]
            })
            .collect();
        let mut gradient = vec![0.0; x.len()];
        let energy = model.gradient(&x, 0.0, &mut gradient).unwrap();
        assert!(energy.abs() < 1e-9, "{formulation:?}: energy {energy}");
        let largest = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        assert!(largest < 1e-8, "{formulation:?}: force {largest}");
    }
}

/// Interior-penalty consistency: under a uniform stress (an affine field of a
/// linear material) the consistency term's tractions cancel the element forces
/// at every copy of an interior vertex, so the copies of each vertex carry
/// exactly the continuous model's force between them, and the energies agree.
/// The penalty alone (BZ) leaves each copy its element's force.
#[test]
fn interior_penalty_is_consistent_with_the_continuous_model() {
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [4, 2]).unwrap();
    let continuous = cg_model(&mesh, MaterialModel::Linear);
    let stretch = nalgebra::Matrix2::new(1.02, 0.01, -0.005, 0.97);
    let affine = |p: &[f64]| {
        let q = stretch * Vector2::new(p[0], p[1]);
        [q.x, q.y]
    };
    let xc: Vec<f64> = continuous.rest_positions().chunks(2).flat_map(affine).collect();
    let mut gc = vec![0.0; xc.len()];
    let ec = continuous.gradient(&xc, 0.0, &mut gc).unwrap();
    for formulation in [Formulation::Ip, Formulation::Bz] {
        let (model, split) = dg_model(&mesh, MaterialModel::Linear, formulation, None);
        let x: Vec<f64> = model.rest_positions().chunks(2).flat_map(affine).collect();
        let mut g = vec![0.0; x.len()];
        let e = model.gradient(&x, 0.0, &mut g).unwrap();
        assert!((e - ec).abs() < 1e-12 * ec, "{formulation:?}: energy {e} vs {ec}");
        let summed = split.average(&g, 2);
        let copies = mesh.vertex_count();
        let mut count = vec![0.0; copies];
        for &v in &split.continuous_vertex {
            count[v] += 1.0;
        }
        let scale = gc.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut worst_copy = 0.0f64;
        for (copy, &v) in split.continuous_vertex.iter().enumerate() {
            let p = mesh.vertices[v];
            let interior = p.x > 1e-9 && p.x < 1.0 - 1e-9 && p.y > 1e-9 && p.y < 0.5 - 1e-9;
            if interior {
                worst_copy = worst_copy.max(g[2 * copy].abs()).max(g[2 * copy + 1].abs());
            }
        }
        let mut worst_sum = 0.0f64;
        for v in 0..copies {
            for a in 0..2 {
                worst_sum = worst_sum.max((summed[2 * v + a] * count[v] - gc[2 * v + a]).abs());
            }
        }
        match formulation {
            Formulation::Ip => {
                assert!(worst_copy < 1e-10 * scale, "IP: an interior copy keeps {worst_copy}");
                assert!(
                    worst_sum < 1e-10 * scale,
                    "IP: copies sum to the CG force within {worst_sum}"
                );
            }
            Formulation::Bz => assert!(worst_copy > 1e-3 * scale, "BZ: copies should carry element forces"),
        }
    }
}

#[test]
fn interior_penalty_hessians_are_symmetric_and_the_default_penalty_is_coercive() {
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [4, 2]).unwrap();
    for material_model in [MaterialModel::Linear, MaterialModel::NeoHookean] {
        let (model, _) = dg_model(&mesh, material_model, Formulation::Ip, None);
        let x = jumping_state(&model, 3, 0.01);
        let k = stiffness(&model, &x);
        assert!((&k - k.transpose()).amax() < 1e-12 * k.amax());
        // At rest the free body has its three rigid modes and nothing below them.
        let values = eigenvalues(&model);
        let scale = values.last().copied().unwrap();
        assert!(values[..3].iter().all(|l| l.abs() < 1e-9 * scale), "{:?}", &values[..4]);
        assert!(
            values[3] > 1e-6 * scale,
            "{material_model:?}: lowest elastic {}",
            values[3]
        );
    }
    // A penalty far below the default leaves IP indefinite (why the default scales with E/h).
    let (weak, _) = dg_model(&mesh, MaterialModel::Linear, Formulation::Ip, Some(1.0));
    assert!(eigenvalues(&weak)[0] < 0.0);
}

/// Chen 2019 thesis, Fig. 3.3: the lowest non-zero eigenvalue of the two-triangle
/// square grows with η and approaches the continuous one as η → ∞; DG is
/// softer than CG (the remedy for numerical stiffening), BZ from below.
#[test]
fn a_stiffer_penalty_approaches_the_continuous_eigenvalues() {
    let mesh = rectangle_mesh([0.0, 0.0], [0.5, 0.5], [1, 1]).unwrap();
    let continuous = lowest_elastic(&cg_model(&mesh, MaterialModel::Linear));
    let mut previous = 0.0;
    for eta in [1e2, 1e3, 1e4, 1e5, 1e6, 1e8] {
        let (model, _) = dg_model(&mesh, MaterialModel::Linear, Formulation::Bz, Some(eta));
        let lowest = lowest_elastic(&model);
        assert!(lowest >= previous, "η = {eta}: {lowest} after {previous}");
        assert!(
            lowest <= continuous * (1.0 + 1e-9),
            "η = {eta}: {lowest} above CG {continuous}"
        );
        previous = lowest;
    }
    assert!(
        (previous - continuous).abs() < 1e-3 * continuous,
        "{previous} vs {continuous}"
    );
    // The whole spectrum converges too, on a larger mesh and for IP.
    let mesh = rectangle_mesh([0.0, 0.0], [1.0, 0.5], [2, 1]).unwrap();
    let cg = eigenvalues(&cg_model(&mesh, MaterialModel::Linear));
    for formulation in [Formulation::Bz, Formulation::Ip] {
        let (model, _) = dg_model(&mesh, MaterialModel::Linear, formulation, Some(1e10));
        let dg = eigenvalues(&model);
        for (c, d) in cg.iter().zip(&dg).skip(3) {
            assert!((c - d).abs() < 1e-3 * c, "{formulation:?}: {d} vs CG {c}");
        }
    }
}

fn scene(text: &str) -> hooke::Result<hooke::scene::Scene> {
    hooke::scene::Scene::from_text(text, "dg.toml", std::env::temp_dir())
}

/// A 1 m strip of n × 1 cells, ν = 0, held across (y) everywhere and fully at
/// both ends: its x-displacements are the 1D wave equation u_tt = c² u_xx on
/// [0, 1] with Dirichlet ends, c² = E/ρ, discretised by linear elements.
fn axial_strip(cells: usize, mass: &str, discretization: &str) -> String {
    format!(
        r#"
dimension = 2
[simulation]
duration = 0.01
time_step = 0.01
mass = "{mass}"
[[bodies]]
mesh = {{ rectangle = {{ size = [1.0, 1e-4], cells = [{cells}, 1] }} }}
material = {{ model = "linear", youngs_modulus = 1000.0, poisson_ratio = 0.0, density = 1000.0 }}
{discretization}
[[pins]]
select = "all"
components = ["y"]
[[pins]]
select = {{ plane = {{ point = [0.0, 0.0], normal = [-1.0, 0.0] }} }}
[[pins]]
select = {{ plane = {{ point = [1.0, 0.0], normal = [1.0, 0.0] }} }}
"#
    )
}

/// Chen 2019 thesis, §2.2.2 (Eq. 2.17 with its printed typos corrected): the linear-element λ₁ʰ of the 1D wave
/// equation, (6c²/l²)(1 − cos πl)/(2 + cos πl) with consistent mass (from
/// above) and (4c²/l²) sin²(πl/2) with lumped mass (from below), reproduced by
/// the plane-strain triangles; discontinuous BZ bodies lie below the
/// continuous value at every resolution (Courant–Fischer: the continuous
/// fields are a subspace on which the penalty vanishes).
#[test]
fn the_numerical_stiffening_of_linear_elements_has_its_closed_form() {
    use hooke::studies::discretizations::lowest_elastic_eigenvalue;
    use std::f64::consts::PI;
    let c2 = 1000.0 / 1000.0;
    let mut previous = f64::INFINITY;
    for cells in [4, 8, 16, 64] {
        let l = 1.0 / cells as f64;
        let consistent = lowest_elastic_eigenvalue(&scene(&axial_strip(cells, "consistent", "")).unwrap()).unwrap();
        let expected = 6.0 * c2 / (l * l) * (1.0 - (PI * l).cos()) / (2.0 + (PI * l).cos());
        // A strip 1e-4 thick: modes that vary across it cost shear ∝ (l/w)², so
        // the 2D value meets the 1D one to a few parts in 10⁸ (it is the lower of the two).
        assert!(
            (consistent - expected).abs() < 1e-7 * expected,
            "{cells}: {consistent} vs {expected}"
        );
        assert!(consistent > PI * PI * c2 && consistent < previous);
        previous = consistent;
        let lumped = lowest_elastic_eigenvalue(&scene(&axial_strip(cells, "lumped", "")).unwrap()).unwrap();
        let expected = 4.0 * c2 / (l * l) * (PI * l / 2.0).sin().powi(2);
        assert!(
            (lumped - expected).abs() < 1e-7 * expected,
            "{cells}: lumped {lumped} vs {expected}"
        );
        assert!(lumped < PI * PI * c2);
    }
    // On a strip of ordinary width, BZ (default penalty) under the continuous value at every resolution.
    for cells in [4, 8, 16] {
        let strip = |discretization: &str| axial_strip(cells, "consistent", discretization).replace("1e-4", "0.1");
        let cg = lowest_elastic_eigenvalue(&scene(&strip("")).unwrap()).unwrap();
        let bz = r#"discretization = { discontinuous = { formulation = "bz" } }"#;
        let dg = lowest_elastic_eigenvalue(&scene(&strip(bz)).unwrap()).unwrap();
        assert!(
            dg <= cg * (1.0 + 1e-12) && dg > 0.5 * cg,
            "{cells}: BZ {dg} against CG {cg}"
        );
    }
    // λ₁ʰ = π²c² (1 + π²l²/12 + …): 2e-4 above at l = 1/64.
    assert!((previous / (PI * PI * c2) - 1.0) < 3e-4, "converges to π²c²");
}

const DG_PLATE: &str = r#"
dimension = 2
gravity = [0.0, -9.81]
[simulation]
duration = 0.05
time_step = 0.01
mass = "MASS"
[[bodies]]
mesh = { rectangle = { size = [0.4, 0.2], cells = [4, 2] } }
material = { model = "neo_hookean", youngs_modulus = 1e4, poisson_ratio = 0.4, density = 1000.0 }
discretization = { discontinuous = { formulation = "FORMULATION", penalty = 2e3 } }
[[pins]]
select = { plane = { point = [0.0, 0.0], normal = [-1.0, 0.0] } }
motion = { kind = "translation", velocity = [0.0, 0.2] }
[integrator]
kind = "dgsi"
"#;

fn dg_plate(mass: &str, formulation: &str) -> String {
    DG_PLATE.replace("MASS", mass).replace("FORMULATION", formulation)
}

/// DGSI's step against a dense evaluation of (M + h²K_e) Δv = h (f − h K_e vₙ)
/// on the free DOFs, K_e the elements' projected stiffness alone and f every
/// force (interfaces, gravity) at the step's start, with a moving pin's Δv
/// carried to the right-hand side.
#[test]
fn a_dgsi_step_solves_the_element_split_system() {
    for (mass, formulation) in [("lumped", "bz"), ("consistent", "ip")] {
        let built = scene(&dg_plate(mass, formulation)).unwrap().build().unwrap();
        let model = &built.model;
        let mut state = built.initial_state.clone();
        let mut random = common::Lcg::new(5);
        state.positions.iter_mut().for_each(|x| *x += 0.002 * random.next());
        state.velocities.iter_mut().for_each(|v| *v = 0.05 * random.next());
        model.apply_prescribed_positions(0.0, &mut state.positions);
        let h = 0.01;
        let n = model.dof_count();
        // The reference, densely.
        let mut gradient = vec![0.0; n];
        model.gradient(&state.positions, h, &mut gradient).unwrap();
        let mut values = vec![0.0; model.pattern().nonzeros()];
        let mut unused = vec![0.0; n];
        let elements = &model.terms()[0];
        assert!(elements.as_elasticity().is_some());
        elements
            .hessian(
                &state.positions,
                h,
                true,
                &mut unused,
                &mut hooke::model::HessianTarget {
                    values: &mut values,
                    low_rank: &mut Vec::new(),
                },
                false,
            )
            .unwrap();
        let k = common::dense(model.pattern(), &values);
        let m = common::dense(model.pattern(), model.mass().values());
        let a = &m + &k * (h * h);
        let v = nalgebra::DVector::from_column_slice(&state.velocities);
        let f = -nalgebra::DVector::from_column_slice(&gradient);
        let mut rhs = (f - &k * &v * h) * h;
        let dofs = model.dof_map(h);
        let mut prescribed = state.positions.clone();
        model.apply_prescribed_positions(h, &mut prescribed);
        let mut change = nalgebra::DVector::zeros(n);
        for i in (0..n).filter(|&i| dofs.free_index[i].is_none()) {
            change[i] = (prescribed[i] - state.positions[i]) / h - state.velocities[i];
        }
        rhs -= &a * &change;
        let free = &dofs.free_dofs;
        let a_free = a.select_rows(free).select_columns(free);
        let rhs_free = nalgebra::DVector::from_iterator(free.len(), free.iter().map(|&i| rhs[i]));
        let solved = a_free.cholesky().unwrap().solve(&rhs_free);
        for (slot, &i) in free.iter().enumerate() {
            change[i] = solved[slot];
        }
        let expected_v = &v + &change;
        let mut stepped = state.clone();
        let mut integrator = hooke::integrate::Dgsi::new(true);
        use hooke::integrate::Integrator;
        integrator.step(model, &mut stepped, h).unwrap();
        for i in 0..n {
            assert!(
                (stepped.velocities[i] - expected_v[i]).abs() < 1e-10 * expected_v.amax(),
                "{mass}/{formulation}: v[{i}] {} vs {}",
                stepped.velocities[i],
                expected_v[i]
            );
            let x = state.positions[i] + h * expected_v[i];
            let x = if dofs.free_index[i].is_none() { prescribed[i] } else { x };
            assert!((stepped.positions[i] - x).abs() < 1e-12, "x[{i}]");
        }
    }
}

#[test]
fn dgsi_refuses_continuous_bodies_and_3d_refuses_discontinuous_ones() {
    let continuous = dg_plate("lumped", "bz").replace(
        r#"discretization = { discontinuous = { formulation = "bz", penalty = 2e3 } }"#,
        "",
    );
    let error = scene(&continuous).unwrap().build().err().expect("refused").to_string();
    assert!(error.contains("integrator.kind") && error.contains("dgsi"), "{error}");
    let solid = r#"
[simulation]
duration = 0.01
time_step = 0.01
[[bodies]]
mesh = { box = { size = [1.0, 1.0, 1.0], cells = [1, 1, 1] } }
material = { model = "linear", youngs_modulus = 1e4, poisson_ratio = 0.3, density = 1000.0 }
discretization = { discontinuous = { formulation = "ip" } }
"#;
    let error = scene(solid).map(|_| ()).expect_err("refused").to_string();
    assert!(
        error.contains("bodies[0].discretization") && error.contains("2D"),
        "{error}"
    );
    let bad = dg_plate("lumped", "bz").replace("penalty = 2e3", "penalty = -1.0");
    let error = scene(&bad).map(|_| ()).expect_err("refused").to_string();
    assert!(error.contains("penalty") && error.contains("≥ 0"), "{error}");
    let unknown = dg_plate("lumped", "bz").replace("\"bz\"", "\"ldg\"");
    assert!(scene(&unknown).is_err());
}

/// DG scenes run through the ordinary integrators on the full DG Hessian and
/// through DGSI, and their modes are computed like any model's.
#[test]
fn discontinuous_scenes_run_under_dgsi_and_the_implicit_integrators() {
    // DGSI's explicit interfaces need a soft penalty at this step; interior
    // penalty needs one above its coercivity threshold (the default), or its
    // energy is unbounded below and implicit steps diverge.
    for (integrator, formulation, default_penalty) in [
        ("dgsi", "bz", false),
        ("dgsi", "ip", false),
        ("backward_euler", "ip", true),
        ("siere", "bz", true),
        ("semi_implicit_backward_euler", "ip", true),
    ] {
        let mut text =
            dg_plate("consistent", formulation).replace("kind = \"dgsi\"", &format!("kind = \"{integrator}\""));
        if default_penalty {
            text = text.replace(", penalty = 2e3", "");
        }
        if integrator == "siere" {
            // SIERE's modes need K − σM definite for its shifts: a linear material keeps K PSD.
            text = text.replace("neo_hookean", "linear");
        }
        let built = scene(&text).unwrap().build().unwrap();
        let mut integrator_box = built.integrator;
        let name = format!("dg-{integrator}-{formulation}");
        let outcome = common::run_quietly(
            &built.model,
            integrator_box.as_mut(),
            built.initial_state.clone(),
            0.05,
            0.01,
            &name,
        );
        let last = outcome.records.last().unwrap();
        assert!(last.total.is_finite(), "{integrator}/{formulation}");
        // The pinned edge rose with its pin, and the plate followed it up.
        let mean_y: f64 =
            outcome.state.positions.iter().skip(1).step_by(2).sum::<f64>() / built.model.mesh().vertex_count() as f64;
        assert!(
            mean_y > 0.1 - 0.05 && mean_y < 0.1 + 0.02,
            "{integrator}/{formulation}: mean y {mean_y}"
        );
    }
    let text = dg_plate("lumped", "ip").replace(", penalty = 2e3", "");
    let built = scene(&text).unwrap().build().unwrap();
    let modes = hooke::modal::lowest_modes(
        &built.model,
        &built.initial_state,
        4,
        &hooke::linalg::EigenSettings::default(),
    )
    .unwrap();
    assert!(modes.eigenvalues.iter().all(|l| *l > 0.0), "{:?}", modes.eigenvalues);
}

/// Frames of a discontinuous body hold each triangle's own points and, as
/// `continuous_displacement`, the mean over the copies of each vertex.
#[test]
fn frames_of_discontinuous_bodies_carry_the_continuous_average() {
    let scene = scene(&dg_plate("lumped", "bz")).unwrap();
    let mut built = scene.build().unwrap();
    let directory = std::env::temp_dir().join(format!("hooke-dg-frames-{}", std::process::id()));
    let settings = hooke::simulation::RunSettings {
        vtk_every: 5,
        ..scene.run_settings(Some(&directory))
    };
    hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    let frame = hooke::output::read_frame(&directory.join("frame_0001.vtu")).unwrap();
    let groups = built.model.vertex_groups().expect("a DG model has groups");
    assert_eq!(frame.positions.len(), 3 * built.model.mesh().element_count());
    assert_eq!(frame.continuous_displacement.len(), frame.positions.len());
    let rest = built.model.mesh().vertices();
    let mut sums = std::collections::HashMap::<usize, (nalgebra::Vector3<f64>, f64)>::new();
    for (v, &g) in groups.iter().enumerate() {
        let entry = sums.entry(g).or_insert((nalgebra::Vector3::zeros(), 0.0));
        entry.0 += frame.positions[v] - rest[v];
        entry.1 += 1.0;
    }
    let mut jumps = 0.0f64;
    for (v, &g) in groups.iter().enumerate() {
        let (sum, count) = sums[&g];
        assert!((frame.continuous_displacement[v] - sum / count).norm() < 1e-12);
        jumps = jumps.max((frame.positions[v] - rest[v] - sum / count).norm());
    }
    assert!(jumps > 0.0, "the copies of a vertex move apart under a soft penalty");
    let _ = std::fs::remove_dir_all(directory);
}
