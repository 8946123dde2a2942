//! Obstacles as triangles for pictures: a sphere as a latitude–longitude
//! ball, a box as its twelve faces, and a plane (unbounded) as a square patch
//! large enough to fill the view around the body.

use crate::model::ObstacleShape;
use nalgebra::Vector3;

/// Bands of latitude and of longitude of a drawn sphere: smooth enough at
/// the sizes pictures are drawn, cheap beside any body.
const SPHERE_BANDS: (usize, usize) = (16, 32);

/// The triangles that draw `shape`; a plane becomes a square of half-width
/// `half_width` centred on the point of the plane nearest `focus`.
pub(crate) fn obstacle_triangles(
    shape: &ObstacleShape,
    focus: Vector3<f64>,
    half_width: f64,
) -> Vec<[Vector3<f64>; 3]> {
    match shape {
        ObstacleShape::Sphere { center, radius } => sphere(Vector3::from(*center), *radius),
        ObstacleShape::Box { min, max } => {
            // A 2D box reaches to ±∞ in z: drawn as deep as a plane's square is wide.
            let bound = |value: f64, side: f64, axis: usize| match value.is_finite() {
                true => value,
                false => focus[axis] + side * half_width,
            };
            let low = Vector3::from_fn(|a, _| bound(min[a], -1.0, a));
            let high = Vector3::from_fn(|a, _| bound(max[a], 1.0, a));
            cuboid(low, high)
        }
        ObstacleShape::Plane { point, normal } => {
            let [a, b, c, d] = plane_square(Vector3::from(*point), Vector3::from(*normal), focus, half_width);
            vec![[a, b, c], [a, c, d]]
        }
        ObstacleShape::Torus {
            center,
            axis,
            major_radius,
            minor_radius,
        } => torus(
            Vector3::from(*center),
            Vector3::from(*axis).normalize(),
            *major_radius,
            *minor_radius,
        ),
        ObstacleShape::Mesh { surface, .. } => surface
            .iter()
            .flat_map(|s| s.triangles.iter().map(|t| t.map(|v| s.vertices[v])))
            .collect(),
    }
}

/// Sections around the ring and around its tube of a drawn torus.
const TORUS_BANDS: (usize, usize) = (48, 16);

