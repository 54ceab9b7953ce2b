//! Three Ricart-Agrawala nodes on loopback, in one process for the demonstration (in a real
//! network, one per host, each bound to its own address): each takes the lock three times.
//!
//! `cargo run -p manet-mutex-tokio --example lock`

use std::net::{SocketAddr, UdpSocket};

use manet_mutex::{ricart_agrawala, NodeId};
use manet_mutex_tokio::Node;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 20))?;
    let sockets = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    let addrs: Vec<(NodeId, SocketAddr)> = (0..3)
        .map(|i| Ok((NodeId(i), sockets[i as usize].local_addr()?)))
        .collect::<Result<_, std::io::Error>>()?;

    let mut tasks = Vec::new();
    for (config, socket) in configs.into_iter().zip(sockets) {
        let node = Node::builder(ricart_agrawala::Node::new(config)?)
            .socket(socket)
            .peers(addrs.iter().copied())
            .spawn()?;
        tasks.push(tokio::spawn(async move {
            for _ in 0..3 {
                let guard = node.acquire().await?;
                println!(
                    "node {} holds the lock under fence {}",
                    node.id().0,
                    guard.fence().value
                );
            } // the guard dropped: released
            Ok::<_, manet_mutex_tokio::Error>(node)
        }));
    }
    // Every node answers the others' requests until all are done.
    let mut nodes = Vec::new();
    for task in tasks {
        nodes.push(task.await??);
    }
    for node in nodes {
        node.shutdown().await;
    }
    Ok(())
}
