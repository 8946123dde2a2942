//! A ParaView time series: one XML `.vtu` file per frame, indexed by a `.pvd`
//! collection that maps each file to its simulation time.

use crate::error::{HookeError, Result};
use crate::mesh::Mesh;
use crate::output::atomic::{write_atomically, write_bytes_atomically};
use nalgebra::Vector3;
use std::io;
use std::path::{Path, PathBuf};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

/// The state of the body at one output time.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Simulation time, s.
    pub time: f64,
    /// Elements (tetrahedra, or triangles in 2D), labels and rest positions.
    pub mesh: &'a Mesh,
    /// Current vertex positions, m, one per mesh vertex.
    pub positions: &'a [Vector3<f64>],
    /// Vertex velocities, m/s, one per mesh vertex.
    pub velocities: &'a [Vector3<f64>],
    /// Strain energy density, J/m³, one per element.
    pub strain_energy_density: &'a [f64],
    /// Springs of mass-spring networks, written as line cells after the tets
    /// (label −1, strain energy density 0).
    pub edges: &'a [[usize; 2]],
    /// Material number of each element (the scene's materials in order of
    /// first appearance), so pictures drawn later can colour by material;
    /// empty to leave the field out.
    pub materials: &'a [i32],
    /// Discontinuous Galerkin bodies: the mean displacement of the copies of
    /// each vertex, at every copy, m; empty to leave the field out.
    pub continuous_displacement: &'a [Vector3<f64>],
    /// Barrier contact: the force the contact puts on each vertex, N; empty
    /// to leave the field out.
    pub contact_force: &'a [Vector3<f64>],
}

/// Writes the frames of one run as `<base>_0000.vtu`, `<base>_0001.vtu`, ...
/// and keeps `<base>.pvd` up to date after every frame.
#[derive(Debug)]
pub struct VtkSeriesWriter {
    directory: PathBuf,
    base_name: String,
    /// Time and file name (relative to `directory`) of every frame written.
    frames: Vec<(f64, String)>,
}

