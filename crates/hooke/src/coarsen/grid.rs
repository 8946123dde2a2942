//! A uniform grid of element bounding boxes, to find the fine elements near a
//! point or a coarse element without testing them all.

use nalgebra::Vector3;
use std::collections::HashMap;

pub struct ElementGrid {
    cell: f64,
    cells: HashMap<[i64; 3], Vec<usize>>,
    boxes: Vec<(Vector3<f64>, Vector3<f64>)>,
}

fn bounds(corners: &[Vector3<f64>]) -> (Vector3<f64>, Vector3<f64>) {
    corners
        .iter()
        .fold((corners[0], corners[0]), |(low, high), p| (low.inf(p), high.sup(p)))
}

impl ElementGrid {
    /// The grid of elements given by their corners, with cells about twice
    /// the mean element size.
    pub fn new(elements: &[Vec<Vector3<f64>>]) -> ElementGrid {
        let boxes: Vec<_> = elements.iter().map(|c| bounds(c)).collect();
        let mean = boxes.iter().map(|(l, h)| (h - l).max()).sum::<f64>() / boxes.len().max(1) as f64;
        let cell = (2.0 * mean).max(f64::MIN_POSITIVE);
        let mut grid = ElementGrid {
            cell,
            cells: HashMap::new(),
            boxes,
        };
        for e in 0..grid.boxes.len() {
            let (low, high) = grid.boxes[e];
            for key in grid.keys(&low, &high) {
                grid.cells.entry(key).or_default().push(e);
            }
        }
        grid
    }

    fn index(&self, p: &Vector3<f64>) -> [i64; 3] {
        [0, 1, 2].map(|a| (p[a] / self.cell).floor() as i64)
    }

    fn keys(&self, low: &Vector3<f64>, high: &Vector3<f64>) -> Vec<[i64; 3]> {
        let (a, b) = (self.index(low), self.index(high));
        let mut keys = Vec::new();
        for i in a[0]..=b[0] {
            for j in a[1]..=b[1] {
                for k in a[2]..=b[2] {
                    keys.push([i, j, k]);
                }
            }
        }
        keys
    }

    /// Elements whose bounding boxes meet the box [low, high], in increasing order.
    pub fn near_box(&self, low: &Vector3<f64>, high: &Vector3<f64>) -> Vec<usize> {
        let mut found: Vec<usize> = self
            .keys(low, high)
            .iter()
            .filter_map(|k| self.cells.get(k))
            .flatten()
            .copied()
            .filter(|&e| {
                let (l, h) = self.boxes[e];
                (0..3).all(|a| l[a] <= high[a] && low[a] <= h[a])
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Elements whose boxes meet the box of `corners`.
    pub fn near_element(&self, corners: &[Vector3<f64>]) -> Vec<usize> {
        let (low, high) = bounds(corners);
        self.near_box(&low, &high)
    }

    /// Elements whose boxes come within a cell of a point, widening the
    /// search up to 16 cells; beyond that, every element.
    pub fn around(&self, point: &Vector3<f64>) -> Vec<usize> {
        let mut reach = self.cell;
        while reach <= 16.0 * self.cell {
            let offset = Vector3::repeat(reach);
            let found = self.near_box(&(point - offset), &(point + offset));
            if !found.is_empty() {
                return found;
            }
            reach *= 2.0;
        }
        (0..self.boxes.len()).collect()
    }
}
