//! Gmsh MSH 4.1 reader (ASCII and binary), built on the `mshio` parser, and an ASCII writer.
//!
//! [`read_gmsh`] keeps the linear tetrahedra (element type 4), [`read_gmsh_triangles`]
//! the linear triangles (type 2) of a 2D mesh. An element's label is the first
//! physical group of its entity (a volume, or a surface), or the entity tag when the
//! entity has none. Node tags may be sparse: the nodes the elements use are
//! renumbered 0, 1, 2, ... in increasing tag order and the unused ones are dropped.

use crate::error::{HookeError, Result};
use crate::mesh::{TetMesh, TriangleMesh};
use mshio::{ElementType, MshFile};
use nalgebra::Vector3;
use std::collections::HashMap;
use std::path::Path;

/// Reads the linear tetrahedra of a Gmsh MSH 4.1 file.
pub fn read_gmsh(path: &Path) -> Result<TetMesh> {
    parse_gmsh(path, &super::read_bytes(path)?)
}

/// Parses the bytes of an MSH 4.1 file (ASCII or binary); `path` names it in errors.
pub fn parse_gmsh(path: &Path, bytes: &[u8]) -> Result<TetMesh> {
    let file = parse_bytes(bytes).map_err(|failure| failure.into_error(path, bytes))?;
    mesh_from_file(&file).map_err(|reason| HookeError::parse(path, None, reason))
}

/// Reads the linear triangles of a Gmsh MSH 4.1 file (a 2D mesh; z is dropped).
pub fn read_gmsh_triangles(path: &Path) -> Result<TriangleMesh> {
    let bytes = std::fs::read(path).map_err(|source| HookeError::io(path, source))?;
    let file = parse_bytes(&bytes).map_err(|failure| failure.into_error(path, &bytes))?;
    let fail = |reason: String| HookeError::parse(path, None, reason);
    let (tagged, labels) = elements_by_node_tag::<3>(&file, ElementType::Tri3, "triangle").map_err(fail)?;
    let (vertices, triangles) = renumber(&file, &tagged, "triangle").map_err(fail)?;
    TriangleMesh::new(vertices, triangles, labels).map_err(|error| fail(error.to_string()))
}

/// Writes `mesh` as an ASCII Gmsh MSH 4.1 file: tetrahedra in 3D, triangles
/// in 2D (z = 0). Each label becomes an entity whose physical group is the
/// label, so [`read_gmsh`] and [`read_gmsh_triangles`] give the labels back.
pub fn write_gmsh(path: &Path, mesh: &crate::mesh::Mesh) -> Result<()> {
    use std::fmt::Write as _;
    let dimension = mesh.dimension();
    let (element_type, corners) = if dimension == 3 { (4, 4) } else { (2, 3) };
    let mut labels: Vec<i32> = mesh.labels().to_vec();
    labels.sort_unstable();
    labels.dedup();
    let vertices = mesh.vertices();
    let (lo, hi) = mesh.bounding_box();
    let mut text = String::from("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n");
    let counts = if dimension == 3 {
        [0, 0, 0, labels.len()]
    } else {
        [0, 0, labels.len(), 0]
    };
    let _ = writeln!(text, "{} {} {} {}", counts[0], counts[1], counts[2], counts[3]);
    for (i, label) in labels.iter().enumerate() {
        // tag, bounding box, one physical tag (the label), no bounding entities.
        let _ = writeln!(
            text,
            "{} {:e} {:e} {:e} {:e} {:e} {:e} 1 {label} 0",
            i + 1,
            lo.x,
            lo.y,
            lo.z,
            hi.x,
            hi.y,
            hi.z
        );
    }
    text.push_str("$EndEntities\n$Nodes\n");
    let n = vertices.len();
    let _ = writeln!(text, "1 {n} 1 {n}\n{dimension} 1 0 {n}");
    for v in 1..=n {
        let _ = writeln!(text, "{v}");
    }
    for p in vertices {
        let _ = writeln!(text, "{:e} {:e} {:e}", p.x, p.y, p.z);
    }
    text.push_str("$EndNodes\n$Elements\n");
    // One block per run of equal labels, so that the elements keep their order.
    let m = mesh.element_count();
    let mut runs: Vec<(i32, std::ops::Range<usize>)> = Vec::new();
    for (e, &label) in mesh.labels().iter().enumerate() {
        match runs.last_mut() {
            Some((last, range)) if *last == label => range.end = e + 1,
            _ => runs.push((label, e..e + 1)),
        }
    }
    let _ = writeln!(text, "{} {m} 1 {m}", runs.len());
    for (label, range) in runs {
        let entity = labels.binary_search(&label).unwrap_or(0) + 1;
        let _ = writeln!(text, "{dimension} {entity} {element_type} {}", range.len());
        for e in range {
            let nodes: Vec<String> = mesh.element(e)[..corners].iter().map(|v| (v + 1).to_string()).collect();
            let _ = writeln!(text, "{} {}", e + 1, nodes.join(" "));
        }
    }
    text.push_str("$EndElements\n");
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}