impl VtkSeriesWriter {
    /// Prepares a series in `directory` (created if missing) whose files all
    /// start with `base_name`.
    pub fn create(directory: &Path, base_name: &str) -> Result<Self> {
        if base_name.is_empty() || base_name.contains(['/', '\\']) {
            return Err(HookeError::io(
                directory,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid series name {base_name:?}: it must be a plain file name"),
                ),
            ));
        }
        std::fs::create_dir_all(directory).map_err(|error| HookeError::io(directory, error))?;
        Ok(VtkSeriesWriter {
            directory: directory.to_path_buf(),
            base_name: base_name.to_string(),
            frames: Vec::new(),
        })
    }

    /// Takes up the series of an interrupted run from the frames its
    /// checkpoint lists: any later frame file is removed and the index
    /// rewritten, so the series goes on as if never stopped.
    pub fn resume(directory: &Path, base_name: &str, frames: Vec<(f64, String)>) -> Result<Self> {
        let writer = VtkSeriesWriter {
            frames,
            ..VtkSeriesWriter::create(directory, base_name)?
        };
        let entries = std::fs::read_dir(directory).map_err(|error| HookeError::io(directory, error))?;
        for entry in entries {
            let entry = entry.map_err(|error| HookeError::io(directory, error))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let index = name
                .strip_prefix(&format!("{base_name}_"))
                .and_then(|rest| rest.strip_suffix(".vtu"))
                .and_then(|digits| digits.parse::<usize>().ok());
            if index.is_some_and(|index| index >= writer.frames.len()) {
                std::fs::remove_file(entry.path()).map_err(|error| HookeError::io(entry.path(), error))?;
            }
        }
        writer.write_collection()?;
        Ok(writer)
    }

    /// Time and file name of every frame written so far.
    pub fn frames(&self) -> &[(f64, String)] {
        &self.frames
    }

    /// The directory holding the series.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// Path of the `.pvd` collection file.
    pub fn collection_path(&self) -> PathBuf {
        self.directory.join(format!("{}.pvd", self.base_name))
    }

    /// Number of frames written so far.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Writes one frame as a `.vtu` file, updates the `.pvd` index and returns
    /// the path of the new frame file.
    pub fn write_frame(&mut self, frame: &Frame) -> Result<PathBuf> {
        check_frame(frame)?;
        let file_name = format!("{}_{:04}.vtu", self.base_name, self.frames.len());
        let path = self.directory.join(&file_name);
        if !frame.time.is_finite() {
            return Err(HookeError::io(
                &path,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("frame time {} is not finite", frame.time),
                ),
            ));
        }
        write_vtu_file(&path, frame)?;
        self.frames.push((frame.time, file_name));
        // Rewritten every frame so that an interrupted run still has a usable index.
        self.write_collection()?;
        Ok(path)
    }

    /// Writes triangles (rigid obstacles at `time`) as the next frame of the
    /// series: a `.vtu` of triangle cells over welded points, no fields.
    pub fn write_surface(&mut self, time: f64, triangles: &[[Vector3<f64>; 3]]) -> Result<PathBuf> {
        let file_name = format!("{}_{:04}.vtu", self.base_name, self.frames.len());
        let path = self.directory.join(&file_name);
        let invalid = |reason: String| HookeError::io(&path, io::Error::new(io::ErrorKind::InvalidInput, reason));
        if !time.is_finite() {
            return Err(invalid(format!("frame time {time} is not finite")));
        }
        if let Some(t) = triangles
            .iter()
            .position(|t| t.iter().any(|p| !p.iter().all(|c| c.is_finite())))
        {
            return Err(invalid(format!("triangle {t} has a coordinate that is not finite")));
        }
        write_vtk_file(&path, surface_to_vtk(time, triangles))?;
        self.frames.push((time, file_name));
        self.write_collection()?;
        Ok(path)
    }

    /// Writes the final `.pvd` index and returns its path.
    pub fn finish(&mut self) -> Result<PathBuf> {
        self.write_collection()
    }

    fn write_collection(&self) -> Result<PathBuf> {
        let path = self.collection_path();
        let mut text = String::from(
            "<?xml version=\"1.0\"?>\n\
             <VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  \
             <Collection>\n",
        );
        for (time, file_name) in &self.frames {
            text.push_str(&format!(
                "    <DataSet timestep=\"{time}\" part=\"0\" file=\"{}\"/>\n",
                escape_xml_attribute(file_name)
            ));
        }
        text.push_str("  </Collection>\n</VTKFile>\n");
        write_bytes_atomically(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Writes one frame as a single `.vtu` file (no series).
pub fn write_vtu(path: &Path, frame: &Frame) -> Result<()> {
    check_frame(frame)?;
    write_vtu_file(path, frame)
}

/// Writes the XML `.vtu` file of a checked frame, atomically: a killed run
/// never leaves an empty or truncated frame.
fn write_vtu_file(path: &Path, frame: &Frame) -> Result<()> {
    write_vtk_file(path, frame_to_vtk(frame))
}

/// Writes `vtk` as an XML file, atomically, with vtkio's errors in ours.
fn write_vtk_file(path: &Path, vtk: Vtk) -> Result<()> {
    let mut failure = None;
    let written = write_atomically(path, |writer| {
        vtk.write_xml(writer).map_err(|error| {
            let message = format!("VTK export failed: {error}");
            failure = Some(error);
            io::Error::other(message)
        })
    });
    match (written, failure) {
        (Err(_), Some(error)) => Err(vtk_error(path, error)),
        (result, _) => result,
    }
}

/// Rejects frames whose arrays do not match the mesh, before anything is written.
fn check_frame(frame: &Frame) -> Result<()> {
    let mesh = frame.mesh;
    let vertex_count = mesh.vertex_count();
    let tet_count = mesh.element_count();
    let mismatch = |what: &str, found: usize, expected: usize, unit: &str| HookeError::Mesh {
        reason: format!("frame has {found} {what} for {expected} {unit}"),
    };
    if frame.positions.len() != vertex_count {
        return Err(mismatch("positions", frame.positions.len(), vertex_count, "vertices"));
    }
    if frame.velocities.len() != vertex_count {
        return Err(mismatch("velocities", frame.velocities.len(), vertex_count, "vertices"));
    }
    if frame.strain_energy_density.len() != tet_count {
        return Err(mismatch(
            "strain energy densities",
            frame.strain_energy_density.len(),
            tet_count,
            "elements",
        ));
    }
    if let Some(edge) = frame.edges.iter().find(|e| e.iter().any(|&v| v >= vertex_count)) {
        return Err(HookeError::Mesh {
            reason: format!("spring {edge:?} refers to a vertex beyond the {vertex_count} of the frame"),
        });
    }
    if mesh.labels().len() != tet_count {
        return Err(mismatch("labels", mesh.labels().len(), tet_count, "elements"));
    }
    if !frame.materials.is_empty() && frame.materials.len() != tet_count {
        return Err(mismatch(
            "material numbers",
            frame.materials.len(),
            tet_count,
            "elements",
        ));
    }
    // vtkio stores these counts as u32 and would panic beyond that.
    if u32::try_from(vertex_count).is_err() || u32::try_from(tet_count).is_err() {
        return Err(HookeError::Mesh {
            reason: format!("{vertex_count} vertices and {tet_count} elements exceed what VTK files can index"),
        });
    }
    // The mesh fields are public, so an index may be out of range even though
    // TetMesh::new checks it; ParaView would crash on such a file.
    for element in 0..tet_count {
        if let Some(&vertex) = mesh.element(element).iter().find(|&&vertex| vertex >= vertex_count) {
            return Err(HookeError::Mesh {
                reason: format!(
                    "element {element} refers to vertex {vertex}, but the mesh has \
                     {vertex_count} vertices"
                ),
            });
        }
    }
    Ok(())
}

/// Builds the unstructured grid of one frame: deformed points, tetrahedra and
/// the per-vertex and per-element fields.
fn frame_to_vtk(frame: &Frame) -> Vtk {
    let mesh = frame.mesh;
    let flatten = |vectors: &mut dyn Iterator<Item = Vector3<f64>>| -> Vec<f64> {
        vectors.flat_map(|v| [v.x, v.y, v.z]).collect()
    };
    let points = flatten(&mut frame.positions.iter().copied());
    let displacements = flatten(
        &mut frame
            .positions
            .iter()
            .zip(mesh.vertices())
            .map(|(current, rest)| current - rest),
    );
    let velocities = flatten(&mut frame.velocities.iter().copied());

    let element_count = mesh.element_count();
    let mut connectivity: Vec<u64> = (0..element_count)
        .flat_map(|e| mesh.element(e).iter().map(|&vertex| vertex as u64))
        .collect();
    connectivity.extend(frame.edges.iter().flat_map(|edge| edge.map(|vertex| vertex as u64)));
    let (nodes, cell_type) = match mesh {
        Mesh::Tetrahedra(_) => (4, CellType::Tetra),
        Mesh::Triangles(_) => (3, CellType::Triangle),
    };
    let offsets: Vec<u64> = (1..=element_count as u64)
        .map(|cell| nodes * cell)
        .chain((1..=frame.edges.len() as u64).map(|line| nodes * element_count as u64 + 2 * line))
        .collect();
    let mut types = vec![cell_type; element_count];
    types.extend(std::iter::repeat_n(CellType::Line, frame.edges.len()));
    let mut labels = mesh.labels().to_vec();
    labels.extend(std::iter::repeat_n(-1, frame.edges.len()));
    let mut densities = frame.strain_energy_density.to_vec();
    densities.extend(std::iter::repeat_n(0.0, frame.edges.len()));

    let mut cell = vec![
        Attribute::scalars("label", 1).with_data(labels),
        Attribute::scalars("strain_energy_density", 1).with_data(densities),
    ];
    if !frame.materials.is_empty() {
        let mut materials = frame.materials.to_vec();
        materials.extend(std::iter::repeat_n(-1, frame.edges.len()));
        cell.push(Attribute::scalars("material", 1).with_data(materials));
    }
    let mut point = vec![
        Attribute::vectors("displacement").with_data(displacements),
        Attribute::vectors("velocity").with_data(velocities),
    ];
    if !frame.continuous_displacement.is_empty() {
        let values: Vec<f64> = frame
            .continuous_displacement
            .iter()
            .flat_map(|u| [u.x, u.y, u.z])
            .collect();
        point.push(Attribute::vectors("continuous_displacement").with_data(values));
    }
    if !frame.contact_force.is_empty() {
        let values: Vec<f64> = frame.contact_force.iter().flat_map(|f| [f.x, f.y, f.z]).collect();
        point.push(Attribute::vectors("contact_force").with_data(values));
    }
    let data = Attributes { point, cell };

    Vtk {
        // 1.0 is the first XML version with 64-bit block headers, which vtkio writes.
        version: Version::new_xml(1, 0),
        title: format!("hooke frame at t = {} s", frame.time),
        byte_order: ByteOrder::native(),
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::XML { connectivity, offsets },
                types,
            },
            data,
        }),
    }
}

