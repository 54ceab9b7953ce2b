//! The body is `manet_mutex_testkit::fuzz::reverse_link_network`.
#![no_main]

use manet_mutex_testkit::fuzz::reverse_link_network::{run, Input};

libfuzzer_sys::fuzz_target!(|input: Input| run(&input));
