//! `[contact]` in a scene: the barrier contact term of the bodies' surfaces
//! and the plane obstacles, and the refusal of a start that already
//! intersects or lies closer than d̂.

use super::format::{ContactSection, ContactStiffness, SceneFile};
use crate::contact::{intersection, BarrierContact, BarrierStiffness, ContactPlane, ContactSurface};
use crate::error::{HookeError, Result};
use crate::model::{Model, ObstacleShape};
use nalgebra::Vector3;

/// The default d̂ over the diagonal of the bodies' bounding box (Li et al.
/// 2020 use 10⁻³ of the scene's diagonal in most examples).
pub const DEFAULT_DISTANCE_SCALE: f64 = 1e-3;

/// Adds barrier contact to `model` as `section` asks, with `bodies` the body
/// of each vertex (without self-contact, pairs within one body do not count).
pub(super) fn add_contact(
    file: &SceneFile,
    section: &ContactSection,
    model: &mut Model,
    bodies: &[usize],
    notes: &mut Vec<String>,
) -> Result<()> {
    let (surface, planes, dhat) = parts(file, section, model, notes)?;
    let rule = match section.stiffness {
        ContactStiffness::Adaptive => BarrierStiffness::Adaptive,
        ContactStiffness::Fixed(k) => BarrierStiffness::Fixed(k),
    };
    let mut term = BarrierContact::new(surface, model.rest_positions(), planes, dhat, rule)?;
    if !section.self_contact {
        term = term.without_self_contact(bodies.to_vec());
    }
    model.add_term(Box::new(term))
}

/// Refuses a start `x0` (3 per vertex) that intersects or lies closer than d̂.
pub(super) fn check_start(
    file: &SceneFile,
    section: &ContactSection,
    model: &Model,
    bodies: &[usize],
    x0: &[f64],
) -> Result<()> {
    let (surface, planes, dhat) = parts(file, section, model, &mut Vec::new())?;
    refuse_a_start_in_contact(&surface, &planes, bodies, x0, dhat, section.self_contact)
}

/// The contact surface, the planes and d̂ of a scene.
fn parts(
    file: &SceneFile,
    section: &ContactSection,
    model: &Model,
    notes: &mut Vec<String>,
) -> Result<(ContactSurface, Vec<ContactPlane>, f64)> {
    let x0 = model.rest_positions();
    let Some(mesh) = model.mesh().tetrahedra() else {
        return Err(HookeError::scene(
            "contact",
            "barrier contact is 3D so far; 2D point–edge contact is not built yet",
        ));
    };
    if !file.networks.is_empty() {
        return Err(HookeError::scene(
            "contact",
            "cloths and ropes (networks) in barrier contact are not built yet; the bodies' tetrahedra are",
        ));
    }
    let surface = ContactSurface::of_tetrahedra(mesh);
    let diagonal = {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for v in &surface.vertices {
            let p = Vector3::new(x0[3 * v], x0[3 * v + 1], x0[3 * v + 2]);
            lo = lo.inf(&p);
            hi = hi.sup(&p);
        }
        (hi - lo).norm()
    };
    let dhat = section.distance.unwrap_or(DEFAULT_DISTANCE_SCALE * diagonal);
    if section.distance.is_none() {
        notes.push(format!(
            "contact: the barrier acts below d̂ = {dhat:.3e} m ({DEFAULT_DISTANCE_SCALE:e} of the bodies' diagonal, {diagonal:.3} m); set contact.distance to change it"
        ));
    }
    let planes: Vec<ContactPlane> = file
        .obstacles
        .iter()
        .map(|o| match o.shape {
            ObstacleShape::Plane { point, normal } => ContactPlane::new(Vector3::from(point), Vector3::from(normal)),
            _ => unreachable!("the scene's checks take planes only with [contact]"),
        })
        .collect();
    Ok((surface, planes, dhat))
}

fn at(x: &[f64], v: usize) -> Vector3<f64> {
    Vector3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2])
}

fn place(p: &Vector3<f64>) -> String {
    format!("({:.4}, {:.4}, {:.4})", p.x, p.y, p.z)
}

fn bodies_named(bodies: &[usize], vertices: &[usize]) -> String {
    let (first, other) = (
        bodies[vertices[0]],
        vertices.iter().map(|&v| bodies[v]).find(|&b| b != bodies[vertices[0]]),
    );
    match other {
        Some(second) => format!("bodies[{}] and bodies[{}]", first.min(second), first.max(second)),
        None => format!("bodies[{first}] (with itself)"),
    }
}

/// A start that intersects, or where two primitives (or a vertex and a plane)
/// are closer than d̂, is refused: the barrier would be infinite or the first
/// step would push them apart with a jolt no scene means.
fn refuse_a_start_in_contact(
    surface: &ContactSurface,
    planes: &[ContactPlane],
    bodies: &[usize],
    x0: &[f64],
    dhat: f64,
    self_contact: bool,
) -> Result<()> {
    let counts = |vertices: &[usize]| self_contact || vertices.iter().any(|&v| bodies[v] != bodies[vertices[0]]);
    if let Some(crossing) = intersection::first_crossing(surface, x0) {
        let vertices = [crossing.edge[0], crossing.edge[1], crossing.face[0]];
        if counts(&vertices) {
            return Err(HookeError::scene(
                "contact",
                format!(
                    "{} intersect at the start, near {}: move them apart by more than d̂ = {dhat:.3e} m",
                    bodies_named(bodies, &vertices),
                    place(&crossing.point)
                ),
            ));
        }
    }
    for (p, plane) in planes.iter().enumerate() {
        for &v in &surface.vertices {
            let d = (at(x0, v) - plane.point).dot(&plane.normal);
            if d < dhat {
                let what = if d <= 0.0 { "is inside" } else { "is closer than d̂ to" };
                return Err(HookeError::scene(
                    format!("obstacles[{p}]"),
                    format!(
                        "bodies[{}] {what} the plane at the start (vertex {v} at {}, {d:.3e} m from it; d̂ = {dhat:.3e} m): move the body or the plane",
                        bodies[v],
                        place(&at(x0, v))
                    ),
                ));
            }
        }
    }
    let pairs = crate::contact::potential::active_pairs(surface, x0, x0, dhat);
    if let Some(pair) = pairs.iter().find(|p| counts(&p.vertices)) {
        let centre = pair.vertices.iter().map(|&v| at(x0, v)).sum::<Vector3<f64>>() / 4.0;
        return Err(HookeError::scene(
            "contact",
            format!(
                "{} start closer than d̂ = {dhat:.3e} m near {}: move them apart, or set a smaller contact.distance",
                bodies_named(bodies, &pair.vertices),
                place(&centre)
            ),
        ));
    }
    Ok(())
}
