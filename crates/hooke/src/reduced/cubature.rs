//! Training-free cubature (Trusty et al. 2023, §5.2, Eq. 11): the elements are
//! clustered by k-means in the space of their skinning weights, each weight
//! scaled by Γⱼ⁻² so that low, energetic modes separate the clusters; each
//! cluster is represented by its element nearest the centroid, weighted by
//! the cluster's volume. Σ w = the body's volume, and a body of one material
//! deformed affinely gets its exact energy.
//!
//! Stiff regions have nearly constant weights (the eigenmodes do not bend
//! there), so they fall into few clusters and soft regions get the points.
//!
//! Hooke clusters each material apart. Trusty et al. 2023 cluster all elements at once
//! and relies on material-aware weights to keep clusters from straddling
//! materials; a thin stiff bone inside muscle has nearly the weights of the
//! muscle around it, and a cluster holding both is integrated with one of
//! the two materials: the bone then counts as muscle (or the muscle as bone).
//! Each material instead gets points in proportion to the spread of its
//! elements in weight space (the one-cluster k-means objective, so the
//! stiffness-aware counts of a joint clustering are kept), and at least one.
//!
//! k-means here is k-means++ seeding and Lloyd iterations with Hamerly's
//! bounds (one upper bound to the own centre and one lower bound to the
//! others per element skip most distance computations once the clusters
//! settle). Memory is linear in the mesh: no elements × centres array is
//! formed. The seed fixes the result; the work is split over threads with
//! every sum in a fixed order, so the clusters do not depend on the thread count.

use crate::error::{HookeError, Result};
use rayon::prelude::*;

/// The cubature rule: elements and their weights (volumes).
#[derive(Clone, Debug, PartialEq)]
pub struct Cubature {
    /// The element standing for each cluster, one per point.
    pub elements: Vec<usize>,
    /// Each point's weight: its cluster's volume, m³.
    pub weights: Vec<f64>,
    /// The cluster of each element (the rule's partition of the body).
    pub clusters: Vec<usize>,
}

/// The default number of points for m modes: 20 m (Trusty et al. 2023, §7.5; fewer than
/// 2m leaves spurious zero-energy modes, since rank K ≤ 6|𝒞| < 12m).
pub fn default_point_count(modes: usize) -> usize {
    20 * modes
}

/// The cubature of `count` points for elements with `volumes`, whose
/// per-element features (the mean weights of their vertices, `features[e]`
/// of length m) come with the eigenvalues Γ, and whose materials are
/// `groups[e]` (clustered apart). Modes with Γ near zero (the constant weight
/// of a free body) say nothing and are dropped; if none is left, the
/// `positions` (element centroids) are clustered instead.
pub fn spectral_cubature(
    features: &[Vec<f64>],
    eigenvalues: &[f64],
    volumes: &[f64],
    positions: &[[f64; 3]],
    groups: &[usize],
    count: usize,
    seed: u64,
) -> Result<Cubature> {
    let elements = volumes.len();
    if count == 0 || count > elements {
        return Err(HookeError::scene(
            "subspace.cubature_points",
            format!("{count} cubature points asked of a body of {elements} elements (1 to {elements})"),
        ));
    }
    // Every element a point: exact integration, with no clustering to do.
    if count == elements {
        return Ok(Cubature {
            elements: (0..elements).collect(),
            weights: volumes.to_vec(),
            clusters: (0..elements).collect(),
        });
    }
    let top = eigenvalues.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    let kept: Vec<(usize, f64)> = eigenvalues
        .iter()
        .enumerate()
        .filter(|(_, g)| g.abs() > 1e-8 * top)
        .map(|(j, g)| (j, 1.0 / (g * g)))
        .collect();
    let points: Vec<f64> = match kept.is_empty() {
        true => positions.iter().flatten().copied().collect(),
        false => features
            .iter()
            .flat_map(|f| kept.iter().map(move |&(j, scale)| f[j] * scale))
            .collect(),
    };
    let dimension = if kept.is_empty() { 3 } else { kept.len() };
    let point = |e: usize| &points[e * dimension..(e + 1) * dimension];
    // The members of each group, in order of first appearance.
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut slot_of = std::collections::HashMap::new();
    for (e, &g) in groups.iter().enumerate() {
        let slot = *slot_of.entry(g).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[slot].push(e);
    }
    if members.len() > count {
        return Err(HookeError::scene(
            "subspace.cubature_points",
            format!(
                "{count} cubature points for {} materials: each material needs one at least",
                members.len()
            ),
        ));
    }
    let counts = allocate(&members, count, dimension, &point);
    let mut cubature = Cubature {
        elements: Vec::with_capacity(count),
        weights: Vec::with_capacity(count),
        clusters: vec![0; volumes.len()],
    };
    for (g, (group, &k)) in members.iter().zip(&counts).enumerate() {
        let local: Vec<f64> = group.iter().flat_map(|&e| point(e).iter().copied()).collect();
        let mut clustering = kmeans(&local, dimension, k, seed.wrapping_add(g as u64), 100);
        fill_empty_clusters(&mut clustering, &local, dimension, k);
        let offset = cubature.elements.len();
        let mut weights = vec![0.0; k];
        // The representative: the member nearest the centroid (lowest index on ties).
        let mut best = vec![(f64::INFINITY, usize::MAX); k];
        for (i, (&e, &c)) in group.iter().zip(&clustering.labels).enumerate() {
            weights[c] += volumes[e];
            cubature.clusters[e] = offset + c;
            let distance = squared_distance(
                &local[i * dimension..(i + 1) * dimension],
                &clustering.centroids[c * dimension..(c + 1) * dimension],
            );
            if distance < best[c].0 {
                best[c] = (distance, e);
            }
        }
        cubature.elements.extend(best.iter().map(|&(_, e)| e));
        cubature.weights.extend(weights);
    }
    Ok(cubature)
}

