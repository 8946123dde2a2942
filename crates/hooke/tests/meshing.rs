//! The stuffing mesher: consistent, positively oriented meshes with the
//! guaranteed dihedral angles; volumes that converge to the shapes'; triangle
//! surfaces in three formats, also with a hole; clear errors for bad input.

use hooke::io::read_surface;
use hooke::mesh::{boundary_faces, mesh_quality, stuff_shape, Shape, TetMesh, TriangleSoup};
use nalgebra::Vector3;
use std::collections::HashMap;
use std::f64::consts::PI;

/// Every face is shared by two tets with opposite orientation or is on the
/// boundary, and every boundary edge has exactly two boundary faces.
fn assert_consistent(mesh: &TetMesh, what: &str) {
    let mut faces: HashMap<[usize; 3], Vec<bool>> = HashMap::new();
    for tet in &mesh.tets {
        for face in [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]] {
            let f = face.map(|k| tet[k]);
            let mut sorted = f;
            sorted.sort();
            // Orientation parity of f relative to its sorted order.
            let even = [(f[0], f[1], f[2]), (f[1], f[2], f[0]), (f[2], f[0], f[1])]
                .iter()
                .any(|&(a, b, c)| [a, b, c] == sorted);
            faces.entry(sorted).or_default().push(even);
        }
    }
    let mut boundary_edges: HashMap<[usize; 2], usize> = HashMap::new();
    for (face, sides) in &faces {
        match sides.len() {
            1 => {
                for (a, b) in [(0, 1), (1, 2), (0, 2)] {
                    *boundary_edges.entry([face[a], face[b]]).or_default() += 1;
                }
            }
            2 => assert_ne!(
                sides[0], sides[1],
                "{what}: face {face:?} has the same orientation in both tets"
            ),
            n => panic!("{what}: face {face:?} is shared by {n} tets"),
        }
    }
    for (edge, count) in boundary_edges {
        assert_eq!(count, 2, "{what}: boundary edge {edge:?} has {count} boundary faces");
    }
}

fn ball(radius: f64) -> Shape {
    Shape::Ball {
        center: [0.1, -0.2, 0.3],
        radius,
    }
}

#[test]
fn ball_mesh_is_consistent_with_the_guaranteed_angles() {
    let (mesh, report) = stuff_shape(&ball(1.0), 0.15).unwrap();
    assert_eq!((report.flipped, report.dropped), (0, 0), "{report:?}");
    assert!(report.warped_vertices > 0 && report.cut_points > 0);
    assert_consistent(&mesh, "ball");
    let quality = mesh_quality(&mesh);
    assert!(quality.min_volume > 0.0, "{quality}");
    assert!(
        quality.min_dihedral_degrees >= 10.7 && quality.max_dihedral_degrees <= 164.8,
        "angles outside the guarantee: {quality}"
    );
    // Every boundary vertex lies on the sphere (cut points are exact roots).
    for (face, _) in boundary_faces(&mesh) {
        for v in face {
            let r = (mesh.vertices[v] - Vector3::new(0.1, -0.2, 0.3)).norm();
            assert!((r - 1.0).abs() < 1e-8, "boundary vertex {v} at radius {r}");
        }
    }
}

#[test]
fn ball_volume_converges_as_the_edge_length_shrinks() {
    let exact = 4.0 / 3.0 * PI;
    let errors: Vec<f64> = [0.4, 0.2, 0.1]
        .iter()
        .map(|&h| {
            let (mesh, _) = stuff_shape(&ball(1.0), h).unwrap();
            (mesh_quality(&mesh).total_volume - exact).abs() / exact
        })
        .collect();
    assert!(errors[1] < errors[0] && errors[2] < errors[1], "errors {errors:?}");
    assert!(errors[2] < 0.01, "errors {errors:?}");
    // An inscribed polyhedron converges at second order in h.
    assert!(errors[1] / errors[2] > 2.5, "errors {errors:?}");
}

#[test]
fn a_box_on_lattice_planes_is_reproduced_exactly() {
    let shape = Shape::Box {
        min: [0.0, 0.0, 0.0],
        max: [1.0, 0.5, 0.75],
    };
    let (mesh, _) = stuff_shape(&shape, 0.25).unwrap();
    let quality = mesh_quality(&mesh);
    assert!((quality.total_volume - 0.375).abs() < 1e-12, "{quality}");
    assert_consistent(&mesh, "box");
}