/// A triangle soup as an unstructured grid of triangles, corners that are
/// the same point (bit for bit) welded so that viewers shade it smoothly.
fn surface_to_vtk(time: f64, triangles: &[[Vector3<f64>; 3]]) -> Vtk {
    let mut index: std::collections::HashMap<[u64; 3], u64> = std::collections::HashMap::new();
    let mut points: Vec<f64> = Vec::new();
    let mut connectivity: Vec<u64> = Vec::with_capacity(3 * triangles.len());
    for corner in triangles.iter().flatten() {
        let key = [corner.x.to_bits(), corner.y.to_bits(), corner.z.to_bits()];
        let next = index.len() as u64;
        let vertex = *index.entry(key).or_insert_with(|| {
            points.extend([corner.x, corner.y, corner.z]);
            next
        });
        connectivity.push(vertex);
    }
    Vtk {
        version: Version::new_xml(1, 0),
        title: format!("hooke obstacles at t = {time} s"),
        byte_order: ByteOrder::native(),
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::XML {
                    connectivity,
                    offsets: (1..=triangles.len() as u64).map(|t| 3 * t).collect(),
                },
                types: vec![CellType::Triangle; triangles.len()],
            },
            data: Attributes::new(),
        }),
    }
}

fn vtk_error(path: &Path, error: vtkio::Error) -> HookeError {
    match error {
        vtkio::Error::IO(source) => HookeError::io(path, source),
        other => HookeError::io(path, io::Error::other(format!("VTK export failed: {other}"))),
    }
}