/// Gives every empty cluster a member: repeatedly, the member farthest from
/// its centre in the cluster with the most members (points that coincide,
/// such as elements at pinned vertices whose weights are all zero, can leave
/// k-means with empty clusters). Needs k ≤ the number of points.
fn fill_empty_clusters(clustering: &mut Clustering, points: &[f64], dimension: usize, k: usize) {
    let mut sizes = vec![0usize; k];
    for &c in &clustering.labels {
        sizes[c] += 1;
    }
    while let Some(empty) = sizes.iter().position(|&n| n == 0) {
        let largest = (0..k).max_by_key(|&c| (sizes[c], std::cmp::Reverse(c))).expect("k > 0");
        let centre = &clustering.centroids[largest * dimension..(largest + 1) * dimension];
        let (_, moved) = clustering
            .labels
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c == largest)
            .map(|(i, _)| (squared_distance(&points[i * dimension..(i + 1) * dimension], centre), i))
            .fold(
                (-1.0, 0),
                |best, candidate| if candidate.0 > best.0 { candidate } else { best },
            );
        clustering.labels[moved] = empty;
        clustering.centroids[empty * dimension..(empty + 1) * dimension]
            .copy_from_slice(&points[moved * dimension..(moved + 1) * dimension]);
        sizes[largest] -= 1;
        sizes[empty] += 1;
    }
}

/// Points per group: in proportion to each group's spread Σ‖fₑ − f̄‖² (the
/// one-cluster k-means objective), at least one and at most its size, summing
/// to `count` (largest remainders first, then the largest groups).
fn allocate<'a>(
    members: &[Vec<usize>],
    count: usize,
    dimension: usize,
    point: &impl Fn(usize) -> &'a [f64],
) -> Vec<usize> {
    let spreads: Vec<f64> = members
        .iter()
        .map(|group| {
            let mut mean = vec![0.0; dimension];
            for &e in group {
                for (m, x) in mean.iter_mut().zip(point(e)) {
                    *m += x / group.len() as f64;
                }
            }
            group.iter().map(|&e| squared_distance(point(e), &mean)).sum()
        })
        .collect();
    let total: f64 = spreads.iter().sum();
    let share = |g: usize| match total > 0.0 {
        true => count as f64 * spreads[g] / total,
        false => count as f64 * members[g].len() as f64 / members.iter().map(Vec::len).sum::<usize>() as f64,
    };
    let mut counts: Vec<usize> = (0..members.len())
        .map(|g| (share(g).floor() as usize).clamp(1, members[g].len()))
        .collect();
    // Too many: take from the groups with the most points; too few: give by largest remainder.
    while counts.iter().sum::<usize>() > count {
        let g = (0..counts.len()).max_by_key(|&g| counts[g]).expect("a group");
        counts[g] -= 1;
    }
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| (share(b) - share(b).floor()).total_cmp(&(share(a) - share(a).floor())));
    let mut i = 0;
    while counts.iter().sum::<usize>() < count {
        let g = order[i % order.len()];
        if counts[g] < members[g].len() {
            counts[g] += 1;
        }
        i += 1;
    }
    counts
}

/// A k-means clustering: a label per point, centroids row by row.
#[derive(Clone, Debug)]
pub struct Clustering {
    pub labels: Vec<usize>,
    pub centroids: Vec<f64>,
}

fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// SplitMix64: a small, fixed generator, so a seed means the same clusters everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// k-means of n points of `dimension` coordinates (row by row in `points`)
/// into k clusters: k-means++ seeding, then Lloyd iterations with Hamerly's
/// bounds until no label changes or `max_iterations`. A cluster left empty is
/// given the point farthest from its centre.
///
/// One function of about 150 lines: Hamerly's bounds (upper, lower, half gaps) are updated together
/// with the labels and centroids in one loop.
pub fn kmeans(points: &[f64], dimension: usize, k: usize, seed: u64, max_iterations: usize) -> Clustering {
    let n = points.len() / dimension;
    let point = |i: usize| &points[i * dimension..(i + 1) * dimension];
    let mut random = SplitMix(seed);
    // k-means++: each next centre drawn with probability ∝ D², the squared
    // distance to the nearest centre so far.
    let mut centroids = Vec::with_capacity(k * dimension);
    let first = ((random.next_unit() * n as f64) as usize).min(n - 1);
    centroids.extend_from_slice(point(first));
    let mut nearest: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| squared_distance(point(i), point(first)))
        .collect();
    for _ in 1..k {
        let total: f64 = nearest.iter().sum();
        let chosen = if total > 0.0 {
            let target = random.next_unit() * total;
            let mut running = 0.0;
            let mut chosen = n - 1;
            for (i, d) in nearest.iter().enumerate() {
                running += d;
                if running > target {
                    chosen = i;
                    break;
                }
            }
            chosen
        } else {
            // Every point sits on a centre: any point will do.
            ((random.next_unit() * n as f64) as usize).min(n - 1)
        };
        let centre = point(chosen).to_vec();
        nearest.par_iter_mut().enumerate().for_each(|(i, d)| {
            *d = d.min(squared_distance(point(i), &centre));
        });
        centroids.extend_from_slice(&centre);
    }
    // Hamerly: upper[i] ≥ distance to its own centre, lower[i] ≤ distance to any other.
    let mut labels = vec![0usize; n];
    let mut upper = vec![f64::INFINITY; n];
    let mut lower = vec![0.0f64; n];
    for iteration in 0..max_iterations.max(1) {
        let centre = |c: usize, centroids: &[f64]| centroids[c * dimension..(c + 1) * dimension].to_vec();
        // Half the distance from each centre to its nearest other centre.
        let half_gap: Vec<f64> = (0..k)
            .into_par_iter()
            .map(|a| {
                let ca = &centroids[a * dimension..(a + 1) * dimension];
                (0..k)
                    .filter(|&b| b != a)
                    .map(|b| squared_distance(ca, &centroids[b * dimension..(b + 1) * dimension]))
                    .fold(f64::INFINITY, f64::min)
                    .sqrt()
                    * 0.5
            })
            .collect();
        let changed: usize = labels
            .par_iter_mut()
            .zip(upper.par_iter_mut())
            .zip(lower.par_iter_mut())
            .enumerate()
            .map(|(i, ((label, up), low))| {
                let bound = half_gap[*label].max(*low);
                if *up <= bound {
                    return 0;
                }
                *up = squared_distance(point(i), &centroids[*label * dimension..(*label + 1) * dimension]).sqrt();
                if *up <= bound {
                    return 0;
                }
                let (mut first, mut second, mut best) = (f64::INFINITY, f64::INFINITY, 0);
                for c in 0..k {
                    let distance = squared_distance(point(i), &centroids[c * dimension..(c + 1) * dimension]);
                    if distance < first {
                        second = first;
                        first = distance;
                        best = c;
                    } else if distance < second {
                        second = distance;
                    }
                }
                *up = first.sqrt();
                *low = second.sqrt();
                let moved = usize::from(best != *label);
                *label = best;
                moved
            })
            .sum();
        if changed == 0 && iteration > 0 {
            break;
        }
        // New centroids, summed in point order.
        let mut sums = vec![0.0; k * dimension];
        let mut sizes = vec![0usize; k];
        for (i, &c) in labels.iter().enumerate() {
            sizes[c] += 1;
            for (s, x) in sums[c * dimension..(c + 1) * dimension].iter_mut().zip(point(i)) {
                *s += x;
            }
        }
        let old = centroids.clone();
        for c in 0..k {
            if sizes[c] > 0 {
                for s in 0..dimension {
                    centroids[c * dimension + s] = sums[c * dimension + s] / sizes[c] as f64;
                }
            }
        }
        // An empty cluster takes the point farthest from its own centre.
        for c in (0..k).filter(|&c| sizes[c] == 0) {
            let far = (0..n)
                .map(|i| {
                    (
                        squared_distance(point(i), &centroids[labels[i] * dimension..(labels[i] + 1) * dimension]),
                        i,
                    )
                })
                .fold((-1.0, 0), |a, b| if b.0 > a.0 { b } else { a })
                .1;
            let place = point(far).to_vec();
            centroids[c * dimension..(c + 1) * dimension].copy_from_slice(&place);
            labels[far] = c;
            upper[far] = 0.0;
            lower[far] = 0.0;
        }
        let moves: Vec<f64> = (0..k)
            .map(|c| squared_distance(&centre(c, &old), &centre(c, &centroids)).sqrt())
            .collect();
        let (mut largest, mut largest_at, mut second) = (0.0f64, 0, 0.0f64);
        for (c, &m) in moves.iter().enumerate() {
            if m > largest {
                second = largest;
                largest = m;
                largest_at = c;
            } else if m > second {
                second = m;
            }
        }
        upper
            .par_iter_mut()
            .zip(lower.par_iter_mut())
            .zip(labels.par_iter())
            .for_each(|((up, low), &c)| {
                *up += moves[c];
                *low -= if c == largest_at { second } else { largest };
            });
    }
    Clustering { labels, centroids }
}
