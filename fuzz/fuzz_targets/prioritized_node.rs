//! One node fed arbitrary events; the body is `tests/harness/prioritized_node.rs`.
#![no_main]

#[path = "../../tests/harness/height_input.rs"]
mod height_input;
#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/node_input.rs"]
mod node_input;
#[path = "../../tests/harness/prioritized_node.rs"]
mod prioritized_node;

libfuzzer_sys::fuzz_target!(|input: prioritized_node::Input| {
    prioritized_node::run(&input);
});
