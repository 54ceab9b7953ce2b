//! How each algorithm starts from its state directory ([`Node::with_state_dir`]).
//!
//! [`Node::with_state_dir`]: crate::Node::with_state_dir

use manet_mutex::codec::Wire;
use manet_mutex::driver::Algorithm;
use manet_mutex::token::Height;
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId};

use crate::store::Start;

/// A configuration a node can be started from with its durable state: the configuration of
/// the node's first start, which a restart turns into the empty-state configuration the
/// algorithm's failure model asks for (implemented for the four algorithms' `Config`s).
pub trait Durable: sealed::Sealed + Sized {
    /// The node it builds.
    type Core: Algorithm + manet_mutex::Protocol<Message: Wire + Send> + Send + 'static;
    /// The algorithm's name in the state file: a directory is never reused by another.
    const ALGORITHM: &'static str;
    /// Whether the node numbers its fences from its incarnation (the permission algorithms,
    /// C6), so the store keeps the highest generation it entered under.
    const NUMBERS_FENCES: bool;
    /// The node's id.
    fn node(&self) -> NodeId;
    /// The node for this start: this configuration on a first start (under the run's
    /// incarnation); on a restart or with the state lost, an empty state under it.
    fn build(self, start: &Start, incarnation: u32) -> Result<Self::Core, manet_mutex::Error>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for manet_mutex::ricart_agrawala::Config {}
    impl Sealed for manet_mutex::look_ahead::Config {}
    impl Sealed for manet_mutex::reverse_link::Config {}
    impl Sealed for manet_mutex::prioritized::Config {}
}

/// The permission algorithms keep nothing but the incarnation: a restarted host numbers its
/// requests, fences and announcements above every earlier one's (C5, C6). Every start takes
/// the run's incarnation, the first included, so a host whose state was lost still starts
/// above the incarnations its peers know.
impl Durable for ricart_agrawala::Config {
    type Core = ricart_agrawala::Node;
    const ALGORITHM: &'static str = "ricart-agrawala";
    const NUMBERS_FENCES: bool = true;

    fn node(&self) -> NodeId {
        self.id
    }

    fn build(self, _: &Start, incarnation: u32) -> Result<Self::Core, manet_mutex::Error> {
        let incarnation = incarnation.max(self.incarnation);
        ricart_agrawala::Node::new(self.with_incarnation(incarnation))
    }
}

/// As Ricart–Agrawala; a look-ahead host of incarnation above 0 asks every peer at first
/// (its peers' sets moved on while it was away, C5).
impl Durable for look_ahead::Config {
    type Core = look_ahead::Node;
    const ALGORITHM: &'static str = "look-ahead";
    const NUMBERS_FENCES: bool = true;

    fn node(&self) -> NodeId {
        self.id
    }

    fn build(self, _: &Start, incarnation: u32) -> Result<Self::Core, manet_mutex::Error> {
        let incarnation = incarnation.max(self.incarnation);
        look_ahead::Node::new(self.with_incarnation(incarnation))
    }
}

/// A restarted KRL node holds no token (its tokens live on elsewhere or are made again, F14),
/// starts at height 0 with no neighbour (it learns each from its links; F12 lifts it above
/// them), makes only rounds above the ones it made (F4) and keeps its promises (F9). With its
/// state lost it makes no token id again before it has heard of it, and never promises in
/// majority mode.
impl Durable for reverse_link::Config {
    type Core = reverse_link::Node;
    const ALGORITHM: &'static str = "reverse-link";
    const NUMBERS_FENCES: bool = false;

    fn node(&self) -> NodeId {
        self.id
    }

    fn build(self, start: &Start, _: u32) -> Result<Self::Core, manet_mutex::Error> {
        let empty = || {
            reverse_link::Config::new(
                self.id,
                self.settings,
                0,
                Height::new(0, 0, self.id),
                Vec::new(),
            )
        };
        let config = match start {
            Start::First => self,
            Start::Restart(before) => empty()
                .restarted_after(before.made_up_to)
                .with_promises(before.promises.clone()),
            Start::Lost => empty().restarted(),
        };
        reverse_link::Node::new(config)
    }
}

/// As KRL: a restarted prioritized node is never the holder.
impl Durable for prioritized::Config {
    type Core = prioritized::Node;
    const ALGORITHM: &'static str = "prioritized";
    const NUMBERS_FENCES: bool = false;

    fn node(&self) -> NodeId {
        self.id
    }

    fn build(self, start: &Start, _: u32) -> Result<Self::Core, manet_mutex::Error> {
        let empty = || {
            prioritized::Config::new(
                self.id,
                self.settings,
                false,
                Height::new(0, 0, self.id),
                Vec::new(),
            )
        };
        let config = match start {
            Start::First => self,
            Start::Restart(before) => empty()
                .restarted_after(before.made_up_to)
                .with_promises(before.promises.clone()),
            Start::Lost => empty().restarted(),
        };
        prioritized::Node::new(config)
    }
}
