//! One node fed arbitrary events; the body is `tests/harness/reverse_link_node.rs`.
#![no_main]

#[path = "../../tests/harness/height_input.rs"]
mod height_input;
#[path = "../../tests/harness/input.rs"]
mod input;
#[path = "../../tests/harness/node_input.rs"]
mod node_input;
#[path = "../../tests/harness/reverse_link_node.rs"]
mod reverse_link_node;

libfuzzer_sys::fuzz_target!(|input: reverse_link_node::Input| {
    reverse_link_node::run(&input);
});
