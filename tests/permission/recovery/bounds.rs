//! Stated timing bounds (`Settings::with_bounds`, `with_recovery_for`; issue 39): settings
//! that break them are refused at `Node::new`, naming the bound, and the preset picks the least
//! safe exclusion (C4).

use manet_mutex::permission::Bounds;
use manet_mutex::{look_ahead, ricart_agrawala, Error};

/// The example: a lease of 250, exclusion after one timeout of 20, on a network that
/// delivers within 420 at 100 ppm.
#[test]
fn an_exclusion_the_stated_bounds_make_unsafe_is_refused_in_both_algorithms() {
    let ra = ricart_agrawala::Settings::new(3, 20)
        .with_lease(250)
        .with_exclusion(1);
    let la = look_ahead::Settings::new(3, 20)
        .with_lease(250)
        .with_exclusion(1);
    // Without stated bounds it is the embedder's choice (as before).
    assert!(ricart_agrawala::Node::new(ricart_agrawala::network(ra).unwrap()[0]).is_ok());
    let refused = |e: Error| matches!(e, Error::InvalidConfig { reason, .. } if reason.contains("stated bounds"));
    let ra = ra.with_bounds(420, 100);
    let la = la.with_bounds(420, 100);
    let e = ricart_agrawala::Node::new(ricart_agrawala::network(ra).unwrap()[0]).unwrap_err();
    assert!(refused(e.clone()), "{e:?}");
    let c = look_ahead::network(la).unwrap().swap_remove(0);
    let e = look_ahead::Node::new(c).unwrap_err();
    assert!(refused(e.clone()), "{e:?}");
    // Exclusion without a lease, with bounds stated.
    let bare = ricart_agrawala::Settings::new(3, 20)
        .with_exclusion(100)
        .with_bounds(420, 100);
    assert!(ricart_agrawala::Node::new(ricart_agrawala::network(bare).unwrap()[0]).is_err());
}

#[test]
fn the_preset_takes_the_least_safe_exclusion_and_builds() {
    for (lease, delivery, drift) in [
        (250, 420, 100),
        (2_000, 420, 100),
        (50, 1, 0),
        (30, 3, 10_000),
    ] {
        let ra = ricart_agrawala::Settings::new(3, 20).with_recovery_for(lease, delivery, drift);
        let m = ra.recovery.exclusion.expect("an exclusion");
        assert!(
            ra.exclusion_safe(delivery, drift),
            "{lease} {delivery} {drift}: {m}"
        );
        assert!(
            m == 1 || !ra.with_exclusion(m - 1).exclusion_safe(delivery, drift),
            "{lease} {delivery} {drift}: {m} is not the least"
        );
        assert!(ricart_agrawala::Node::new(ricart_agrawala::network(ra).unwrap()[0]).is_ok());
        let la = look_ahead::Settings::new(3, 20).with_recovery_for(lease, delivery, drift);
        assert_eq!(la.recovery.exclusion, Some(m));
        assert!(look_ahead::Node::new(look_ahead::network(la).unwrap().swap_remove(1)).is_ok());
    }
    // The cluster's numbers: lease 250, Δ 420, 100 ppm, R 20: 47 timeouts (README).
    let ra = ricart_agrawala::Settings::new(5, 20).with_recovery_for(250, 420, 100);
    assert_eq!(ra.recovery.exclusion, Some(47));
}

/// The closed form against a search of `exclusion_safe` (a second way of computing it).
#[test]
fn the_least_safe_exclusion_agrees_with_a_search() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |below: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % below
    };
    for _ in 0..2_000 {
        let r = 1 + next(50);
        let lease = 1 + next(5_000);
        let bounds = Bounds::new(next(2_000), next(200_000) as u32);
        let settings = ricart_agrawala::Settings::new(3, r).with_lease(lease);
        let closed = settings.recovery.least_safe_exclusion(r, bounds);
        let search = (1..=1_000_000u32).find(|&m| {
            settings
                .with_exclusion(m)
                .exclusion_safe(bounds.delivery, bounds.drift_ppm)
        });
        assert_eq!(closed, search, "R {r} lease {lease} {bounds:?}");
    }
}
