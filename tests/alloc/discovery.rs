//! Neighbour discovery's steady state does not allocate: once made, a node handles hellos
//! (new peers, stale ones, forged floods filling its table, garbage bytes), its timeouts,
//! and hands out hellos and events, and encodes and decodes hello frames, with no heap
//! allocation.

use manet_mutex::discovery::{Discovery, Hello, Settings, MAX_HELLO_FRAME};
use manet_mutex::NodeId;

use crate::counting::counted;

#[test]
fn discovery_steady_state_does_not_allocate() {
    let settings = Settings::DEFAULT.with_max_neighbours(16);
    let mut nodes = [
        Discovery::new(NodeId(0), settings, 0).unwrap(),
        Discovery::new(NodeId(1), settings, 0).unwrap(),
    ];
    let ((), made) = counted(|| {
        let mut buf = [0; MAX_HELLO_FRAME];
        let mut now = 0;
        let mut forged = 0u32;
        let mut events = 0;
        while now < 20_000 {
            now = nodes[0].poll_timeout().min(nodes[1].poll_timeout());
            for i in 0..2 {
                nodes[i].handle_timeout(now);
                if let Some(hello) = nodes[i].poll_transmit() {
                    let frame = hello.encode_into(&mut buf);
                    // Every third hello of node 1 is lost.
                    if i == 0 || hello.seq() % 3 != 0 {
                        nodes[1 - i].handle_datagram(now, frame).unwrap();
                        // Duplicated: stale.
                        nodes[1 - i].handle_datagram(now, frame).unwrap();
                    }
                }
                // A forged flood (once the link is up: a flood keeps new peers out) and
                // garbage.
                let flood = if now > 2000 { 10 } else { 0 };
                for _ in 0..flood {
                    forged = forged.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    let h = Hello::new(NodeId(2 + forged % 1000), u64::from(forged), &[NodeId(0)]);
                    nodes[i].handle_hello(now, &h.unwrap());
                }
                let _ = nodes[i].handle_datagram(now, &[0x81, 1, 2, 3, 4, 5]);
                while nodes[i].poll_event().is_some() {
                    events += 1;
                }
            }
        }
        assert!(events >= 2);
    });
    assert_eq!(made, 0);
    assert!(nodes[0].is_up(NodeId(1)) && nodes[1].is_up(NodeId(0)));
    assert!(nodes[0].stats().evicted > 0 && nodes[0].stats().garbage > 0);
}
