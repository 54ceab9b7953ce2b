//! The neighbour table of the token algorithms (`reverse_link`, `prioritized`).
//!
//! For every peer with a live link the table keeps the node's *view* of the peer's height and
//! the LinkInfo handshake state of the KRL appendix:
//! - `in_n`: the peer is in `N` — its first LinkInfo after the link formed has arrived, so its
//!   height is known (the papers add a peer to `N` only then);
//! - `unacked`: tokens sent to the peer that it has not acknowledged yet; while any is
//!   outstanding (the paper's `receivedLI` is false) height information from the peer is stale
//!   and is not recorded;
//! - `sent` / `received`: tokens sent to and received from the peer over this link since it
//!   formed (modulo 2^16): an acknowledgement carries the receiver's `received`, so it says
//!   exactly which tokens it settles, and a lost or corrupted one is repaired by any later one
//!   (`docs/ALGORITHMS.md`, R13);
//! - `forming` / `form_height`: the link was detected forming while our height was
//!   `form_height`; if our height changed before the peer's first LinkInfo, we resend ours.
//! - `asked`: while the link is forming, we sent the peer a Probe to ask for its height (see
//!   below).
//! - `visited`: KRLF's token-forwarding mark.
//!
//! # Each end of a link learns of it at its own time
//! A node announces its height when its link layer reports a new link (KRL's LinkInfo, the
//! prioritized algorithm's LINK). The peer's announcement can arrive before the node's own
//! `LinkUp`; the node then has no link to the peer and drops it, and the peer, which received
//! our announcement later, never sends another. So a node that needs a link that is still
//! forming (it has a request to forward and nowhere to send it, or it must reverse) asks the
//! peer with a Probe, which carries its height and is always answered with the receiver's.
//! Any height-carrying message from a forming peer (a REQUEST or a TOKEN: the peer has us in
//! `N`) completes the handshake as its announcement would. An answer whose height is
//! impossible (corrupted) is asked for again at the next need. See `docs/ALGORITHMS.md`, T1.
//!
//! Entries are kept in a sorted peer map, so lookups are binary searches and a static topology
//! never allocates.

use alloc::vec::Vec;

use crate::peer_map::{Keyed, PeerMap};
use crate::token::height::Height;
use crate::{Anomaly, NodeId};

/// One neighbour's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbor {
    /// The peer.
    pub(crate) id: NodeId,
    /// Our view of the peer's height (meaningful once `in_n`).
    pub(crate) height: Height,
    /// Whether the peer is in `N` (its height is known).
    pub(crate) in_n: bool,
    /// Tokens sent to the peer and not acknowledged yet (KRLF can send a second one before
    /// the first is acknowledged). The paper's `receivedLI` is `unacked == 0`.
    pub(crate) unacked: u32,
    /// Tokens sent to the peer over this link since it formed, modulo 2^16.
    pub(crate) sent: u16,
    /// Tokens received from the peer over this link since it formed, modulo 2^16.
    pub(crate) received: u16,
    /// The link was detected forming and the peer's first LinkInfo has not arrived yet (our
    /// height as last announced to it is kept apart, in [`Neighbors::form_height`]).
    pub(crate) forming: bool,
    /// While forming: we sent the peer a Probe to ask for its height.
    pub(crate) asked: bool,
    /// KRLF: a token was forwarded over this link since the marks were last cleared.
    pub(crate) visited: bool,
}

impl Keyed for Neighbor {
    fn peer(&self) -> NodeId {
        self.id
    }
}

impl Neighbor {
    /// The peer.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Our view of the peer's height (meaningful once [`Neighbor::in_n`]).
    pub fn height(&self) -> Height {
        self.height
    }

    /// Whether the peer is in `N` (its height is known).
    pub fn in_n(&self) -> bool {
        self.in_n
    }

    /// Tokens sent to the peer and not acknowledged yet (KRLF can send a second one before
    /// the first is acknowledged).
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn unacked(&self) -> u32 {
        self.unacked
    }

    /// The link was detected forming and the peer's first LinkInfo has not arrived yet.
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn forming(&self) -> bool {
        self.forming
    }

    /// KRLF: a token was forwarded over this link since the marks were last cleared.
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn visited(&self) -> bool {
        self.visited
    }

    /// The paper's `receivedLI`: no token we sent the peer awaits its acknowledgement, so what
    /// the peer says about its height is current.
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn received_li(&self) -> bool {
        self.unacked == 0
    }

    /// Tokens sent to the peer over this link since it formed, modulo 2^16.
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn sent(&self) -> u16 {
        self.sent
    }