fn torus(center: Vector3<f64>, axis: Vector3<f64>, major: f64, minor: f64) -> Vec<[Vector3<f64>; 3]> {
    let u = crate::linalg::orthogonal_unit(&axis);
    let v = axis.cross(&u);
    let (around, tube) = TORUS_BANDS;
    let point = |i: usize, j: usize| {
        let phi = 2.0 * std::f64::consts::PI * i as f64 / around as f64;
        let theta = 2.0 * std::f64::consts::PI * j as f64 / tube as f64;
        let radial = u * phi.cos() + v * phi.sin();
        center + radial * (major + minor * theta.cos()) + axis * (minor * theta.sin())
    };
    let mut triangles = Vec::with_capacity(2 * around * tube);
    for i in 0..around {
        for j in 0..tube {
            let (a, b, c, d) = (point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    triangles
}

/// The corners, in order around it, of the square of half-width `half_width`
/// on the plane through `point` with `normal`, centred nearest `focus`.
pub(crate) fn plane_square(
    point: Vector3<f64>,
    normal: Vector3<f64>,
    focus: Vector3<f64>,
    half_width: f64,
) -> [Vector3<f64>; 4] {
    let n = normal.normalize();
    let centre = focus - n * (focus - point).dot(&n);
    // Any direction not along n spans the plane with n × it.
    let helper = if n.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() };
    let u = n.cross(&helper).normalize() * half_width;
    let v = n.cross(&u);
    [centre - u - v, centre + u - v, centre + u + v, centre - u + v]
}

fn sphere(center: Vector3<f64>, radius: f64) -> Vec<[Vector3<f64>; 3]> {
    let (bands, sectors) = SPHERE_BANDS;
    let point = |i: usize, j: usize| {
        let polar = std::f64::consts::PI * i as f64 / bands as f64;
        let azimuth = 2.0 * std::f64::consts::PI * j as f64 / sectors as f64;
        center + radius * Vector3::new(polar.sin() * azimuth.cos(), polar.sin() * azimuth.sin(), polar.cos())
    };
    let mut triangles = Vec::with_capacity(2 * bands * sectors);
    for i in 0..bands {
        for j in 0..sectors {
            let (a, b, c, d) = (point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1));
            // The quads at the poles degenerate to one triangle each.
            if i + 1 < bands {
                triangles.push([a, b, c]);
            }
            if i > 0 {
                triangles.push([a, c, d]);
            }
        }
    }
    triangles
}

fn cuboid(min: Vector3<f64>, max: Vector3<f64>) -> Vec<[Vector3<f64>; 3]> {
    let corner = |k: usize| {
        Vector3::new(
            if k & 1 == 0 { min.x } else { max.x },
            if k & 2 == 0 { min.y } else { max.y },
            if k & 4 == 0 { min.z } else { max.z },
        )
    };
    // Each face as four corner numbers in order around it.
    const FACES: [[usize; 4]; 6] = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    FACES
        .iter()
        .flat_map(|&[a, b, c, d]| [[corner(a), corner(b), corner(c)], [corner(a), corner(c), corner(d)]])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(triangles: &[[Vector3<f64>; 3]]) -> f64 {
        triangles
            .iter()
            .map(|[a, b, c]| 0.5 * (b - a).cross(&(c - a)).norm())
            .sum()
    }

    #[test]
    fn the_drawn_shapes_have_the_right_surface() {
        let ball = obstacle_triangles(
            &ObstacleShape::Sphere {
                center: [1.0, 2.0, 3.0],
                radius: 0.5,
            },
            Vector3::zeros(),
            1.0,
        );
        let exact = 4.0 * std::f64::consts::PI * 0.25;
        assert!((area(&ball) - exact).abs() < 0.02 * exact, "{}", area(&ball));
        let corners = ball.iter().flatten();
        assert!(corners
            .into_iter()
            .all(|p| ((p - Vector3::new(1.0, 2.0, 3.0)).norm() - 0.5).abs() < 1e-12));

        let cuboid = obstacle_triangles(
            &ObstacleShape::Box {
                min: [0.0; 3],
                max: [1.0, 2.0, 3.0],
            },
            Vector3::zeros(),
            1.0,
        );
        assert!((area(&cuboid) - 2.0 * (2.0 + 3.0 + 6.0)).abs() < 1e-12);

        let floor = ObstacleShape::Plane {
            point: [0.0, 0.0, -1.0],
            normal: [0.0, 0.0, 2.0],
        };
        let patch = obstacle_triangles(&floor, Vector3::new(5.0, 6.0, 7.0), 3.0);
        assert!((area(&patch) - 36.0).abs() < 1e-9);
        let centre = patch.iter().flatten().sum::<Vector3<f64>>() / 6.0;
        assert!(patch.iter().flatten().all(|p| (p.z + 1.0).abs() < 1e-12));
        assert!((centre.xy() - Vector3::new(5.0, 6.0, 0.0).xy()).norm() < 1e-12);

        // A ring's surface is 4π² R r; every drawn corner lies on it.
        let ring = ObstacleShape::Torus {
            center: [1.0, 0.0, 2.0],
            axis: [0.0, 1.0, 1.0],
            major_radius: 0.6,
            minor_radius: 0.15,
        };
        let drawn = obstacle_triangles(&ring, Vector3::zeros(), 1.0);
        let exact = 4.0 * std::f64::consts::PI.powi(2) * 0.6 * 0.15;
        assert!((area(&drawn) - exact).abs() < 0.02 * exact, "{}", area(&drawn));
        assert!(drawn.iter().flatten().all(|p| ring.proximity(p).distance.abs() < 1e-12));
    }
}
