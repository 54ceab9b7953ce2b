//! What the viewer shows of a node: the same few fields for every algorithm (status, tokens,
//! height, `next`), and the rest as labelled text.

use serde::{Deserialize, Serialize};

use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, Protocol, Status};

/// A node's visible state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View {
    /// `remainder`, `waiting` or `critical`.
    pub status: String,
    /// Tokens held (the one token of the prioritized algorithm counts 1; 0 for permission
    /// algorithms).
    pub tokens: u32,
    /// The height `(h1, h2, id)` of a token algorithm's node: links point from higher to
    /// lower.
    pub height: Option<(i64, i64, u32)>,
    /// Where this node sends requests and tokens (the paper's `next`), if anywhere.
    pub next: Option<u32>,
    /// Everything else, labelled: queues, neighbour views, sets, modes.
    pub fields: Vec<(String, String)>,
}

/// A node the viewer can show. The provided methods show only the node's status, so a
/// protocol of your own needs no more than `impl Visible for MyNode {}` to run in the
/// simulators (which record on request).
pub trait Visible: Protocol {
    /// Its visible state now.
    fn view(&self) -> View {
        View {
            status: status(self.status()),
            tokens: 0,
            height: None,
            next: None,
            fields: Vec::new(),
        }
    }

    /// A message in words for the viewer, starting with its kind in capitals (`TOKEN (lane 0
    /// fence value 12; …)`): the page colours messages by that first word. The default is the
    /// message's `Debug` text.
    fn message_text(msg: &Self::Message) -> String
    where
        Self: Sized,
    {
        format!("{msg:?}")
    }

    /// The algorithm and its main settings, for the page's title (e.g. `KRLF, k = 3`).
    fn algorithm(&self) -> String {
        core::any::type_name::<Self>().into()
    }
}

fn status(s: Status) -> String {
    match s {
        Status::Remainder => "remainder".into(),
        Status::Waiting => "waiting".into(),
        Status::Critical => "critical".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn ids(it: impl Iterator<Item = manet_mutex::NodeId>) -> String {
    let v: Vec<String> = it.map(|n| n.0.to_string()).collect();
    format!("[{}]", v.join(", "))
}

fn neighbour_views(n: &manet_mutex::token::Neighbors) -> String {
    let v: Vec<String> = n
        .entries()
        .map(|e| {
            let h = e.height();
            format!("{}: ({}, {}, {})", e.id().0, h.h1, h.h2, h.id.0)
        })
        .collect();
    v.join("; ")
}

impl Visible for reverse_link::Node {
    fn message_text(msg: &Self::Message) -> String {
        super::words::reverse_link(msg)
    }

    fn algorithm(&self) -> String {
        let s = self.settings();
        format!("{}, k = {}", if s.forwarding { "KRLF" } else { "KRL" }, s.k)
    }

    fn view(&self) -> View {
        let h = self.height();
        View {
            status: status(self.status()),
            tokens: self.tokens(),
            height: Some((h.h1, h.h2, h.id.0)),
            next: self.next().map(|n| n.0),
            fields: vec![
                ("queue".into(), ids(self.queue())),
                (
                    "neighbours' heights".into(),
                    neighbour_views(self.neighbors()),
                ),
                ("raises".into(), self.raises().to_string()),
            ],
        }
    }
}

impl Visible for prioritized::Node {
    fn message_text(msg: &Self::Message) -> String {
        super::words::prioritized(msg)
    }

    fn algorithm(&self) -> String {
        let s = self.settings();
        format!("prioritized h-out-of-k, k = {}, {:?}", s.k, s.policy)
    }

    fn view(&self) -> View {
        let h = self.height();
        let queue: Vec<String> = self
            .queue()
            .map(|(n, p)| format!("{}@{}", n.0, super::words::priority(&p)))
            .collect();
        let mut fields = vec![
            (
                "queue (node@level.rank)".into(),
                format!("[{}]", queue.join(", ")),
            ),
            ("resources held".into(), self.held().to_string()),
        ];
        if let Some(t) = self.available() {
            fields.push(("t (free resources on the token)".into(), t.to_string()));
        }
        if let Some(h) = self.requested() {
            fields.push(("requested h".into(), h.to_string()));
        }
        fields.push((
            "neighbours' heights".into(),
            neighbour_views(self.neighbors()),
        ));
        View {
            status: status(self.status()),
            tokens: u32::from(self.holds_token()),
            height: Some((h.h1, h.h2, h.id.0)),
            next: self.next().map(|n| n.0),
            fields,
        }
    }
}

/// A permission host's view: `fields` first, then what both permission algorithms keep (who
/// it waits for, whom it defers, its clock and request timestamp).
fn permission_view(
    host: &impl Protocol,
    mut fields: Vec<(String, String)>,
    waiting_for: String,
    deferred: String,
    clock: u64,
    timestamp: Option<manet_mutex::permission::Timestamp>,
) -> View {
    fields.push(("waiting for".into(), waiting_for));
    fields.push(("deferred".into(), deferred));
    fields.push(("clock".into(), clock.to_string()));
    if let Some(ts) = timestamp {
        fields.push((
            "request timestamp (clock, id)".into(),
            format!("({}, {})", ts.clock, ts.id.0),
        ));
    }
    View {
        status: status(host.status()),
        tokens: 0,
        height: None,
        next: None,
        fields,
    }
}

impl Visible for look_ahead::Node {
    fn message_text(msg: &Self::Message) -> String {
        super::words::look_ahead(msg)
    }

    fn algorithm(&self) -> String {
        "look-ahead".into()
    }

    fn view(&self) -> View {
        let sets = vec![
            ("mode".into(), format!("{:?}", self.mode())),
            ("Info_set".into(), ids(self.info_set())),
            ("Status_set".into(), ids(self.status_set())),
        ];
        let (waiting, deferred) = (ids(self.outstanding()), ids(self.deferred()));
        permission_view(
            self,
            sets,
            waiting,
            deferred,
            self.clock(),
            self.timestamp(),
        )
    }
}

impl Visible for ricart_agrawala::Node {
    fn message_text(msg: &Self::Message) -> String {
        super::words::ricart_agrawala(msg)
    }

    fn algorithm(&self) -> String {
        "Ricart–Agrawala".into()
    }

    fn view(&self) -> View {
        let (waiting, deferred) = (ids(self.outstanding()), ids(self.deferred()));
        permission_view(
            self,
            Vec::new(),
            waiting,
            deferred,
            self.clock(),
            self.timestamp(),
        )
    }
}
