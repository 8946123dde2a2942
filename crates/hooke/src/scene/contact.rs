//! `[contact]` in a scene: the barrier contact term of the bodies' surfaces,
//! the networks' cloth triangles and rope segments, and the obstacles, and
//! the refusal of a start that already intersects or lies closer than d̂.

use super::format::{ContactSection, ContactStiffness};
use crate::contact::{intersection, point as at, ContactSurface};
use crate::error::{HookeError, Result};
use crate::mesh::Mesh;
use crate::model::{
    BarrierContact, BarrierStiffness, ContactPlane, Friction, Model, ObstacleShape, DEFAULT_SLIP_VELOCITY,
};
use nalgebra::Vector3;

/// The default d̂ over the diagonal of the bodies' bounding box (Li et al.
/// 2020 use 10⁻³ of the scene's diagonal in most examples).
pub const DEFAULT_DISTANCE_SCALE: f64 = 1e-3;

/// Who owns each model vertex, for messages: `of_vertex[v]` is a body's
/// index in `[[bodies]]`, or `bodies` plus a network's index.
pub(super) struct Owners<'a> {
    pub of_vertex: &'a [usize],
    pub bodies: usize,
}

/// Adds barrier contact to `model` as `section` asks, with `bodies` the owner
/// of each vertex (without self-contact, pairs within one body or network do
/// not count) and `networks` the cloth triangles and rope segments. Plane and
/// mesh obstacles, read into the model already, join the barrier.
pub(super) fn add_contact(
    section: &ContactSection,
    model: &mut Model,
    bodies: &[usize],
    networks: ContactSurface,
    notes: &mut Vec<String>,
) -> Result<()> {
    let surface = match model.mesh() {
        Mesh::Tetrahedra(mesh) => ContactSurface::of_tetrahedra(mesh).joined(networks),
        Mesh::Triangles(mesh) => ContactSurface::of_plane_triangles(mesh),
    };
    let x0 = model.rest_positions();
    let diagonal =
        crate::contact::bounding_diagonal(&crate::contact::lifted(&x0, model.dimension()), &surface.vertices);
    let dhat = section.distance.unwrap_or(DEFAULT_DISTANCE_SCALE * diagonal);
    if section.distance.is_none() {
        notes.push(format!(
            "contact: the barrier acts below d̂ = {dhat:.3e} m ({DEFAULT_DISTANCE_SCALE:e} of the bodies' diagonal, {diagonal:.3} m); set contact.distance to change it"
        ));
    }
    let planes: Vec<ContactPlane> = model
        .obstacles()
        .iter()
        .filter_map(|o| match o.shape {
            ObstacleShape::Plane { point, normal } => {
                Some(ContactPlane::new(Vector3::from(point), Vector3::from(normal)))
            }
            _ => None,
        })
        .collect();
    let rule = match section.stiffness {
        ContactStiffness::Adaptive => BarrierStiffness::Adaptive,
        ContactStiffness::Fixed(k) => BarrierStiffness::Fixed(k),
    };
    let mut term = BarrierContact::new(surface, x0, planes, dhat, rule)?;
    let mut plane = 0;
    for (o, obstacle) in model.obstacles().iter().enumerate() {
        match &obstacle.shape {
            ObstacleShape::Mesh {
                surface: Some(read), ..
            } => {
                term = term.with_fixed_surface(&read.vertices, &read.triangles);
                if let Some(motion) = &obstacle.motion {
                    term = term.moving_last_surface(read.vertices.len(), motion.clone());
                }
            }
            ObstacleShape::Plane { .. } => {
                if let Some(motion) = &obstacle.motion {
                    if motion.rotates() {
                        return Err(HookeError::scene(
                            format!("obstacles[{o}].motion"),
                            "a plane obstacle moves by translation only; give a turning obstacle as a mesh",
                        ));
                    }
                    term = term.moving_plane(plane, motion.clone())?;
                }
                plane += 1;
            }
            _ => {}
        }
    }
    if !section.self_contact {
        term = term.without_self_contact(bodies.to_vec());
    }
    model.add_term(Box::new(term))?;
    if section.friction > 0.0 {
        // After the barrier: its κ of the step is set when friction lags (model/friction.rs).
        let velocity = section.friction_velocity.unwrap_or(DEFAULT_SLIP_VELOCITY);
        let friction = Friction::new(section.friction, velocity, model.mesh().vertex_count())?
            .with_updates(section.friction_updates.unwrap_or(1))?;
        model.add_term(Box::new(friction))?;
    }
    Ok(())
}

