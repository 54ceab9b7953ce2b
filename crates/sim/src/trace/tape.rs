//! Recording a run cheaply: the nodes' initial states and the events handed to them, turned
//! into a [`Recording`] only when someone wants to look. The nodes are deterministic state
//! machines with no other input, so replaying the events through copies of the initial
//! nodes gives back every state and every message of the run.

use alloc::vec::Vec;

use super::{spring_layout, Recorder, Recording, Visible};
use manet_mutex::{Action, Event, NodeId};

/// The inputs of a run, for a [`Recording`] on demand.
#[derive(Debug, Clone)]
pub struct Tape<P: Visible + Clone> {
    initial: Vec<P>,
    links: Vec<(u32, u32)>,
    events: Vec<(NodeId, Event<P::Message>)>,
}

impl<P: Visible + Clone> Tape<P> {
    /// A tape of a run starting from `nodes` on `links`.
    pub fn new(nodes: &[P], links: Vec<(u32, u32)>) -> Self {
        Tape {
            initial: nodes.to_vec(),
            links,
            events: Vec::new(),
        }
    }

    /// `at` is handed `event` (call before handing it).
    pub fn push(&mut self, at: NodeId, event: &Event<P::Message>) {
        self.events.push((at, event.clone()));
    }

    /// The events so far.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The run as a recording: the events replayed through copies of the initial nodes. A
    /// step's time is its number (the drivers that keep tapes have no clock).
    pub fn recording(&self) -> Recording {
        let mut nodes = self.initial.clone();
        let positions = spring_layout(nodes.len(), &self.links);
        let name = nodes
            .first()
            .map_or_else(Default::default, |n| n.algorithm());
        let views = nodes.iter().map(Visible::view).collect();
        let mut r = Recorder::new(&name, positions, self.links.clone(), views);
        for (at, event) in &self.events {
            let Some(node) = nodes.get_mut(at.index()) else {
                continue;
            };
            r.begin_event::<P>((r.steps() + 1) as f64, at.0, event);
            let sends: Vec<(u32, alloc::string::String)> = match node.handle(event.clone()) {
                Ok(actions) => actions
                    .filter_map(|a| match a {
                        Action::Send { to, msg } => Some((to.0, P::message_text(&msg))),
                        _ => None,
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            r.end_step(node.view());
            for (to, msg) in sends {
                let _ = r.send(to, msg);
            }
        }
        r.finish()
    }
}
