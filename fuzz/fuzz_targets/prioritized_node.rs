//! The body is `manet_mutex_testkit::fuzz::prioritized_node`.
#![no_main]

use manet_mutex_testkit::fuzz::prioritized_node::{run, Input};

libfuzzer_sys::fuzz_target!(|input: Input| run(&input));
