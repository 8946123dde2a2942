//! Numerical coarsening (Kharevych 2010 thesis, ch. 4, i.e. Kharevych et al. 2009):
//! a heterogeneous fine mesh's elasticity carried onto a coarse, possibly
//! non-conforming mesh as one anisotropic tensor per coarse element, so that
//! plain linear (or co-rotated) elasticity on the coarse mesh behaves like
//! the fine one at low frequencies.
//!
//! The pipeline, per [`coarsen`]:
//! 1. the harmonic displacements h_αβ of the fine mesh (`harmonic`), with
//!    each fine boundary facet loaded along the normal of the coarse boundary
//!    face over it, the nearest one facing the same way (the coarse-normal
//!    tweak of §4.4.2, whose "coarse bounding tet" the thesis leaves loose;
//!    `fine_normals` turns it off);
//! 2. per fine element the mollifier G (its columns the Voigt strains of the
//!    h_αβ) and per coarse element ⟨GᵀCG⟩ = Σ_p (|T_p ∩ 𝕋_q| / |𝕋_q|) G_pᵀ C_p G_p,
//!    with the overlaps by exact convex clipping ([`clip`]);
//! 3. the h_αβ sampled at the coarse vertices (barycentric interpolation in the
//!    fine element holding each, extrapolation from the least-outside fine
//!    element near a vertex outside the fine domain) and their strains 𝔾 on
//!    each coarse element;
//! 4. ℂ = 𝔾⁻ᵀ ⟨GᵀCG⟩ 𝔾⁻¹ in Voigt form with engineering shears, so that
//!    ∫_𝕋 ε(h_αβ):C:ε(h_γδ) = ∫_𝕋 ε(ℍ_αβ):ℂ:ε(ℍ_γδ) for every pair (Eq. 4.2);
//! 5. a density per coarse element, Σ_p ρ_p |T_p ∩ 𝕋_q| / |𝕋_q|, whose lumped
//!    mass integrates the fine density over the coarse elements.
//!
//! Where a coarse element sticks out of the fine domain its overlaps cover
//! less than its measure: ⟨GᵀCG⟩ and the density are still divided by the
//! whole measure (the formula of §4.3.7, which the thesis does not discuss),
//! so such an element is as much softer and lighter as it is empty; the
//! covered fraction of each is reported.

pub mod clip;
pub mod display;
mod grid;
mod harmonic;
pub mod simplex;

use crate::error::{HookeError, Result};
use crate::material::{derivative_matrix, vec_index, ElasticityTensor};
use crate::mesh::boundary_facets;
use crate::mesh::Mesh;
use crate::model::Model;
use grid::ElementGrid;
use nalgebra::{DMatrix, Vector3};
use rayon::prelude::*;
use simplex::{voigt_pairs, Simplex};

/// Options of a coarsening.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoarseningSettings {
    /// Load the harmonic problems along the fine boundary's own normals
    /// instead of the coarse faces' (the plain Neumann problem of §4.3.5).
    pub fine_normals: bool,
    /// Hold the DOFs that the fine scene's pins hold for the whole run at
    /// the affine field in the harmonic problems (the mixed Dirichlet/Neumann
    /// variant of the Kharevych 2010 thesis, §4.3.9), instead of leaving the whole boundary free.
    pub held_pins: bool,
}

/// Where a coarse vertex sits in the fine mesh: a fine element and its
/// barycentric coordinates there (some negative when extrapolated).
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding {
    /// The fine element's index.
    pub element: usize,
    /// The barycentric coordinates in that element, one per corner (d + 1), summing to 1.
    pub coordinates: Vec<f64>,
}

