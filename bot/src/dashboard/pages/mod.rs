//! The dashboard's pages as pure functions from data to HTML (maud escapes every value), so they can be tested and benchmarked without a server.

pub mod actions;
pub mod deliveries;
pub mod editor;
pub mod layout;
pub mod missions;
pub mod plan;
pub mod repo;
pub mod spans;
#[cfg(test)]
mod tests;

pub use layout::Chrome;
