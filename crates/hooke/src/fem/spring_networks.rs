//! Generated mass-spring networks: straight and coiled ropes, and cloth grids
//! with stretch, shear and bend springs (Chen 2019 thesis, ch. 4). Rest lengths are the
//! generated distances; masses come from a line or area density.

use super::Spring;
use crate::error::{HookeError, Result};
use nalgebra::Vector3;

/// A generated network with local vertex indices.
#[derive(Clone, Debug, Default)]
pub struct NetworkPart {
    /// Positions of the network's vertices, m.
    pub vertices: Vec<Vector3<f64>>,
    /// The springs, with rest lengths the generated distances.
    pub springs: Vec<Spring>,
    /// The mass lumped at each vertex, kg.
    pub masses: Vec<f64>,
    /// Cloth: the grid's triangles (two per cell), for membrane elements.
    pub triangles: Vec<[usize; 3]>,
}

fn spring(vertices: &[Vector3<f64>], a: usize, b: usize, stiffness: f64) -> Spring {
    Spring {
        vertices: [a, b],
        rest_length: (vertices[a] - vertices[b]).norm(),
        stiffness,
    }
}

/// A chain through `points`: each segment a spring of stiffness EA/l₀ (axial
/// stiffness EA in N, so the rope's stretch does not depend on the segment count),
/// each vertex half the mass of its neighbouring segments.
pub fn chain(points: Vec<Vector3<f64>>, axial_stiffness: f64, line_density: f64) -> Result<NetworkPart> {
    if points.len() < 2 {
        return Err(HookeError::Mesh {
            reason: "a rope needs at least one segment".to_string(),
        });
    }
    let mut masses = vec![0.0; points.len()];
    let mut springs = Vec::with_capacity(points.len() - 1);
    for i in 0..points.len() - 1 {
        let length = (points[i + 1] - points[i]).norm();
        if length.is_nan() || length <= 0.0 {
            return Err(HookeError::Mesh {
                reason: format!("rope segment {i} has zero length"),
            });
        }
        springs.push(Spring {
            vertices: [i, i + 1],
            rest_length: length,
            stiffness: axial_stiffness / length,
        });
        masses[i] += 0.5 * line_density * length;
        masses[i + 1] += 0.5 * line_density * length;
    }
    Ok(NetworkPart {
        vertices: points,
        springs,
        masses,
        triangles: Vec::new(),
    })
}

/// Points of a straight rope from `start` to `end`.
pub fn straight_rope(start: Vector3<f64>, end: Vector3<f64>, segments: usize) -> Result<Vec<Vector3<f64>>> {
    crate::mesh::limits::check_generated("rope", &[segments], 1)?;
    Ok((0..=segments)
        .map(|i| start + (end - start) * (i as f64 / segments as f64))
        .collect())
}

/// Points of a coiled rope: a helix about the z axis through `center`, rising `pitch` per turn.
pub fn helix_rope(
    center: Vector3<f64>,
    radius: f64,
    pitch: f64,
    turns: f64,
    segments: usize,
) -> Result<Vec<Vector3<f64>>> {
    crate::mesh::limits::check_generated("helix", &[segments], 1)?;
    Ok((0..=segments)
        .map(|i| {
            let angle = 2.0 * std::f64::consts::PI * turns * i as f64 / segments as f64;
            center
                + Vector3::new(
                    radius * angle.cos(),
                    radius * angle.sin(),
                    pitch * angle / (2.0 * std::f64::consts::PI),
                )
        })
        .collect())
}

/// Cloth stiffnesses, N/m per spring.
#[derive(Clone, Copy, Debug)]
pub struct ClothStiffness {
    /// Stiffness of the stretch springs on the grid edges (0: none).
    pub stretch: f64,
    /// Stiffness of the shear springs on both diagonals of each cell (0: none).
    pub shear: f64,
    /// Stiffness of the bend springs across every second vertex (0: none).
    pub bend: f64,
}

/// A rectangular cloth in the plane z = origin.z: (cells + 1) vertices per side,
/// stretch springs on grid edges, shear springs on both cell diagonals, bend
/// springs across every second vertex. Zero stiffness leaves a family out.
pub fn cloth(
    origin: Vector3<f64>,
    size: [f64; 2],
    cells: [usize; 2],
    stiffness: ClothStiffness,
    area_density: f64,
) -> Result<NetworkPart> {
    let [nx, ny] = cells;
    // At most 4 stretch, shear and bend springs per cell, plus the vertices.
    crate::mesh::limits::check_generated("cloth", &cells, 8)?;
    if !(size[0] > 0.0 && size[1] > 0.0) {
        return Err(HookeError::Mesh {
            reason: format!("cloth needs positive size and cells, got size {size:?}, cells {cells:?}"),
        });
    }
    let index = |i: usize, j: usize| i + (nx + 1) * j;
    let mut vertices = Vec::with_capacity((nx + 1) * (ny + 1));
    for j in 0..=ny {
        for i in 0..=nx {
            vertices.push(origin + Vector3::new(size[0] * i as f64 / nx as f64, size[1] * j as f64 / ny as f64, 0.0));
        }
    }
    let mut springs = Vec::new();
    let add = |a: usize, b: usize, k: f64, springs: &mut Vec<Spring>| {
        if k > 0.0 {
            springs.push(spring(&vertices, a, b, k));
        }
    };
    for j in 0..=ny {
        for i in 0..=nx {
            if i < nx {
                add(index(i, j), index(i + 1, j), stiffness.stretch, &mut springs);
            }
            if j < ny {
                add(index(i, j), index(i, j + 1), stiffness.stretch, &mut springs);
            }
            if i < nx && j < ny {
                add(index(i, j), index(i + 1, j + 1), stiffness.shear, &mut springs);
                add(index(i + 1, j), index(i, j + 1), stiffness.shear, &mut springs);
            }
            if i + 2 <= nx {
                add(index(i, j), index(i + 2, j), stiffness.bend, &mut springs);
            }
            if j + 2 <= ny {
                add(index(i, j), index(i, j + 2), stiffness.bend, &mut springs);
            }
        }
    }
    let mut triangles = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (index(i, j), index(i + 1, j), index(i + 1, j + 1), index(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    let cell_mass = area_density * size[0] * size[1] / (nx * ny) as f64;
    let mut masses = vec![0.0; vertices.len()];
    for j in 0..ny {
        for i in 0..nx {
            for v in [index(i, j), index(i + 1, j), index(i, j + 1), index(i + 1, j + 1)] {
                masses[v] += 0.25 * cell_mass;
            }
        }
    }
    Ok(NetworkPart {
        vertices,
        springs,
        masses,
        triangles,
    })
}
