//! Bounded model checking (stateright) of small networks of every algorithm.

mod explore;
mod look_ahead;
mod perm_model;
mod prioritized;
mod reverse_link;
mod ricart_agrawala;
mod token_model;
