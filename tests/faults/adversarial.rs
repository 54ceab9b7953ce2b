//! Property tests of the threat model: the fuzz bodies' networks (`manet_mutex_testkit::fuzz::*_network`)
//! driven by structured, shrinkable schedules instead of raw bytes. Token networks get
//! corruption of any message in flight (a field, its kind, or 1 to 4 bits of its frame, which
//! the link session retransmits) and link events that each end notices at its own time;
//! permission systems get corruption (a field, the kind, or frame bits, which the receiver's
//! codec drops: a loss), loss, duplication, early timeouts and (for look-ahead) mode changes. Safety is checked after every step and liveness after the drain,
//! except where a corruption destroyed what no protocol can recover (each harness names those
//! cases). The weights favour deliveries and faults over requests, unlike uniform fuzz bytes,
//! so long interleavings of faults with traffic are common; a failure shrinks to a short
//! schedule and is kept in `tests/proptest-regressions/adversarial.txt` (proptest keeps every binary's regressions under `tests/proptest-regressions/`, by module path).

use std::cell::RefCell;

use manet_mutex_testkit::corrupt::Counts;
use manet_mutex_testkit::fuzz::{permission_network, prioritized_network, reverse_link_network};
use manet_mutex_testkit::strategy::{
    cases, permission_input, prioritized_input, reverse_link_input,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRng, TestRunner};

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

/// `cases` schedules of `strategy` from a fixed seed, each applied by `play` (safety checked
/// after every step; the drains are the property tests' business): what the corruptions did,
/// summed.
fn exercise<T: std::fmt::Debug>(
    cases: u32,
    strategy: impl Strategy<Value = T>,
    play: impl Fn(&T) -> Counts,
) -> Counts {
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let total = RefCell::new(Counts::default());
    runner
        .run(&strategy, |input| {
            *total.borrow_mut() += play(&input);
            Ok(())
        })
        .unwrap();
    total.into_inner()
}

/// What the adversarial schedules exercise (a fixed seed; printed with `--nocapture`): every
/// harness changes kinds and flips frame bits, besides rewriting fields.
#[test]
fn the_adversarial_schedules_change_kinds_and_flip_frame_bits() {
    let n = cases(64);
    let runs = [
        (
            "reverse_link",
            exercise(n, reverse_link_input(), |i| {
                reverse_link_network::play_schedule(i).corruptions
            }),
        ),
        (
            "prioritized",
            exercise(n, prioritized_input(), |i| {
                prioritized_network::play_schedule(i).corruptions
            }),
        ),
        (
            "look_ahead",
            exercise(n, permission_input(), |i| {
                permission_network::play_schedule::<manet_mutex::look_ahead::Node>(i).corruptions
            }),
        ),
        (
            "ricart_agrawala",
            exercise(n, permission_input(), |i| {
                permission_network::play_schedule::<manet_mutex::ricart_agrawala::Node>(i)
                    .corruptions
            }),
        ),
    ];
    for (algorithm, done) in runs {
        println!("{algorithm}: {n} schedules, corruptions {done:?}");
        assert!(done.fields > 0 && done.flips > 0, "{algorithm}: {done:?}");
        assert!(done.kinds > 0, "{algorithm}: {done:?}");
    }
}

