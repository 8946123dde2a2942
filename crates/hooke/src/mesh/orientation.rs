//! Orientation check: every rest element must have positive volume.

use super::TetMesh;
use crate::error::{HookeError, Result};

/// What [`TetMesh::orient`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrientationReport {
    /// Elements whose vertex order was reversed (they were inside out only by numbering).
    pub reoriented: Vec<usize>,
}

/// Relative volume below which an element counts as degenerate: volume / (longest edge)^3.
/// A regular tet has about 0.118; anything below 1e-10 cannot be simulated meaningfully.
const DEGENERATE_RELATIVE_VOLUME: f64 = 1e-10;

impl TetMesh {
    /// Makes every element positively oriented. An element with negative volume has
    /// only its vertex order wrong and is re-oriented (listed in the report); a
    /// flat or collapsed element is an error naming it.
    pub fn orient(&mut self) -> Result<OrientationReport> {
        let mut report = OrientationReport::default();
        for e in 0..self.tets.len() {
            let volume = self.signed_volume(e, &self.vertices);
            let t = self.tets[e];
            let mut longest: f64 = 0.0;
            for a in 0..4 {
                for b in a + 1..4 {
                    longest = longest.max((self.vertices[t[a]] - self.vertices[t[b]]).norm());
                }
            }
            // Written so that a NaN volume also counts as degenerate.
            let well_shaped = volume.abs() > DEGENERATE_RELATIVE_VOLUME * longest.powi(3);
            if !well_shaped {
                return Err(HookeError::Mesh {
                    reason: format!(
                        "element {e} (vertices {:?}) is degenerate: volume {volume:e} for longest edge {longest:e}",
                        t
                    ),
                });
            }
            if volume < 0.0 {
                self.tets[e].swap(2, 3);
                report.reoriented.push(e);
            }
        }
        Ok(report)
    }
}
