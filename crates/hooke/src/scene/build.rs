//! From a checked scene to a model, an integrator and an initial state.

use super::{MembraneSection, MeshSource, NetworkSection, NetworkShape, Scene};
use crate::contact::ContactSurface;
use crate::error::{HookeError, Result};
use crate::fem::spring_networks::{chain, cloth, helix_rope, straight_rope, ClothStiffness, NetworkPart};
use crate::fem::{Interfaces, Spring, SpringNetwork};
use crate::integrate::Integrator;
use crate::io::{read_mesh, read_planar_mesh};
use crate::mesh::limits::{available_memory, check_memory, model_bytes};
use crate::mesh::{
    box_mesh, rectangle_mesh, stuff_shape, BoxMeshOptions, DiscontinuousMesh, Mesh, TetMesh, TriangleMesh,
};
use crate::model::{Attachment, Model, Pin, RegionForce, State};
use nalgebra::Vector3;

/// Everything needed to run a scene.
pub struct BuiltScene {
    /// The bodies (merged into one mesh) with their materials, pins, forces, contact and damping.
    pub model: Model,
    /// The integrator the scene's `[integrator]` table chose, with its solver settings.
    pub integrator: Box<dyn Integrator>,
    /// The state at t = 0: the rest shape with the bodies' initial velocities, or
    /// what the scene's `initial` table gives (a frame, displacement and velocity tables).
    pub initial_state: State,
    /// Things the user should know (re-oriented elements, removed vertices).
    pub notes: Vec<String>,
}

/// What a program adds to a scene beyond its file.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// A [`PointerSpring`](crate::model::PointerSpring), holding nothing,
    /// for a program whose user grabs the body (an interactive page): it is
    /// in the model before the integrator (and a subspace) is built from it,
    /// and [`Model::set_pointer_spring`](crate::model::Model::set_pointer_spring) moves it.
    pub pointer: bool,
    /// A subspace's eigenmodes and cubature, as
    /// [`ReducedModel::precomputed`](crate::reduced::ReducedModel::precomputed) wrote them
    /// (`hooke export-web`), used instead of computing them or reading the cache: the same
    /// subspace, bit for bit, wherever the scene is built.
    pub subspace: Option<Vec<u8>>,
}

impl Scene {
    /// Builds meshes, materials, pins, forces, damping and the integrator:
    /// the bodies and networks as one mesh, the model with its terms, what
    /// holds and loads it, the integrator with its checks, and the state at
    /// t = 0.
    pub fn build(&self) -> Result<BuiltScene> {
        self.build_with(&BuildOptions::default())
    }

    /// The eigenmodes and cubature of this `[subspace]` scene, as
    /// [`BuildOptions::subspace`] takes them (JSON; read from the cache when
    /// it holds them): computed once where it is quick, they give a browser
    /// or another machine the same subspace, bit for bit.
    pub fn precompute_subspace(&self) -> Result<Vec<u8>> {
        let Some(section) = &self.file.subspace else {
            return Err(HookeError::scene(
                "subspace",
                "the scene has no [subspace] table to precompute",
            ));
        };
        let settings = crate::reduced::SubspaceSettings {
            modes: section.modes,
            cubature_points: section.cubature_points,
            seed: section.seed,
        };
        // The model as build_with has it when it makes the subspace (bodies,
        // pins and loads; the modes and cubature depend on nothing added
        // later), without building the subspace integrator too: where the
        // cache cannot be written that would compute everything twice.
        let mut notes = Vec::new();
        let assembled = self.assemble_bodies(&mut notes)?;
        let mut model = self.model_of(assembled)?;
        self.hold_and_load(&mut model, &mut notes)?;
        Ok(crate::reduced::ReducedModel::with_cache(&model, &settings, Some(&self.cache_folder()))?.precomputed())
    }

    /// As [`Scene::build`], with what `options` add.
    pub fn build_with(&self, options: &BuildOptions) -> Result<BuiltScene> {
        let mut notes = Vec::new();
        let assembled = self.assemble_bodies(&mut notes)?;
        let initial_velocity = assembled.initial_velocity.clone();
        let bodies = assembled.bodies.clone();
        let network_surface = assembled.network_surface.clone();
        let mut model = self.model_of(assembled)?;
        self.hold_and_load(&mut model, &mut notes)?;
        if options.pointer {
            model.set_pointer_spring(crate::model::PointerSpring::new(None, 0.0))?;
        }
        if let Some(contact) = &self.file.contact {
            super::contact::add_contact(contact, &mut model, &bodies, network_surface, &mut notes)?;
        }
        let integrator = self.integrator_for(&mut model, options, &mut notes)?;
        let initial_state = self.initial_state(&mut model, initial_velocity)?;
        if let Some(contact) = &self.file.contact {
            let owners = super::contact::Owners {
                of_vertex: &bodies,
                bodies: self.file.bodies.len(),
            };
            super::contact::check_start(contact, &model, &owners, &initial_state.positions)?;
        }
        notes.extend(
            integrator
                .notes(&model, &initial_state, self.file.simulation.time_step)?
                .into_iter()
                .map(|note| format!("integrator: {note}")),
        );
        Ok(BuiltScene {
            integrator,
            model,
            initial_state,
            notes,
        })
    }

