//! The algorithms the simulators run, under the names the programs take on their command
//! lines (`simulate --algorithm`, `scale --algorithm`).

use core::fmt;
use core::str::FromStr;

/// An algorithm the simulators can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// [`manet_mutex::reverse_link`] (k = 1 is RL).
    Krl,
    /// [`manet_mutex::reverse_link`] with token forwarding.
    Krlf,
    /// [`manet_mutex::prioritized`], h-out-of-k with priorities.
    Prioritized,
    /// [`manet_mutex::look_ahead`].
    LookAhead,
    /// [`manet_mutex::ricart_agrawala`].
    RicartAgrawala,
}

/// The simulator an [`Algorithm`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Simulator {
    /// [`crate::token`]: neighbour-only FIFO links.
    Token,
    /// [`crate::routed`]: any host to any host over shortest paths.
    Routed,
}

/// A name [`Algorithm::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm `{name}` (known: {known})", name = .0, known = Algorithm::ALL.map(Algorithm::arg).join(", "))]
pub struct UnknownAlgorithm(pub String);

impl Algorithm {
    /// Every algorithm, in the order the programs list them.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Krl,
        Algorithm::Krlf,
        Algorithm::Prioritized,
        Algorithm::LookAhead,
        Algorithm::RicartAgrawala,
    ];

    /// Its name on a command line (what [`Algorithm::from_str`] reads): `krl`, `krlf`,
    /// `prioritized`, `look-ahead`, `ricart-agrawala`.
    pub fn arg(self) -> &'static str {
        match self {
            Algorithm::Krl => "krl",
            Algorithm::Krlf => "krlf",
            Algorithm::Prioritized => "prioritized",
            Algorithm::LookAhead => "look-ahead",
            Algorithm::RicartAgrawala => "ricart-agrawala",
        }
    }

    /// Its name in tables and in the `algorithm` column of CSV rows (the programs' outputs
    /// have always used these).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Krl => "KRL",
            Algorithm::Krlf => "KRLF",
            Algorithm::Prioritized => "prioritized",
            Algorithm::LookAhead => "look_ahead",
            Algorithm::RicartAgrawala => "ricart_agrawala",
        }
    }

    /// The simulator that runs it.
    pub fn simulator(self) -> Simulator {
        match self {
            Algorithm::Krl | Algorithm::Krlf | Algorithm::Prioritized => Simulator::Token,
            Algorithm::LookAhead | Algorithm::RicartAgrawala => Simulator::Routed,
        }
    }
}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// The algorithm whose [`Algorithm::arg`] is `s`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.arg() == s)
            .ok_or_else(|| UnknownAlgorithm(s.into()))
    }
}

impl fmt::Display for Algorithm {
    /// Its [`Algorithm::arg`], so that `to_string` and `parse` agree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.arg())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Params, Plugin};
    use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala};

    #[test]
    fn names_parse_back_and_unknown_ones_are_listed() {
        for a in Algorithm::ALL {
            assert_eq!(a.to_string().parse::<Algorithm>(), Ok(a));
        }
        let e = "krl2".parse::<Algorithm>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown algorithm `krl2` (known: krl, krlf, prioritized, look-ahead, ricart-agrawala)"
        );
    }

    /// The registry's table names are the ones the node types give their networks.
    #[test]
    fn table_names_are_the_plug_ins_names() {
        let krl = reverse_link::Settings::new(1);
        let name = |forwarding| {
            reverse_link::Node::name(&Params::first_nodes(krl.with_forwarding(forwarding), 1))
        };
        let prio = prioritized::Settings::new(2, prioritized::Policy::Equal);
        let hosts = crate::routed::HostParams::new(1, 1000);
        let names = [
            name(false),
            name(true),
            prioritized::Node::name(&Params::first_nodes(prio, 1)),
            look_ahead::Node::name(&hosts),
            ricart_agrawala::Node::name(&hosts),
        ];
        assert_eq!(names, Algorithm::ALL.map(Algorithm::name));
        let routed = Algorithm::ALL.map(|a| a.simulator() == Simulator::Routed);
        assert_eq!(routed, [false, false, false, true, true]);
    }
}
