//! Finite elements: the element kinds (linear tetrahedron, linear triangle in
//! plane strain), the elasticity term generic over them with its deterministic
//! gather, the interfaces of discontinuous (DG) triangles, springs and the
//! generated networks of them (ropes, cloth), membrane triangles (cloth), and
//! the constructors of the models made of them (mass matrices are the model's).

mod elasticity;
mod gather;
pub mod interface;
mod kind;
pub mod membrane;
mod models;
mod spring;
pub mod spring_networks;
mod tetrahedron;
mod triangle;

pub use elasticity::Elasticity;
pub use gather::ElementGather;
pub use interface::{Formulation, Interfaces};
pub use kind::{packed_index, ElementKind};
pub use spring::{Spring, SpringNetwork, Springs};
pub use tetrahedron::{LinearTetrahedron, TetrahedronGeometry, PACKED_HESSIAN_LEN};
pub use triangle::{LinearTriangle, TriangleGeometry};