type Msh = MshFile<u64, i32, f64>;

/// Why a file could not be parsed, and where (a byte offset) when known.
struct ParseFailure {
    reason: String,
    offset: Option<usize>,
}

impl ParseFailure {
    /// The error, with the line of the offset in an ASCII file (a line means
    /// nothing in a binary one, which gets the byte offset in the reason).
    fn into_error(self, path: &Path, bytes: &[u8]) -> HookeError {
        match self.offset {
            Some(offset) if !is_binary(bytes) => {
                let line = 1 + bytes[..offset.min(bytes.len())].iter().filter(|&&b| b == b'\n').count();
                HookeError::parse(path, Some(line), self.reason)
            }
            Some(offset) => HookeError::parse(path, None, format!("{} (at byte {offset})", self.reason)),
            None => HookeError::parse(path, None, self.reason),
        }
    }
}

/// The version line of `$MeshFormat`: its byte offset, version and file type
/// (0 ASCII, 1 binary), when the file has one.
fn mesh_format(bytes: &[u8]) -> Option<(usize, String, String)> {
    let head = &bytes[..bytes.len().min(4096)];
    let mut offset = 0;
    let mut lines = head.split_inclusive(|&b| b == b'\n').map(|line| {
        let start = offset;
        offset += line.len();
        (start, String::from_utf8_lossy(line))
    });
    lines.find(|(_, line)| line.trim() == "$MeshFormat")?;
    let (start, line) = lines.next()?;
    let mut words = line.split_whitespace();
    Some((start, words.next()?.to_string(), words.next()?.to_string()))
}

fn is_binary(bytes: &[u8]) -> bool {
    mesh_format(bytes).is_some_and(|(_, _, file_type)| file_type == "1")
}

/// Runs `mshio` and turns its failures into a readable reason.
fn parse_bytes(bytes: &[u8]) -> std::result::Result<Msh, ParseFailure> {
    if bytes.trim_ascii().is_empty() {
        return Err(ParseFailure {
            reason: "the file is empty".into(),
            offset: None,
        });
    }
    // mshio reads 4.1 only and misreports older files; say what they are.
    if let Some((start, version, _)) = mesh_format(bytes) {
        if version != "4.1" {
            return Err(ParseFailure {
                reason: format!(
                    "MSH version {version}; Hooke reads MSH 4.1 (convert with \
                     `gmsh FILE -save -format msh41 -o NEW.msh`)"
                ),
                offset: Some(start),
            });
        }
    }
    // mshio 0.4 panics instead of failing on some malformed files (for example an
    // empty Nodes section or an unsupported integer size), so a panic counts as a
    // parse failure too.
    match crate::quiet_panic::catch_quietly(|| {
        mshio::parse_msh_bytes(bytes).map_err(|error| describe_error(&error, bytes))
    }) {
        Ok(result) => result,
        Err(_) => Err(ParseFailure {
            reason: "malformed MSH file: the MSH 4.1 parser could not read it".into(),
            offset: None,
        }),
    }
}

