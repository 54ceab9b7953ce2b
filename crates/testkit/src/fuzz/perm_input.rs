//! Arbitrary messages and checks shared by the permission algorithms' single-node fuzz bodies.

use arbitrary::Arbitrary;
use manet_mutex::permission::Timestamp;
use manet_mutex::{Action, Event, NodeId, Status};
use manet_mutex_sim::routed::Host;

use super::node_input::{drive, Peer};

/// A timestamp: any clock, any owner.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub(super) struct Stamp {
    clock: u64,
    owner: Peer,
}

impl Stamp {
    pub(super) fn ts(self) -> Timestamp {
        Timestamp {
            clock: self.clock,
            id: self.owner.id(),
        }
    }
}

/// The host's own invariants (its algorithm's `check_safety` on the host alone: for look-ahead
/// the partition of the sets, for both a REPLY outstanding exactly while waiting), messages only to other known hosts,
/// `EnterCritical` only into the critical section.
fn consistent<H: Host>(node: &H, actions: &[Action<H::Message>], hosts: u32) -> Result<(), String> {
    H::check_safety(std::slice::from_ref(node), &()).map_err(|v| v.to_string())?;
    for action in actions {
        match action {
            Action::Send { to, msg } if *to == node.id() || to.0 >= hosts => {
                return Err(format!("sent {msg:?} to {to:?}"));
            }
            Action::EnterCritical { .. } if node.status() != Status::Critical => {
                return Err("entered the critical section without being in it".into());
            }
            _ => {}
        }
    }
    Ok(())
}

/// `2 + hosts % 5` hosts and an id among them, or (sometimes) an id outside them, which the
/// configuration check must refuse.
pub(super) fn hosts_and_id(hosts: u8, id: Peer) -> (u32, NodeId) {
    (2 + u32::from(hosts % 5), id.id())
}

/// Feed a host of a system of `hosts` its events and check them ([`drive`]): `misuse` is the
/// local misuse in the host's state, and [`consistent`] must hold after every accepted event.
pub(super) fn drive_host<H>(
    node: H,
    events: impl IntoIterator<Item = Event<H::Message>>,
    misuse: impl Fn(&H, &Event<H::Message>) -> bool,
    hosts: u32,
) where
    H: Host + PartialEq,
{
    drive(node, events, misuse, |n: &H, actions| {
        consistent(n, actions, hosts)
    });
}
