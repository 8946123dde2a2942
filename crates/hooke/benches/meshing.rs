//! Isosurface stuffing throughput: a ball of radius 0.1 m meshed at about
//! 100k and 1M tets (issue target: report tets per second at both sizes).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hooke::mesh::{stuff_shape, Shape};
use std::time::Duration;

fn ball_meshing(c: &mut Criterion) {
    let ball = Shape::Ball {
        center: [0.0; 3],
        radius: 0.1,
    };
    let mut group = c.benchmark_group("stuffing_ball");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    for (label, edge_length) in [("100k", 0.00807), ("1M", 0.00375)] {
        let (mesh, _) = stuff_shape(&ball, edge_length).expect("meshed");
        eprintln!("{label}: {} tets, {} vertices", mesh.tet_count(), mesh.vertex_count());
        group.throughput(Throughput::Elements(mesh.tet_count() as u64));
        group.bench_function(label, |b| b.iter(|| stuff_shape(&ball, edge_length).expect("meshed")));
    }
    group.finish();
}

criterion_group!(benches, ball_meshing);
criterion_main!(benches);
