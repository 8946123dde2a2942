//! A scene's dimension: `dimension = 2` at its top makes a plane-strain scene,
//! where every vector has 2 components (x, y) and bodies are triangle meshes.
//! This check holds each vector of the scene's text to the scene's dimension,
//! naming the key that differs, and refuses what exists in 3D only.

use crate::error::{HookeError, Result};

/// The checks, on the scene's TOML table (before it is read into its structure).
pub(super) fn check(table: &toml::Table) -> Result<()> {
    let dimension = match table.get("dimension") {
        None => 3,
        Some(toml::Value::Integer(d)) if *d == 2 || *d == 3 => *d as usize,
        Some(other) => {
            return Err(HookeError::scene(
                "dimension",
                format!("must be 2 (plane strain) or 3, got {other}"),
            ))
        }
    };
    let checker = Checker { dimension };
    checker.vector(table, "gravity", "gravity")?;
    for (b, body) in tables(table, "bodies") {
        let key = format!("bodies[{b}]");
        checker.vector(body, "translate", &key)?;
        checker.vector(body, "velocity", &key)?;
        checker.angular_velocity(body, &key)?;
        checker.mesh(body.get("mesh"), &format!("{key}.mesh"))?;
        for (r, region) in tables(body, "regions") {
            checker.selection(region.get("select"), &format!("{key}.regions[{r}].select"))?;
        }
    }
    if dimension == 2 && table.contains_key("networks") {
        return Err(HookeError::scene(
            "networks",
            "mass-spring networks are 3D only; a 2D scene has triangle bodies",
        ));
    }
    for (p, pin) in tables(table, "pins") {
        let key = format!("pins[{p}]");
        checker.selection(pin.get("select"), &format!("{key}.select"))?;
        if let Some(toml::Value::Table(motion)) = pin.get("motion") {
            let key = format!("{key}.motion");
            for name in ["velocity", "center", "amplitude"] {
                checker.vector(motion, name, &key)?;
            }
            let rotation = motion.get("kind").and_then(toml::Value::as_str) == Some("rotation");
            match (dimension, motion.contains_key("axis")) {
                (2, true) => {
                    return Err(HookeError::scene(
                        format!("{key}.axis"),
                        "a 2D rotation is about z: leave the axis out",
                    ))
                }
                (3, false) if rotation => return Err(HookeError::scene(format!("{key}.axis"), "is missing")),
                _ => {}
            }
        }
    }
    for (c, constraint) in tables(table, "constraints") {
        let key = format!("constraints[{c}]");
        checker.selection(constraint.get("select"), &format!("{key}.select"))?;
        checker.obstacle_shape(constraint.get("surface"), &format!("{key}.surface"))?;
    }
    for (f, force) in tables(table, "forces") {
        let key = format!("forces[{f}]");
        checker.selection(force.get("select"), &format!("{key}.select"))?;
        checker.vector(force, "total", &key)?;
        checker.vector(force, "amplitude", &key)?;
    }
    for (o, obstacle) in tables(table, "obstacles") {
        checker.obstacle_shape(obstacle.get("shape"), &format!("obstacles[{o}].shape"))?;
        if let Some(toml::Value::Table(motion)) = obstacle.get("motion") {
            checker.obstacle_motion(motion, &format!("obstacles[{o}].motion"))?;
        }
    }
    Ok(())
}