/// What a coarsening computes.
#[derive(Clone, Debug)]
pub struct Coarsening {
    /// Spatial dimension d of both meshes, 2 or 3.
    pub dimension: usize,
    /// ℂ of each coarse element (Voigt, engineering shears).
    pub tensors: Vec<DMatrix<f64>>,
    /// Each coarse element's density, kg/m³ (kg/m² in 2D).
    pub densities: Vec<f64>,
    /// The fraction of each coarse element the fine mesh covers.
    pub coverage: Vec<f64>,
    /// ⟨GᵀCG⟩ of each coarse element.
    pub averages: Vec<DMatrix<f64>>,
    /// The naive alternative for comparison: the fine tensors averaged over
    /// each coarse element by volume (what the Kharevych 2010 thesis shows to be wrong, Figs. 4.4–4.5).
    pub averaged_tensors: Vec<DMatrix<f64>>,
    /// 𝔾 of each coarse element.
    pub coarse_mollifiers: Vec<DMatrix<f64>>,
    /// G of each fine element.
    pub fine_mollifiers: Vec<DMatrix<f64>>,
    /// The harmonic displacements on the fine mesh (one per probe, all DOFs).
    pub harmonic: Vec<Vec<f64>>,
    /// The same sampled at the coarse vertices.
    pub coarse_harmonic: Vec<Vec<f64>>,
    /// Where each coarse vertex sits in the fine mesh.
    pub embedding: Vec<Embedding>,
    /// The fine mass that no coarse element covers, as a fraction of the whole.
    pub lost_mass_fraction: f64,
    /// Coarse elements that hold (almost) no fine material, or whose ℂ came
    /// out indefinite, given the void floor instead (see [`VOID_FRACTION`]).
    pub voids: Vec<usize>,
}

/// An empty coarse element (in a hole, or outside the fine mesh; covered
/// below this fraction) would have no stiffness and no mass, which no
/// simulation takes: it gets this fraction of the mean coarse tensor and
/// density instead, a void that carries nothing. A ℂ with eigenvalues below
/// this fraction of its largest (rounding, or a barely covered element) is
/// lifted to that floor the same way.
pub const VOID_FRACTION: f64 = 1e-6;

/// What one coarse element gets.
struct CoarseElement {
    tensor: DMatrix<f64>,
    averaged_tensor: DMatrix<f64>,
    average: DMatrix<f64>,
    coarse_mollifier: DMatrix<f64>,
    coverage: f64,
    /// The fine mass inside it.
    mass: f64,
}

/// The linearised elasticity tensor of a material at rest, C_ijkl = ∂P_ij/∂F_kl
/// at F = I, as a Voigt matrix with engineering shears.
pub fn voigt_tensor(material: &dyn crate::material::Material, dimension: usize) -> DMatrix<f64> {
    let c = derivative_matrix(material, &nalgebra::Matrix3::identity(), false);
    let pairs = voigt_pairs(dimension);
    DMatrix::from_fn(pairs.len(), pairs.len(), |a, b| {
        let (i, j) = pairs[a];
        let (k, l) = pairs[b];
        c[(vec_index(i, j), vec_index(k, l))]
    })
}

fn simplices(mesh: &Mesh, which: &str) -> Result<Vec<Simplex>> {
    (0..mesh.element_count())
        .map(|e| {
            Simplex::of(mesh, e).ok_or_else(|| HookeError::Mesh {
                reason: format!("{which} element {e} is flat"),
            })
        })
        .collect()
}

/// The measure two elements share.
fn overlap(a: &Simplex, b: &Simplex) -> f64 {
    if a.corners.len() == 4 {
        let corners = |s: &Simplex| [s.corners[0], s.corners[1], s.corners[2], s.corners[3]];
        clip::tetrahedra_overlap(&corners(a), &corners(b))
    } else {
        let corners = |s: &Simplex| [s.corners[0].xy(), s.corners[1].xy(), s.corners[2].xy()];
        clip::triangles_overlap(&corners(a), &corners(b))
    }
}

/// The fine element that holds `point`, or the least-outside one near it.
fn locate(point: &Vector3<f64>, grid: &ElementGrid, fine: &[Simplex]) -> Embedding {
    let mut best: Option<Embedding> = None;
    let mut best_score = f64::NEG_INFINITY;
    for e in grid.around(point) {
        let coordinates = fine[e].barycentric(point);
        let score = coordinates.iter().copied().fold(f64::INFINITY, f64::min);
        if score > best_score {
            best_score = score;
            best = Some(Embedding {
                element: e,
                coordinates,
            });
        }
    }
    best.expect("the fine mesh has elements")
}