fn escape_xml_attribute(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::TetMesh;

    fn unit_tet() -> Mesh {
        Mesh::Tetrahedra(TetMesh {
            vertices: vec![
                Vector3::new(0.0, 0.0, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Vector3::new(0.0, 1.0, 0.0),
                Vector3::new(0.0, 0.0, 1.0),
            ],
            tets: vec![[0, 1, 2, 3]],
            labels: vec![7],
        })
    }

    fn shifted(mesh: &Mesh, offset: f64) -> Vec<Vector3<f64>> {
        mesh.vertices()
            .iter()
            .map(|v| v + Vector3::new(offset, 0.0, 0.0))
            .collect()
    }

    #[test]
    fn writes_two_frames_and_an_index() {
        let directory = crate::output::scratch_directory("vtk-series");
        let mesh = unit_tet();
        let velocities = vec![Vector3::new(0.5, 0.0, 0.0); 4];
        let mut writer = VtkSeriesWriter::create(&directory, "body").expect("create series");
        assert!(directory.is_dir());

        let times = [0.0, 0.25];
        let mut frame_paths = Vec::new();
        for (index, &time) in times.iter().enumerate() {
            let positions = shifted(&mesh, 0.1 * index as f64);
            let density = [1.5e3 * (index as f64 + 1.0)];
            let frame = Frame {
                time,
                mesh: &mesh,
                positions: &positions,
                velocities: &velocities,
                strain_energy_density: &density,
                edges: &[],
                // Material numbers are optional: written in the second frame only.
                materials: if index == 1 { &[3] } else { &[] },
                continuous_displacement: &[],
                contact_force: &[],
            };
            frame_paths.push(writer.write_frame(&frame).expect("write frame"));
        }
        let collection = writer.finish().expect("finish series");

        assert_eq!(writer.frame_count(), 2);
        assert_eq!(frame_paths[0], directory.join("body_0000.vtu"));
        assert_eq!(frame_paths[1], directory.join("body_0001.vtu"));
        assert_eq!(collection, directory.join("body.pvd"));
        assert!(!directory.join("body.pvd.tmp").exists());

        let index = std::fs::read_to_string(&collection).expect("read pvd");
        assert!(index.contains("<VTKFile type=\"Collection\" version=\"0.1\""));
        assert!(index.contains("<DataSet timestep=\"0\" part=\"0\" file=\"body_0000.vtu\"/>"));
        assert!(index.contains("<DataSet timestep=\"0.25\" part=\"0\" file=\"body_0001.vtu\"/>"));
        assert!(index.trim_end().ends_with("</VTKFile>"));

        for path in &frame_paths {
            let text = std::fs::read_to_string(path).expect("read vtu");
            assert!(text.contains("UnstructuredGrid"));
            for name in ["displacement", "velocity", "label", "strain_energy_density"] {
                assert!(
                    text.contains(&format!("Name=\"{name}\"")),
                    "{name} missing from {}",
                    path.display()
                );
            }
        }

        assert!(crate::output::read_frame(&frame_paths[0]).unwrap().materials.is_empty());
        assert_eq!(crate::output::read_frame(&frame_paths[1]).unwrap().materials, vec![3]);

        // Reading the second frame back checks the values, not just the names.
        let vtk = Vtk::import(&frame_paths[1]).expect("import vtu");
        let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
            panic!("expected an unstructured grid");
        };
        let piece = pieces
            .into_iter()
            .next()
            .expect("one piece")
            .into_loaded_piece_data(None)
            .expect("inline piece");
        assert_eq!(piece.num_points(), 4);
        assert_eq!(piece.cells.types, vec![CellType::Tetra]);
        let array = |attributes: &[Attribute], name: &str| -> Vec<f64> {
            attributes
                .iter()
                .find_map(|attribute| match attribute {
                    Attribute::DataArray(array) if array.name == name => array.data.clone().cast_into::<f64>(),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("array {name} not found"))
        };
        let displacement = array(&piece.data.point, "displacement");
        assert_eq!(displacement.len(), 12);
        for vertex in 0..4 {
            assert!((displacement[3 * vertex] - 0.1).abs() < 1e-15);
            assert_eq!(displacement[3 * vertex + 1], 0.0);
        }
        assert_eq!(array(&piece.data.point, "velocity")[0], 0.5);
        assert_eq!(array(&piece.data.cell, "label"), vec![7.0]);
        assert_eq!(array(&piece.data.cell, "strain_energy_density"), vec![3.0e3]);

        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn mismatched_lengths_are_errors() {
        let directory = crate::output::scratch_directory("vtk-mismatch");
        let mesh = unit_tet();
        let positions = mesh.vertices().to_vec();
        let velocities = vec![Vector3::zeros(); 4];
        let short = vec![Vector3::zeros(); 3];
        let mut writer = VtkSeriesWriter::create(&directory, "body").expect("create series");

        let frame = |positions, velocities, strain_energy_density| Frame {
            time: 0.0,
            mesh: &mesh,
            positions,
            velocities,
            strain_energy_density,
            edges: &[],
            materials: &[],
            continuous_displacement: &[],
            contact_force: &[],
        };
        let cases = [
            frame(&short, &velocities, &[0.0]),
            frame(&positions, &short, &[0.0]),
            frame(&positions, &velocities, &[0.0, 1.0]),
        ];
        for case in &cases {
            let error = writer.write_frame(case).expect_err("lengths differ");
            assert!(matches!(error, HookeError::Mesh { .. }), "{error}");
        }
        assert_eq!(writer.frame_count(), 0);
        assert!(!directory.join("body_0000.vtu").exists());

        let mut broken = mesh.clone();
        if let Mesh::Tetrahedra(tets) = &mut broken {
            tets.tets[0][3] = 9;
        }
        let frame = Frame {
            time: 0.0,
            mesh: &broken,
            positions: &positions,
            velocities: &velocities,
            strain_energy_density: &[0.0],
            edges: &[],
            materials: &[],
            continuous_displacement: &[],
            contact_force: &[],
        };
        assert!(writer.write_frame(&frame).is_err());

        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn rejects_non_finite_time_and_bad_names() {
        let directory = crate::output::scratch_directory("vtk-invalid");
        assert!(VtkSeriesWriter::create(&directory, "").is_err());
        assert!(VtkSeriesWriter::create(&directory, "a/b").is_err());

        let mesh = unit_tet();
        let velocities = vec![Vector3::zeros(); 4];
        let mut writer = VtkSeriesWriter::create(&directory, "body").expect("create series");
        let frame = Frame {
            time: f64::NAN,
            mesh: &mesh,
            positions: mesh.vertices(),
            velocities: &velocities,
            strain_energy_density: &[0.0],
            edges: &[],
            materials: &[],
            continuous_displacement: &[],
            contact_force: &[],
        };
        assert!(writer.write_frame(&frame).is_err());
        // An empty series still has a valid, empty index.
        let index = std::fs::read_to_string(writer.finish().expect("finish")).expect("read pvd");
        assert!(index.contains("<Collection>") && !index.contains("<DataSet"));

        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn escapes_attribute_text() {
        assert_eq!(escape_xml_attribute("a&b\"<c>'"), "a&amp;b&quot;&lt;c&gt;&apos;");
    }
}
