//! A token holder crashes for good inside its critical section (KRL and prioritized), over drivers on a lossy,
//! duplicating, reordering channel: recovery regenerates its token within the bound its
//! settings state (`Recovery::silence` + `Recovery::claim_wait` after the last beacon), once,
//! and every live node is then served with fences above the dead holder's.

use manet_mutex::codec::Wire;
use manet_mutex::driver::wire::{decode, Payload};
use manet_mutex::driver::{Algorithm, Config, Driver};
use manet_mutex::session::Frame;
use manet_mutex::token::{RaisePause, Recovery};
use manet_mutex::{discovery, prioritized, reverse_link, NodeId};

use crate::net::{Channel, Net};

const N: u32 = 5;
const CHANNEL: Channel = Channel {
    loss: 0.05,
    duplicate: 0.02,
    max_delay: 2,
};

/// A token algorithm on five nodes in range of each other, one unit, the settings
/// `examples/mesh` runs with (beacons every 100, leases of 250, a hop bound of 420 over a
/// diameter of 4), no links at the start (discovery finds them).
trait Crashable: Algorithm + Sized
where
    Self::Message: Wire,
{
    fn network(recovery: Recovery, pause: Option<RaisePause>) -> Vec<Driver<Self>>;
    /// Whether `msg` announces the sender's height (KRL's LinkInfo, prioritized's LINK).
    fn announces_height(msg: &Self::Message) -> bool;
    /// Whether the node holds the token (a crash then takes it along).
    fn has_token(&self) -> bool;
}

fn all_pairs() -> Vec<(NodeId, NodeId)> {
    (0..N)
        .flat_map(|a| (a + 1..N).map(move |b| (NodeId(a), NodeId(b))))
        .collect()
}

fn driver_config() -> Config {
    Config::DEFAULT.with_discovery(discovery::Settings::new(100))
}

impl Crashable for reverse_link::Node {
    fn network(recovery: Recovery, pause: Option<RaisePause>) -> Vec<Driver<Self>> {
        let mut settings = reverse_link::Settings::new(1).with_recovery(recovery);
        if let Some(pause) = pause {
            settings = settings.with_raise_pause(pause);
        }
        reverse_link::network(N, &all_pairs(), &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|c| {
                let bare =
                    reverse_link::Config::new(c.id, settings, c.tokens, c.height, Vec::new());
                let c = match c.first_token {
                    Some(first) => bare.with_first_token(first),
                    None => bare,
                };
                Driver::new(Self::new(c).unwrap(), driver_config(), 0).unwrap()
            })
            .collect()
    }

    fn announces_height(msg: &Self::Message) -> bool {
        matches!(msg, reverse_link::Message::LinkInfo(_))
    }

    fn has_token(&self) -> bool {
        self.holds_token()
    }
}

impl Crashable for prioritized::Node {
    fn network(recovery: Recovery, pause: Option<RaisePause>) -> Vec<Driver<Self>> {
        let mut settings =
            prioritized::Settings::new(1, prioritized::Policy::Equal).with_recovery(recovery);
        if let Some(pause) = pause {
            settings = settings.with_raise_pause(pause);
        }
        prioritized::network(N, &all_pairs(), &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|c| {
                let c = prioritized::Config::new(c.id, settings, c.holder, c.height, Vec::new());
                Driver::new(Self::new(c).unwrap(), driver_config(), 0).unwrap()
            })
            .collect()
    }

    fn announces_height(msg: &Self::Message) -> bool {
        matches!(msg, prioritized::Message::Link { .. })
    }

    fn has_token(&self) -> bool {
        self.holds_token()
    }
}

/// Runs to `end`, crashing node 2 the first time it is inside holding the token after
/// `crash_after`; returns the crash time and the height announcements put on the air between
/// the crash and the first regeneration.
fn run<P: Crashable>(net: &mut Net<P>, crash_after: u64, end: u64) -> (u64, u64)
where
    P::Message: Wire,
{
    let (mut crashed_at, mut link_infos) = (None, 0);
    while net.now < end {
        let sent_before = net.order;
        net.step();
        if crashed_at.is_some() && net.regenerated.is_empty() {
            // What this step put on the air: the newest `order`s.
            link_infos += net
                .air
                .iter()
                .filter(|((_, order), _)| *order > sent_before)
                .filter(|(_, (_, _, bytes))| {
                    matches!(
                        decode::<P::Message>(bytes).map(|e| e.payload),
                        Ok(Payload::Session(Frame::Data { msg, .. })) if P::announces_height(&msg)
                    )
                })
                .count() as u64;
        }
        if crashed_at.is_none()
            && net.now > crash_after
            && net.inside.contains(&2)
            && net.nodes[2].core().has_token()
        {
            net.dead[2] = true;
            net.inside.retain(|&i| i != 2);
            crashed_at = Some(net.now);
        }
        if crashed_at.is_some()
            && net
                .apps
                .iter()
                .enumerate()
                .all(|(i, a)| net.dead[i] || (a.left == 0 && !a.waiting && a.leave_at.is_none()))
        {
            break;
        }
    }
    let at = crashed_at.unwrap_or_else(|| panic!("node 2 never inside after {crash_after}"));
    (at, link_infos)
}