    /// The bodies and networks merged into one mesh (tetrahedra and springs,
    /// or triangles in 2D), each element's material, the initial velocity of
    /// every vertex, and what the model adds on top (interfaces, membranes);
    /// refused before anything is built when it would not fit in memory.
    fn assemble_bodies(&self, notes: &mut Vec<String>) -> Result<Assembled> {
        let file = &self.file;
        let dimension = file.dimension;
        let mut solids = TetMesh::default();
        let mut planar = TriangleMesh::default();
        let mut materials = Vec::new();
        let mut initial_velocity = Vec::new();
        let mut joined = Vec::new();
        // Which vertex of a continuous mesh each vertex is (a copy of): for outputs.
        let mut groups: Vec<usize> = Vec::new();
        let mut group_count = 0;
        let mut bodies = Vec::new();
        for (b, body) in file.bodies.iter().enumerate() {
            let key = format!("bodies[{b}]");
            let mut part = self.body_mesh(&body.mesh, &key, notes)?;
            let mut copies = None;
            if let super::Discretization::Discontinuous(section) = &body.discretization {
                let Mesh::Triangles(triangles) = &part else {
                    return Err(HookeError::scene(
                        format!("{key}.discretization"),
                        "discontinuous Galerkin bodies are 2D only (dimension = 2)",
                    ));
                };
                let split = DiscontinuousMesh::new(triangles)?;
                let interfaces: Vec<_> = split
                    .interfaces
                    .iter()
                    .map(|i| i.offset(planar.triangle_count(), planar.vertex_count()))
                    .collect();
                joined.push((b, *section, interfaces));
                copies = Some((split.continuous_vertex_count(), split.continuous_vertex.clone()));
                part = Mesh::Triangles(split.mesh);
            }
            let (count, of_vertex) =
                copies.unwrap_or_else(|| (part.vertex_count(), (0..part.vertex_count()).collect()));
            groups.extend(of_vertex.iter().map(|g| g + group_count));
            group_count += count;
            if body.rotate != [0.0; 3] {
                let turn = nalgebra::Rotation3::from_scaled_axis(Vector3::from(body.rotate));
                let count = part.vertices().len().max(1) as f64;
                let center = part.vertices().iter().sum::<Vector3<f64>>() / count;
                part.vertices_mut()
                    .iter_mut()
                    .for_each(|p| *p = center + turn * (*p - center));
            }
            let offset = Vector3::from(body.translate);
            part.vertices_mut().iter_mut().for_each(|p| *p += offset);

            let mut masks = Vec::with_capacity(body.regions.len());
            for (r, region) in body.regions.iter().enumerate() {
                let key = format!("{key}.regions[{r}].select");
                let mask = region.select.element_mask(&part, &key)?;
                if !mask.contains(&true) {
                    return Err(HookeError::scene(key, "selects no element of the body"));
                }
                masks.push(mask);
            }
            materials.extend(self.materials[b].assign(part.element_count(), &masks)?);
            let vertices = part.vertices();
            bodies.extend(std::iter::repeat_n(b, vertices.len()));
            let centroid = vertices.iter().sum::<Vector3<f64>>() / vertices.len().max(1) as f64;
            let spin = Vector3::from(body.angular_velocity);
            for p in vertices {
                let v = Vector3::from(body.velocity) + spin.cross(&(p - centroid));
                initial_velocity.extend_from_slice(&v.as_slice()[..dimension]);
            }
            match part {
                Mesh::Tetrahedra(part) => solids.append(&part),
                Mesh::Triangles(part) => planar.append(&part),
            }
        }

        // Networks follow the bodies in vertex numbering; their vertices carry their own mass.
        let mut network = SpringNetwork::default();
        let mut membranes = Vec::new();
        let (mut network_faces, mut network_segments) = (Vec::new(), Vec::new());
        for (n, section) in file.networks.iter().enumerate() {
            let part =
                build_network(section).map_err(|e| HookeError::scene(format!("networks[{n}]"), e.to_string()))?;
            let offset = solids.vertex_count();
            debug_assert_eq!(bodies.len(), offset, "every body vertex has its owner");
            bodies.extend(std::iter::repeat_n(file.bodies.len() + n, part.vertices.len()));
            let (faces, segments) = network_contact_primitives(section, &part, offset);
            network_faces.extend(faces);
            network_segments.extend(segments);
            if let Some(membrane) = &section.membrane {
                let triangles: Vec<[usize; 3]> = part.triangles.iter().map(|t| t.map(|v| v + offset)).collect();
                membranes.push((n, membrane.clone(), triangles));
            }
            network.vertex_masses.resize(offset, 0.0);
            network.vertex_masses.extend_from_slice(&part.masses);
            network.springs.extend(part.springs.iter().map(|s| Spring {
                vertices: s.vertices.map(|v| v + offset),
                ..*s
            }));
            initial_velocity.extend(std::iter::repeat_n(section.velocity, part.vertices.len()).flatten());
            solids.vertices.extend(part.vertices);
        }
        let bytes = model_bytes(
            solids.tet_count(),
            if dimension == 2 { planar.triangle_count() } else { 0 },
            network.springs.len(),
        );
        check_memory(bytes, available_memory()).map_err(|reason| HookeError::scene("bodies", reason))?;
        Ok(Assembled {
            solids,
            planar,
            materials,
            network,
            membranes,
            joined,
            groups,
            bodies,
            network_surface: ContactSurface::of_parts(network_faces, network_segments),
            initial_velocity,
        })
    }

