//! The messages in flight on the token simulator's links.

use manet_mutex::NodeId;

use crate::Graph;

/// The messages in flight, per directed link, oldest first.
///
/// Each directed link used so far has an id: a record of its ends and the head and tail of a
/// FIFO list threaded through one shared slab of message slots. The links of the graph given
/// to [`Channels::for_graph`] (the simulator's initial topology) have theirs up front, numbered
/// in node order, so each sender's records form one block sorted by receiver, found by its
/// position alone; a link opened later is listed in a per-sender index of `(receiver, id)`
/// sorted by receiver (at most its degree over the run). A push by ends costs a binary search
/// of one node's block (and its index if that fails); a push or a pop by id ([`Channels::push_on`],
/// [`Channels::pop_on`]) costs nothing more than the slot, which is what the simulator's
/// deliveries use. Slots are reused through a free list and the ids of forgotten links
/// ([`Channels::forget`]) through a spare list, so steady-state traffic does not allocate;
/// memory is a few bytes per used link plus one slot per message at the peak of traffic (not a
/// buffer per link, nor anything `n²`). A count of messages in flight makes
/// [`Channels::is_empty`] constant time.
#[derive(Debug, Clone)]
pub struct Channels<M> {
    /// `blocks[from]`: `from`'s links given by [`Channels::for_graph`], as the ids
    /// `first..first + count` (sorted by receiver). A forgotten one keeps its place and its
    /// receiver, its `from` set to [`GONE`], until it is opened again.
    blocks: Vec<(u32, u32)>,
    /// `index[from]`: `(to, id)` of every other link `from → to` with an id, by `to`.
    index: Vec<Vec<(NodeId, u32)>>,
    /// The links, by id.
    links: Vec<Link>,
    /// Ids of forgotten links outside the blocks, to reuse.
    spare: Vec<u32>,
    /// Message slots: a message in flight and the slot of the next one on its link, or a free
    /// slot and the next free one.
    slots: Vec<(Option<M>, u32)>,
    /// The first free slot (`NONE`: none).
    free: u32,
    /// Messages in flight in all.
    count: usize,
}

/// No slot.
const NONE: u32 = u32::MAX;

/// The sender of a forgotten link in a block (no node has this id in a simulation).
const GONE: NodeId = NodeId(u32::MAX);

/// One directed link's ends and FIFO: its oldest and newest slots.
#[derive(Debug, Clone, Copy)]
struct Link {
    from: NodeId,
    to: NodeId,
    head: u32,
    tail: u32,
}

impl<M> Default for Channels<M> {
    fn default() -> Self {
        Channels {
            blocks: Vec::new(),
            index: Vec::new(),
            links: Vec::new(),
            spare: Vec::new(),
            slots: Vec::new(),
            free: NONE,
            count: 0,
        }
    }
}

impl<M> Channels<M> {
    /// Empty channels with room for `links` links, so that opening that many does not move
    /// the links already open (capacity costs address space, not memory, until it is used).
    pub fn with_capacity(links: usize) -> Self {
        let mut channels = Channels::default();
        channels.links.reserve_exact(links);
        channels
    }