/// V12 in `docs/ALGORITHMS.md`: the shrunk input of a failure of
/// `reverse_link_survives_corruption_and_one_sided_link_events` (KRL, `k = 3`, four nodes, no
/// recovery), replayed as it was found.
#[test]
fn regression_v12_krl_phantom_request_after_corrupted_kinds_is_served() {
    use manet_mutex_testkit::corrupt::{How::*, Value::*};
    use manet_mutex_testkit::fuzz::reverse_link_network::Input;
    use manet_mutex_testkit::fuzz::{Recovering, Topology};
    use manet_mutex_testkit::schedule::CorruptStep;
    use manet_mutex_testkit::{TimedFault, TokenFault::*, TokenOp::*};
    let input = Input {
        topology: Topology {
            nodes: 127,
            parents: [0, 85, 47, 0, 0],
            chords: 5730,
        },
        tokens: 2,
        forwarding: false,
        ops: vec![
            Request(124, ()),
            Request(200, ()),
            Request(192, ()),
            Release(0),
            Release(0),
            Release(0),
            Request(88, ()),
            Request(8, ()),
            Request(20, ()),
            Release(0),
            Deliver(0),
            LinkDown(128),
            Deliver(0),
            LinkUp(0),
            LinkDown(32),
            Request(71, ()),
            LinkDown(19),
            Deliver(8),
            LinkUp(0),
            Deliver(188),
            Deliver(183),
            Request(0, ()),
            Deliver(30),
            Request(62, ()),
            Request(2, ()),
            Deliver(40),
            Request(38, ()),
            Release(0),
            Deliver(194),
            Deliver(5),
            Request(10, ()),
            Deliver(165),
            Deliver(25),
            Release(0),
            LinkUp(0),
            Deliver(58),
            LinkDown(61),
            Deliver(107),
            Request(186, ()),
            Deliver(8),
            LinkUp(29),
            Deliver(80),
            Deliver(33),
            Deliver(169),
            Request(70, ()),
            Deliver(53),
            Request(30, ()),
            Request(86, ()),
            Release(0),
            Deliver(16),
            Deliver(61),
            Deliver(0),
            Deliver(114),
            Request(38, ()),
            Deliver(72),
            LinkDown(161),
            Deliver(0),
            LinkUp(11),
            Request(10, ()),
            Deliver(0),
            Request(86, ()),
            Deliver(0),
            Deliver(0),
            LinkDown(40),
            Deliver(0),
            Release(55),
            Deliver(0),
            Request(70, ()),
            LinkUp(0),
            Deliver(0),
            Request(0, ()),
            Request(0, ()),
            Release(0),
            Request(86, ()),
            Deliver(0),
            Release(2),
            Request(103, ()),
            Request(151, ()),
        ],
        faults: vec![
            TimedFault {
                before: 194,
                fault: Corrupt(CorruptStep {
                    msg: 132,
                    field: 0,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 178,
                fault: Corrupt(CorruptStep {
                    msg: 26,
                    field: 30,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 79,
                fault: FailAt(129, true),
            },
            TimedFault {
                before: 19,
                fault: Corrupt(CorruptStep {
                    msg: 78,
                    field: 47,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 211,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 44,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 0,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 188,
                fault: Corrupt(CorruptStep {
                    msg: 60,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 20,
                fault: Corrupt(CorruptStep {
                    msg: 87,
                    field: 0,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 0,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 21,
                fault: Notice(20),
            },
            TimedFault {
                before: 255,
                fault: FormAt(20, false),
            },
            TimedFault {
                before: 76,
                fault: Corrupt(CorruptStep {
                    msg: 161,
                    field: 0,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 26,
                fault: Corrupt(CorruptStep {
                    msg: 26,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 0,
                fault: FormAt(0, false),
            },
            TimedFault {
                before: 79,
                fault: FormAt(0, false),
            },
        ],
        selectors: Vec::new(),
        recovering: Recovering::Off,
        majority: false,
    };
    reverse_link_network::run(&input);
}

/// V12 (KRL) again, found by the same property test with the first half of the fix (the
/// PROBE to the sender of a message that fails its check word): node 3's REQUEST is changed
/// into a PROBE, node 0 answers and asks node 3 with a PROBE, and that PROBE is changed into
/// a REQUEST, which node 3 redirects. It may have been a PROBE from node 3's `next`, so node 3
/// asks again (the second half: a message that fails its check word is also answered as a
/// PROBE would be).
#[test]
fn regression_v12_krl_a_repair_probe_changed_into_a_request_is_asked_for_again() {
    use manet_mutex_testkit::corrupt::{How::*, Value::*};
    use manet_mutex_testkit::fuzz::reverse_link_network::Input;
    use manet_mutex_testkit::fuzz::{Recovering, Topology};
    use manet_mutex_testkit::schedule::CorruptStep;
    use manet_mutex_testkit::{TimedFault, TokenFault::*, TokenOp::*};
    let input = Input {
        topology: Topology {
            nodes: 113,
            parents: [0, 89, 0, 172, 0],
            chords: 54086,
        },
        tokens: 56,
        forwarding: false,
        ops: vec![
            Release(0),
            Release(0),
            Deliver(0),
            Deliver(0),
            Request(214, ()),
            Deliver(92),
            Deliver(0),
            Request(24, ()),
            Deliver(0),
            Request(14, ()),
            Request(24, ()),
            LinkUp(0),
            Release(0),
            Deliver(197),
            Deliver(87),
            Release(0),
            Request(114, ()),
            Deliver(84),
            Deliver(11),
            LinkUp(0),
            LinkUp(0),
            Deliver(15),
            Deliver(63),
            Deliver(0),
            Request(24, ()),
            Release(0),
            Release(0),
            Release(0),
            Request(2, ()),
            Request(4, ()),
            Request(0, ()),
            Request(24, ()),
            Request(0, ()),
            Request(44, ()),
        ],
        faults: vec![
            TimedFault {
                before: 219,
                fault: Corrupt(CorruptStep {
                    msg: 83,
                    field: 72,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 254,
                fault: Corrupt(CorruptStep {
                    msg: 80,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 84,
                fault: Corrupt(CorruptStep {
                    msg: 1,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 105,
                fault: FormAt(0, false),
            },
            TimedFault {
                before: 105,
                fault: FailAt(88, true),
            },
            TimedFault {
                before: 123,
                fault: Corrupt(CorruptStep {
                    msg: 109,
                    field: 1,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 92,
                fault: Corrupt(CorruptStep {
                    msg: 22,
                    field: 0,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 219,
                fault: Notice(139),
            },
            TimedFault {
                before: 175,
                fault: FormAt(0, false),
            },
            TimedFault {
                before: 50,
                fault: Corrupt(CorruptStep {
                    msg: 28,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
        ],
        selectors: Vec::new(),
        recovering: Recovering::Off,
        majority: false,
    };
    reverse_link_network::run(&input);
}

/// V15 (KRL) in `docs/ALGORITHMS.md`: the shrunk input of a failure of
/// `reverse_link_survives_corruption_and_one_sided_link_events` (KRL, `k = 1`, five nodes, no
/// recovery), replayed as it was found. Three corruptions on link 1–4 (both LinkInfos, and
/// n4's Probe changed into a LinkInfo) left it forming at both ends, so n2, n3, n4 had no way
/// to the token and raised over one another for ever (`KRL did not go quiet`).
#[test]
fn regression_v15_krl_a_link_whose_link_infos_were_corrupted_still_forms() {
    use manet_mutex_testkit::corrupt::{How::*, Value::*};
    use manet_mutex_testkit::fuzz::reverse_link_network::Input;
    use manet_mutex_testkit::fuzz::{Recovering, Topology};
    use manet_mutex_testkit::schedule::CorruptStep;
    use manet_mutex_testkit::{TimedFault, TokenFault::*, TokenOp::*};
    let input = Input {
        topology: Topology {
            nodes: 8,
            parents: [0, 91, 10, 92, 0],
            chords: 60806,
        },
        tokens: 56,
        forwarding: false,
        ops: vec![
            Release(0),
            Release(0),
            Request(105, ()),
            Request(211, ()),
            Release(0),
            Deliver(1),
            Release(0),
            Request(45, ()),
            Request(5, ()),
            Release(0),
            Release(0),
        ],
        faults: vec![
            TimedFault {
                before: 150,
                fault: FailAt(44, false),
            },
            TimedFault {
                before: 6,
                fault: FailAt(0, false),
            },
            TimedFault {
                before: 6,
                fault: FailAt(0, false),
            },
            TimedFault {
                before: 76,
                fault: FailAt(6, false),
            },
            TimedFault {
                before: 172,
                fault: Notice(1),
            },
            TimedFault {
                before: 0,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 147,
                fault: Notice(0),
            },
            TimedFault {
                before: 158,
                fault: Notice(44),
            },
            TimedFault {
                before: 0,
                fault: FormAt(0, false),
            },
            TimedFault {
                before: 4,
                fault: FailAt(132, false),
            },
            TimedFault {
                before: 138,
                fault: Corrupt(CorruptStep {
                    msg: 70,
                    field: 0,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 6,
                fault: Corrupt(CorruptStep {
                    msg: 33,
                    field: 49,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 38,
                fault: Corrupt(CorruptStep {
                    msg: 222,
                    field: 0,
                    value: Max,
                    how: Field,
                }),
            },
            TimedFault {
                before: 72,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 2,
                    value: Zero,
                    how: Field,
                }),
            },
            TimedFault {
                before: 36,
                fault: FormAt(0, false),
            },
            TimedFault {
                before: 98,
                fault: FailAt(71, false),
            },
        ],
        selectors: Vec::new(),
        recovering: Recovering::Off,
        majority: false,
    };
    reverse_link_network::run(&input);
}

/// V16 (KRL) in `docs/ALGORITHMS.md`: the shrunk input of a failure of
/// `reverse_link_survives_corruption_and_one_sided_link_events` (KRL, `k = 3`, five nodes, no
/// recovery), replayed as it was found. n3's TokenAck to n4 was corrupted, so n4 dropped n3's
/// next REQUEST as answered by the token; the Probe that would have made n3 ask again was
/// changed into a REQUEST (`settled-idle at node 3`).
#[test]
fn regression_v16_krl_a_request_dropped_while_its_ack_is_lost_is_asked_for_again() {
    use manet_mutex_testkit::corrupt::{How::*, Value::*};
    use manet_mutex_testkit::fuzz::reverse_link_network::Input;
    use manet_mutex_testkit::fuzz::{Recovering, Topology};
    use manet_mutex_testkit::schedule::CorruptStep;
    use manet_mutex_testkit::{TimedFault, TokenFault::*, TokenOp::*};
    let input = Input {
        topology: Topology {
            nodes: 198,
            parents: [0, 0, 221, 159, 0],
            chords: 2580,
        },
        tokens: 58,
        forwarding: false,
        ops: vec![
            Request(161, ()),
            Release(0),
            Deliver(0),
            Release(0),
            Release(0),
            Release(0),
            Release(0),
            Request(14, ()),
            Request(106, ()),
            Deliver(0),
            Request(146, ()),
            LinkUp(31),
            Deliver(3),
            Deliver(6),
            Deliver(86),
            Request(1, ()),
            Deliver(143),
            Deliver(63),
            Request(126, ()),
            Deliver(1),
            Deliver(1),
            Release(127),
            Request(51, ()),
            Deliver(97),
            Release(154),
            Request(16, ()),
            Deliver(13),
            Release(12),
            Request(11, ()),
            Release(72),
            Deliver(0),
            Request(86, ()),
            Request(46, ()),
            LinkDown(154),
            Deliver(0),
            Request(101, ()),
            Request(71, ()),
            Request(46, ()),
            Request(158, ()),
            Deliver(0),
            Deliver(43),
            Deliver(66),
            LinkUp(127),
            Request(54, ()),
            Deliver(74),
            Request(1, ()),
            Deliver(0),
            Request(96, ()),
            Request(1, ()),
            Request(1, ()),
            LinkDown(1),
            Deliver(201),
            LinkDown(0),
            Request(0, ()),
            Request(0, ()),
        ],
        faults: vec![
            TimedFault {
                before: 168,
                fault: FormAt(245, false),
            },
            TimedFault {
                before: 160,
                fault: Corrupt(CorruptStep {
                    msg: 46,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 87,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 49,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 99,
                fault: Corrupt(CorruptStep {
                    msg: 157,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 164,
                fault: Corrupt(CorruptStep {
                    msg: 212,
                    field: 126,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 68,
                fault: FailAt(152, true),
            },
            TimedFault {
                before: 115,
                fault: FailAt(13, false),
            },
            TimedFault {
                before: 52,
                fault: Corrupt(CorruptStep {
                    msg: 70,
                    field: 6,
                    value: Zero,
                    how: Kind,
                }),
            },
            TimedFault {
                before: 3,
                fault: Notice(152),
            },
            TimedFault {
                before: 195,
                fault: Corrupt(CorruptStep {
                    msg: 0,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 103,
                fault: Corrupt(CorruptStep {
                    msg: 47,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 43,
                fault: FormAt(0, true),
            },
            TimedFault {
                before: 186,
                fault: FormAt(13, false),
            },
            TimedFault {
                before: 35,
                fault: FormAt(78, true),
            },
            TimedFault {
                before: 91,
                fault: Corrupt(CorruptStep {
                    msg: 61,
                    field: 0,
                    value: One,
                    how: Field,
                }),
            },
            TimedFault {
                before: 48,
                fault: Notice(9),
            },
        ],
        selectors: Vec::new(),
        recovering: Recovering::Off,
        majority: false,
    };
    reverse_link_network::run(&input);
}