/// For each fine boundary facet, the normal its harmonic load uses: the
/// outward normal of the nearest coarse boundary face that faces the same
/// way (normals within 60°), the coarse face "over" it; the fine normal where
/// no coarse face does.
fn coarse_normals(
    fine_facets: &[(Vec<usize>, Vector3<f64>, f64, usize)],
    fine_mesh: &Mesh,
    coarse: &Mesh,
) -> Vec<Vector3<f64>> {
    let coarse_faces: Vec<(Vec<Vector3<f64>>, Vector3<f64>)> = boundary_facets(coarse)
        .into_iter()
        .map(|(vertices, normal, _, _)| (vertices.iter().map(|&v| coarse.vertices()[v]).collect(), normal))
        .collect();
    fine_facets
        .par_iter()
        .map(|(vertices, normal, _, _)| {
            let centre =
                vertices.iter().map(|&v| fine_mesh.vertices()[v]).sum::<Vector3<f64>>() / vertices.len() as f64;
            coarse_faces
                .iter()
                .filter(|(_, n)| n.dot(normal) > 0.5)
                .map(|(corners, n)| (distance_to_face(&centre, corners), n))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map_or(*normal, |(_, n)| *n)
        })
        .collect()
}

/// Distance from a point to a boundary face (a triangle, or a segment in 2D).
fn distance_to_face(point: &Vector3<f64>, corners: &[Vector3<f64>]) -> f64 {
    let closest = match corners {
        [a, b, c] => crate::mesh::closest_point_on_triangle(point, a, b, c),
        [a, b] => {
            let along = b - a;
            let t = ((point - a).dot(&along) / along.norm_squared()).clamp(0.0, 1.0);
            a + along * t
        }
        _ => corners[0],
    };
    (point - closest).norm()
}

