//! TetGen `.node` + `.ele` reader and writer.
//!
//! `.node`: header `<#points> <dimension = 3> <#attributes> <#boundary markers (0|1)>`,
//! then `index x y z [attributes...] [marker]` per point.
//! `.ele`: header `<#tets> <nodes per tet (4|10)> <#region attributes (0|1)>`, then
//! `index v1 v2 v3 v4 [v5..v10] [region]` per tet; the region becomes the label.
//! Points may be numbered from 0 or 1: the first point's index sets the base.

use super::{content_lines, last_line_number, parse_coordinate, parse_count, parse_label};
use crate::error::{HookeError, Result};
use crate::mesh::TetMesh;
use nalgebra::Vector3;
use std::path::{Path, PathBuf};

/// Upper bound on per-point attributes in a .node header.
const MAX_POINT_ATTRIBUTES: usize = 1024;

/// Reads the TetGen pair sharing the stem of `path`, which may name either the
/// `.node` or the `.ele` file.
pub fn read_tetgen(path: &Path) -> Result<TetMesh> {
    let (node_path, element_path) = file_pair(path);
    let node_bytes = super::read_bytes(&node_path)?;
    let element_bytes = super::read_bytes(&element_path)?;
    parse_tetgen(&node_path, &node_bytes, &element_path, &element_bytes)
}

/// Writes `mesh` as the TetGen pair sharing the stem of `path` (`.node`, and
/// `.ele` with the labels as region attributes), numbered from 0, with
/// coordinates that read back exactly.
pub fn write_tetgen(path: &Path, mesh: &TetMesh) -> Result<()> {
    let (node_path, element_path) = file_pair(path);
    let mut nodes = format!("{} 3 0 0\n", mesh.vertices.len());
    for (i, p) in mesh.vertices.iter().enumerate() {
        nodes.push_str(&format!("{i} {:e} {:e} {:e}\n", p.x, p.y, p.z));
    }
    let mut elements = format!("{} 4 1\n", mesh.tets.len());
    for (e, (t, label)) in mesh.tets.iter().zip(&mesh.labels).enumerate() {
        elements.push_str(&format!("{e} {} {} {} {} {label}\n", t[0], t[1], t[2], t[3]));
    }
    crate::output::atomic::write_bytes_atomically(&node_path, nodes.as_bytes())?;
    crate::output::atomic::write_bytes_atomically(&element_path, elements.as_bytes())
}

/// Parses the bytes of a `.node` and an `.ele` file; the paths name them in errors.
pub fn parse_tetgen(node_path: &Path, node_bytes: &[u8], element_path: &Path, element_bytes: &[u8]) -> Result<TetMesh> {
    let points = read_node_file(node_path, super::text_of(node_path, node_bytes)?)?;
    let (tets, labels) = read_element_file(element_path, super::text_of(element_path, element_bytes)?, &points)?;
    TetMesh::new(points.positions, tets, labels)
        .map_err(|error| HookeError::parse(element_path, None, error.to_string()))
}

/// The `.node` and `.ele` paths for a path naming either of them.
fn file_pair(path: &Path) -> (PathBuf, PathBuf) {
    let is_element_file = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("ele"));
    if is_element_file {
        (path.with_extension("node"), path.to_path_buf())
    } else {
        (path.to_path_buf(), path.with_extension("ele"))
    }
}

/// The points of a `.node` file and the index its numbering starts from (0 or 1).
struct NodeFile {
    positions: Vec<Vector3<f64>>,
    first_index: usize,
}

/// A header value, or its default when the header stops early (TetGen allows that).
fn header_value(header: &[&str], position: usize, what: &str, default: usize) -> std::result::Result<usize, String> {
    header.get(position).map_or(Ok(default), |word| parse_count(word, what))
}

