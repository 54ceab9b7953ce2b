//! The corrupt operation of every network harness (the drivers [`TokenNet`](super::TokenNet)
//! and [`PermNet`](super::PermNet), their proptest strategies and fuzz bodies, and the
//! stateright models): what a message in flight between correct nodes becomes. The crate's
//! threat model says any single field of a peer's message may be corrupted, and a message's
//! kind (its enum variant) is a field too. One operation, [`Corruption`], in three forms:
//!
//! - **a field** ([`Corruption::Field`], [`Fields`]): one leaf field is rewritten to an extreme
//!   or a neighbour of its value ([`Value`]). One field per message, since a consistent rewrite
//!   of several fields is a forged message that only authentication tells.
//! - **the kind** ([`Corruption::Kind`], [`kinds_of`]): the message is encoded with the wire
//!   codec ([`codec::encode`], whose serde encoding XORs every check word with a tag of the
//!   variant, W2), the variant index (the first byte of the postcard body) is replaced by
//!   every other byte value in turn, the frame check is recomputed over the version and the
//!   changed body (CRC-32C, as the codec computes it), and [`codec::decode`] reads it. The
//!   kinds a message can change into are exactly those for which this decodes: they are
//!   computed, never listed by hand, and depend on the message's values as well as its kind
//!   (a field read as a `bool` must hold 0 or 1, a varint read as a `u32` must fit). The frame
//!   check is recomputed because this models a corruption before encoding, or an embedder that
//!   carries the messages in another serde encoding without a frame check: the messages' own
//!   check words must catch it. Kind change `i` takes the `i`-th of those kinds (modulo their
//!   number); it is a no-op for a message that decodes as no other kind.
//! - **frame bits** ([`Corruption::Flip`], [`Flip`]): 1 to 4 distinct bits of the message's
//!   real frame ([`codec::encode`], frame check included) are flipped at positions the harness
//!   input gives, and [`codec::decode`] reads it. The frame check (CRC-32C) detects every error
//!   of up to 5 bits, so it never decodes; the harnesses do not assume it: a frame that decodes
//!   replaces the message ([`Outcome::Changed`]), one that does not is dropped by the
//!   receiver's codec ([`Outcome::Dropped`]). What a dropped frame means depends on the family:
//!   - the permission driver ([`PermNet`](super::PermNet)) treats it as a lost message (the
//!     permission algorithms tolerate loss and recover by retransmission);
//!   - the token driver ([`TokenNet`](super::TokenNet)) models the link session under the token
//!     algorithms ([`manet_mutex::session`]), which retransmits a frame that failed its check: the
//!     original message is delivered, unchanged and in order, so nothing else happens (the
//!     flip is counted, the message is not marked as corrupted).
//!
//! The drivers count what the operation did ([`Counts`]); each message is corrupted at most
//! once (a field, or its kind; a flip that decodes counts too).

use alloc::vec::Vec;

use arbitrary::Arbitrary;
use manet_mutex::codec::{self, DecodeError, Wire};
use manet_mutex::permission::{Timestamp, SKEW_LIMIT};
use manet_mutex::queue::Priority;
use manet_mutex::token::{Height, Sealed};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, FenceCopies, NodeId};

/// What a corrupted field becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Arbitrary)]
pub enum Value {
    /// 0.
    Zero,
    /// 1.
    One,
    /// The type's maximum.
    Max,
    /// One less than the maximum.
    MaxLess1,
    /// The type's minimum (0 for unsigned fields).
    Min,
    /// One more than the minimum.
    MinPlus1,
    /// The value plus one (wrapping).
    Up,
    /// The value minus one (wrapping).
    Down,
    /// The largest value the receiver accepts for the field.
    Limit,
    /// One past it.
    PastLimit,
    /// A node id (for id fields) or that small number.
    Node(u8),
}