    /// Tokens received from the peer over this link since it formed, modulo 2^16: what our
    /// acknowledgements carry.
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn received(&self) -> u16 {
        self.received
    }

    /// We are sending the peer a token: until it acknowledges, assume it took `assumed` (just
    /// below us) and ignore its older height reports.
    pub(crate) fn token_sent(&mut self, assumed: Height) {
        self.height = assumed;
        self.unacked = self.unacked.saturating_add(1);
        self.sent = self.sent.wrapping_add(1);
    }

    /// The peer says it has received `count` of our tokens (modulo 2^16): settle what that
    /// acknowledges. False, changing nothing, for a count that acknowledges a token never
    /// sent or takes back an acknowledgement (acknowledgements come in order on a FIFO link,
    /// so only a forged count does either).
    fn acknowledged(&mut self, count: u16) -> bool {
        let left = u32::from(self.sent.wrapping_sub(count));
        if left > self.unacked {
            return false;
        }
        self.unacked = left;
        true
    }
}

/// What kind of height announcement a peer's message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Said {
    /// A Probe: the peer's height, and a question (it lacks ours).
    Probe,
    /// A height announcement (link formation, a change, an answer), or the height inside a
    /// REQUEST or TOKEN.
    Info,
    /// The acknowledgement of the tokens we sent: the peer has received `Some(count)` of them
    /// over this link (modulo 2^16); `None` if the message failed its check word, so its count
    /// cannot be trusted. The first height of the peer we may trust again once it settles the
    /// last one outstanding.
    Ack(Option<u16>),
}

/// What the node must do after hearing a peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Heard {
    /// Tell the peer our height: it asked (a Probe), or our height changed since we announced
    /// it while the link was forming.
    pub(crate) tell: bool,
    /// An acknowledgement's count was impossible (a forgery: it passed its check word).
    pub(crate) bad_count: bool,
    /// The height carried was valid and recorded (or the peer joined `N` with it).
    pub(crate) recorded: bool,
}

/// The checks both token algorithms make on a node's initial configuration: its height names
/// it, every height is valid, the neighbours are distinct other nodes, and a node without a
/// token that has neighbours has one below it (the DAG is token oriented: without a way down it
/// could only wait). An isolated node is accepted either way; it waits for a link. Returns the
/// initial `next`: the node itself if it holds a token, else its lowest neighbour (`None` if
/// it has none), or why the configuration is refused.
pub(crate) fn initial_next(
    id: NodeId,
    own: Height,
    neighbors: &[Height],
    holder: bool,
) -> Result<Option<NodeId>, &'static str> {
    if own.id != id {
        return Err("the height's id must be the node's id");
    }
    if !own.is_valid() || neighbors.iter().any(|h| !h.is_valid()) {
        return Err("heights must be within ±Height::LIMIT");
    }
    let mut ids: Vec<NodeId> = neighbors.iter().map(|h| h.id).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() != neighbors.len() || ids.contains(&id) {
        return Err("neighbours must be distinct and exclude the node itself");
    }
    if holder {
        return Ok(Some(id));
    }
    match neighbors.iter().min() {
        Some(lowest) if *lowest > own => {
            Err("a node without a token needs a lower neighbour (token-oriented DAG)")
        }
        lowest => Ok(lowest.map(|h| h.id)),
    }
}

/// The neighbour table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbors {
    entries: PeerMap<Neighbor>,
    /// For each forming link (and only those), our height when we last announced it to the
    /// peer. Kept apart from the entries, which every walk of the table reads: it is needed
    /// only while a link forms, and without it an entry is 40 bytes instead of 64.
    announced: PeerMap<(NodeId, Height)>,
}

impl Neighbors {
    /// A table with the given peers already in `N`, with known heights (initial configuration).
    pub(crate) fn with_known(peers: impl IntoIterator<Item = Height>) -> Self {
        let entries = peers.into_iter().map(|h| Neighbor {
            id: h.id,
            height: h,
            in_n: true,
            unacked: 0,
            sent: 0,
            received: 0,
            forming: false,
            asked: false,
            visited: false,
        });
        Neighbors {
            entries: PeerMap::from_entries(entries),
            announced: PeerMap::default(),
        }
    }

    /// The entry for `id`, whether or not it is in `N` yet.
    pub fn get(&self, id: NodeId) -> Option<&Neighbor> {
        self.entries.get(id)
    }

    /// Mutable entry for `id`.
    pub(crate) fn get_mut(&mut self, id: NodeId) -> Option<&mut Neighbor> {
        self.entries.get_mut(id)
    }

