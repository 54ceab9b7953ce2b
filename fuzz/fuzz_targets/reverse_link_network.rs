//! A small network under arbitrary operations; the body is `tests/harness/reverse_link_network.rs`.
#![no_main]

#[path = "../../tests/harness/corrupt.rs"]
mod corrupt;
#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/network_input.rs"]
mod network_input;
#[path = "../../tests/harness/reverse_link_network.rs"]
mod reverse_link_network;
#[path = "../../tests/harness/token_net.rs"]
mod token_net;

libfuzzer_sys::fuzz_target!(|input: reverse_link_network::Input| {
    reverse_link_network::run(&input);
});
