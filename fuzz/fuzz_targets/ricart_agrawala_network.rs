//! A permission system under arbitrary operations; the body is `tests/harness/perm_network.rs`.
#![no_main]

#[path = "../../tests/harness/corrupt.rs"]
mod corrupt;
#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/perm_net.rs"]
mod perm_net;
#[path = "../../tests/harness/perm_network.rs"]
mod perm_network;

libfuzzer_sys::fuzz_target!(|input: perm_network::Input| {
    perm_network::run::<manet_mutex::ricart_agrawala::Node>(&input);
});
