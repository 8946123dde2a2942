//! Linear tetrahedral finite elements: per-element precomputation, assembly of
//! energy, gradient and Hessian, and mass matrices.

mod assembly;
mod element;
mod mass;
mod spring;

pub use assembly::Assembler;
pub use element::{ElementGeometry, PACKED_HESSIAN_LEN};
pub use mass::{lumped_masses, MassKind};
pub use spring::{Spring, SpringNetwork};
