//! Renderer tests.
