//! One host fed arbitrary events; the body is `tests/harness/look_ahead_node.rs`.
#![no_main]

#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/look_ahead_node.rs"]
mod look_ahead_node;
#[path = "../../tests/harness/node_input.rs"]
mod node_input;
#[path = "../../tests/harness/perm_input.rs"]
mod perm_input;

libfuzzer_sys::fuzz_target!(|input: look_ahead_node::Input| {
    look_ahead_node::run(&input);
});