/// Coarsens the fine model's elasticity onto `coarse` (same dimension).
///
/// One function of about 150 lines: the coarsening pipeline (overlaps, harmonic problems, mollified
/// tensors) runs per coarse element over shared search structures.
pub fn coarsen(fine: &Model, coarse: &Mesh, settings: CoarseningSettings) -> Result<Coarsening> {
    let d = fine.dimension();
    if coarse.dimension() != d {
        return Err(HookeError::Mesh {
            reason: format!("the coarse mesh is {}D, the fine one {d}D", coarse.dimension()),
        });
    }
    let materials = fine.materials();
    if materials.len() != fine.mesh().element_count() {
        return Err(HookeError::Mesh {
            reason: "numerical coarsening needs a fine model of elements only (one material each)".into(),
        });
    }
    let fine_simplices = simplices(fine.mesh(), "fine")?;
    let coarse_simplices = simplices(coarse, "coarse")?;
    // 1. Harmonic displacements.
    let facets = boundary_facets(fine.mesh());
    let normals: Vec<Vector3<f64>> = if settings.fine_normals {
        facets.iter().map(|f| f.1).collect()
    } else {
        coarse_normals(&facets, fine.mesh(), coarse)
    };
    let loads: Vec<(Vec<usize>, f64)> = facets.iter().map(|(v, _, m, _)| (v.clone(), *m)).collect();
    let held = settings.held_pins.then(|| harmonic::HeldBoundary {
        dofs: harmonic::permanently_held_dofs(fine),
        facet_tensors: facets
            .iter()
            .map(|f| voigt_tensor(materials[f.3].as_ref(), d))
            .collect(),
    });
    let harmonic = harmonic::harmonic_displacements(fine, &loads, &normals, held.as_ref())?;
    let probes = harmonic.len();
    // 2. Fine mollifiers and each element's GᵀCG.
    let corner_values = |mesh: &Mesh, e: usize, field: &[f64]| -> Vec<f64> {
        mesh.element(e)
            .iter()
            .flat_map(|&v| (0..d).map(move |a| field[v * d + a]))
            .collect()
    };
    // Its columns: the Voigt strains of the fields on the element.
    let mollifier = |mesh: &Mesh, simplex: &Simplex, e: usize, fields: &[Vec<f64>]| -> DMatrix<f64> {
        let columns: Vec<_> = fields
            .iter()
            .map(|field| simplex.strain(&corner_values(mesh, e, field)))
            .collect();
        DMatrix::from_columns(&columns)
    };
    let fine_mollifiers: Vec<DMatrix<f64>> = (0..fine_simplices.len())
        .into_par_iter()
        .map(|e| mollifier(fine.mesh(), &fine_simplices[e], e, &harmonic))
        .collect();
    let fine_tensors: Vec<DMatrix<f64>> = materials.par_iter().map(|m| voigt_tensor(m.as_ref(), d)).collect();
    let energies: Vec<DMatrix<f64>> = fine_mollifiers
        .par_iter()
        .zip(fine_tensors.par_iter())
        .map(|(g, c)| g.transpose() * c * g)
        .collect();
    // 3. The harmonic fields at the coarse vertices, and their coarse strains.
    let fine_grid = ElementGrid::new(&fine_simplices.iter().map(|s| s.corners.clone()).collect::<Vec<_>>());
    let embedding: Vec<Embedding> = coarse
        .vertices()
        .par_iter()
        .map(|p| locate(p, &fine_grid, &fine_simplices))
        .collect();
    let coarse_harmonic: Vec<Vec<f64>> = harmonic
        .iter()
        .map(|field| {
            embedding
                .iter()
                .flat_map(|embedded| {
                    let element = fine.mesh().element(embedded.element);
                    (0..d).map(move |a| {
                        element
                            .iter()
                            .zip(&embedded.coordinates)
                            .map(|(&v, w)| w * field[v * d + a])
                            .sum::<f64>()
                    })
                })
                .collect()
        })
        .collect();
    // 2 (cont.) and 4. Per coarse element: overlaps, averages, ℂ and density.
    let per_element: Vec<Result<CoarseElement>> = (0..coarse_simplices.len())
        .into_par_iter()
        .map(|q| {
            let element = &coarse_simplices[q];
            let mut average = DMatrix::zeros(probes, probes);
            let mut averaged_tensor = DMatrix::zeros(probes, probes);
            let (mut covered, mut mass) = (0.0, 0.0);
            for p in fine_grid.near_element(&element.corners) {
                let shared = overlap(&fine_simplices[p], element);
                if shared > 0.0 {
                    average += &energies[p] * shared;
                    averaged_tensor += &fine_tensors[p] * shared;
                    covered += shared;
                    mass += shared * materials[p].density();
                }
            }
            average /= element.measure;
            let coarse_mollifier = mollifier(coarse, element, q, &coarse_harmonic);
            let inverse = coarse_mollifier.clone().try_inverse().ok_or_else(|| HookeError::Mesh {
                reason: format!(
                    "coarse element {q}: the harmonic displacements sampled at its corners have singular strains (is it outside the fine mesh?)"
                ),
            })?;
            let tensor = inverse.transpose() * &average * &inverse;
            let tensor = (&tensor + tensor.transpose()) * 0.5;
            Ok(CoarseElement {
                tensor,
                averaged_tensor: averaged_tensor / covered.max(f64::MIN_POSITIVE),
                average,
                coarse_mollifier,
                coverage: covered / element.measure,
                mass,
            })
        })
        .collect();
    let mut coarsening = Coarsening {
        dimension: d,
        tensors: Vec::new(),
        densities: Vec::new(),
        coverage: Vec::new(),
        averages: Vec::new(),
        averaged_tensors: Vec::new(),
        coarse_mollifiers: Vec::new(),
        fine_mollifiers,
        harmonic,
        coarse_harmonic,
        embedding,
        lost_mass_fraction: 0.0,
        voids: Vec::new(),
    };
    let mut covered_mass = 0.0;
    for (q, result) in per_element.into_iter().enumerate() {
        let element = result?;
        coarsening.tensors.push(element.tensor);
        coarsening.averages.push(element.average);
        coarsening.averaged_tensors.push(element.averaged_tensor);
        coarsening.coarse_mollifiers.push(element.coarse_mollifier);
        coarsening.coverage.push(element.coverage);
        coarsening.densities.push(element.mass / coarse_simplices[q].measure);
        covered_mass += element.mass;
    }
    let fine_mass: f64 = fine_simplices
        .iter()
        .zip(&materials)
        .map(|(s, m)| s.measure * m.density())
        .sum();
    coarsening.lost_mass_fraction = (1.0 - covered_mass / fine_mass).max(0.0);
    fill_voids(&mut coarsening, &coarse_simplices);
    Ok(coarsening)
}

