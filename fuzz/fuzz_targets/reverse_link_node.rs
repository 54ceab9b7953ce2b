//! The body is `manet_mutex_testkit::fuzz::reverse_link_node`.
#![no_main]

use manet_mutex_testkit::fuzz::reverse_link_node::{run, Input};

libfuzzer_sys::fuzz_target!(|input: Input| run(&input));