fn read_node_file(path: &Path, text: &str) -> Result<NodeFile> {
    let error = |line: usize, reason: String| HookeError::parse(path, Some(line), reason);
    let mut lines = content_lines(text);

    let Some((header_line, header)) = lines.next() else {
        return Err(error(
            last_line_number(text),
            "empty file: expected the header '<#points> 3 <#attributes> <#markers>'".into(),
        ));
    };
    let header_error = |reason: String| error(header_line, reason);
    if header.len() > 4 {
        return Err(header_error(format!(
            "header has {} values, expected '<#points> 3 <#attributes> <#markers>'",
            header.len()
        )));
    }
    let point_count = header_value(&header, 0, "number of points", 0).map_err(header_error)?;
    let dimension = header_value(&header, 1, "dimension", 3).map_err(header_error)?;
    let attribute_count = header_value(&header, 2, "number of attributes", 0).map_err(header_error)?;
    let marker_count = header_value(&header, 3, "number of boundary markers", 0).map_err(header_error)?;
    if dimension != 3 {
        return Err(header_error(format!("dimension is {dimension}, expected 3")));
    }
    if marker_count > 1 {
        return Err(header_error(format!(
            "number of boundary markers is {marker_count}, expected 0 or 1"
        )));
    }
    // No real file carries thousands of attributes; a huge count is a garbled header.
    if attribute_count > MAX_POINT_ATTRIBUTES {
        return Err(header_error(format!(
            "{attribute_count} point attributes announced; at most {MAX_POINT_ATTRIBUTES} are supported"
        )));
    }
    if point_count == 0 {
        // TetGen lets a .node file defer its points to a .poly file; we do not read those.
        return Err(header_error("the header announces no points".into()));
    }

    let values_per_line = 4 + attribute_count + marker_count;
    let mut positions = Vec::new();
    let mut first_index = 0;
    for (line, words) in lines {
        let line_error = |reason: String| error(line, reason);
        if positions.len() == point_count {
            return Err(line_error(format!(
                "more points than the {point_count} announced in the header"
            )));
        }
        // TetGen reads a declared but absent marker as 0; so do we.
        let marker_omitted = marker_count == 1 && words.len() == values_per_line - 1;
        if words.len() != values_per_line && !marker_omitted {
            return Err(line_error(format!(
                "expected {values_per_line} values (index, x, y, z, {attribute_count} \
                 attributes, {marker_count} markers), found {}",
                words.len()
            )));
        }
        let index = parse_count(words[0], "point index").map_err(line_error)?;
        if positions.is_empty() {
            if index > 1 {
                return Err(line_error(format!(
                    "the first point has index {index}; numbering must start at 0 or 1"
                )));
            }
            first_index = index;
        }
        let expected_index = first_index + positions.len();
        if index != expected_index {
            return Err(line_error(format!(
                "point index {index} is out of sequence, expected {expected_index}"
            )));
        }
        let x = parse_coordinate(words[1], "x").map_err(line_error)?;
        let y = parse_coordinate(words[2], "y").map_err(line_error)?;
        let z = parse_coordinate(words[3], "z").map_err(line_error)?;
        // Attributes and markers are not used, but a garbled one means a garbled line.
        for word in &words[4..4 + attribute_count] {
            parse_coordinate(word, "point attribute").map_err(line_error)?;
        }
        for word in &words[4 + attribute_count..] {
            parse_label(word, "boundary marker").map_err(line_error)?;
        }
        positions.push(Vector3::new(x, y, z));
    }
    if positions.len() < point_count {
        return Err(error(
            last_line_number(text),
            format!(
                "file ends after {} of the {point_count} points announced in the header",
                positions.len()
            ),
        ));
    }
    Ok(NodeFile { positions, first_index })
}

