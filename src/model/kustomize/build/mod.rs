//! placeholder
pub mod json6902;
pub mod schema;
pub mod select;
pub mod smp;
