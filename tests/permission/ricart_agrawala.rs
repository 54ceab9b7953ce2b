//! The Ricart–Agrawala baseline.

mod baseline;
mod stale_duplicate_request;