/// Outermost context first, then what went wrong and where. mshio's own `Display`
/// appends a hex dump of the rest of the file, which is too long for a message.
fn describe_error(error: &mshio::MshParserError<&[u8]>, bytes: &[u8]) -> ParseFailure {
    let steps = error.filtered_backtrace();
    let reason = if steps.is_empty() {
        "malformed MSH file".to_string()
    } else {
        let mut parts: Vec<String> = steps.iter().rev().map(|(_, kind)| kind.to_string()).collect();
        // mshio often records the same context twice in a row.
        parts.dedup();
        format!("MSH 4.1 parser: {}", parts.join(": "))
    };
    // The innermost step holds the unread rest of the file, so its length gives the offset.
    let offset = steps
        .first()
        .or(error.backtrace.first())
        .map(|(rest, _)| bytes.len().saturating_sub(rest.len()));
    ParseFailure { reason, offset }
}

/// Builds the mesh from the parsed file: tets, labels, and the nodes they use.
fn mesh_from_file(file: &Msh) -> std::result::Result<TetMesh, String> {
    let (tagged, labels) = elements_by_node_tag::<4>(file, ElementType::Tet4, "tetrahedron")?;
    let (vertices, tets) = renumber(file, &tagged, "tetrahedron")?;
    TetMesh::new(vertices, tets, labels).map_err(|error| error.to_string())
}