/// The regeneration bound after a crash: the last beacon reached everyone at most a beacon
/// period and a flood before it, then silence and a claim wait.
fn bound(recovery: Recovery) -> u64 {
    recovery.silence() + recovery.claim_wait() + 100 + 420 * u64::from(N - 1)
}

/// Crashes node 2 inside, over three seeds; checks one regeneration within [`bound`], every
/// live node served, fences rising; returns per seed the time to regenerate and the LinkInfo
/// messages sent meanwhile.
fn crash_and_recover<P: Crashable>(pause: Option<RaisePause>) -> Vec<(u64, u64)>
where
    P::Message: Wire,
{
    let recovery = Recovery::new(100, 250, 420, N - 1);
    let bound = bound(recovery);
    let mut seen = Vec::new();
    for seed in 0..3 {
        let mut net = Net::new(P::network(recovery, pause), 40, CHANNEL, seed);
        let (crashed_at, link_infos) = run(&mut net, 1_200, 60_000);
        assert_eq!(
            net.regenerated.len(),
            1,
            "seed {seed}: {:?}",
            net.regenerated
        );
        let (at, by) = net.regenerated[0];
        assert_ne!(by, 2, "seed {seed}");
        assert!(
            at - crashed_at <= bound,
            "seed {seed}: regenerated {} after the crash, bound {bound}",
            at - crashed_at
        );
        for (i, app) in net.apps.iter().enumerate().filter(|&(i, _)| i != 2) {
            assert!(
                app.left == 0 && !app.waiting && app.leave_at.is_none(),
                "seed {seed}: node {i} not served by {}",
                net.now
            );
        }
        // Fences keep rising across the regeneration (the new generation is above).
        let mut last = 0;
        for &(when, node, fence) in &net.entries {
            assert!(
                fence.value > last,
                "seed {seed}: node {node} at {when}: {fence:?}"
            );
            last = fence.value;
        }
        seen.push((at - crashed_at, link_infos));
    }
    seen
}

#[test]
fn a_holder_that_crashes_inside_has_its_token_regenerated_within_the_bound() {
    let seen = crash_and_recover::<reverse_link::Node>(None);
    // Unpaced, the four live nodes raise over one another until the token is made again (R15):
    // thousands of height announcements in the silence (measured: 6,700 to 7,201).
    eprintln!("unpaced: (time to regenerate, LinkInfo meanwhile) per seed: {seen:?}");
}

/// R15: paced from 10 to 200, each live node raises at most about once per 200 once the part
/// has had no sink for 10 + 20 + ... + 200, so the silence costs each node about one height
/// announcement per neighbour per 200 (plus retransmissions and duplicates), and the token is
/// still made again within the same bound and everyone served.
fn paced_crash_keeps_quiet<P: Crashable>(name: &str)
where
    P::Message: Wire,
{
    let pause = RaisePause::new(10, 200);
    let seen = crash_and_recover::<P>(Some(pause));
    eprintln!(
        "{name} paced: (time to regenerate, height announcements meanwhile) per seed: {seen:?}"
    );
    for (seed, (took, announced)) in seen.into_iter().enumerate() {
        let ramp = (pause.max / pause.min).ilog2() as u64 + 1;
        let raises_per_node = ramp + took / pause.max + 1;
        // Four live nodes, each announcing to its N - 1 neighbours (the dead one until its
        // link goes down); a quarter more for retransmissions and duplicates.
        let most = (N as u64 - 1) * raises_per_node * (N as u64 - 1) * 5 / 4;
        assert!(
            announced <= most,
            "{name} seed {seed}: {announced} height announcements in {took} without a token, \
             at most {most}"
        );
    }
}

#[test]
fn paced_raises_keep_a_token_less_part_quiet_and_recover_as_fast() {
    paced_crash_keeps_quiet::<reverse_link::Node>("krl");
}

#[test]
fn prioritized_a_crashed_token_holder_is_replaced_within_the_bound_paced_or_not() {
    // Unpaced (measured: 6,589 to 6,964 LINK while no token exists).
    let seen = crash_and_recover::<prioritized::Node>(None);
    eprintln!("prioritized unpaced: {seen:?}");
    paced_crash_keeps_quiet::<prioritized::Node>("prioritized");
}
