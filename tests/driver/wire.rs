//! The driver's wire format.
