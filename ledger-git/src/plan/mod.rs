//! Plan documents: the typed model of the seed's plan format.

mod model;

pub use model::*;