impl Value {
    /// Every value, with `nodes` node ids: what the property tests and fuzzers draw from.
    pub fn all(nodes: u8) -> Vec<Value> {
        let mut v = vec![
            Value::Zero,
            Value::One,
            Value::Max,
            Value::MaxLess1,
            Value::Min,
            Value::MinPlus1,
            Value::Up,
            Value::Down,
            Value::Limit,
            Value::PastLimit,
        ];
        v.extend((0..nodes).map(Value::Node));
        v
    }

    /// The values the permission models try: the extremes, the neighbours of the value (a
    /// REPLY for one request is a neighbour away from one for the next), the first impossible
    /// value, and the hosts' ids.
    pub fn model_set(nodes: u8) -> Vec<Value> {
        let mut v = vec![
            Value::Zero,
            Value::Max,
            Value::Up,
            Value::Down,
            Value::PastLimit,
        ];
        v.extend((0..nodes).map(Value::Node));
        v
    }

    /// The values that commute with the model checker's height shift (it identifies systems
    /// whose heights differ by a uniform shift): neighbours of the value, and values that are
    /// impossible whatever the shift. Absolute values are covered by the fuzzers and
    /// property tests.
    pub fn shift_invariant(nodes: u8) -> Vec<Value> {
        let mut v = vec![Value::Up, Value::Down, Value::Max, Value::Min];
        v.extend((0..nodes).map(Value::Node));
        v
    }
}

