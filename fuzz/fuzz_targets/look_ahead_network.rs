//! A permission system under arbitrary operations; the body is
//! `manet_mutex_testkit::fuzz::permission_network`.
#![no_main]

use manet_mutex_testkit::fuzz::permission_network::{run, Input};

libfuzzer_sys::fuzz_target!(|input: Input| run::<manet_mutex::look_ahead::Node>(&input));
