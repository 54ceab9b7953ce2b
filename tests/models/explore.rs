//! Running labelled stateright models and reporting them, shared by the token and permission
//! model harnesses: explore each breadth-first on one thread up to its state budget, print what
//! was explored, collect every counterexample with the reason its last state fails, and fail
//! at the end if there was any, or if a `sometimes` property (every model has one: a model
//! that does nothing must fail) was never seen.

use std::fmt::Debug;

use manet_mutex::Violation;
use stateright::{Checker, Expectation, Model};

/// One model to explore: its label, the model, its state budget and a printable summary of
/// its bounds.
pub struct Run<M> {
    pub label: String,
    pub model: M,
    pub states: usize,
    pub bounds: String,
}

/// Explore every run; `explain` says why a counterexample's last state fails.
pub fn explore<M>(
    name: &str,
    runs: impl IntoIterator<Item = Run<M>>,
    explain: impl Fn(&M::State) -> String,
) where
    M: Model + Send + Sync + 'static,
    M::State: Debug + std::hash::Hash + Send + Sync,
    M::Action: Debug + Send + Sync,
{
    let mut failures = Vec::new();
    for run in runs {
        let properties = run.model.properties();
        let started = std::time::Instant::now();
        let checker = run
            .model
            .checker()
            .threads(1)
            .target_state_count(run.states)
            .spawn_bfs()
            .join();
        let mut discoveries = checker.discoveries();
        // A `sometimes` property is a check that the model does something: its discovery is
        // the example wanted, and no discovery is the failure.
        for property in properties {
            if property.expectation == Expectation::Sometimes
                && discoveries.remove(property.name).is_none()
            {
                failures.push(format!(
                    "{}: \"{}\" never happens in {} states",
                    run.label,
                    property.name,
                    checker.unique_state_count()
                ));
            }
        }
        // The checker stops early only at the state target or on a counterexample.
        let extent = if checker.state_count() < run.states && discoveries.is_empty() {
            "exhaustive"
        } else {
            "bounded"
        };
        println!(
            "{name} {} {}: {} unique states, depth {}, {extent}, {:.1} s",
            run.label,
            run.bounds,
            checker.unique_state_count(),
            checker.max_depth(),
            started.elapsed().as_secs_f64(),
        );
        for (property, path) in discoveries {
            let last = path.last_state();
            let reason = explain(last);
            let last = format!("{last:#?}");
            failures.push(format!(
                "{}: \"{property}\" fails: {reason}\n  steps: {:?}\n  last state: {last}",
                run.label,
                path.into_actions()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Replay `steps` (a counterexample's) from the model's first initial state, with `check` after
/// each; the last state, for the caller's liveness check.
pub fn replay<M: Model>(
    model: &M,
    steps: &[M::Action],
    check: impl Fn(&M::State) -> Result<(), Violation>,
) -> Result<M::State, String>
where
    M::Action: Debug + Clone,
{
    let mut state = model.init_states().remove(0);
    for step in steps {
        state = model
            .next_state(&state, step.clone())
            .ok_or_else(|| format!("{step:?} is not possible"))?;
        check(&state).map_err(|v| v.to_string())?;
    }
    Ok(state)
}