/// One leaf field of a message, with the largest value its receiver accepts.
pub enum Slot<'a> {
    /// An unsigned 64-bit field and its limit.
    U64(&'a mut u64, u64),
    /// An unsigned 32-bit field and its limit.
    U32(&'a mut u32, u32),
    /// An unsigned 16-bit field (a count modulo 2^16; any value is possible).
    U16(&'a mut u16),
    /// A height component (limit `Height::LIMIT`, symmetric).
    I64(&'a mut i64),
    /// A node id.
    Id(&'a mut NodeId),
    /// A flag.
    Bool(&'a mut bool),
}

/// What `value` makes of an unsigned field holding `x`, with limit `limit`, whose type's
/// maximum is `max`, before truncation to the field's width.
fn unsigned(value: Value, x: u64, limit: u64, max: u64) -> u64 {
    match value {
        Value::Zero | Value::Min => 0,
        Value::One | Value::MinPlus1 => 1,
        Value::Max => max,
        Value::MaxLess1 => max - 1,
        Value::Up => x.wrapping_add(1),
        Value::Down => x.wrapping_sub(1),
        Value::Limit => limit,
        Value::PastLimit => limit.wrapping_add(1),
        Value::Node(n) => u64::from(n),
    }
}

impl Slot<'_> {
    /// Rewrite the field; false if it already had that value.
    pub fn set(self, value: Value) -> bool {
        match self {
            Slot::U64(x, limit) => {
                let new = unsigned(value, *x, limit, u64::MAX);
                replace(x, new)
            }
            Slot::U32(x, limit) => {
                // Truncating wraps as the field's own arithmetic would.
                let new = unsigned(value, u64::from(*x), u64::from(limit), u64::from(u32::MAX));
                replace(x, new as u32)
            }
            Slot::U16(x) => {
                let new = match value {
                    Value::Zero | Value::Min => 0,
                    Value::One | Value::MinPlus1 => 1,
                    Value::Max | Value::Limit => u16::MAX,
                    Value::MaxLess1 => u16::MAX - 1,
                    Value::Up | Value::PastLimit => x.wrapping_add(1),
                    Value::Down => x.wrapping_sub(1),
                    Value::Node(n) => u16::from(n),
                };
                replace(x, new)
            }
            Slot::I64(x) => {
                let new = match value {
                    Value::Zero => 0,
                    Value::One => 1,
                    Value::Max => i64::MAX,
                    Value::MaxLess1 => i64::MAX - 1,
                    Value::Min => i64::MIN,
                    Value::MinPlus1 => i64::MIN + 1,
                    Value::Up => x.wrapping_add(1),
                    Value::Down => x.wrapping_sub(1),
                    Value::Limit => -Height::LIMIT,
                    Value::PastLimit => -Height::LIMIT - 1,
                    Value::Node(n) => i64::from(n),
                };
                replace(x, new)
            }
            Slot::Id(x) => {
                let new = match value {
                    Value::Zero | Value::Min => NodeId(0),
                    Value::One | Value::MinPlus1 => NodeId(1),
                    Value::Max | Value::Limit | Value::PastLimit => NodeId(u32::MAX),
                    Value::MaxLess1 => NodeId(u32::MAX - 1),
                    Value::Up => NodeId(x.0.wrapping_add(1)),
                    Value::Down => NodeId(x.0.wrapping_sub(1)),
                    Value::Node(n) => NodeId(u32::from(n)),
                };
                replace(x, new)
            }
            Slot::Bool(x) => replace(x, !*x),
        }
    }
}

fn replace<T: PartialEq>(slot: &mut T, new: T) -> bool {
    let changed = *slot != new;
    *slot = new;
    changed
}

/// A message whose fields the harness can corrupt.
pub trait Fields {
    /// The message's leaf fields, in a fixed order.
    fn slots(&mut self) -> Vec<Slot<'_>>;

    /// How many leaf fields the message has.
    fn field_count(&self) -> usize
    where
        Self: Clone,
    {
        self.clone().slots().len()
    }

    /// Rewrite field `field` (modulo the number of fields) to `value`; false if that changed
    /// nothing.
    fn corrupt(&mut self, field: usize, value: Value) -> bool {
        let mut slots = self.slots();
        match slots.len() {
            0 => false,
            n => slots.swap_remove(field % n).set(value),
        }
    }
}

fn height(s: &mut Sealed) -> [Slot<'_>; 4] {
    [
        Slot::I64(&mut s.height.h1),
        Slot::I64(&mut s.height.h2),
        Slot::Id(&mut s.height.id),
        Slot::U64(&mut s.check, u64::MAX),
    ]
}

/// Each copy's lane and value are fields of their own (a corruption changes one copy).
fn fence(f: &mut FenceCopies) -> impl Iterator<Item = Slot<'_>> {
    f.0.iter_mut().flat_map(|copy| {
        [
            Slot::U32(&mut copy.lane, u32::MAX),
            Slot::U64(&mut copy.value, u64::MAX),
        ]
    })
}

fn stamp(ts: &mut Timestamp) -> [Slot<'_>; 2] {
    [Slot::U64(&mut ts.clock, SKEW_LIMIT), Slot::Id(&mut ts.id)]
}

fn priority(p: &mut Priority) -> [Slot<'_>; 2] {
    [
        Slot::U64(&mut p.level, Priority::LEVEL_LIMIT),
        Slot::U32(&mut p.rank, u32::MAX),
    ]
}

/// Each copy is a field of its own (a corruption changes one copy).
fn resources(r: &mut prioritized::Resources) -> impl Iterator<Item = Slot<'_>> {
    // The limit of a count is k, which the message does not know: 8 is beyond every k the
    // harnesses use.
    r.0.iter_mut().map(|c| Slot::U32(c, 8))
}

impl Fields for reverse_link::Message {
    fn slots(&mut self) -> Vec<Slot<'_>> {
        match self {
            reverse_link::Message::Token(h, f) => height(h).into_iter().chain(fence(f)).collect(),
            reverse_link::Message::TokenAck(h, n) => {
                height(h).into_iter().chain([Slot::U16(n)]).collect()
            }
            reverse_link::Message::Request(h)
            | reverse_link::Message::LinkInfo(h)
            | reverse_link::Message::Probe(h) => height(h).into(),
            reverse_link::Message::Beacon(h, f, hops) => height(h)
                .into_iter()
                .chain(fence(f))
                .chain([Slot::U16(hops)])
                .collect(),
            reverse_link::Message::Claim(h, lane, generation) => height(h)
                .into_iter()
                .chain([Slot::U32(lane, u32::MAX)])
                .chain(generation.iter_mut().map(|g| Slot::U32(g, u32::MAX)))
                .collect(),
            reverse_link::Message::Promise(h, lane, ballot, voter) => height(h)
                .into_iter()
                .chain([Slot::U32(lane, u32::MAX)])
                .chain(ballot.iter_mut().map(|g| Slot::U32(g, u32::MAX)))
                .chain([Slot::U32(voter, u32::MAX)])
                .collect(),
            // A kind this crate does not know yet: no field it can name.
            _ => Vec::new(),
        }
    }
}

impl Fields for prioritized::Message {
    fn slots(&mut self) -> Vec<Slot<'_>> {
        use prioritized::Message as M;
        match self {
            M::Token {
                available,
                lost,
                priority: p,
                height: h,
                fence: f,
            } => resources(available)
                .chain(resources(lost))
                .chain(priority(p))
                .chain(height(h))
                .chain(fence(f))
                .collect(),
            M::Request {
                priority: p,
                height: h,
            } => priority(p).into_iter().chain(height(h)).collect(),
            M::Update { priority: p } => priority(p).into(),
            M::Release {
                resources: r,
                lost,
                height: h,
                generation,
            } => resources(r)
                .chain(resources(lost))
                .chain(height(h))
                .chain(generation.iter_mut().map(|g| Slot::U32(g, u32::MAX)))
                .collect(),
            M::Beacon {
                fence: f,
                hops,
                height: h,
            } => fence(f).chain([Slot::U16(hops)]).chain(height(h)).collect(),
            M::Claim {
                lane,
                generation,
                height: h,
            } => [Slot::U32(lane, u32::MAX)]
                .into_iter()
                .chain(generation.iter_mut().map(|g| Slot::U32(g, u32::MAX)))
                .chain(height(h))
                .collect(),
            M::Promise {
                lane,
                ballot,
                voter,
                height: h,
            } => [Slot::U32(lane, u32::MAX)]
                .into_iter()
                .chain(ballot.iter_mut().map(|g| Slot::U32(g, u32::MAX)))
                .chain([Slot::U32(voter, u32::MAX)])
                .chain(height(h))
                .collect(),
            M::TokenAck { height: h, tokens } => {
                height(h).into_iter().chain([Slot::U16(tokens)]).collect()
            }
            M::Link { height: h } | M::Probe { height: h } => height(h).into(),
            // A kind this crate does not know yet: no field it can name.
            _ => Vec::new(),
        }
    }
}