fn read_element_file(path: &Path, text: &str, points: &NodeFile) -> Result<(Vec<[usize; 4]>, Vec<i32>)> {
    let error = |line: usize, reason: String| HookeError::parse(path, Some(line), reason);
    let mut lines = content_lines(text);

    let Some((header_line, header)) = lines.next() else {
        return Err(error(
            last_line_number(text),
            "empty file: expected the header '<#tets> <nodes per tet> <#region attributes>'".into(),
        ));
    };
    let header_error = |reason: String| error(header_line, reason);
    if header.len() > 3 {
        return Err(header_error(format!(
            "header has {} values, expected '<#tets> <nodes per tet> <#region attributes>'",
            header.len()
        )));
    }
    let tet_count = header_value(&header, 0, "number of tetrahedra", 0).map_err(header_error)?;
    let nodes_per_tet = header_value(&header, 1, "nodes per tetrahedron", 4).map_err(header_error)?;
    let region_count = header_value(&header, 2, "number of region attributes", 0).map_err(header_error)?;
    if nodes_per_tet != 4 && nodes_per_tet != 10 {
        return Err(header_error(format!(
            "{nodes_per_tet} nodes per tetrahedron, expected 4 or 10"
        )));
    }
    if region_count > 1 {
        return Err(header_error(format!(
            "{region_count} region attributes, expected 0 or 1"
        )));
    }
    if tet_count == 0 {
        return Err(header_error("the header announces no tetrahedra".into()));
    }

    let first_index = points.first_index;
    let last_index = first_index + points.positions.len() - 1;
    let values_per_line = 1 + nodes_per_tet + region_count;
    let mut tets = Vec::new();
    let mut labels = Vec::new();
    for (line, words) in lines {
        let line_error = |reason: String| error(line, reason);
        if tets.len() == tet_count {
            return Err(line_error(format!(
                "more tetrahedra than the {tet_count} announced in the header"
            )));
        }
        if words.len() != values_per_line {
            return Err(line_error(format!(
                "expected {values_per_line} values (index, {nodes_per_tet} vertices, \
                 {region_count} region attributes), found {}",
                words.len()
            )));
        }
        parse_count(words[0], "tetrahedron index").map_err(line_error)?;
        let mut tet = [0; 4];
        // Quadratic tets list their 4 corners first; the edge nodes are checked, not kept.
        for (position, word) in words[1..=nodes_per_tet].iter().enumerate() {
            let index = parse_count(word, "vertex index").map_err(line_error)?;
            if index < first_index || index > last_index {
                return Err(line_error(format!(
                    "vertex index {index} is out of range: points are numbered \
                     {first_index} to {last_index}"
                )));
            }
            if let Some(corner) = tet.get_mut(position) {
                *corner = index - first_index;
            }
        }
        if let Some(corner) = super::repeated_corner(&tet) {
            return Err(line_error(format!(
                "the tetrahedron lists vertex {} twice",
                corner + first_index
            )));
        }
        let label = match words.get(1 + nodes_per_tet) {
            Some(word) => parse_label(word, "region attribute").map_err(line_error)?,
            None => 0,
        };
        tets.push(tet);
        labels.push(label);
    }
    if tets.len() < tet_count {
        return Err(error(
            last_line_number(text),
            format!(
                "file ends after {} of the {tet_count} tetrahedra announced in the header",
                tets.len()
            ),
        ));
    }
    Ok((tets, labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::{scratch_directory, write_test_file, ScratchDirectory};

    /// Unit cube, 1-based, with attributes, markers and comments in the way.
    const NODE_ONE_BASED: &str = "\
# unit cube
8 3 1 1
1 0 0 0   0.5 1
2 1 0 0   0.5 1
3 1 1 0   0.5 1
4 0 1 0   0.5 1   # a comment after the values

5 0 0 1   0.5 1
6 1 0 1   0.5 1
7 1 1 1   0.5 1
8 0 1 1   0.5 1
";

    const ELE_ONE_BASED: &str = "\
6 4 1
1  1 2 3 7  1
2  1 6 2 7  1.0
3  1 3 4 7  2
4  1 4 8 7  2
5  1 5 6 7  1
6  1 8 5 7  2.0
";

    const NODE_ZERO_BASED: &str = "\
8 3 0 0
0 0 0 0
1 1 0 0
2 1 1 0
3 0 1 0
4 0 0 1
5 1 0 1
6 1 1 1
7 0 1 1
";

    const ELE_ZERO_BASED: &str = "\
5 4 0
0 0 1 3 4
1 1 2 3 6
2 1 4 5 6
3 3 6 7 4
4 1 3 4 6
";

    /// Writes a `.node`/`.ele` pair; returns its directory (keep it alive) and the
    /// `.node` path.
    fn write_pair(test_name: &str, node: &str, ele: &str) -> (ScratchDirectory, PathBuf) {
        let directory = scratch_directory(test_name);
        write_test_file(&directory, "body.ele", ele.as_bytes());
        let node_path = write_test_file(&directory, "body.node", node.as_bytes());
        (directory, node_path)
    }

    /// Reads a pair that must fail and returns the file name and line of the error.
    fn parse_failure(test_name: &str, node: &str, ele: &str) -> (String, usize) {
        let (_directory, node_path) = write_pair(test_name, node, ele);
        match read_tetgen(&node_path) {
            Err(HookeError::Parse {
                path, line: Some(line), ..
            }) => (
                path.file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                line,
            ),
            other => panic!("expected a parse error with a line, got {other:?}"),
        }
    }

    #[test]
    fn reads_one_based_cube_with_attributes_markers_and_float_regions() {
        let (_directory, node_path) = write_pair("tetgen-one-based", NODE_ONE_BASED, ELE_ONE_BASED);
        let mesh = read_tetgen(&node_path).expect("valid TetGen files");
        assert_eq!(mesh.vertex_count(), 8);
        assert_eq!(mesh.tet_count(), 6);
        assert_eq!(mesh.vertices[6], Vector3::new(1.0, 1.0, 1.0));
        assert_eq!(mesh.tets[0], [0, 1, 2, 6]);
        assert_eq!(mesh.tets[5], [0, 7, 4, 6]);
        assert_eq!(mesh.labels, vec![1, 1, 2, 2, 1, 2]);
    }

    /// A `.node` that declares a boundary marker but leaves its column out on
    /// some lines reads as TetGen reads it: the marker is 0 there.
    #[test]
    fn a_tetrahedron_with_a_repeated_vertex_is_reported_at_its_line() {
        let ele = ELE_ONE_BASED.replace("3  1 3 4 7  2", "3  1 3 3 7  2");
        assert_eq!(
            parse_failure("tetgen-repeat", NODE_ONE_BASED, &ele),
            ("body.ele".to_string(), 4)
        );
    }

    #[test]
    fn a_declared_marker_may_be_left_out() {
        let node = NODE_ONE_BASED
            .replace("1 0 0 0   0.5 1", "1 0 0 0   0.5")
            .replace("7 1 1 1   0.5 1", "7 1 1 1   0.5");
        let (_directory, node_path) = write_pair("tetgen-marker-omitted", &node, ELE_ONE_BASED);
        let mesh = read_tetgen(&node_path).expect("markers are optional");
        assert_eq!(mesh.vertex_count(), 8);
        assert_eq!(mesh.vertices[6], Vector3::new(1.0, 1.0, 1.0));
        // Leaving out more than the marker is still an error.
        let short = NODE_ONE_BASED.replace("3 1 1 0   0.5 1", "3 1 1 0");
        assert_eq!(
            parse_failure("tetgen-attribute-missing", &short, ELE_ONE_BASED),
            ("body.node".to_string(), 5)
        );
    }

    #[test]
    fn reads_zero_based_cube_without_regions_from_the_ele_path() {
        let (_directory, node_path) = write_pair("tetgen-zero-based", NODE_ZERO_BASED, ELE_ZERO_BASED);
        let mesh = read_tetgen(&node_path.with_extension("ele")).expect("valid TetGen files");
        assert_eq!(mesh.vertex_count(), 8);
        assert_eq!(mesh.tet_count(), 5);
        assert_eq!(mesh.vertices[5], Vector3::new(1.0, 0.0, 1.0));
        assert_eq!(mesh.tets[1], [1, 2, 3, 6]);
        assert_eq!(mesh.labels, vec![0; 5]);
    }

    #[test]
    fn quadratic_tets_keep_their_corners() {
        let ele = "1 10 1\n0  0 1 3 4  1 3 0 4 4 1  7\n";
        let (_directory, node_path) = write_pair("tetgen-quadratic", NODE_ZERO_BASED, ele);
        let mesh = read_tetgen(&node_path).expect("valid TetGen files");
        assert_eq!(mesh.tets, vec![[0, 1, 3, 4]]);
        assert_eq!(mesh.labels, vec![7]);
    }

    #[test]
    fn truncated_node_file_points_at_its_last_line() {
        let node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n";
        assert_eq!(
            parse_failure("tetgen-truncated", node, ELE_ZERO_BASED),
            ("body.node".into(), 3)
        );
    }

    #[test]
    fn extra_tetrahedron_line_is_reported() {
        let ele = "1 4 0\n0 0 1 3 4\n1 1 2 3 6\n";
        assert_eq!(
            parse_failure("tetgen-extra", NODE_ZERO_BASED, ele),
            ("body.ele".into(), 3)
        );
    }

    #[test]
    fn non_number_coordinate_is_reported() {
        let node = "2 3 0 0\n0 0 0 0\n1 1 zero 0\n";
        assert_eq!(
            parse_failure("tetgen-non-number", node, ELE_ZERO_BASED),
            ("body.node".into(), 3)
        );
    }

    #[test]
    fn too_few_values_are_reported() {
        let ele = "2 4 1\n\n0 0 1 3 4 1\n1 1 2 3 6\n";
        assert_eq!(
            parse_failure("tetgen-too-few", NODE_ZERO_BASED, ele),
            ("body.ele".into(), 4)
        );
    }

    #[test]
    fn out_of_range_vertex_index_is_reported() {
        // One-based points, so index 0 and index 9 are both outside 1..=8.
        for (case, ele) in [("low", "1 4 0\n1 0 1 2 3\n"), ("high", "1 4 0\n1 1 2 3 9\n")] {
            assert_eq!(
                parse_failure(&format!("tetgen-range-{case}"), NODE_ONE_BASED, ele),
                ("body.ele".into(), 2)
            );
        }
    }

    #[test]
    fn out_of_sequence_point_index_is_reported() {
        let node = "3 3 0 0\n0 0 0 0\n2 1 0 0\n3 0 1 0\n";
        assert_eq!(
            parse_failure("tetgen-sequence", node, ELE_ZERO_BASED),
            ("body.node".into(), 3)
        );
    }

    #[test]
    fn wrong_headers_are_reported() {
        let two_dimensional = "# comment first\n8 2 0 0\n";
        assert_eq!(
            parse_failure("tetgen-dimension", two_dimensional, ELE_ZERO_BASED),
            ("body.node".into(), 2)
        );
        let wedges = "1 6 0\n0 0 1 2 3 4 5\n";
        assert_eq!(
            parse_failure("tetgen-nodes-per-tet", NODE_ZERO_BASED, wedges),
            ("body.ele".into(), 1)
        );
        assert_eq!(
            parse_failure("tetgen-empty", "", ELE_ZERO_BASED),
            ("body.node".into(), 1)
        );
    }

    #[test]
    fn fractional_region_is_reported() {
        let ele = "1 4 1\n0 0 1 3 4 1.5\n";
        assert_eq!(
            parse_failure("tetgen-fractional-region", NODE_ZERO_BASED, ele),
            ("body.ele".into(), 2)
        );
    }

    #[test]
    fn missing_element_file_is_an_io_error() {
        let directory = scratch_directory("tetgen-missing-ele");
        let node_path = write_test_file(&directory, "lonely.node", NODE_ZERO_BASED.as_bytes());
        let error = read_tetgen(&node_path).expect_err("the .ele file is missing");
        assert!(
            matches!(&error, HookeError::Io { path, .. } if path.ends_with("lonely.ele")),
            "{error}"
        );
    }
}
