//! Property tests of the threat model: the fuzz bodies' networks (`manet_mutex::testkit::fuzz::*_network`)
//! driven by structured, shrinkable schedules instead of raw bytes. Token networks get
//! corruption of any field of any message in flight and link events that each end notices at
//! its own time; permission systems get corruption, loss, duplication, early timeouts and (for
//! look-ahead) mode changes. Safety is checked after every step and liveness after the drain,
//! except where a corruption destroyed what no protocol can recover (each harness names those
//! cases). The weights favour deliveries and faults over requests, unlike uniform fuzz bytes,
//! so long interleavings of faults with traffic are common; a failure shrinks to a short
//! schedule and is kept in `tests/proptest-regressions/adversarial.txt` (proptest keeps every binary's regressions under `tests/proptest-regressions/`, by module path).

use manet_mutex::testkit::fuzz::{permission_network, prioritized_network, reverse_link_network};
use manet_mutex::testkit::strategy::{
    cases, permission_input, prioritized_input, reverse_link_input,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn reverse_link_survives_corruption_and_one_sided_link_events(input in reverse_link_input()) {
        reverse_link_network::run(&input);
    }

    #[test]
    fn prioritized_survives_corruption_and_one_sided_link_events(input in prioritized_input()) {
        prioritized_network::run(&input);
    }

    #[test]
    fn look_ahead_survives_corruption_loss_and_mode_changes(input in permission_input()) {
        permission_network::run::<manet_mutex::look_ahead::Node>(&input);
    }

    #[test]
    fn ricart_agrawala_survives_corruption_and_loss(input in permission_input()) {
        permission_network::run::<manet_mutex::ricart_agrawala::Node>(&input);
    }
}