impl Fields for look_ahead::Message {
    fn slots(&mut self) -> Vec<Slot<'_>> {
        use look_ahead::Message as M;
        match self {
            M::Request {
                ts,
                seq,
                epoch,
                check,
                fence: f,
            } => stamp(ts)
                .into_iter()
                .chain([
                    Slot::U64(seq, SKEW_LIMIT),
                    Slot::U64(epoch, SKEW_LIMIT),
                    Slot::U64(check, u64::MAX),
                ])
                .chain(fence(f))
                .collect(),
            M::Reply {
                ts,
                seq,
                epoch,
                seen,
                check,
                fence: f,
            } => stamp(ts)
                .into_iter()
                .chain([
                    Slot::U64(seq, SKEW_LIMIT),
                    Slot::U64(epoch, SKEW_LIMIT),
                    Slot::U64(seen, SKEW_LIMIT),
                    Slot::U64(check, u64::MAX),
                ])
                .chain(fence(f))
                .collect(),
            M::Doze(a) | M::Disconnect(a) | M::Reconnect(a) => stamp(&mut a.ts)
                .into_iter()
                .chain([
                    Slot::U64(&mut a.seen, SKEW_LIMIT),
                    Slot::Bool(&mut a.absent),
                    Slot::U64(&mut a.check, u64::MAX),
                ])
                .chain(fence(&mut a.fence))
                .collect(),
            // A kind this crate does not know yet: no field it can name.
            _ => Vec::new(),
        }
    }
}

