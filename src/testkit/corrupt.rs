//! The corrupt operation of every network harness: rewrite one field of one message in flight
//! between correct nodes, to an extreme or to a neighbour of its value (the threat model in the
//! crate docs: any field of any message may be corrupted; one field per message, since a
//! consistent rewrite of several fields is a forged message that only authentication tells).

use crate::permission::{Timestamp, SKEW_LIMIT};
use crate::queue::Priority;
use crate::token::{Height, Sealed};
use crate::{look_ahead, prioritized, reverse_link, ricart_agrawala, FenceCopies, NodeId};
use arbitrary::Arbitrary;

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

impl Slot<'_> {
    /// Rewrite the field; false if it already had that value.
    pub fn set(self, value: Value) -> bool {
        match self {
            Slot::U64(x, limit) => {
                let new = match value {
                    Value::Zero | Value::Min => 0,
                    Value::One | Value::MinPlus1 => 1,
                    Value::Max => u64::MAX,
                    Value::MaxLess1 => u64::MAX - 1,
                    Value::Up => x.wrapping_add(1),
                    Value::Down => x.wrapping_sub(1),
                    Value::Limit => limit,
                    Value::PastLimit => limit.wrapping_add(1),
                    Value::Node(n) => u64::from(n),
                };
                replace(x, new)
            }
            Slot::U32(x, limit) => {
                let new = match value {
                    Value::Zero | Value::Min => 0,
                    Value::One | Value::MinPlus1 => 1,
                    Value::Max => u32::MAX,
                    Value::MaxLess1 => u32::MAX - 1,
                    Value::Up => x.wrapping_add(1),
                    Value::Down => x.wrapping_sub(1),
                    Value::Limit => limit,
                    Value::PastLimit => limit.wrapping_add(1),
                    Value::Node(n) => u32::from(n),
                };
                replace(x, new)
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
            } => resources(r)
                .chain(resources(lost))
                .chain(height(h))
                .collect(),
            M::TokenAck { height: h, tokens } => {
                height(h).into_iter().chain([Slot::U16(tokens)]).collect()
            }
            M::Link { height: h } | M::Probe { height: h } => height(h).into(),
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
                fence: f,
            } => stamp(ts)
                .into_iter()
                .chain([
                    Slot::U64(seq, SKEW_LIMIT),
                    Slot::U64(epoch, SKEW_LIMIT),
                    Slot::U64(seen, SKEW_LIMIT),
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
            M::Reply { ts, seq, fence: f } => stamp(ts)
                .into_iter()
                .chain([Slot::U64(seq, SKEW_LIMIT)])
                .chain(fence(f))
                .collect(),
        }
    }
}
