//! One host fed arbitrary events; the body is `tests/harness/ricart_agrawala_node.rs`.
#![no_main]

#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/ricart_agrawala_node.rs"]
mod ricart_agrawala_node;
#[path = "../../tests/harness/node_input.rs"]
mod node_input;
#[path = "../../tests/harness/perm_input.rs"]
mod perm_input;

libfuzzer_sys::fuzz_target!(|input: ricart_agrawala_node::Input| {
    ricart_agrawala_node::run(&input);
});