impl Fields for ricart_agrawala::Message {
    fn slots(&mut self) -> Vec<Slot<'_>> {
        use ricart_agrawala::Message as M;
        match self {
            M::Request {
                ts,
                seq,
                check,
                fence: f,
            } => stamp(ts)
                .into_iter()
                .chain([Slot::U64(seq, SKEW_LIMIT), Slot::U64(check, u64::MAX)])
                .chain(fence(f))
                .collect(),
            M::Reply {
                ts,
                seq,
                check,
                fence: f,
            } => stamp(ts)
                .into_iter()
                .chain([Slot::U64(seq, SKEW_LIMIT), Slot::U64(check, u64::MAX)])
                .chain(fence(f))
                .collect(),
            M::Leave {
                seq,
                check,
                fence: f,
            } => [Slot::U64(seq, SKEW_LIMIT), Slot::U64(check, u64::MAX)]
                .into_iter()
                .chain(fence(f))
                .collect(),
            // A kind this crate does not know yet: no field it can name.
            _ => Vec::new(),
        }
    }
}

/// A corruption of one message in flight: what a harness step asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Corruption {
    /// Rewrite field `field` (modulo the message's fields) to `value` ([`Fields::corrupt`]).
    Field {
        /// Which field, modulo the message's fields.
        field: usize,
        /// What it becomes.
        value: Value,
    },
    /// Change the kind into the `i`-th (modulo their number) of the other kinds the message
    /// decodes as ([`kinds_of`]); a no-op if there is none.
    Kind(usize),
    /// Flip 1 to 4 bits of the message's frame.
    Flip(Flip),
}

/// 1 to 4 distinct bits of a frame, at positions the harness input gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flip {
    /// How many bits: `1 + (n - 1) mod 4` (so 1 to 4; 0 means 4).
    pub n: u8,
    /// The bits' positions, modulo the frame's length in bits; a position already taken moves
    /// to the next free bit, so the positions are distinct. Only the first `n` are used.
    pub at: [u16; 4],
}

impl Flip {
    /// How many bits are flipped: 1 to 4.
    pub fn count(&self) -> usize {
        1 + usize::from(self.n.wrapping_sub(1) % 4)
    }

    /// The distinct bit positions flipped in a frame of `len` bytes (bit `p` is bit `p % 8` of
    /// byte `p / 8`).
    pub fn positions(&self, len: usize) -> Vec<usize> {
        let bits = len * 8;
        let mut taken: Vec<usize> = Vec::with_capacity(4);
        for &at in &self.at[..self.count().min(bits)] {
            let mut p = usize::from(at) % bits;
            while taken.contains(&p) {
                p = (p + 1) % bits;
            }
            taken.push(p);
        }
        taken
    }

    /// A flip from input bits (the fuzz bodies): the count from the two lowest bits, the
    /// positions from a mix of all of them.
    pub fn from_seed(seed: u32) -> Flip {
        let mut x = u64::from(seed);
        // splitmix64's finaliser: every input bit moves every position.
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        Flip {
            n: 1 + (seed & 3) as u8,
            at: [
                x as u16,
                (x >> 16) as u16,
                (x >> 32) as u16,
                (x >> 48) as u16,
            ],
        }
    }

    /// `frame` with the bits flipped.
    pub fn apply(&self, frame: &[u8]) -> Vec<u8> {
        let mut out = frame.to_vec();
        for p in self.positions(frame.len()) {
            out[p / 8] ^= 1 << (p % 8);
        }
        out
    }
}

/// Which corruption a harness input asks for, besides the message it picks: the field
/// corruption its field and value name, a kind change (to the field-th other kind), or a
/// flip. What the fuzz inputs and proptest schedules carry ([`How::corruption`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum How {
    /// [`Corruption::Field`] with the step's field and value.
    Field,
    /// [`Corruption::Kind`] with the step's field as the index.
    Kind,
    /// [`Corruption::Flip`].
    Flip(Flip),
}

impl How {
    /// The corruption, with the step's `field` and `value`.
    pub fn corruption(self, field: usize, value: Value) -> Corruption {
        match self {
            How::Field => Corruption::Field { field, value },
            How::Kind => Corruption::Kind(field),
            How::Flip(flip) => Corruption::Flip(flip),
        }
    }

