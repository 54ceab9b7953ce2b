//! A KRL/KRLF network under arbitrary operations; see `tests/harness/reverse_link_network.rs`.
#![no_main]

#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/reverse_link_network.rs"]
mod reverse_link_network;
#[path = "../../tests/harness/token_net.rs"]
mod token_net;

libfuzzer_sys::fuzz_target!(|input: reverse_link_network::Input| {
    reverse_link_network::run(&input);
});
