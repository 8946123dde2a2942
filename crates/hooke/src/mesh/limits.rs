//! Bounds on what the generators make, checked before they allocate, and an
//! estimate of the memory a model needs, checked before it is built: a scene
//! asking for too much gets an error that says how much, never an abort.

use crate::error::{HookeError, Result};

/// The most elements (tetrahedra, triangles or springs) one generator makes.
pub const MAX_GENERATED_ELEMENTS: usize = 10_000_000;

/// The number of elements a generator makes from `counts` cells with
/// `per_cell` elements each, or why not: a count is zero, or the total exceeds
/// [`MAX_GENERATED_ELEMENTS`] (computed without overflow).
pub fn generated_elements(counts: &[usize], per_cell: usize) -> std::result::Result<usize, String> {
    if counts.contains(&0) {
        return Err(format!("every count must be at least 1, got {counts:?}"));
    }
    counts
        .iter()
        .try_fold(per_cell, |total, &c| total.checked_mul(c))
        .filter(|&total| total <= MAX_GENERATED_ELEMENTS)
        .ok_or_else(|| {
            format!("{counts:?} would make more than {MAX_GENERATED_ELEMENTS} elements ({per_cell} per cell)")
        })
}

/// [`generated_elements`] for a generator named `what`, as a mesh error.
pub fn check_generated(what: &str, counts: &[usize], per_cell: usize) -> Result<usize> {
    generated_elements(counts, per_cell).map_err(|reason| HookeError::Mesh {
        reason: format!("{what}: {reason}"),
    })
}

/// Bytes a model needs per element while it is built (assembly maps, the
/// matrix pattern, mass and stiffness values), measured with `hooke check` on
/// boxes of 0.25 and 1 million tetrahedra (2.35 kB each), a rectangle of 1
/// million triangles (0.87 kB) and a cloth of 1.5 million springs (0.49 kB),
/// rounded up.
const BYTES_PER_TETRAHEDRON: u64 = 2_400;
const BYTES_PER_TRIANGLE: u64 = 900;
const BYTES_PER_SPRING: u64 = 500;

/// The memory a model of these elements needs to be built, in bytes. An
/// implicit step's factorisation needs more on top (its fill grows faster than
/// the element count).
pub fn model_bytes(tetrahedra: usize, triangles: usize, springs: usize) -> u64 {
    tetrahedra as u64 * BYTES_PER_TETRAHEDRON
        + triangles as u64 * BYTES_PER_TRIANGLE
        + springs as u64 * BYTES_PER_SPRING
}

/// The memory this process may still use, if known: Linux's `MemAvailable`,
/// lowered to what the control group (a container's or a batch job's limit)
/// leaves and to what the process's own address-space limit (`ulimit -v`)
/// leaves: past that limit an allocation fails, and the process aborts.
pub fn available_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let system = read("/proc/meminfo").and_then(|text| available_from_meminfo(&text));
    let group = cgroup_headroom(
        read("/sys/fs/cgroup/memory.max").as_deref(),
        read("/sys/fs/cgroup/memory.current").as_deref(),
    );
    let process = address_space_headroom(
        read("/proc/self/limits").as_deref(),
        read("/proc/self/status").as_deref(),
    );
    [system, group, process].into_iter().flatten().min()
}

/// The soft address-space limit of `/proc/self/limits` less the process's
/// size (`VmSize` of `/proc/self/status`); None without a limit.
fn address_space_headroom(limits: Option<&str>, status: Option<&str>) -> Option<u64> {
    const NAME: &str = "Max address space";
    let line = limits?.lines().find(|line| line.starts_with(NAME))?;
    let limit: u64 = line[NAME.len()..].split_whitespace().next()?.parse().ok()?;
    let size_line = status?.lines().find(|line| line.starts_with("VmSize:"))?;
    let kilobytes: u64 = size_line.split_whitespace().nth(1)?.parse().ok()?;
    Some(limit.saturating_sub(kilobytes.saturating_mul(1024)))
}

/// memory.max − memory.current of a cgroup v2 (None without a limit).
fn cgroup_headroom(max: Option<&str>, current: Option<&str>) -> Option<u64> {
    let max: u64 = max?.trim().parse().ok()?;
    let current: u64 = current?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

fn available_from_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// Why a model of `bytes` cannot be built here: it needs more memory than is
/// `available` (never refused when that is unknown).
pub fn check_memory(bytes: u64, available: Option<u64>) -> std::result::Result<(), String> {
    match available {
        Some(available) if bytes > available => Err(format!(
            "the model would need about {} to build, and this machine has {} available; use a coarser mesh",
            gigabytes(bytes),
            gigabytes(available)
        )),
        _ => Ok(()),
    }
}

fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_space_limit_bounds_what_is_available() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax stack size            8388608              unlimited            bytes\nMax address space         8192000000           unlimited            bytes\n";
        let status = "Name:\thooke\nVmPeak:\t  300000 kB\nVmSize:\t  200000 kB\n";
        assert_eq!(
            address_space_headroom(Some(limits), Some(status)),
            Some(8_192_000_000 - 204_800_000)
        );
        let unlimited = limits.replace("8192000000          ", "unlimited           ");
        assert_eq!(address_space_headroom(Some(&unlimited), Some(status)), None);
        assert_eq!(address_space_headroom(None, Some(status)), None);
    }

    #[test]
    fn counts_are_bounded_without_overflow() {
        assert_eq!(generated_elements(&[10, 10, 10], 6).unwrap(), 6000);
        for counts in [vec![4_294_967_296, 10], vec![usize::MAX, 2], vec![10_000, 10_000]] {
            let error = check_generated("cloth", &counts, 8).unwrap_err().to_string();
            assert!(
                error.contains("cloth") && error.contains("more than 10000000"),
                "{error}"
            );
        }
        assert!(generated_elements(&[0], 1).unwrap_err().contains("at least 1"));
    }

    #[test]
    fn memory_beyond_what_is_available_is_refused() {
        let nine_million = model_bytes(9_000_000, 0, 0);
        assert!(nine_million > 15_000_000_000, "the measured 15 GB and more");
        let error = check_memory(nine_million, Some(8_000_000_000)).unwrap_err();
        assert!(
            error.contains("21.6 GB") && error.contains("8.0 GB available"),
            "{error}"
        );
        assert!(check_memory(nine_million, None).is_ok());
        assert!(check_memory(model_bytes(1000, 0, 0), Some(8_000_000_000)).is_ok());
        let meminfo = "MemTotal:       32000000 kB\nMemFree:  1000 kB\nMemAvailable:   24006852 kB\n";
        assert_eq!(available_from_meminfo(meminfo), Some(24_006_852 * 1024));
        assert_eq!(available_from_meminfo("MemTotal: 5 kB"), None);
        assert_eq!(cgroup_headroom(Some("max\n"), Some("1000\n")), None);
        assert_eq!(cgroup_headroom(Some("8000\n"), Some("1000\n")), Some(7000));
        assert_eq!(cgroup_headroom(None, Some("1000")), None);
    }
}
