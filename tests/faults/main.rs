//! The threat model: adversarial property tests, arbitrary frames against a link session, the threat findings, the corrupt operation's kind changes and frame flips, and the fuzz bodies over seeded inputs and committed reproducers.

mod adversarial;
mod codec;
mod fuzz_look_ahead;
mod fuzz_prioritized;
mod fuzz_reverse_link;
mod fuzz_ricart_agrawala;
mod kind_findings;
mod kinds;
mod seeded;
mod session_frames;
mod threat_findings;