    /// The model of the assembled bodies, with the interface terms of
    /// discontinuous bodies and the membranes of cloths.
    fn model_of(&self, assembled: Assembled) -> Result<Model> {
        let Assembled {
            solids,
            planar,
            materials,
            network,
            membranes,
            joined,
            groups,
            ..
        } = assembled;
        let file = &self.file;
        let mut model = if file.dimension == 2 {
            Model::planar(planar, materials, file.simulation.mass)?
        } else {
            Model::with_springs(solids, materials, network, file.simulation.mass)?
        };
        if !joined.is_empty() {
            model.set_vertex_groups(groups)?;
        }
        for (b, section, interfaces) in joined {
            let triangles = &model.mesh().triangles().expect("discontinuous bodies are 2D").triangles;
            let term = Interfaces::new(
                &interfaces,
                triangles,
                &model.materials(),
                &model.rest_positions(),
                section.formulation,
                section.penalty,
            )
            .map_err(|e| HookeError::scene(format!("bodies[{b}].discretization"), e.to_string()))?;
            model.add_term(Box::new(term))?;
        }
        for (n, membrane, triangles) in membranes {
            let term = membrane_term(&membrane, triangles, &model.rest_positions())
                .map_err(|e| HookeError::scene(format!("networks[{n}].membrane"), e.to_string()))?;
            model.add_term(Box::new(term))?;
        }
        Ok(model)
    }

    /// Gravity, pins (hard and soft), attachments, forces, tractions,
    /// damping, tearing and obstacles.
    fn hold_and_load(&self, model: &mut Model, notes: &mut Vec<String>) -> Result<()> {
        let file = &self.file;
        model.set_gravity(Vector3::from(file.gravity));
        model.set_gravity_ramp_time(file.gravity_ramp_time);
        for (p, pin) in file.pins.iter().enumerate() {
            let vertices = pin.select.vertices(model.mesh(), &format!("pins[{p}].select"))?;
            let components = pin.held_components(model.dimension(), &format!("pins[{p}]"))?;
            if let Some(note) = pin
                .release_time
                .and_then(|t| release_inside_step(t, file.simulation.time_step))
            {
                notes.push(format!("pins[{p}].release_time: {note}"));
            }
            match pin.soft {
                Some(soft) => {
                    let masses: Vec<f64> = vertices.iter().map(|&v| model.mass().lumped()[v]).collect();
                    let rest = vertices.iter().map(|&v| model.mesh().vertices()[v]).collect();
                    model.add_term(Box::new(Attachment::new(
                        vertices,
                        rest,
                        &masses,
                        soft.stiffness,
                        pin.motion.clone(),
                        pin.release_time,
                        components,
                        model.dimension(),
                    )))?;
                }
                None => {
                    let mut held = Pin::new(vertices, pin.motion.clone(), pin.release_time);
                    held.components = components;
                    held.key = Some(format!("pins[{p}]"));
                    model.add_pin(held);
                }
            }
        }
        for (a, attachment) in file.attachments.iter().enumerate() {
            let vertices = attachment
                .select
                .vertices(model.mesh(), &format!("attachments[{a}].select"))?;
            let masses: Vec<f64> = vertices.iter().map(|&v| model.mass().lumped()[v]).collect();
            let targets = match &attachment.target {
                Some(t) => vec![Vector3::new(t[0], t[1], t.get(2).copied().unwrap_or(0.0)); vertices.len()],
                None => vertices.iter().map(|&v| model.mesh().vertices()[v]).collect(),
            };
            model.add_term(Box::new(Attachment::new(
                vertices,
                targets,
                &masses,
                attachment.stiffness,
                crate::model::Motion::Fixed {},
                None,
                [true; 3],
                model.dimension(),
            )))?;
        }
        for (f, force) in file.forces.iter().enumerate() {
            let vertices = force.select.vertices(model.mesh(), &format!("forces[{f}].select"))?;
            let masses: Vec<f64> = vertices.iter().map(|&v| model.mass().lumped()[v]).collect();
            let total_mass: f64 = masses.iter().sum();
            model.add_force(RegionForce {
                shares: masses.iter().map(|m| m / total_mass).collect(),
                vertices,
                total: Vector3::from(force.total),
                amplitude: Vector3::from(force.amplitude),
                frequency: force.frequency,
                phase: force.phase,
                ramp_time: force.ramp_time,
                dimension: model.dimension(),
            });
        }
        for (t, traction) in file.tractions.iter().enumerate() {
            let key = format!("tractions[{t}]");
            let selected = traction.select.vertices(model.mesh(), &format!("{key}.select"))?;
            let chosen: std::collections::HashSet<usize> = selected.into_iter().collect();
            let faces: Vec<[usize; 3]> = match model.mesh() {
                crate::mesh::Mesh::Tetrahedra(tets) => crate::mesh::boundary_faces(tets)
                    .into_iter()
                    .map(|(face, _)| face)
                    .filter(|face| face.iter().all(|v| chosen.contains(v)))
                    .collect(),
                crate::mesh::Mesh::Triangles(_) => Vec::new(),
            };
            if faces.is_empty() {
                return Err(HookeError::scene(
                    format!("{key}.select"),
                    "selects no boundary face (a face is loaded when its three corners are selected)",
                ));
            }
            model.add_surface_load(crate::model::SurfaceLoad::on_faces(
                model.mesh().vertices(),
                &faces,
                Vector3::from(traction.traction),
                traction.pressure,
                traction.ramp_time,
            ));
        }
        model.set_damping(file.damping)?;
        model.set_tearing_limit(file.tearing.as_ref().map(|t| t.stretch));
        for (o, obstacle) in file.obstacles.iter().enumerate() {
            let mut obstacle = obstacle.clone();
            if let crate::model::ObstacleShape::Mesh { file, surface } = &mut obstacle.shape {
                let full = self.base_directory.join(&*file);
                let key = format!("obstacles[{o}].shape.mesh.file");
                let read = crate::io::read_surface(&full).map_err(|e| missing_file(e, &key, &full))?;
                if read.triangles.is_empty() {
                    return Err(HookeError::scene(key, format!("{} has no triangles", full.display())));
                }
                *surface = Some(std::sync::Arc::new(read));
            }
            model.add_obstacle(obstacle);
        }
        Ok(())
    }