/// The positions of the nodes the elements use, and the elements renumbered
/// to them (in increasing tag order).
#[allow(clippy::type_complexity)]
fn renumber<const N: usize>(
    file: &Msh,
    tagged: &[[u64; N]],
    what: &str,
) -> std::result::Result<(Vec<Vector3<f64>>, Vec<[usize; N]>), String> {
    let positions = node_positions(file)?;
    let mut used_tags: Vec<u64> = tagged.iter().flatten().copied().collect();
    used_tags.sort_unstable();
    used_tags.dedup();
    let vertices = used_tags
        .iter()
        .map(|tag| {
            positions
                .get(tag)
                .copied()
                .ok_or_else(|| format!("node {tag} is used by a {what} but is not in the Nodes section"))
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    // Every tag is in the sorted `used_tags`, so its position there is its new index.
    let elements = tagged
        .iter()
        .map(|element| element.map(|tag| used_tags.partition_point(|&used| used < tag)))
        .collect();
    Ok((vertices, elements))
}

/// The elements of one type as node tags, and their labels, in file order;
/// tetrahedra take their volume's label, triangles their surface's.
#[allow(clippy::type_complexity)]
fn elements_by_node_tag<const N: usize>(
    file: &Msh,
    element_type: ElementType,
    what: &str,
) -> std::result::Result<(Vec<[u64; N]>, Vec<i32>), String> {
    let entities = file.data.entities.iter();
    let entity_labels: HashMap<i32, i32> = if element_type == ElementType::Tet4 {
        entities
            .flat_map(|entities| &entities.volumes)
            .map(|volume| (volume.tag, volume.physical_tags.first().copied().unwrap_or(volume.tag)))
            .collect()
    } else {
        entities
            .flat_map(|entities| &entities.surfaces)
            .map(|surface| {
                (
                    surface.tag,
                    surface.physical_tags.first().copied().unwrap_or(surface.tag),
                )
            })
            .collect()
    };
    let mut elements = Vec::new();
    let mut labels = Vec::new();
    let blocks = file.data.elements.iter().flat_map(|elements| &elements.element_blocks);
    for block in blocks.filter(|block| block.element_type == element_type) {
        let label = entity_labels
            .get(&block.entity_tag)
            .copied()
            .unwrap_or(block.entity_tag);
        for element in &block.elements {
            let nodes: [u64; N] = element.nodes.as_slice().try_into().map_err(|_| {
                format!(
                    "{what} {} has {} nodes instead of {N}",
                    element.element_tag,
                    element.nodes.len()
                )
            })?;
            elements.push(nodes);
            labels.push(label);
        }
    }
    if elements.is_empty() {
        let type_number = if element_type == ElementType::Tet4 { 4 } else { 2 };
        let plural = if element_type == ElementType::Tet4 {
            "tetrahedra"
        } else {
            "triangles"
        };
        return Err(format!("no {plural} (Gmsh element type {type_number}) in the file"));
    }
    Ok((elements, labels))
}

/// Node coordinates by tag.
fn node_positions(file: &Msh) -> std::result::Result<HashMap<u64, Vector3<f64>>, String> {
    let nodes = file
        .data
        .nodes
        .as_ref()
        .ok_or_else(|| "the file has elements but no Nodes section".to_string())?;
    let mut positions = HashMap::new();
    // mshio keeps node tags only when they are sparse. Otherwise they are exactly
    // min_node_tag..=max_node_tag and, as Gmsh writes them, in file order.
    let mut next_dense_tag = nodes.min_node_tag;
    for block in &nodes.node_blocks {
        match &block.node_tags {
            Some(index_by_tag) => {
                for (&tag, &index) in index_by_tag {
                    if let Some(node) = block.nodes.get(index) {
                        positions.insert(tag, Vector3::new(node.x, node.y, node.z));
                    }
                }
            }
            None => {
                for node in &block.nodes {
                    positions.insert(next_dense_tag, Vector3::new(node.x, node.y, node.z));
                    next_dense_tag += 1;
                }
            }
        }
    }
    Ok(positions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::{scratch_directory, write_test_file};

    /// Unit cube in 6 tets over two volumes with physical groups 7 and 9, sparse node
    /// tags (10, 20, ..., 80) listed out of order, an unused node 999 and a
    /// boundary triangle block that must be ignored.
    const TWO_VOLUMES: &str = "\
$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
2
3 7 \"left\"
3 9 \"right\"
$EndPhysicalNames
$Entities
0 0 1 2
1 0 0 0 1 1 0 0 0
3 0 0 0 1 1 1 1 7 0
5 0 0 0 1 1 1 1 9 0
$EndEntities
$Nodes
2 9 10 999
3 3 0 5
40
30
20
10
999
0 1 0
1 1 0
1 0 0
0 0 0
5 5 5
3 5 0 4
50
60
70
80
0 0 1
1 0 1
1 1 1
0 1 1
$EndNodes
$Elements
3 7 1 7
2 1 2 1
1 10 20 30
3 3 4 3
2 10 20 30 70
3 10 60 20 70
4 10 50 60 70
3 5 4 3
5 10 30 40 70
6 10 40 80 70
7 10 80 50 70
$EndElements
";

    fn read_text_file(test_name: &str, text: &str) -> Result<TetMesh> {
        let directory = scratch_directory(test_name);
        read_gmsh(&write_test_file(&directory, "body.msh", text.as_bytes()))
    }

    fn assert_parse_error_without_line(result: Result<TetMesh>) -> String {
        match result {
            Err(HookeError::Parse { line: None, reason, .. }) => reason,
            other => panic!("expected a parse error without a line, got {other:?}"),
        }
    }

    #[test]
    fn reads_two_volumes_with_physical_groups_and_sparse_tags() {
        let mesh = read_text_file("gmsh-two-volumes", TWO_VOLUMES).expect("valid MSH file");
        assert_eq!(mesh.vertex_count(), 8, "unused node 999 is dropped");
        assert_eq!(mesh.tet_count(), 6, "the triangle is ignored");
        // Renumbered in increasing tag order: tag 10 -> 0, ..., tag 80 -> 7.
        assert_eq!(mesh.vertices[0], Vector3::new(0.0, 0.0, 0.0));
        assert_eq!(mesh.vertices[1], Vector3::new(1.0, 0.0, 0.0));
        assert_eq!(mesh.vertices[3], Vector3::new(0.0, 1.0, 0.0));
        assert_eq!(mesh.vertices[7], Vector3::new(0.0, 1.0, 1.0));
        assert_eq!(mesh.tets[0], [0, 1, 2, 6]);
        assert_eq!(mesh.tets[5], [0, 7, 4, 6]);
        assert_eq!(mesh.labels, vec![7, 7, 7, 9, 9, 9]);
    }

    #[test]
    fn entity_without_physical_group_labels_by_entity_tag() {
        let text = TWO_VOLUMES.replace("5 0 0 0 1 1 1 1 9 0", "5 0 0 0 1 1 1 0 0");
        let mesh = read_text_file("gmsh-no-physical", &text).expect("valid MSH file");
        assert_eq!(mesh.labels, vec![7, 7, 7, 5, 5, 5]);
    }

    #[test]
    fn file_without_entities_labels_by_entity_tag() {
        let start = TWO_VOLUMES.find("$Entities").unwrap_or_default();
        let end = TWO_VOLUMES.find("$Nodes").unwrap_or_default();
        let text = format!("{}{}", &TWO_VOLUMES[..start], &TWO_VOLUMES[end..]);
        let mesh = read_text_file("gmsh-no-entities", &text).expect("valid MSH file");
        assert_eq!(mesh.labels, vec![3, 3, 3, 5, 5, 5]);
    }

    /// Binary MSH 4.1 (little endian, 8-byte size_t) of one tet with dense tags.
    fn binary_single_tet() -> Vec<u8> {
        let mut bytes = b"$MeshFormat\n4.1 1 8\n".to_vec();
        bytes.extend(1i32.to_le_bytes());
        bytes.extend(b"\n$EndMeshFormat\n$Entities\n");
        for count in [0u64, 0, 0, 1] {
            bytes.extend(count.to_le_bytes());
        }
        bytes.extend(4i32.to_le_bytes());
        for bound in [0.0f64, 0.0, 0.0, 1.0, 1.0, 1.0] {
            bytes.extend(bound.to_le_bytes());
        }
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(12i32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(b"\n$EndEntities\n$Nodes\n");
        for value in [1u64, 4, 1, 4] {
            bytes.extend(value.to_le_bytes());
        }
        for value in [3i32, 4, 0] {
            bytes.extend(value.to_le_bytes());
        }
        bytes.extend(4u64.to_le_bytes());
        for tag in 1u64..=4 {
            bytes.extend(tag.to_le_bytes());
        }
        for coordinate in [0.0f64, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0] {
            bytes.extend(coordinate.to_le_bytes());
        }
        bytes.extend(b"\n$EndNodes\n$Elements\n");
        for value in [1u64, 1, 1, 1] {
            bytes.extend(value.to_le_bytes());
        }
        for value in [3i32, 4, 4] {
            bytes.extend(value.to_le_bytes());
        }
        for value in [1u64, 1, 1, 2, 3, 4] {
            bytes.extend(value.to_le_bytes());
        }
        bytes.extend(b"\n$EndElements\n");
        bytes
    }

    /// What the writer writes reads back: positions exactly, elements and labels.
    #[test]
    fn written_files_read_back() {
        let cube = crate::mesh::box_mesh(&crate::mesh::BoxMeshOptions {
            origin: Vector3::new(0.1, 0.2, 0.3),
            size: Vector3::new(1.0, 0.5, 0.25),
            cells: [2, 1, 1],
            tets_per_hex: crate::mesh::TetsPerHex::Six,
        })
        .unwrap();
        let mut labelled = cube.clone();
        labelled.labels = (0..labelled.tet_count()).map(|e| (e % 3) as i32 - 1).collect();
        let directory = std::env::temp_dir().join(format!("hooke-gmsh-write-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join("cube.msh");
        write_gmsh(&path, &crate::mesh::Mesh::Tetrahedra(labelled.clone())).unwrap();
        let back = read_gmsh(&path).unwrap();
        assert_eq!(back.vertices, labelled.vertices);
        assert_eq!(back.tets, labelled.tets);
        assert_eq!(back.labels, labelled.labels);
        let square = crate::mesh::rectangle_mesh([0.0, 0.0], [1.0, 2.0], [2, 3]).unwrap();
        let path = directory.join("square.msh");
        write_gmsh(&path, &crate::mesh::Mesh::Triangles(square.clone())).unwrap();
        let back = read_gmsh_triangles(&path).unwrap();
        assert_eq!(back.vertices, square.vertices);
        assert_eq!(back.triangles, square.triangles);
        std::fs::remove_dir_all(&directory).ok();
    }

    #[test]
    fn reads_binary_files() {
        let directory = scratch_directory("gmsh-binary");
        let path = write_test_file(&directory, "tet.msh", &binary_single_tet());
        let mesh = read_gmsh(&path).expect("valid binary MSH file");
        assert_eq!(mesh.tets, vec![[0, 1, 2, 3]]);
        assert_eq!(mesh.vertices[3], Vector3::new(0.0, 0.0, 2.0));
        assert_eq!(mesh.labels, vec![12]);
    }

    #[test]
    fn file_without_tetrahedra_is_an_error() {
        let text = TWO_VOLUMES
            .replace("3 7 1 7\n", "1 1 1 1\n")
            .split("3 3 4 3")
            .next()
            .unwrap_or_default()
            .to_string()
            + "$EndElements\n";
        let reason = assert_parse_error_without_line(read_text_file("gmsh-no-tets", &text));
        assert!(reason.contains("no tetrahedra"), "{reason}");
    }

    #[test]
    fn malformed_files_are_parse_errors() {
        let truncated = &TWO_VOLUMES[..TWO_VOLUMES.find("$EndNodes").unwrap_or_default()];
        assert!(matches!(
            read_text_file("gmsh-truncated", truncated),
            Err(HookeError::Parse { .. })
        ));
        let reason = assert_parse_error_without_line(read_text_file("gmsh-empty", " \n"));
        assert!(reason.contains("empty"), "{reason}");
    }

    /// The line of an error in an ASCII file is the line that holds it.
    #[test]
    fn errors_in_ascii_files_name_their_line() {
        let line_of = |needle: &str| 1 + TWO_VOLUMES[..TWO_VOLUMES.find(needle).unwrap()].matches('\n').count();
        let non_number = TWO_VOLUMES.replace("1 1 0\n", "1 one 0\n");
        match read_text_file("gmsh-non-number", &non_number) {
            Err(HookeError::Parse { line: Some(line), .. }) => {
                assert!(
                    (line_of("1 1 0\n") - 1..=line_of("1 1 0\n")).contains(&line),
                    "line {line}"
                )
            }
            other => panic!("expected a parse error with a line, got {other:?}"),
        }
        let old_version = TWO_VOLUMES.replace("4.1 0 8", "2.2 0 8");
        match read_text_file("gmsh-version", &old_version) {
            Err(HookeError::Parse {
                line: Some(2), reason, ..
            }) => {
                assert!(
                    reason.contains("MSH version 2.2") && reason.contains("msh41"),
                    "{reason}"
                )
            }
            other => panic!("expected a parse error on line 2, got {other:?}"),
        }
    }

    #[test]
    fn undefined_node_is_an_error() {
        let text = TWO_VOLUMES.replace("7 10 80 50 70", "7 10 80 55 70");
        let reason = assert_parse_error_without_line(read_text_file("gmsh-undefined", &text));
        assert!(reason.contains("node 55"), "{reason}");
    }

    #[test]
    fn parser_panic_becomes_a_parse_error() {
        let empty_nodes = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 1 1\n$EndNodes\n";
        assert_parse_error_without_line(read_text_file("gmsh-empty-nodes", empty_nodes));
    }
}