    /// Channels with an id for every link of `graph` in both directions, numbered in node
    /// order (a node's links, and their records, lie together in memory).
    pub fn for_graph(graph: &Graph) -> Self {
        let mut channels = Channels::with_capacity(2 * graph.edges().len());
        channels.blocks = (0..graph.n())
            .map(|a| {
                let from = NodeId(a as u32);
                let first = channels.links.len() as u32;
                channels.links.extend(graph.neighbors(from).map(|to| Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                }));
                (first, channels.links.len() as u32 - first)
            })
            .collect();
        channels
    }

    /// `from`'s block of links and the id of its first (empty without
    /// [`Channels::for_graph`]).
    #[inline]
    fn block(&self, from: NodeId) -> (u32, &[Link]) {
        let &(first, count) = self.blocks.get(from.index()).unwrap_or(&(0, 0));
        (first, &self.links[first as usize..(first + count) as usize])
    }

    /// The id and record of `from → to` in `from`'s block, forgotten or not.
    #[inline]
    fn in_block(&self, from: NodeId, to: NodeId) -> Option<(u32, &Link)> {
        let (first, block) = self.block(from);
        let i = block.binary_search_by_key(&to, |l| l.to).ok()?;
        Some((first + i as u32, &block[i]))
    }

    /// A cache hint: where `from`'s block is.
    pub(super) fn prefetch_block_of(&self, from: NodeId) {
        if let Some(block) = self.blocks.get(from.index()) {
            crate::prefetch::value(block);
        }
    }

    /// A cache hint: `from`'s block of links (where it is must be cached by now, see
    /// [`Channels::prefetch_block_of`]).
    pub(super) fn prefetch_block(&self, from: NodeId) {
        crate::prefetch::slice(self.block(from).1);
    }

    /// The id of the link `from → to`, if it has one (opened, or a link of the graph given to
    /// [`Channels::for_graph`], and not forgotten).
    #[inline]
    pub fn id(&self, from: NodeId, to: NodeId) -> Option<u32> {
        if let Some((id, link)) = self.in_block(from, to) {
            return (link.from == from).then_some(id);
        }
        let links = self.index.get(from.index())?;
        let i = links.binary_search_by_key(&to, |l| l.0).ok()?;
        Some(links[i].1)
    }

    /// The id of the link `from → to`, given one if it has none yet.
    pub fn open(&mut self, from: NodeId, to: NodeId) -> u32 {
        if let Some((id, _)) = self.in_block(from, to) {
            let link = &mut self.links[id as usize];
            if link.from == GONE {
                *link = Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                };
            }
            return id;
        }
        if self.index.len() <= from.index() {
            self.index.resize_with(from.index() + 1, Vec::new);
        }
        let links = &mut self.index[from.index()];
        match links.binary_search_by_key(&to, |l| l.0) {
            Ok(i) => links[i].1,
            Err(i) => {
                let link = Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                };
                let id = match self.spare.pop() {
                    Some(id) => {
                        self.links[id as usize] = link;
                        id
                    }
                    None => {
                        self.links.push(link);
                        (self.links.len() - 1) as u32
                    }
                };
                links.insert(i, (to, id));
                id
            }
        }
    }

    /// Forget the links between `a` and `b`, both idle (the link failed): their ids are
    /// reused, and [`Channels::id`] no longer knows them. Returns false (and forgets nothing)
    /// if a message is in flight between them.
    pub fn forget(&mut self, a: NodeId, b: NodeId) -> bool {
        if !self.idle(a, b) {
            return false;
        }
        for (from, to) in [(a, b), (b, a)] {
            if let Some((id, _)) = self.in_block(from, to) {
                self.links[id as usize].from = GONE;
            } else if let Some(links) = self.index.get_mut(from.index()) {
                if let Ok(i) = links.binary_search_by_key(&to, |l| l.0) {
                    self.spare.push(links.remove(i).1);
                }
            }
        }
        true
    }

    /// The ends of the link with id `id` (from [`Channels::open`]).
    pub(super) fn ends(&self, id: u32) -> (NodeId, NodeId) {
        let Link { from, to, .. } = self.links[id as usize];
        (from, to)
    }

    fn link(&self, from: NodeId, to: NodeId) -> Option<&Link> {
        self.id(from, to).map(|id| &self.links[id as usize])
    }

    /// The messages on one link, oldest first.
    fn walk(&self, link: &Link) -> impl Iterator<Item = &M> + '_ {
        let mut at = link.head;
        std::iter::from_fn(move || {
            let (msg, next) = self.slots.get(at as usize)?;
            at = *next;
            msg.as_ref()
        })
    }

    /// Every message in flight as `(from, to, msg)`, by `(from, to)` then oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId, &M)> {
        (0..self.blocks.len().max(self.index.len())).flat_map(move |from| {
            let from = NodeId(from as u32);
            let mut block = self
                .block(from)
                .1
                .iter()
                .filter(move |l| l.from == from)
                .peekable();
            let mut index = self
                .index
                .get(from.index())
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|&(_, id)| &self.links[id as usize])
                .peekable();
            // The two lists of `from`'s links merged by receiver.
            std::iter::from_fn(move || match (block.peek(), index.peek()) {
                (Some(b), Some(i)) if i.to < b.to => index.next(),
                (Some(_), _) => block.next(),
                (None, _) => index.next(),
            })
            .flat_map(move |link| self.walk(link).map(move |m| (link.from, link.to, m)))
        })
    }

    /// Whether nothing is in flight in either direction between `a` and `b`.
    pub fn idle(&self, a: NodeId, b: NodeId) -> bool {
        let empty = |from, to| self.link(from, to).is_none_or(|l| l.head == NONE);
        empty(a, b) && empty(b, a)
    }

    /// Whether nothing is in flight at all.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many messages are in flight in all.
    pub fn total(&self) -> usize {
        self.count
    }

    /// Append `msg` to the link `from → to`.
    pub fn push(&mut self, from: NodeId, to: NodeId, msg: M) {
        let id = self.open(from, to);
        self.push_on(id, msg);
    }

    /// Append `msg` to the link with id `id` (from [`Channels::open`]).
    #[inline]
    pub fn push_on(&mut self, id: u32, msg: M) {
        let slot = if self.free == NONE {
            self.slots.push((Some(msg), NONE));
            (self.slots.len() - 1) as u32
        } else {
            let slot = self.free;
            let entry = &mut self.slots[slot as usize];
            self.free = entry.1;
            *entry = (Some(msg), NONE);
            slot
        };
        let link = &mut self.links[id as usize];
        if link.tail == NONE {
            link.head = slot;
        } else {
            self.slots[link.tail as usize].1 = slot;
        }
        link.tail = slot;
        self.count += 1;
    }

    /// Take the oldest message on `from → to`.
    pub fn pop(&mut self, from: NodeId, to: NodeId) -> Option<M> {
        let id = self.id(from, to)?;
        self.pop_on(id).map(|(_, _, msg)| msg)
    }

    /// Take the oldest message on the link with id `id`, with the link's ends.
    #[inline]
    pub fn pop_on(&mut self, id: u32) -> Option<(NodeId, NodeId, M)> {
        let link = self.links.get_mut(id as usize)?;
        let slot = link.head;
        if slot == NONE {
            return None;
        }
        let entry = &mut self.slots[slot as usize];
        let msg = entry.0.take()?;
        let next = std::mem::replace(&mut entry.1, self.free);
        link.head = next;
        if next == NONE {
            link.tail = NONE;
        }
        self.free = slot;
        self.count -= 1;
        Some((link.from, link.to, msg))
    }

    /// The `i`-th oldest message on `from → to`, to rewrite it (test harnesses corrupt
    /// messages in flight).
    pub fn get_mut(&mut self, from: NodeId, to: NodeId, i: usize) -> Option<&mut M> {
        let mut at = self.link(from, to)?.head;
        for _ in 0..i {
            at = self.slots.get(at as usize)?.1;
        }
        self.slots.get_mut(at as usize)?.0.as_mut()
    }

    /// How many messages are in flight on `from → to` (a walk of its FIFO).
    pub fn len(&self, from: NodeId, to: NodeId) -> usize {
        self.link(from, to).map_or(0, |l| self.walk(l).count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn channels_are_fifo_per_link_and_reuse_their_slots() {
        let (a, b, c) = (NodeId(0), NodeId(1), NodeId(2));
        let mut ch = Channels::default();
        assert!(ch.is_empty() && ch.pop(a, b).is_none() && ch.get_mut(a, b, 0).is_none());
        ch.push(b, c, 10);
        ch.push(a, c, 20);
        ch.push(a, b, 30);
        ch.push(a, c, 21);
        ch.push(b, c, 11);
        assert_eq!(ch.total(), 5);
        assert_eq!((ch.len(a, c), ch.len(c, a), ch.len(a, b)), (2, 0, 1));
        assert!(!ch.idle(c, a) && ch.idle(b, a) == (ch.len(a, b) == 0));
        let all: Vec<_> = ch.iter().map(|(f, t, m)| (f.0, t.0, *m)).collect();
        assert_eq!(
            all,
            [(0, 1, 30), (0, 2, 20), (0, 2, 21), (1, 2, 10), (1, 2, 11)]
        );
        *ch.get_mut(a, c, 1).unwrap() = 22;
        assert!(ch.get_mut(a, c, 2).is_none());
        assert_eq!(ch.pop(a, c), Some(20));
        ch.push(a, c, 23);
        assert_eq!(ch.pop(a, c), Some(22));
        assert_eq!(ch.pop(a, c), Some(23));
        assert_eq!(ch.pop(a, c), None);
        assert_eq!(
            (ch.pop(b, c), ch.pop(b, c), ch.pop(a, b)),
            (Some(10), Some(11), Some(30))
        );
        assert!(ch.is_empty() && ch.iter().next().is_none());
        // Freed slots are reused: the slab does not grow past the peak of traffic.
        let peak = ch.slots.len();
        for i in 0..100 {
            ch.push(c, a, i);
            ch.push(a, c, i);
            assert_eq!(ch.pop(c, a), Some(i));
            assert_eq!(ch.pop(a, c), Some(i));
        }
        assert_eq!(ch.slots.len(), peak);
    }

    #[test]
    fn channel_ids_name_links_until_they_are_forgotten() {
        let (a, b, c) = (NodeId(0), NodeId(1), NodeId(2));
        let mut ch = Channels::default();
        assert_eq!(ch.id(a, b), None);
        let ab = ch.open(a, b);
        assert_eq!((ch.id(a, b), ch.open(a, b)), (Some(ab), ab));
        ch.push_on(ab, 1);
        ch.push(a, b, 2);
        let bc = ch.open(b, c);
        ch.push_on(bc, 3);
        assert_eq!(ch.pop_on(ab), Some((a, b, 1)));
        // Not forgotten while a message is in flight between the ends.
        assert!(!ch.forget(b, a) && ch.id(a, b) == Some(ab));
        assert_eq!(ch.pop(a, b), Some(2));
        assert_eq!(ch.pop_on(ab), None);
        assert!(ch.forget(b, a));
        assert_eq!((ch.id(a, b), ch.len(a, b)), (None, 0));
        // The id is reused for the next new link, which starts empty.
        let ca = ch.open(c, a);
        assert_eq!(ca, ab);
        assert_eq!(ch.pop_on(ca), None);
        ch.push(c, a, 4);
        let all: Vec<_> = ch.iter().map(|(f, t, m)| (f.0, t.0, *m)).collect();
        assert_eq!(all, [(1, 2, 3), (2, 0, 4)]);
        assert_eq!(ch.pop_on(ca), Some((c, a, 4)));
        assert_eq!(ch.pop_on(99), None);
        // Room reserved up front: opening that many links does not move them.
        let mut roomy = Channels::<u8>::with_capacity(6);
        let room = roomy.links.capacity();
        for (x, y) in [(a, b), (b, a), (a, c), (c, a), (b, c), (c, b)] {
            roomy.open(x, y);
        }
        assert!(room >= 6 && roomy.links.capacity() == room);
    }

    #[test]
    fn channels_for_a_graph_name_every_link_in_node_order() {
        let graph = Graph::from_edges(4, &[(NodeId(2), NodeId(0)), (NodeId(1), NodeId(2))]);
        let mut channels = Channels::<u32>::for_graph(&graph);
        let ids: Vec<_> = [(0, 2), (1, 2), (2, 0), (2, 1)]
            .iter()
            .map(|&(a, b)| channels.id(NodeId(a), NodeId(b)))
            .collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2), Some(3)]);
        assert_eq!(channels.id(NodeId(0), NodeId(1)), None);
        assert_eq!(channels.id(NodeId(3), NodeId(0)), None);
        assert!(channels.is_empty());
        channels.push_on(2, 7);
        assert_eq!(channels.pop(NodeId(2), NodeId(0)), Some(7));
        // A link formed later gets the next id.
        assert_eq!(channels.open(NodeId(3), NodeId(0)), 4);
    }

    /// Channels with blocks ([`Channels::for_graph`]) behave as channels that open every link
    /// on first use: the same links have ids, the same messages come out in the same order,
    /// and `iter` lists them in the same (sorted) order, through random opens, pushes, pops,
    /// failures and re-formations of links in and out of the blocks.
    #[test]
    fn blocks_change_nothing_channels_show() {
        use rand::Rng;
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 6;
            let graph = Graph::random_connected(n, 8, &mut rng);
            let mut blocked = Channels::<u32>::for_graph(&graph);
            let mut plain = Channels::<u32>::default();
            let mut live: Vec<(NodeId, NodeId)> = graph
                .edges()
                .iter()
                .flat_map(|&(a, b)| [(a, b), (b, a)])
                .collect();
            for &(a, b) in &live {
                plain.open(a, b);
            }
            for step in 0..400u32 {
                let a = NodeId(rng.random_range(0..n as u32));
                let b = NodeId(rng.random_range(0..n as u32));
                match rng.random_range(0..4) {
                    0 if a != b => {
                        blocked.open(a, b);
                        plain.open(a, b);
                        live.push((a, b));
                    }
                    1 if live.contains(&(a, b)) => {
                        let ids = [blocked.id(a, b), plain.id(a, b)];
                        blocked.push_on(ids[0].expect("has an id"), step);
                        plain.push_on(ids[1].expect("has an id"), step);
                    }
                    2 => assert_eq!(blocked.pop(a, b), plain.pop(a, b)),
                    _ => {
                        assert_eq!(blocked.forget(a, b), plain.forget(a, b));
                        if plain.idle(a, b) {
                            live.retain(|&l| l != (a, b) && l != (b, a));
                        }
                    }
                }
                for x in 0..n as u32 {
                    for y in 0..n as u32 {
                        let (x, y) = (NodeId(x), NodeId(y));
                        assert_eq!(blocked.id(x, y).is_some(), plain.id(x, y).is_some());
                        assert_eq!(blocked.len(x, y), plain.len(x, y));
                        assert_eq!(blocked.idle(x, y), plain.idle(x, y));
                    }
                }
                let listed: Vec<_> = blocked.iter().collect();
                assert_eq!(listed, plain.iter().collect::<Vec<_>>());
                assert!(listed
                    .windows(2)
                    .all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1)));
                assert_eq!(blocked.total(), plain.total());
            }
        }
    }
}
