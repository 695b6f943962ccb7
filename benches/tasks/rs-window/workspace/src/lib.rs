//! The dashboard's numeric helpers.

pub mod stats;