#[test]
fn every_shape_meshes_to_its_volume() {
    let hexagon_area = 1.5 * 3f64.sqrt() * 0.2 * 0.2;
    let helix_length = 2.0 * ((2.0 * PI * 0.3).powi(2) + 0.2f64.powi(2)).sqrt();
    let cases: Vec<(&str, Shape, f64)> = vec![
        (
            "cylinder",
            Shape::Cylinder {
                start: [0.0, 0.0, 0.0],
                end: [0.0, 0.0, 1.0],
                radius: 0.3,
            },
            PI * 0.09,
        ),
        (
            "capsule",
            Shape::Capsule {
                start: [0.0, 0.0, 0.0],
                end: [1.0, 0.0, 0.0],
                radius: 0.25,
            },
            PI * 0.0625 + 4.0 / 3.0 * PI * 0.25f64.powi(3),
        ),
        (
            "torus",
            Shape::Torus {
                center: [0.0; 3],
                axis: [1.0, 1.0, 0.0],
                major_radius: 0.5,
                minor_radius: 0.15,
            },
            2.0 * PI * PI * 0.5 * 0.15 * 0.15,
        ),
        (
            "helix",
            Shape::Helix {
                center: [0.0; 3],
                radius: 0.3,
                pitch: 0.2,
                turns: 2.0,
                thickness: 0.05,
            },
            PI * 0.05 * 0.05 * helix_length + 4.0 / 3.0 * PI * 0.05f64.powi(3),
        ),
        (
            "hexagonal prism",
            Shape::HexagonalPrism {
                center: [0.0; 3],
                radius: 0.2,
                height: 0.5,
            },
            hexagon_area * 0.5,
        ),
        (
            "ball minus box",
            Shape::Difference {
                base: Box::new(ball(0.5)),
                subtract: vec![Shape::Box {
                    min: [0.1, -0.2, 0.3],
                    max: [1.0, 1.0, 1.0],
                }],
            },
            4.0 / 3.0 * PI * 0.125 * 7.0 / 8.0,
        ),
        (
            "intersection of balls",
            Shape::Intersection(vec![
                Shape::Ball {
                    center: [0.0; 3],
                    radius: 0.5,
                },
                Shape::Ball {
                    center: [0.5, 0.0, 0.0],
                    radius: 0.5,
                },
            ]),
            // Two caps of height 0.25: 2 × πh²(3r − h)/3.
            2.0 * PI * 0.0625 * (1.5 - 0.25) / 3.0,
        ),
        (
            "staggered repetition",
            Shape::Repeat {
                shape: Box::new(Shape::Ball {
                    center: [0.0; 3],
                    radius: 0.2,
                }),
                spacing: [0.5, 0.5, 0.0],
                count: [3, 2, 1],
                stagger: true,
            },
            6.0 * 4.0 / 3.0 * PI * 0.008,
        ),
    ];
    for (what, shape, volume) in cases {
        let (mesh, report) = stuff_shape(&shape, 0.025).unwrap();
        assert_eq!((report.flipped, report.dropped), (0, 0), "{what}: {report:?}");
        let quality = mesh_quality(&mesh);
        let error = (quality.total_volume - volume).abs() / volume;
        assert!(
            error < 0.03,
            "{what}: volume {} vs {volume} ({error:.4})",
            quality.total_volume
        );
        assert!(
            quality.min_dihedral_degrees >= 10.7 && quality.max_dihedral_degrees <= 164.8,
            "{what}: {quality}"
        );
        assert_consistent(&mesh, what);
    }
}

type SurfaceWriter = fn(&std::path::Path, &TriangleSoup);

/// A UV sphere of radius 1 as a triangle soup (outward orientation).
fn sphere_surface(rings: usize, segments: usize) -> TriangleSoup {
    let mut soup = TriangleSoup::default();
    soup.vertices.push(Vector3::new(0.0, 0.0, 1.0));
    for i in 1..rings {
        let theta = PI * i as f64 / rings as f64;
        for j in 0..segments {
            let phi = 2.0 * PI * j as f64 / segments as f64;
            soup.vertices.push(Vector3::new(
                theta.sin() * phi.cos(),
                theta.sin() * phi.sin(),
                theta.cos(),
            ));
        }
    }
    soup.vertices.push(Vector3::new(0.0, 0.0, -1.0));
    let south = soup.vertices.len() - 1;
    let ring = |i: usize, j: usize| 1 + (i - 1) * segments + j % segments;
    for j in 0..segments {
        soup.triangles.push([0, ring(1, j), ring(1, j + 1)]);
        soup.triangles.push([south, ring(rings - 1, j + 1), ring(rings - 1, j)]);
        for i in 1..rings - 1 {
            soup.triangles.push([ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)]);
            soup.triangles.push([ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)]);
        }
    }
    soup
}