/// The tables of an array of tables, with their indices.
fn tables<'a>(table: &'a toml::Table, key: &str) -> impl Iterator<Item = (usize, &'a toml::Table)> + use<'a> {
    table
        .get(key)
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
        .enumerate()
}

struct Checker {
    dimension: usize,
}

impl Checker {
    /// `table.name`, when present, must be an array of `dimension` numbers.
    fn vector(&self, table: &toml::Table, name: &str, key: &str) -> Result<()> {
        let key = if key == name {
            name.to_string()
        } else {
            format!("{key}.{name}")
        };
        match table.get(name).and_then(toml::Value::as_array) {
            Some(values) if values.len() != self.dimension => Err(HookeError::scene(
                key,
                format!(
                    "needs {} components in a {}D scene, got {}",
                    self.dimension,
                    self.dimension,
                    values.len()
                ),
            )),
            _ => Ok(()),
        }
    }

    fn angular_velocity(&self, body: &toml::Table, key: &str) -> Result<()> {
        let key = format!("{key}.angular_velocity");
        match (self.dimension, body.get("angular_velocity")) {
            (2, Some(toml::Value::Array(_))) => {
                Err(HookeError::scene(key, "a 2D spin is a number: the rate about z, rad/s"))
            }
            (3, Some(value)) if value.is_float() || value.is_integer() => {
                Err(HookeError::scene(key, "a 3D spin is a vector [ωx, ωy, ωz], rad/s"))
            }
            _ => Ok(()),
        }
    }

    /// Plane and box selections hold vectors; shapes are 3D only.
    fn selection(&self, selection: Option<&toml::Value>, key: &str) -> Result<()> {
        let Some(toml::Value::Table(selection)) = selection else {
            return Ok(());
        };
        for (kind, inner) in selection {
            let Some(inner) = inner.as_table() else { continue };
            let key = format!("{key}.{kind}");
            match kind.as_str() {
                "plane" => {
                    self.vector(inner, "point", &key)?;
                    self.vector(inner, "normal", &key)?;
                }
                "box" => {
                    self.vector(inner, "min", &key)?;
                    self.vector(inner, "max", &key)?;
                }
                _ => {}
            }
        }
        if self.dimension == 2 && selection.contains_key("shape") {
            return Err(HookeError::scene(
                format!("{key}.shape"),
                "shape selections are 3D only; in 2D select by plane, box, label, vertices or all",
            ));
        }
        Ok(())
    }

    /// An obstacle's motion: its vectors in the scene's dimension; a 2D
    /// obstacle (a line) moves by translation in the plane.
    fn obstacle_motion(&self, motion: &toml::Table, key: &str) -> Result<()> {
        self.vector(motion, "velocity", key)?;
        self.vector(motion, "center", key)?;
        let keyframes = motion
            .get("keyframes")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten();
        for (k, frame) in keyframes.filter_map(toml::Value::as_table).enumerate() {
            let frame_key = format!("{key}.keyframes[{k}]");
            self.vector(frame, "translation", &frame_key)?;
            if self.dimension == 2 && frame.contains_key("rotation") {
                return Err(HookeError::scene(
                    format!("{frame_key}.rotation"),
                    "a 2D obstacle moves by translation in the plane: leave the rotation out",
                ));
            }
        }
        if self.dimension == 2 && motion.contains_key("angular_velocity") {
            return Err(HookeError::scene(
                format!("{key}.angular_velocity"),
                "a 2D obstacle moves by translation in the plane: leave the angular velocity out",
            ));
        }
        Ok(())
    }

    fn obstacle_shape(&self, shape: Option<&toml::Value>, key: &str) -> Result<()> {
        let Some(toml::Value::Table(shape)) = shape else {
            return Ok(());
        };
        for (kind, inner) in shape {
            let Some(inner) = inner.as_table() else { continue };
            let key = format!("{key}.{kind}");
            for name in ["point", "normal", "center", "min", "max", "axis"] {
                self.vector(inner, name, &key)?;
            }
        }
        Ok(())
    }

    /// 2D bodies are rectangles or triangle files; boxes, solids and tetrahedral files are 3D.
    fn mesh(&self, mesh: Option<&toml::Value>, key: &str) -> Result<()> {
        let Some(toml::Value::Table(mesh)) = mesh else {
            return Ok(());
        };
        for kind in mesh.keys() {
            let three_d_only = matches!(kind.as_str(), "box" | "solid");
            match (self.dimension, kind.as_str()) {
                (2, _) if three_d_only => {
                    return Err(HookeError::scene(
                        format!("{key}.{kind}"),
                        "is a 3D mesh; a 2D scene takes `rectangle` or a triangle mesh `file` (.msh, .obj)",
                    ))
                }
                (3, "rectangle") => {
                    return Err(HookeError::scene(
                        format!("{key}.rectangle"),
                        "is a 2D mesh: set `dimension = 2` at the top of the scene, or use `box`",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