/// Who a vertex of the contact surface belongs to, for messages: a body or a
/// network, or (past the model's vertices) a mesh obstacle, in the scene's order.
fn owner_name(model: &Model, owners: &Owners, contact: &BarrierContact, v: usize) -> String {
    if v < contact.model_vertex_count() {
        let owner = owners.of_vertex[v];
        return match owner.checked_sub(owners.bodies) {
            Some(network) => format!("networks[{network}]"),
            None => format!("bodies[{owner}]"),
        };
    }
    let mut start = contact.model_vertex_count();
    for (o, obstacle) in model.obstacles().iter().enumerate() {
        if let ObstacleShape::Mesh {
            surface: Some(read), ..
        } = &obstacle.shape
        {
            if v < start + read.vertices.len() {
                return format!("obstacles[{o}]");
            }
            start += read.vertices.len();
        }
    }
    "an obstacle".to_string()
}

/// "A and B", or "A (with itself)".
fn owners_named(names: &[String]) -> String {
    match names.iter().find(|n| **n != names[0]) {
        Some(other) => format!("{} and {other}", names[0]),
        None => format!("{} (with itself)", names[0]),
    }
}

/// Refuses a start `x0` (3 per model vertex) that intersects, or where two
/// primitives (or a vertex and a plane) are closer than d̂: the barrier
/// would be infinite, or the first step would push them apart with a jolt
/// no scene means.
pub(super) fn check_start(section: &ContactSection, model: &Model, owners: &Owners, x0: &[f64]) -> Result<()> {
    let Some(contact) = model.barrier_contact() else {
        return Ok(());
    };
    let dhat = contact.activation_distance();
    let x = contact.with_fixed_positions(x0);
    let surface = contact.surface();
    let name = |v: usize| owner_name(model, owners, contact, v);
    let counts = |vertices: &[usize]| {
        let names: Vec<String> = vertices.iter().map(|&v| name(v)).collect();
        let moving = vertices.iter().any(|&v| v < contact.model_vertex_count());
        moving && (section.self_contact || names.iter().any(|n| *n != names[0]))
    };
    if let Some(crossing) = intersection::first_crossing(surface, &x) {
        let vertices = [crossing.edge[0], crossing.edge[1], crossing.crossed_vertex()];
        if counts(&vertices) {
            let names: Vec<String> = vertices.iter().map(|&v| name(v)).collect();
            return Err(HookeError::scene(
                "contact",
                format!(
                    "{} intersect at the start, near {}: move them apart by more than d̂ = {dhat:.3e} m",
                    owners_named(&names),
                    place(&crossing.point)
                ),
            ));
        }
    }
    let planes = model
        .obstacles()
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.shape, ObstacleShape::Plane { .. }));
    for ((p, _), plane) in planes.zip(contact.planes()) {
        for &v in surface.vertices.iter().filter(|&&v| v < contact.model_vertex_count()) {
            let d = (at(&x, v) - plane.point).dot(&plane.normal);
            if d < dhat {
                let what = if d <= 0.0 { "is inside" } else { "is closer than d̂ to" };
                return Err(HookeError::scene(
                    format!("obstacles[{p}]"),
                    format!(
                        "{} {what} the plane at the start (vertex {v} at {}, {d:.3e} m from it; d̂ = {dhat:.3e} m): move the body or the plane",
                        name(v),
                        place(&at(&x, v))
                    ),
                ));
            }
        }
    }
    let rest = contact.with_fixed_positions(&model.rest_positions());
    let pairs = crate::contact::potential::active_pairs(surface, &rest, &x, dhat);
    if let Some(pair) = pairs.iter().find(|p| counts(p.points())) {
        let points = pair.points();
        let centre = points.iter().map(|&v| at(&x, v)).sum::<Vector3<f64>>() / points.len() as f64;
        let names: Vec<String> = points.iter().map(|&v| name(v)).collect();
        return Err(HookeError::scene(
            "contact",
            format!(
                "{} start closer than d̂ = {dhat:.3e} m near {}: move them apart, or set a smaller contact.distance",
                owners_named(&names),
                place(&centre)
            ),
        ));
    }
    Ok(())
}

fn place(p: &Vector3<f64>) -> String {
    format!("({:.4}, {:.4}, {:.4})", p.x, p.y, p.z)
}