    /// From input bits that the fuzz inputs' layout leaves free (the low bits of a variant
    /// choice): half field corruptions, a quarter kind changes, a quarter flips (the rest of
    /// the bits seed it, [`Flip::from_seed`]).
    pub fn from_bits(bits: u32) -> How {
        match bits & 3 {
            0 | 1 => How::Field,
            2 => How::Kind,
            _ => How::Flip(Flip::from_seed(bits >> 2)),
        }
    }
}

/// What a corruption did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Nothing: the field already had that value, or the message decodes as no other kind.
    Unchanged,
    /// The message is now another one.
    Changed,
    /// The corrupted frame does not decode (why): the receiver's codec drops it.
    Dropped(DecodeError),
}

/// What the corrupt operation did in one run, as the drivers count it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Fields rewritten.
    pub fields: u64,
    /// Kinds changed.
    pub kinds: u64,
    /// Kind changes asked of a message that decodes as no other kind (nothing happened).
    pub kindless: u64,
    /// Frames with flipped bits.
    pub flips: u64,
    /// Of those, frames that still decoded and replaced the message (never expected: the
    /// frame check detects every error of up to 5 bits).
    pub flips_decoded: u64,
}

impl core::ops::AddAssign for Counts {
    fn add_assign(&mut self, other: Counts) {
        self.fields += other.fields;
        self.kinds += other.kinds;
        self.kindless += other.kindless;
        self.flips += other.flips;
        self.flips_decoded += other.flips_decoded;
    }
}

impl Counts {
    /// Count one outcome of `how`.
    pub fn count(&mut self, how: &Corruption, outcome: Outcome) {
        match (how, outcome) {
            (Corruption::Field { .. }, Outcome::Changed) => self.fields += 1,
            (Corruption::Kind(_), Outcome::Changed) => self.kinds += 1,
            (Corruption::Kind(_), _) => self.kindless += 1,
            (Corruption::Flip(_), outcome) => {
                self.flips += 1;
                self.flips_decoded += u64::from(outcome == Outcome::Changed);
            }
            (Corruption::Field { .. }, _) => {}
        }
    }
}

/// Every other kind `msg` decodes as, in the order of their variant index: its frame with the
/// variant index (the body's first byte) replaced by each other byte value and the frame
/// check recomputed, through [`codec::decode`] (see the [module docs](self)).
pub fn kinds_of<M: Wire>(msg: &M) -> Vec<M> {
    let frame = codec::encode(msg);
    let checked = frame.len() - codec::CHECK_LEN;
    let own = frame[1];
    let mut changed = frame;
    (0..=u8::MAX)
        .filter(|&index| index != own)
        .filter_map(|index| {
            changed[1] = index;
            let check = codec::frame_check(&changed[..checked]);
            changed[checked..].copy_from_slice(&check);
            codec::decode(&changed).ok()
        })
        .collect()
}

/// A message the harnesses can corrupt in every way: its fields ([`Fields`]) and its wire
/// form ([`Wire`]): every algorithm's `Message`.
pub trait Corruptible: Fields + Wire + Clone + PartialEq + core::fmt::Debug {
    /// Apply `how`; what it did.
    fn corrupt_as(&mut self, how: Corruption) -> Outcome {
        match how {
            Corruption::Field { field, value } => {
                if self.corrupt(field, value) {
                    Outcome::Changed
                } else {
                    Outcome::Unchanged
                }
            }
            Corruption::Kind(i) => {
                let kinds = kinds_of(self);
                if kinds.is_empty() {
                    return Outcome::Unchanged;
                }
                *self = kinds[i % kinds.len()].clone();
                Outcome::Changed
            }
            Corruption::Flip(flip) => {
                let frame = flip.apply(&codec::encode(self));
                match codec::decode::<Self>(&frame) {
                    Ok(msg) if msg == *self => Outcome::Unchanged,
                    Ok(msg) => {
                        *self = msg;
                        Outcome::Changed
                    }
                    Err(e) => Outcome::Dropped(e),
                }
            }
        }
    }
}

impl<M: Fields + Wire + Clone + PartialEq + core::fmt::Debug> Corruptible for M {}