    /// Whether `id` is in `N`.
    pub fn is_member(&self, id: NodeId) -> bool {
        self.get(id).is_some_and(|n| n.in_n)
    }

    /// Record a forming link to `id` detected while our height is `own`. Returns false (and
    /// changes nothing) if a link to `id` already exists.
    pub(crate) fn link_up(&mut self, id: NodeId, own: Height) -> bool {
        let new = self.entries.insert_new(Neighbor {
            id,
            height: own,
            in_n: false,
            unacked: 0,
            sent: 0,
            received: 0,
            forming: true,
            asked: false,
            visited: false,
        });
        if new {
            self.announced.insert((id, own));
        }
        new
    }

    /// Our height when we last announced it to `id` while the link to it is forming (`None`
    /// for a link that is not forming).
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn form_height(&self, id: NodeId) -> Option<Height> {
        self.announced.get(id).map(|&(_, h)| h)
    }

    /// We asked forming link `id`'s peer for its height (a Probe) while ours is `own`.
    pub(crate) fn asked(&mut self, id: NodeId, own: Height) {
        if let Some(entry) = self.entries.get_mut(id) {
            entry.asked = true;
        }
        if let Some(announced) = self.announced.get_mut(id) {
            announced.1 = own;
        }
    }

    /// Take in what `from` says of its height (`None`: the message's height was impossible)
    /// while ours is `own` (KRL LinkInfo lines 1–6, the prioritized algorithm's LINK, and the
    /// Probe and acknowledgement rules of this crate).
    ///
    /// An acknowledgement whose check word holds settles the tokens its count acknowledges,
    /// whatever height it carries, so a corrupted height cannot mute the peer; one whose
    /// check word fails settles nothing (the caller asks again, R13). A valid height makes the
    /// peer a member of `N`, clears its `forming` mark, and is recorded unless a token
    /// acknowledgement from it is still pending. `Err(UnknownPeer)` for a sender with no link.
    pub(crate) fn hear(
        &mut self,
        from: NodeId,
        height: Option<Height>,
        own: Height,
        said: Said,
    ) -> Result<Heard, Anomaly> {
        let entry = self.entries.get_mut(from).ok_or(Anomaly::UnknownPeer)?;
        let mut heard = Heard {
            tell: said == Said::Probe,
            recorded: false,
            bad_count: false,
        };
        if let Said::Ack(Some(count)) = said {
            heard.bad_count = !entry.acknowledged(count);
        }
        let Some(height) = height else {
            // An answer we cannot use: ask again when the link is next needed.
            entry.asked &= !entry.forming;
            return Ok(heard);
        };
        if entry.forming {
            heard.tell |= self.announced.remove(from).is_some_and(|(_, h)| h != own);
        }
        entry.in_n = true;
        entry.forming = false;
        if entry.received_li() {
            entry.height = height;
            heard.recorded = true;
        }
        Ok(heard)
    }

