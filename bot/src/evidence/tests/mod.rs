//! Evidence policy tests.