    /// The integrator the scene names, checked against the model, with the
    /// minimiser's checks, EigenFit, surface constraints and reduced
    /// coordinates added to the model where the scene asks for them; a
    /// subspace or the mixed formulation replaces it by its own.
    fn integrator_for(
        &self,
        model: &mut Model,
        options: &BuildOptions,
        notes: &mut Vec<String>,
    ) -> Result<Box<dyn Integrator>> {
        let file = &self.file;
        let mut integrator = file.integrator.build(&file.integrator_solver())?;
        let entry = file.integrator.entry()?;
        if !entry.uses_solver && file.solver != crate::solve::SolverSettings::default() {
            let key = match file.solver.kind.as_str() {
                "newton" => "solver",
                _ => "solver.kind",
            };
            // Its step solves no minimisation, so the chosen minimiser would be ignored.
            return Err(HookeError::scene(
                key,
                format!(
                    "{} minimises nothing at a step, so it takes no minimiser and no [solver] settings; remove them or choose an integrator that minimises ({})",
                    entry.name,
                    crate::integrate::registry::INTEGRATORS
                        .iter()
                        .filter(|e| e.uses_solver)
                        .map(|e| e.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if let Some(section) = &file.eigenfit {
            self.add_eigenfit(model, section, integrator.name(), notes)?;
        }
        if file.solver.tolerance < 4.0 * f64::EPSILON {
            notes.push(format!(
                "solver.tolerance = {:e} is below what double precision resolves (about {:.0e} of the body's size): Newton will stall at rounding level, and the run will say which steps stopped short",
                file.solver.tolerance,
                4.0 * f64::EPSILON
            ));
        }
        for (c, constraint) in file.constraints.iter().enumerate() {
            let key = format!("constraints[{c}]");
            let vertices = constraint.select.vertices(model.mesh(), &format!("{key}.select"))?;
            let surface = crate::model::SurfaceConstraint {
                vertices,
                shape: constraint.surface.clone(),
            };
            surface.validate(model.mesh().vertex_count(), &key)?;
            model.add_constraint(surface)?;
        }

        if let Some(coordinates) = &file.coordinates {
            let subspace = reduced_coordinates(model, coordinates)?;
            model.set_subspace(Some(subspace))?;
        }
        match &file.subspace {
            Some(section) => {
                integrator = self.subspace_integrator(model, section, integrator.name(), options, notes)?;
                integrator.check(model)?;
            }
            None if crate::solve::registry::entry(&file.solver.kind).is_none() => {
                // A solver with an integrator of its own (the mixed formulation's).
                let build = crate::reduced::registry::entry(&file.solver.kind)
                    .and_then(|e| e.full_space)
                    .ok_or_else(|| {
                        HookeError::scene(
                            "solver.kind",
                            format!("{} steps a [subspace] only; this scene has none", file.solver.kind),
                        )
                    })?;
                if integrator.name() != "backward_euler" {
                    return Err(HookeError::scene(
                        "solver.kind",
                        format!(
                            "{} steps by backward Euler; {} cannot take it",
                            file.solver.kind,
                            integrator.name()
                        ),
                    ));
                }
                integrator = build(model, &file.solver)?;
                integrator.check(model)?;
            }
            None => {
                // Whether the integrator handles what the model holds: a scene error naming the key.
                integrator.check(model)?;
                file.solver.check_model(model, "solver")?;
            }
        }
        if let Some([low, high]) = file.solver.laplacian_stretches {
            model.set_laplacian_stretches(crate::material::laplacian_weight::StretchSamples {
                low,
                high,
                samples: crate::material::laplacian_weight::DEFAULT_STRETCHES.samples,
            });
        }

        Ok(integrator)
    }

    /// The state at t = 0: rest positions with the bodies' velocities, or the
    /// scene's `[initial]` frame and tables; pinned vertices move as their
    /// motion says, and gravity's datum is set there.
    fn initial_state(&self, model: &mut Model, initial_velocity: Vec<f64>) -> Result<State> {
        let file = &self.file;
        let dimension = file.dimension;
        let mut initial_state = model.initial_state();
        initial_state.velocities = initial_velocity;
        if let Some(initial) = &file.initial {
            if let Some(frame) = &initial.frame {
                if initial.displacement.is_some() || initial.velocity.is_some() {
                    return Err(HookeError::scene(
                        "initial",
                        "give a frame, or displacement and velocity tables, not both",
                    ));
                }
                let frame = self.base_directory.join(frame);
                initial_state = crate::modal::state_at_frame(model, &frame, 0.0)
                    .map_err(|error| HookeError::scene("initial.frame", error.to_string()))?;
            }
            let vertices = model.mesh().vertex_count();
            if let Some(table) = &initial.displacement {
                let displacement = read_vertex_table(&self.base_directory.join(table), vertices, dimension)?;
                initial_state
                    .positions
                    .iter_mut()
                    .zip(displacement)
                    .for_each(|(x, u)| *x += u);
            }
            if let Some(table) = &initial.velocity {
                initial_state.velocities = read_vertex_table(&self.base_directory.join(table), vertices, dimension)?;
            }
        }
        // Pinned vertices move as their motion says from the start (a rotating pin has a velocity at t = 0).
        model.apply_prescribed_velocities(0.0, &mut initial_state.velocities);
        // Gravitational energy is reported relative to where the run starts.
        model.set_gravity_datum(&initial_state.positions);
        Ok(initial_state)
    }
}

/// The bodies and networks of a scene merged, before the model is built.
struct Assembled {
    solids: TetMesh,
    planar: TriangleMesh,
    materials: Vec<crate::material::MaterialRef>,
    network: SpringNetwork,
    /// Each cloth membrane: its network, its table and its triangles.
    membranes: Vec<(usize, MembraneSection, Vec<[usize; 3]>)>,
    /// Each discontinuous body: its index, its section and its interfaces.
    joined: Vec<(usize, super::DiscontinuousSection, Vec<crate::mesh::Interface>)>,
    /// Which vertex of a continuous mesh each vertex is a copy of.
    groups: Vec<usize>,
    /// Who owns each vertex: its body's index in `[[bodies]]`, or for a
    /// network's vertex the bodies' count plus the network's index.
    bodies: Vec<usize>,
    /// What of the networks barrier contact acts on: cloth triangles and rope segments.
    network_surface: ContactSurface,
    initial_velocity: Vec<f64>,
}

/// A file the scene names that is not there: the key that names it and the
/// path tried (relative paths are the scene file's folder's).
fn missing_file(error: HookeError, key: &str, tried: &std::path::Path) -> HookeError {
    match error {
        HookeError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => HookeError::scene(
            key,
            format!(
                "no file {} (a relative path is read from the scene file's folder)",
                tried.display()
            ),
        ),
        other => other,
    }
}

impl Scene {
    /// The mesh of one body: generated, read from a file (re-oriented where
    /// needed, with a note), or meshed from a shape.
    fn body_mesh(&self, source: &MeshSource, key: &str, notes: &mut Vec<String>) -> Result<Mesh> {
        Ok(match source {
            MeshSource::Box(section) => Mesh::Tetrahedra(box_mesh(&BoxMeshOptions {
                origin: Vector3::from(section.origin),
                size: Vector3::from(section.size),
                cells: section.cells,
                tets_per_hex: section.tets_per_hex(&format!("{key}.mesh.box"))?,
            })?),
            MeshSource::Rectangle(section) => {
                Mesh::Triangles(rectangle_mesh(section.origin, section.size, section.cells)?)
            }
            MeshSource::File(path) if self.file.dimension == 2 => {
                let full = self.base_directory.join(path);
                let mut part =
                    read_planar_mesh(&full).map_err(|e| missing_file(e, &format!("{key}.mesh.file"), &full))?;
                let removed = part.remove_unused_vertices();
                if removed > 0 {
                    notes.push(format!(
                        "{}: removed {removed} vertices that belong to no triangle",
                        full.display()
                    ));
                }
                let reversed = part.orient().map_err(|e| HookeError::Mesh {
                    reason: format!("{}: {e}", full.display()),
                })?;
                if !reversed.is_empty() {
                    notes.push(format!(
                        "{}: re-oriented {} clockwise triangles (first: {:?})",
                        full.display(),
                        reversed.len(),
                        &reversed[..reversed.len().min(5)]
                    ));
                }
                Mesh::Triangles(part)
            }
            MeshSource::File(path) => {
                let full = self.base_directory.join(path);
                let mut part = read_mesh(&full).map_err(|e| missing_file(e, &format!("{key}.mesh.file"), &full))?;
                let removed = part.remove_unused_vertices();
                if removed > 0 {
                    notes.push(format!(
                        "{}: removed {removed} vertices that belong to no element",
                        full.display()
                    ));
                }
                let report = part.orient().map_err(|e| HookeError::Mesh {
                    reason: format!("{}: {e}", full.display()),
                })?;
                if !report.reoriented.is_empty() {
                    notes.push(format!(
                        "{}: re-oriented {} inside-out elements (first: {:?})",
                        full.display(),
                        report.reoriented.len(),
                        &report.reoriented[..report.reoriented.len().min(5)]
                    ));
                }
                Mesh::Tetrahedra(part)
            }
            MeshSource::Solid(section) => {
                let (part, report) = stuff_shape(&section.shape, section.edge_length)
                    .map_err(|e| HookeError::scene(format!("{key}.mesh.solid"), e.to_string()))?;
                if part.tet_count() == 0 {
                    return Err(HookeError::scene(
                        format!("{key}.mesh.solid"),
                        "the shape is empty at this edge length (no tetrahedron inside it)",
                    ));
                }
                notes.extend(
                    report
                        .notes()
                        .into_iter()
                        .map(|note| format!("{key}.mesh.solid: {note}")),
                );
                let quality = crate::mesh::mesh_quality(&part);
                notes.push(format!(
                    "{key}: meshed {} tets, {} vertices, dihedral angles {:.1}° to {:.1}° ({} vertices snapped to the surface)",
                    part.tet_count(),
                    part.vertex_count(),
                    quality.min_dihedral_degrees,
                    quality.max_dihedral_degrees,
                    report.warped_vertices
                ));
                Mesh::Tetrahedra(part)
            }
        })
    }
}

/// The subspace of a `[coordinates]` table: the lowest modes at rest, pins held.
fn reduced_coordinates(model: &Model, section: &super::CoordinatesSection) -> Result<crate::model::Subspace> {
    let super::CoordinatesSection::Modal { modes } = section;
    let free = model.dof_map(0.0).free_count();
    if *modes > free {
        return Err(HookeError::scene(
            "coordinates.modes",
            format!("{modes} modes of a model with {free} free DOFs"),
        ));
    }
    let rest = model.initial_state();
    let found = crate::modal::lowest_modes(model, &rest, *modes, &Default::default())?;
    let basis = nalgebra::DMatrix::from_fn(model.dof_count(), found.shapes.len(), |row, column| {
        found.shapes[column][row]
    });
    crate::model::Subspace::new(rest.positions, basis)
}

/// Integrators whose steps take EigenFit's low-rank stiffness (the EigenFit
/// paper names semi-implicit and implicit-midpoint steps; Hooke adds backward Euler
/// and the exponential Rosenbrock–Euler, which apply low-rank Jacobians).
const EIGENFIT_INTEGRATORS: &[&str] = &[
    "semi_implicit_backward_euler",
    "semi_implicit_exact",
    "backward_euler",
    "implicit_midpoint",
    "exponential_rosenbrock_euler",
    "siere",
];

impl Scene {
    /// The `[subspace]` table: the skinning eigenmodes and cubature of the
    /// model (Trusty et al. 2023), and backward Euler in them with the `[solver]` kind.
    fn subspace_integrator(
        &self,
        model: &Model,
        section: &super::SubspaceSection,
        integrator: &str,
        options: &BuildOptions,
        notes: &mut Vec<String>,
    ) -> Result<Box<dyn Integrator>> {
        use crate::reduced::{ReducedMethod, SubspaceBackwardEuler, SubspaceSettings};
        let file = &self.file;
        if integrator != "backward_euler" {
            return Err(HookeError::scene(
                "subspace",
                format!("a subspace is stepped by backward_euler (the implicit Euler of Trusty et al. 2023), not {integrator}"),
            ));
        }
        for (present, other) in [
            (file.coordinates.is_some(), "coordinates"),
            (file.eigenfit.is_some(), "eigenfit"),
        ] {
            if present {
                return Err(HookeError::scene(
                    "subspace",
                    format!("[subspace] and [{other}] cannot be combined"),
                ));
            }
        }
        let method = crate::reduced::registry::entry(&file.solver.kind)
            .map(|e| e.subspace_method)
            .ok_or_else(|| {
                HookeError::scene(
                    "solver.kind",
                    format!(
                        "a subspace takes the solvers {}, not {:?}",
                        crate::reduced::registry::names(),
                        file.solver.kind
                    ),
                )
            })?;
        let settings = SubspaceSettings {
            modes: section.modes,
            cubature_points: section.cubature_points,
            seed: section.seed,
        };
        let started = web_time::Instant::now();
        let reduced = match &options.subspace {
            Some(bytes) => crate::reduced::ReducedModel::with_precomputed(model, &settings, bytes)?,
            None => crate::reduced::ReducedModel::with_cache(model, &settings, Some(&self.cache_folder()))?,
        };
        let stepper =
            SubspaceBackwardEuler::with_reduced(model, std::sync::Arc::new(reduced), method, file.solver.clone());
        let reduced = stepper.reduced();
        notes.push(format!(
            "subspace: {} skinning eigenmodes ({} coordinates), {} cubature points, {} in {:.2} s; solver {}",
            settings.modes,
            reduced.rank(),
            reduced.points.len(),
            match (options.subspace.is_some(), reduced.from_cache) {
                (true, _) => "given precomputed",
                (false, true) => "read from the cache",
                (false, false) => "computed",
            },
            started.elapsed().as_secs_f64(),
            match method {
                ReducedMethod::MixedSqp => "mixed_sqp (subspace mixed FEM)",
                ReducedMethod::Newton => "newton (subspace FEM)",
            }
        ));
        if let Some(points) = section.cubature_points.filter(|&p| p < 2 * settings.modes) {
            notes.push(format!(
                "subspace.cubature_points = {points} is below 2 × modes: the elastic stiffness has spurious zero-energy modes (Trusty et al. 2023, §7.5, keep about 20 × modes)"
            ));
        }
        Ok(Box::new(stepper))
    }

    /// The fine scene of the `[eigenfit]` table: this scene with its body
    /// meshed as `reference`, or the scene `reference_scene` names; either
    /// without `[eigenfit]`.
    pub fn eigenfit_reference(&self) -> Result<Scene> {
        let section = self
            .file
            .eigenfit
            .as_ref()
            .ok_or_else(|| HookeError::scene("eigenfit", "the scene has no [eigenfit] table"))?;
        let mut fine = match (&section.reference, &section.reference_scene) {
            (Some(mesh), _) => {
                let mut fine = self.clone();
                fine.file.bodies[0].mesh = mesh.clone();
                fine
            }
            (None, Some(path)) => {
                let mut fine = Scene::from_file(&self.base_directory.join(path))
                    .map_err(|e| HookeError::scene("eigenfit.reference_scene", e.to_string()))?;
                if fine.file.bodies.len() != 1 || !fine.file.networks.is_empty() {
                    return Err(HookeError::scene(
                        "eigenfit.reference_scene",
                        "must be a scene of exactly one body (no networks)",
                    ));
                }
                fine.cache_directory = self.cache_directory.clone();
                fine
            }
            (None, None) => return Err(HookeError::scene("eigenfit.reference", "is missing")),
        };
        fine.file.eigenfit = None;
        Ok(fine)
    }

    /// The `[eigenfit]` table: the fine reference built from this scene with
    /// its one body re-meshed, then the correction (EigenFit) or the
    /// rescale (DAC) of `model`.
    fn add_eigenfit(
        &self,
        model: &mut Model,
        section: &super::EigenFitSection,
        integrator: &str,
        notes: &mut Vec<String>,
    ) -> Result<()> {
        use super::EigenFitMethod;
        if self.file.bodies.len() != 1 || !self.file.networks.is_empty() {
            return Err(HookeError::scene(
                "eigenfit",
                "needs a scene of exactly one body (no networks): the reference is that body meshed finer",
            ));
        }
        if section.modes == 0 {
            notes.push("eigenfit.modes = 0: nothing is corrected".to_string());
            return Ok(());
        }
        // Cheap facts first: no model has more modes than free DOFs, and the
        // fine model's eigensolve would spend minutes finding that out.
        let free = model.dof_map(0.0).free_count();
        if section.modes > free {
            return Err(HookeError::scene(
                "eigenfit.modes",
                format!(
                    "at most {free} (the free degrees of freedom of the coarse model, which has no more modes); got {}",
                    section.modes
                ),
            ));
        }
        if section.method == EigenFitMethod::Eigenfit && !EIGENFIT_INTEGRATORS.contains(&integrator) {
            return Err(HookeError::scene(
                "eigenfit",
                format!(
                    "EigenFit corrects the stiffness of linearised and implicit steps: use one of {}, or method = \"dac\" (which works with any integrator); got {integrator}",
                    EIGENFIT_INTEGRATORS.join(", ")
                ),
            ));
        }
        let fine = self
            .eigenfit_reference()?
            .build()
            .map_err(|e| HookeError::scene("eigenfit.reference", format!("the reference does not build: {e}")))?
            .model;
        notes.push(format!(
            "eigenfit: reference of {} vertices and {} elements against {} and {}",
            fine.mesh().vertex_count(),
            fine.mesh().element_count(),
            model.mesh().vertex_count(),
            model.mesh().element_count()
        ));
        match section.method {
            EigenFitMethod::Eigenfit => {
                let mut fit = crate::model::EigenFit::new(fine, section.modes)?
                    .with_cache(self.cache_folder())
                    .with_pairing(section.pairing);
                if let Some(tolerance) = section.tolerance {
                    fit = fit.with_refit_tolerance(tolerance)?;
                }
                if let Some(threshold) = section.pairing_threshold {
                    fit = fit.with_pairing_threshold(threshold)?;
                }
                if let Some(drift) = section.refit_drift {
                    fit = fit.with_refit_drift(drift)?;
                }
                let rest = fit.rest_fit(model, 0.0)?;
                notes.push(format!(
                    "eigenfit: ratios λ_fine/λ_coarse of the {} lowest modes at rest: {}",
                    rest.ratios.len(),
                    rest.ratios
                        .iter()
                        .map(|r| format!("{r:.4}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                let threshold = section
                    .pairing_threshold
                    .unwrap_or(crate::model::eigenfit::DEFAULT_PAIRING_THRESHOLD);
                if let Some(note) = pairing_note(&rest.shape_pairs, section.pairing, threshold) {
                    notes.push(note);
                }
                model.add_term(Box::new(fit))?;
            }
            EigenFitMethod::Dac => {
                let factor = crate::model::eigenfit::dac_factor(model, fine, 0.0, Some(self.cache_folder()))?;
                notes.push(format!(
                    "eigenfit (DAC): every material's stiffness scaled by {factor:.4}"
                ));
                model.scale_elasticity(factor);
            }
        }
        Ok(())
    }
}

/// The first-frame test of the EigenFit paper (§3.5), as a note: which coarse
/// modes pair by shape with a fine mode of another index, which pair below
/// the MAC `threshold` (they keep ratio 1 under `pairing = "shape"`), and
/// whether fewer than half pair at all (EigenFit's premise fails).
fn pairing_note(
    pairs: &[Option<(usize, f64)>],
    pairing: crate::model::eigenfit::Pairing,
    threshold: f64,
) -> Option<String> {
    use crate::model::eigenfit::Pairing;
    if pairs.is_empty() {
        return None;
    }
    let strong = |p: &Option<(usize, f64)>| p.is_some_and(|(_, mac)| mac >= threshold);
    let matched = pairs.iter().filter(|p| strong(p)).count();
    let crossed: Vec<String> = pairs
        .iter()
        .enumerate()
        .filter(|(_, p)| strong(p))
        .filter_map(|(i, p)| {
            p.filter(|(j, _)| *j != i)
                .map(|(j, mac)| format!("{} ~ fine {} (MAC {mac:.2})", i + 1, j + 1))
        })
        .collect();
    let weak: Vec<String> = pairs
        .iter()
        .enumerate()
        .filter(|(_, p)| !strong(p))
        .map(|(i, p)| match p {
            Some((j, mac)) => format!("{} ~ fine {} (MAC {mac:.2})", i + 1, j + 1),
            None => format!("{} (no fine mode left)", i + 1),
        })
        .collect();
    let mut parts = Vec::new();
    if matched * 2 < pairs.len() {
        parts.push(format!(
            "only {matched} of {} coarse modes pair with a fine mode at MAC ≥ {threshold}: the meshes' lowest modes differ, and EigenFit's ratios mean little",
            pairs.len()
        ));
    }
    if !crossed.is_empty() {
        parts.push(match pairing {
            Pairing::Index => format!(
                "coarse modes pair by shape with other fine modes than their index ({}); by index their ratios compare different motions: pairing = \"shape\" pairs them by shape",
                crossed.join(", ")
            ),
            Pairing::Shape => format!("ratios paired by shape where it differs from the index: {}", crossed.join(", ")),
        });
    }
    if !weak.is_empty() && pairing == Pairing::Shape {
        parts.push(format!(
            "below the pairing threshold (MAC {threshold}), these keep ratio 1: {}",
            weak.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| format!("eigenfit: {}", parts.join("; ")))
}

/// Strain-limited membrane triangles (fem::membrane) from a cloth's `membrane` table.
fn membrane_term(
    section: &MembraneSection,
    triangles: Vec<[usize; 3]>,
    rest: &[f64],
) -> Result<crate::fem::membrane::Membrane<crate::material::strain_limit::StrainLimitEnergy>> {
    let mu = crate::material::MaterialParameters {
        youngs_modulus: section.youngs_modulus,
        poisson_ratio: section.poisson_ratio,
        density: 1.0,
    }
    .lame()
    .mu;
    let energy = crate::material::strain_limit::StrainLimitEnergy {
        mu,
        min: section.min,
        max: section.max,
    };
    crate::fem::membrane::Membrane::new(triangles, rest, section.thickness, energy, 2.0 * mu)
}

/// What barrier contact acts on of a network numbered from `offset`: a
/// cloth's grid triangles, a rope's segments (its springs, which for a rope
/// are exactly the segments; a cloth's shear and bend springs are not
/// surfaces).
fn network_contact_primitives(
    section: &NetworkSection,
    part: &NetworkPart,
    offset: usize,
) -> (Vec<[usize; 3]>, Vec<[usize; 2]>) {
    let faces = part.triangles.iter().map(|t| t.map(|v| v + offset)).collect();
    let segments = match section.shape {
        NetworkShape::Cloth { .. } => Vec::new(),
        NetworkShape::Rope { .. } | NetworkShape::Helix { .. } => {
            part.springs.iter().map(|s| s.vertices.map(|v| v + offset)).collect()
        }
    };
    (faces, segments)
}

fn build_network(section: &NetworkSection) -> Result<NetworkPart> {
    match &section.shape {
        NetworkShape::Rope { start, end, segments } => chain(
            straight_rope(Vector3::from(*start), Vector3::from(*end), *segments)?,
            section.stiffness,
            section.density,
        ),
        NetworkShape::Helix {
            center,
            radius,
            pitch,
            turns,
            segments,
        } => chain(
            helix_rope(Vector3::from(*center), *radius, *pitch, *turns, *segments)?,
            section.stiffness,
            section.density,
        ),
        NetworkShape::Cloth { origin, size, cells } => cloth(
            Vector3::from(*origin),
            *size,
            *cells,
            ClothStiffness {
                stretch: section.stiffness,
                shear: section.shear_stiffness,
                bend: section.bend_stiffness,
            },
            section.density,
        ),
    }
}

/// A note when a pin's release time falls inside a step rather than on a step
/// boundary: the stepper lets go at the start of that step (it treats a pin as
/// holding during a step when it holds at the step's end).
fn release_inside_step(release_time: f64, time_step: f64) -> Option<String> {
    let steps = release_time / time_step;
    if release_time <= 0.0 || (steps - steps.round()).abs() <= 1e-9 * steps.max(1.0) {
        return None;
    }
    let start = steps.floor() * time_step;
    Some(format!(
        "{release_time} falls inside the step from {start} to {} (time_step {time_step}); the vertices are free from t = {start}",
        start + time_step
    ))
}

/// A CSV of `dimension` numbers per row, one row per vertex in the model's
/// order; a first line that is not numbers is a header. Errors name the line.
fn read_vertex_table(path: &std::path::Path, vertices: usize, dimension: usize) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).map_err(|error| HookeError::io(path, error))?;
    let mut values = Vec::with_capacity(vertices * dimension);
    let mut rows = 0;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let numbers: std::result::Result<Vec<f64>, _> = line.split(',').map(|w| w.trim().parse::<f64>()).collect();
        match numbers {
            Err(_) if index == 0 => continue,
            Err(_) => {
                return Err(HookeError::parse(
                    path,
                    Some(index + 1),
                    "expected numbers separated by commas",
                ))
            }
            Ok(row) if row.len() != dimension => {
                return Err(HookeError::parse(
                    path,
                    Some(index + 1),
                    format!("{} values, expected {dimension} (one per axis)", row.len()),
                ))
            }
            Ok(row) if row.iter().any(|v| !v.is_finite()) => {
                return Err(HookeError::parse(path, Some(index + 1), "values must be finite"))
            }
            Ok(row) => {
                values.extend(row);
                rows += 1;
            }
        }
    }
    if rows != vertices {
        return Err(HookeError::parse(
            path,
            None,
            format!("{rows} rows, but the model has {vertices} vertices (one row each, in order)"),
        ));
    }
    Ok(values)
}