/// Gives empty coarse elements the void floor and lifts nearly singular tensors to it.
fn fill_voids(coarsening: &mut Coarsening, coarse: &[Simplex]) {
    let solid: Vec<usize> = (0..coarse.len())
        .filter(|&q| coarsening.coverage[q] > VOID_FRACTION)
        .collect();
    let volume: f64 = solid
        .iter()
        .map(|&q| coarse[q].measure)
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let size = coarsening.tensors.first().map_or(0, |c| c.nrows());
    let mean_tensor = solid.iter().fold(DMatrix::zeros(size, size), |sum, &q| {
        sum + &coarsening.tensors[q] * coarse[q].measure
    }) / volume;
    let mean_density = solid
        .iter()
        .map(|&q| coarsening.densities[q] * coarse[q].measure)
        .sum::<f64>()
        / volume;
    let floor = VOID_FRACTION * mean_tensor.clone().symmetric_eigen().eigenvalues.max();
    for q in 0..coarse.len() {
        if coarsening.coverage[q] <= VOID_FRACTION {
            coarsening.tensors[q] = &mean_tensor * VOID_FRACTION;
            coarsening.averaged_tensors[q] = &mean_tensor * VOID_FRACTION;
            coarsening.densities[q] = mean_density * VOID_FRACTION;
            coarsening.voids.push(q);
            continue;
        }
        let eigen = coarsening.tensors[q].clone().symmetric_eigen();
        if eigen.eigenvalues.min() < floor {
            let lifted = eigen.eigenvalues.map(|l| l.max(floor));
            coarsening.tensors[q] =
                &eigen.eigenvectors * DMatrix::from_diagonal(&lifted) * eigen.eigenvectors.transpose();
            coarsening.voids.push(q);
        }
        coarsening.densities[q] = coarsening.densities[q].max(mean_density * VOID_FRACTION);
    }
}

impl Coarsening {
    /// The coarse tensors as Hooke's elasticity tensors (checked symmetric positive definite).
    pub fn elasticity_tensors(&self) -> Result<Vec<ElasticityTensor>> {
        self.tensors
            .iter()
            .enumerate()
            .map(|(q, c)| {
                let rows: Vec<Vec<f64>> = c.row_iter().map(|r| r.iter().copied().collect()).collect();
                ElasticityTensor::from_rows(&rows, self.dimension, &format!("coarse element {q}"))
            })
            .collect()
    }

    /// The tensor file `anisotropic_linear`'s `elasticity_file` reads: the
    /// upper triangle of each ℂ (or of each volume-averaged C when
    /// `averaged`) and the element's density.
    pub fn tensor_file(&self, averaged: bool) -> String {
        let tensors = if averaged {
            &self.averaged_tensors
        } else {
            &self.tensors
        };
        let size = tensors.first().map_or(0, |c| c.nrows());
        let mut text = String::from("# numerical coarsening (Kharevych 2010 thesis, ch. 4): per coarse element, the upper triangle of\n# its Voigt elasticity matrix (engineering shears) row by row, then its density\nelement");
        for i in 0..size {
            for j in i..size {
                text.push_str(&format!(",c{}{}", i + 1, j + 1));
            }
        }
        text.push_str(",density\n");
        for (q, c) in tensors.iter().enumerate() {
            text.push_str(&q.to_string());
            for i in 0..size {
                for j in i..size {
                    text.push_str(&format!(",{:e}", c[(i, j)]));
                }
            }
            text.push_str(&format!(",{:e}\n", self.densities[q]));
        }
        text
    }
}
