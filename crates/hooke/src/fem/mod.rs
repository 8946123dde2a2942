//! Finite elements: the element kinds (linear tetrahedron, linear triangle in
//! plane strain), the elasticity term generic over them with its deterministic
//! gather, the interfaces of discontinuous (DG) triangles, springs, membrane triangles (cloth), and mass matrices.

mod elasticity;
mod gather;
pub mod interface;
mod kind;
mod mass;
pub mod membrane;
mod spring;
mod tetrahedron;
mod triangle;

pub use elasticity::Elasticity;
pub use gather::ElementGather;
pub use interface::{Formulation, Interfaces};
pub use kind::{packed_index, ElementKind};
pub use mass::{MassKind, MassMatrix};
pub use spring::{Spring, SpringNetwork, Springs};
pub use tetrahedron::{LinearTetrahedron, TetrahedronGeometry, PACKED_HESSIAN_LEN};
pub use triangle::{LinearTriangle, TriangleGeometry};