    /// The forming links whose peer we have not asked yet, now marked asked (with our height
    /// `own` as the one announced): the caller sends each a Probe.
    pub(crate) fn ask_forming(&mut self, own: Height) -> impl Iterator<Item = NodeId> + '_ {
        let announced = &mut self.announced;
        self.entries
            .iter_mut()
            .filter(|n| n.forming && !n.asked)
            .map(move |n| {
                n.asked = true;
                if let Some(a) = announced.get_mut(n.id) {
                    a.1 = own;
                }
                n.id
            })
    }

    /// Forget the link to `id`. Returns whether it existed.
    pub(crate) fn link_down(&mut self, id: NodeId) -> bool {
        self.announced.remove(id);
        self.entries.remove(id).is_some()
    }

    /// Visit the memory of the entries (see `reverse_link::Node::heap_regions`).
    pub(crate) fn heap_regions(&self, visit: &mut impl FnMut(*const u8, usize)) {
        let entries = self.entries.iter().as_slice();
        visit(entries.as_ptr().cast(), core::mem::size_of_val(entries));
    }

    /// Every entry, members of `N` or not, sorted by id.
    pub fn entries(&self) -> impl Iterator<Item = &Neighbor> + Clone {
        self.entries.iter()
    }

    /// The members of `N`, sorted by id.
    pub fn members(&self) -> impl Iterator<Item = &Neighbor> + Clone {
        self.entries.iter().filter(|n| n.in_n)
    }

    /// Mutable members of `N`.
    pub(crate) fn members_mut(&mut self) -> impl Iterator<Item = &mut Neighbor> {
        self.entries.iter_mut().filter(|n| n.in_n)
    }

    /// Our view of the heights of `N`.
    pub fn heights(&self) -> impl Iterator<Item = Height> + Clone + '_ {
        self.members().map(|n| n.height)
    }

    /// Whether `N` is empty.
    pub fn is_empty(&self) -> bool {
        self.members().next().is_none()
    }

    /// Every member of `N` is higher than `own` (vacuously true for an empty `N`: callers pair
    /// it with [`crate::token::height::raise`], which refuses an empty view).
    pub(crate) fn all_higher(&self, own: Height) -> bool {
        self.heights().all(|h| h > own)
    }

    /// Every member of `N` is lower than `own` (vacuously true for an empty `N`).
    // Hidden: the workspace's tests use it; not stable API.
    #[doc(hidden)]
    pub fn all_lower(&self, own: Height) -> bool {
        self.heights().all(|h| h < own)
    }

    /// Members higher than `own` (incoming links).
    pub fn incoming(&self, own: Height) -> impl Iterator<Item = NodeId> + '_ {
        self.members().filter(move |n| n.height > own).map(|n| n.id)
    }

    /// Members lower than `own` (outgoing links).
    pub fn outgoing(&self, own: Height) -> impl Iterator<Item = NodeId> + '_ {
        self.members().filter(move |n| n.height < own).map(|n| n.id)
    }

    /// The lowest member of `N` in our view.
    pub fn lowest(&self) -> Option<NodeId> {
        self.lowest_where(|_| true)
    }

    /// The lowest member of `N` among those that satisfy `keep`.
    pub(crate) fn lowest_where(&self, mut keep: impl FnMut(&Neighbor) -> bool) -> Option<NodeId> {
        // The first of equally low ones, as `min_by_key`; comparing in place is cheaper than
        // its copies of the keys (this walk runs for every request forwarded).
        let mut lowest: Option<&Neighbor> = None;
        for n in self.members().filter(|n| keep(n)) {
            if lowest.is_none_or(|l| n.height < l.height) {
                lowest = Some(n);
            }
        }
        lowest.map(|n| n.id)
    }

    /// Whether `id` is a member of `N` that is lower than `own` in our view.
    pub(crate) fn is_lower(&self, id: NodeId, own: Height) -> bool {
        self.get(id).is_some_and(|n| n.in_n && n.height < own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(h1: i64, id: u32) -> Height {
        Height::new(h1, 0, NodeId(id))
    }

    #[test]
    fn directions_follow_heights() {
        let own = h(5, 0);
        let t = Neighbors::with_known([h(7, 3), h(2, 1), h(6, 2)]);
        assert_eq!(
            t.incoming(own).collect::<Vec<_>>(),
            vec![NodeId(2), NodeId(3)]
        );
        assert_eq!(t.outgoing(own).collect::<Vec<_>>(), vec![NodeId(1)]);
        assert_eq!(t.lowest(), Some(NodeId(1)));
        assert_eq!(t.lowest_where(|n| n.id != NodeId(1)), Some(NodeId(2)));
        assert!(!t.all_higher(own) && !t.all_lower(own));
        assert!(t.is_lower(NodeId(1), own) && !t.is_lower(NodeId(3), own));
    }

    #[test]
    fn hearing_a_peer_records_its_height_unless_an_ack_is_pending() {
        let own = h(5, 0);
        let mut t = Neighbors::with_known([h(3, 1)]);
        assert_eq!(
            t.hear(NodeId(9), Some(h(7, 9)), own, Said::Info),
            Err(Anomaly::UnknownPeer)
        );
        let heard = t.hear(NodeId(1), Some(h(7, 1)), own, Said::Info).unwrap();
        assert!(heard.recorded && !heard.tell);
        assert_eq!(t.get(NodeId(1)).unwrap().height, h(7, 1));
        t.get_mut(NodeId(1)).unwrap().token_sent(h(7, 1));
        t.get_mut(NodeId(1)).unwrap().token_sent(h(7, 1));
        let heard = t.hear(NodeId(1), Some(h(8, 1)), own, Said::Info).unwrap();
        assert!(!heard.recorded, "stale while unacknowledged");
        assert_eq!(t.get(NodeId(1)).unwrap().height, h(7, 1));
        // An acknowledgement with an impossible (but sealed) height still settles what its
        // count says; one that failed its check word settles nothing.
        assert!(
            !t.hear(NodeId(1), None, own, Said::Ack(None))
                .unwrap()
                .recorded
        );
        assert_eq!(t.get(NodeId(1)).unwrap().unacked, 2);
        assert!(
            !t.hear(NodeId(1), None, own, Said::Ack(Some(1)))
                .unwrap()
                .recorded
        );
        assert_eq!(t.get(NodeId(1)).unwrap().unacked, 1);
        // A count acknowledging a token never sent, or taking one back, changes nothing.
        for bad in [3, 0] {
            let heard = t.hear(NodeId(1), Some(h(4, 1)), own, Said::Ack(Some(bad)));
            assert!(heard.unwrap().bad_count, "{bad}");
            assert_eq!(t.get(NodeId(1)).unwrap().unacked, 1);
        }
        // The last acknowledgement, or a later one that was lost, settles the rest.
        assert!(
            t.hear(NodeId(1), Some(h(4, 1)), own, Said::Ack(Some(2)))
                .unwrap()
                .recorded
        );
        assert!(t.get(NodeId(1)).unwrap().received_li());
        assert_eq!(t.get(NodeId(1)).unwrap().height, h(4, 1));
    }

    #[test]
    fn acknowledgement_counts_wrap_around() {
        let mut t = Neighbors::with_known([h(3, 1)]);
        let e = t.get_mut(NodeId(1)).unwrap();
        e.sent = u16::MAX;
        e.token_sent(h(3, 1));
        e.token_sent(h(3, 1));
        assert_eq!((e.sent, e.unacked), (1, 2));
        assert!(e.acknowledged(0));
        assert_eq!(e.unacked, 1);
        assert!(!e.acknowledged(u16::MAX - 1));
        assert!(e.acknowledged(1));
        assert!(e.received_li());
    }

    #[test]
    fn a_probe_is_always_answered_and_a_moved_height_is_announced_again() {
        let own = h(0, 0);
        let mut t = Neighbors::default();
        t.link_up(NodeId(2), own);
        // Our height changed before the peer's first word: tell it again.
        let heard = t
            .hear(NodeId(2), Some(h(1, 2)), h(6, 0), Said::Info)
            .unwrap();
        assert!(heard.tell && heard.recorded);
        assert!(t.is_member(NodeId(2)) && !t.get(NodeId(2)).unwrap().forming);
        assert!(
            !t.hear(NodeId(2), Some(h(1, 2)), h(6, 0), Said::Info)
                .unwrap()
                .tell
        );
        // A Probe asks for our height, whatever it carries.
        assert!(
            t.hear(NodeId(2), Some(h(1, 2)), h(6, 0), Said::Probe)
                .unwrap()
                .tell
        );
        assert!(t.hear(NodeId(2), None, h(6, 0), Said::Probe).unwrap().tell);
        t.link_up(NodeId(3), own);
        assert!(
            t.hear(NodeId(3), Some(h(1, 3)), own, Said::Probe)
                .unwrap()
                .tell
        );
    }

    #[test]
    fn forming_peers_are_asked_once_each() {
        let own = h(0, 0);
        let mut t = Neighbors::default();
        t.link_up(NodeId(3), own);
        t.link_up(NodeId(4), own);
        t.hear(NodeId(4), Some(h(1, 4)), own, Said::Info).unwrap();
        assert_eq!(t.form_height(NodeId(4)), None, "formed: nothing kept");
        assert_eq!(t.form_height(NodeId(3)), Some(own));
        let moved = h(9, 0);
        assert_eq!(t.ask_forming(moved).collect::<Vec<_>>(), vec![NodeId(3)]);
        assert_eq!(t.ask_forming(moved).count(), 0);
        assert_eq!(
            t.form_height(NodeId(3)),
            Some(moved),
            "the height the Probe carried"
        );
        // The question announced our current height: no need to announce it again.
        assert!(
            !t.hear(NodeId(3), Some(h(1, 3)), moved, Said::Info)
                .unwrap()
                .tell
        );
    }

    #[test]
    fn forming_link_joins_n_only_when_marked() {
        let own = h(0, 0);
        let mut t = Neighbors::default();
        assert!(t.link_up(NodeId(4), own));
        assert!(!t.link_up(NodeId(4), own), "duplicate link up");
        assert!(!t.is_member(NodeId(4)));
        assert!(t.is_empty() && t.all_higher(own));
        t.get_mut(NodeId(4)).unwrap().in_n = true;
        assert!(t.is_member(NodeId(4)));
        assert_eq!(t.form_height(NodeId(4)), Some(own));
        assert!(t.link_down(NodeId(4)));
        assert!(!t.link_down(NodeId(4)));
        assert!(t.get(NodeId(4)).is_none() && t.form_height(NodeId(4)).is_none());
        assert_eq!(core::mem::size_of::<Neighbor>(), 40);
    }
}
