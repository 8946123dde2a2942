//! The native run the page's run is compared with: `cargo run --release -p hooke-web --example
//! reference_run -- SCENE STEPS [SUBSPACE]` builds SCENE as the page does (with the precomputed
//! subspace SUBSPACE, written first if the file does not exist), takes STEPS steps and prints one
//! JSON line: build, step and mean iteration times (ms), the time, the energy and every position.

use hooke_web::LiveScene;
use std::time::Instant;

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let (Some(path), Some(steps)) = (arguments.get(1), arguments.get(2).and_then(|s| s.parse::<usize>().ok())) else {
        eprintln!("usage: reference_run SCENE STEPS [SUBSPACE]");
        std::process::exit(2);
    };
    let outcome = (|| -> hooke::Result<String> {
        let text = std::fs::read_to_string(path).map_err(|e| hooke::HookeError::io(std::path::Path::new(path), e))?;
        let subspace = match arguments.get(3) {
            Some(file) => {
                let file = std::path::Path::new(file);
                if !file.exists() {
                    let bytes = LiveScene::precompute(&text, path)?;
                    std::fs::write(file, bytes).map_err(|e| hooke::HookeError::io(file, e))?;
                }
                Some(std::fs::read(file).map_err(|e| hooke::HookeError::io(file, e))?)
            }
            None => None,
        };
        let started = Instant::now();
        let mut live = LiveScene::new(&text, path, subspace.as_deref())?;
        let built = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        for _ in 0..steps {
            live.step()?;
        }
        let step = started.elapsed().as_secs_f64() * 1e3 / steps.max(1) as f64;
        let positions: Vec<String> = live.positions().iter().map(|x| format!("{x:e}")).collect();
        Ok(format!(
            "{{\"build_ms\":{built},\"step_ms\":{step},\"iteration_ms\":{},\"time\":{},\"energy\":{},\"positions\":[{}]}}",
            live.iteration_ms(),
            live.time(),
            live.energy()?,
            positions.join(",")
        ))
    })();
    match outcome {
        Ok(line) => println!("{line}"),
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    }
}
