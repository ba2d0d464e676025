//! How a replica uses the shared PostgreSQL queue: parsed from the server's settings whether or not this build has the PostgreSQL queue.

use std::time::Duration;

/// How a replica uses the shared queue.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// How long a claimed delivery stays this replica's without a renewal. After a
    /// crash, its deliveries wait this long before another replica takes them.
    pub lease: Duration,
    /// Connections this replica keeps open.
    pub pool_size: usize,
    /// PEM certificates to trust for the database's TLS instead of the system's roots
    /// (managed services such as RDS sign with their own CA). TLS itself follows the
    /// URL's `sslmode` (`prefer` by default, `require`, `disable`).
    pub ca_file: Option<std::path::PathBuf>,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(60),
            pool_size: 16,
            ca_file: None,
        }
    }
}