fn write_obj(path: &std::path::Path, soup: &TriangleSoup) {
    let mut text = String::new();
    for p in &soup.vertices {
        text += &format!("v {} {} {}\n", p.x, p.y, p.z);
    }
    for t in &soup.triangles {
        text += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    std::fs::write(path, text).unwrap();
}

fn write_ascii_stl(path: &std::path::Path, soup: &TriangleSoup) {
    let mut text = String::from("solid sphere\n");
    for t in &soup.triangles {
        text += "facet normal 0 0 0\nouter loop\n";
        for &v in t {
            let p = soup.vertices[v];
            text += &format!("vertex {} {} {}\n", p.x, p.y, p.z);
        }
        text += "endloop\nendfacet\n";
    }
    text += "endsolid sphere\n";
    std::fs::write(path, text).unwrap();
}

fn write_binary_stl(path: &std::path::Path, soup: &TriangleSoup) {
    let mut bytes = vec![0u8; 80];
    bytes.extend((soup.triangles.len() as u32).to_le_bytes());
    for t in &soup.triangles {
        bytes.extend([0f32; 3].iter().flat_map(|x| x.to_le_bytes()));
        for &v in t {
            bytes.extend(soup.vertices[v].iter().flat_map(|&x| (x as f32).to_le_bytes()));
        }
        bytes.extend([0u8; 2]);
    }
    std::fs::write(path, bytes).unwrap();
}

fn write_ply(path: &std::path::Path, soup: &TriangleSoup) {
    let mut text = format!(
        "ply\nformat ascii 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nelement face {}\nproperty list uchar int vertex_indices\nend_header\n",
        soup.vertices.len(),
        soup.triangles.len()
    );
    for p in &soup.vertices {
        text += &format!("{} {} {}\n", p.x, p.y, p.z);
    }
    for t in &soup.triangles {
        text += &format!("3 {} {} {}\n", t[0], t[1], t[2]);
    }
    std::fs::write(path, text).unwrap();
}

/// Meshes the surface file `name` in `directory` and checks the volume (within 4%) and conformity.
fn assert_surface_meshes_to(directory: &std::path::Path, name: &str, enclosed: f64) -> Vec<(String, usize)> {
    let mut shape = Shape::Surface {
        file: name.to_string(),
        loaded: None,
    };
    shape.prepare(directory, "shape", &hooke::io::read_surface).unwrap();
    let (mesh, report) = stuff_shape(&shape, 0.12).unwrap();
    let volume = mesh_quality(&mesh).total_volume;
    assert!(
        (volume - enclosed).abs() < 0.04 * enclosed,
        "{name}: {volume} vs {enclosed}"
    );
    assert_consistent(&mesh, name);
    report.open_surfaces
}

#[test]
fn surfaces_in_every_format_mesh_to_the_enclosed_volume() {
    let directory = std::env::temp_dir().join(format!("hooke-surfaces-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let soup = sphere_surface(16, 24);
    // The polyhedron's own volume, by the divergence theorem.
    let enclosed: f64 = soup
        .triangles
        .iter()
        .map(|t| soup.vertices[t[0]].dot(&soup.vertices[t[1]].cross(&soup.vertices[t[2]])) / 6.0)
        .sum();
    let writers: [(&str, SurfaceWriter); 4] = [
        ("sphere.obj", write_obj),
        ("sphere_ascii.stl", write_ascii_stl),
        ("sphere_binary.stl", write_binary_stl),
        ("sphere.ply", write_ply),
    ];
    for (name, write) in writers {
        let path = directory.join(name);
        write(&path, &soup);
        let read = read_surface(&path).unwrap();
        assert_eq!(read.triangles.len(), soup.triangles.len(), "{name}");
        // Every format welds to the same closed surface (STL repeats each corner).
        assert_eq!(assert_surface_meshes_to(&directory, name, enclosed), [], "{name}");
    }

    // Small holes: three triangles removed; the winding number still sees the inside.
    let mut holed = soup.clone();
    for k in [5, 200, 400] {
        holed.triangles.remove(k);
    }
    let path = directory.join("holed.obj");
    write_obj(&path, &holed);
    let open = assert_surface_meshes_to(&directory, "holed.obj", enclosed);
    assert_eq!(
        open,
        [("holed.obj".to_string(), 9)],
        "three separate holes have 9 rim edges"
    );
    let _ = std::fs::remove_dir_all(directory);
}

#[test]
fn bad_surfaces_and_shapes_give_clear_errors() {
    let directory = std::env::temp_dir().join(format!("hooke-bad-surfaces-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let cases = [
        ("missing.obj", None, "missing.obj"),
        ("shape.xyz", Some("1 2 3\n"), "unknown surface format"),
        ("empty.obj", Some("v 0 0 0\n"), "no triangles"),
        ("bad_index.obj", Some("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n"), "bad_index.obj, line 4"),
        ("repeat.obj", Some("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 2\n"), "repeat.obj, line 5"),
        ("short.stl", Some("solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid\n"), "short.stl, line 7"),
        ("garbage.stl", Some("solid x\nfacet normal nonsense\n"), "garbage.stl"),
        ("no_faces.ply", Some("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n"), "face"),
    ];
    for (name, contents, expected) in cases {
        let path = directory.join(name);
        if let Some(text) = contents {
            std::fs::write(&path, text).unwrap();
        }
        let error = read_surface(&path).unwrap_err().to_string();
        assert!(error.contains(expected), "{name}: {error}");
    }
    let mut bad = Shape::Union(vec![Shape::Ball {
        center: [0.0; 3],
        radius: -1.0,
    }]);
    let error = bad
        .prepare(&directory, "bodies[0].mesh.shape", &hooke::io::read_surface)
        .unwrap_err()
        .to_string();
    assert!(error.contains("bodies[0].mesh.shape[0].radius"), "{error}");
    let error = stuff_shape(&ball(1.0), 1e-4).unwrap_err().to_string();
    assert!(error.contains("edge length"), "{error}");
    let _ = std::fs::remove_dir_all(directory);
}

/// A render of a known scene is non-empty and shows the object where expected:
/// a ball fills a centred disc of the predicted size; a long box seen from the
/// front is wide and flat; labels get distinct colours.
#[test]
fn renders_show_the_object_where_expected() {
    use hooke::output::{render, RenderField, RenderInput, RenderSettings};
    let (mesh, _) = stuff_shape(&ball(1.0), 0.1).unwrap();
    let settings = RenderSettings {
        field: RenderField::Plain,
        width: 400,
        height: 300,
        ..RenderSettings::default()
    };
    let input = RenderInput {
        mesh: &hooke::mesh::Mesh::Tetrahedra(mesh.clone()),
        positions: &mesh.vertices,
        element_values: &[],
        edges: &[],
        obstacles: &[],
    };
    let image = render(&input, &settings).unwrap();
    let (x0, y0, x1, y1) = image.covered_box().expect("something drawn");
    // The fitted diameter is the image height less two margins of 6%.
    let diameter = 300.0 * (1.0 - 0.12);
    let radius = diameter / 2.0;
    assert!(((x1 - x0) as f64 - diameter).abs() < 3.0, "{x0}..{x1}");
    assert!(((y1 - y0) as f64 - diameter).abs() < 3.0, "{y0}..{y1}");
    assert!((((x0 + x1) as f64) / 2.0 - 200.0).abs() < 2.0 && (((y0 + y1) as f64) / 2.0 - 150.0).abs() < 2.0);
    let disc = PI * radius * radius;
    let covered = image.covered_pixels() as f64;
    assert!((covered - disc).abs() < 0.03 * disc, "{covered} pixels vs disc {disc}");

    let slab = Shape::Box {
        min: [0.0, 0.0, 0.0],
        max: [2.0, 0.5, 0.5],
    };
    let (mut mesh, _) = stuff_shape(&slab, 0.1).unwrap();
    for e in 0..mesh.tet_count() {
        if mesh.centroid(e).x > 1.0 {
            mesh.labels[e] = 1;
        }
    }
    let front = RenderSettings {
        field: RenderField::Label,
        ..RenderSettings::default()
    }
    .with_view("front")
    .unwrap();
    let input = RenderInput {
        mesh: &hooke::mesh::Mesh::Tetrahedra(mesh.clone()),
        positions: &mesh.vertices,
        element_values: &[],
        edges: &[],
        obstacles: &[],
    };
    let image = render(&input, &front).unwrap();
    let (x0, y0, x1, y1) = image.covered_box().unwrap();
    let ratio = (x1 - x0) as f64 / (y1 - y0) as f64;
    assert!((ratio - 4.0).abs() < 0.1, "aspect {ratio}");
    // Left half one colour family, right half another.
    let row = (y0 + y1) / 2;
    let pixel = |x: u32| image.pixels[(row * image.width + x) as usize];
    let (left, right) = (pixel(x0 + (x1 - x0) / 4), pixel(x0 + 3 * (x1 - x0) / 4));
    assert_ne!(left, right, "labels 0 and 1 share a colour");
    // Writing a PNG works and gives a valid file.
    let path = std::env::temp_dir().join(format!("hooke-render-{}.png", std::process::id()));
    image.write_png(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let _ = std::fs::remove_file(path);
}

/// A scene body meshed from a shape, with a stiff shell picked by shape.
#[test]
fn scene_bodies_mesh_shapes_and_pick_regions_by_shape() {
    let text = r#"
[simulation]
duration = 0.01
time_step = 0.01

[[bodies]]
mesh = { solid = { shape = { ball = { center = [0, 0, 0], radius = 0.1 } }, edge_length = 0.02 } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.45, density = 1000 }

[[bodies.regions]]
select = { shape = { difference = { base = { ball = { center = [0, 0, 0], radius = 1 } }, subtract = [{ ball = { center = [0, 0, 0], radius = 0.08 } }] } } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e8, poisson_ratio = 0.45, density = 1000 }
"#;
    let scene = hooke::scene::Scene::from_text(text, "inline", std::path::PathBuf::from(".")).unwrap();
    let built = scene.build().unwrap();
    let mesh = built.model.mesh();
    assert!(mesh.element_count() > 500);
    let materials = built.model.materials();
    // The shear stiffness of the linearisation at rest, ∂P₁₂/∂F₁₂ = μ.
    let shear = |m: &hooke::material::MaterialRef| {
        hooke::material::derivative_matrix(m.as_ref(), &nalgebra::Matrix3::identity(), false)[(3, 3)]
    };
    let stiff: Vec<bool> = materials.iter().map(|m| shear(m) > 1e7).collect();
    for e in 0..mesh.element_count() {
        let r = mesh.centroid(e).norm();
        assert_eq!(stiff[e], r > 0.08, "element {e} at radius {r}");
    }
    assert!(stiff.iter().any(|&s| s) && stiff.iter().any(|&s| !s));
    assert!(built.notes.iter().any(|n| n.contains("dihedral")), "{:?}", built.notes);
}

/// `output.render_every` draws a picture every n steps (and the last), each a
/// PNG showing the body.
#[test]
fn runs_render_every_nth_step() {
    let directory = std::env::temp_dir().join(format!("hooke-render-run-{}", std::process::id()));
    let text = r#"
gravity = [0, 0, -9.81]
[simulation]
duration = 0.05
time_step = 0.01
[[bodies]]
mesh = { solid = { shape = { capsule = { start = [0, 0, 0], end = [0.2, 0, 0], radius = 0.03 } }, edge_length = 0.02 } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000 }
[[pins]]
select = { plane = { point = [0, 0, 0], normal = [-1, 0, 0] } }
[integrator]
kind = "semi_implicit_backward_euler"
[output]
vtk_every = 0
energies = false
plot = false
render_every = 2
render = { field = "displacement", width = 160, height = 120 }
"#;
    let scene = hooke::scene::Scene::from_text(text, "inline", std::path::PathBuf::from(".")).unwrap();
    let mut built = scene.build().unwrap();
    let settings = scene.run_settings(Some(&directory));
    hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    // Steps 0, 2, 4 and the last (5).
    for index in 0..4 {
        let path = directory.join(format!("render_{index:04}.png"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(bytes.starts_with(b"\x89PNG"));
    }
    assert!(!directory.join("render_0004.png").exists());
    let _ = std::fs::remove_dir_all(directory);
}

/// Reads a PNG written by a run: width and RGB pixels.
fn read_png(path: &std::path::Path) -> (u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let pixels = buffer[..info.buffer_size()]
        .chunks(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, pixels)
}

/// A run's pictures share one camera window (the one that holds every
/// frame), so a falling body is drawn lower in each; the obstacles are drawn
/// (a ball beside the path, in their warm grey) and do not move the camera.
#[test]
fn a_runs_pictures_share_one_camera_and_show_the_obstacles() {
    let directory = std::env::temp_dir().join(format!("hooke-render-framing-{}", std::process::id()));
    let text = r#"
gravity = [0, 0, -9.81]
[simulation]
duration = 0.3
time_step = 0.01
[[bodies]]
mesh = { box = { size = [0.1, 0.1, 0.1], cells = [2, 2, 2] } }
material = { model = "stable_neo_hookean", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 1000 }
[[obstacles]]
shape = { sphere = { center = [0.25, 0.05, -0.2], radius = 0.05 } }
stiffness = 1e4
[integrator]
kind = "backward_euler"
[output]
vtk_every = 0
energies = false
plot = false
render_every = 10
render = { field = "plain", azimuth_degrees = -90, elevation_degrees = 0, width = 200, height = 200 }
"#;
    let scene = hooke::scene::Scene::from_text(text, "inline", std::path::PathBuf::from(".")).unwrap();
    let mut built = scene.build().unwrap();
    let settings = scene.run_settings(Some(&directory));
    hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
        .run(built.initial_state.clone())
        .unwrap()
        .into_result()
        .unwrap();
    // The body's pixels: bluish grey (blue above red); the obstacle's: warm (red above blue).
    let body_rows = |pixels: &[[u8; 3]], width: u32| {
        let rows: Vec<u32> = (0..pixels.len())
            .filter(|&i| pixels[i][2] as i32 > pixels[i][0] as i32 + 5)
            .map(|i| i as u32 / width)
            .collect();
        (*rows.iter().min().unwrap(), *rows.iter().max().unwrap())
    };
    let mut previous_top = None;
    for index in 0..4 {
        let (width, pixels) = read_png(&directory.join(format!("render_{index:04}.png")));
        let (top, bottom) = body_rows(&pixels, width);
        // A 0.1 m cube in a window at least 0.44 m high: under a third of the picture.
        assert!(bottom - top < 200 / 3, "picture {index}: rows {top}..{bottom}");
        if let Some(above) = previous_top {
            assert!(top > above, "picture {index}: the body is not lower ({top} vs {above})");
        }
        previous_top = Some(top);
        let obstacle = pixels.iter().filter(|p| p[0] as i32 > p[2] as i32 + 10).count();
        assert!(obstacle > 100, "picture {index}: the obstacle covers {obstacle} pixels");
    }
    // Pictures are drawn from frames: the run wrote one per picture.
    assert!(directory.join("frame_0003.vtu").is_file());
    assert!(!directory.join("render_0004.png").exists());
    let _ = std::fs::remove_dir_all(directory);
}

/// A clipping plane takes away the elements on its normal's side: a ball cut
/// through its centre, seen from the front, covers half the disc; seen from
/// the cut side it shows a full disc (the cut face is drawn, not a hole).
#[test]
fn a_clipping_plane_shows_the_inside() {
    use hooke::output::{render, ClipPlane, RenderField, RenderInput, RenderSettings};
    let (mesh, _) = stuff_shape(&ball(1.0), 0.1).unwrap();
    let input = RenderInput {
        mesh: &hooke::mesh::Mesh::Tetrahedra(mesh.clone()),
        positions: &mesh.vertices,
        element_values: &[],
        edges: &[],
        obstacles: &[],
    };
    let settings = |view: &str, clip: Option<ClipPlane>| {
        RenderSettings {
            field: RenderField::Plain,
            width: 300,
            height: 300,
            clip,
            ..RenderSettings::default()
        }
        .with_view(view)
        .unwrap()
    };
    let cut = Some(ClipPlane {
        point: [0.0, 0.0, 0.0],
        normal: [1.0, 0.0, 0.0],
    });
    let whole = render(&input, &settings("front", None)).unwrap().covered_pixels() as f64;
    let half = render(&input, &settings("front", cut)).unwrap().covered_pixels() as f64;
    assert!((half / whole - 0.5).abs() < 0.08, "front: {half} of {whole}");
    let face_on = render(&input, &settings("right", cut)).unwrap().covered_pixels() as f64;
    assert!(
        (face_on / whole - 1.0).abs() < 0.05,
        "the cut face fills the disc: {face_on} of {whole}"
    );
    let bad = settings(
        "front",
        Some(ClipPlane {
            point: [0.0; 3],
            normal: [0.0; 3],
        }),
    );
    assert!(render(&input, &bad).is_err());
}
