//! Bad input: forged floods, corrupted frames, frames of the wrong kind, misuse.
