//! Where to draw the nodes of a graph with no positions of its own.

/// A deterministic force-directed layout (Fruchterman–Reingold) of `n` nodes and `links` in
/// `[0.05, 0.95]²`: linked nodes pull together, all nodes push apart. Starts from a circle, so
/// the same graph always gets the same picture.
pub fn spring_layout(n: usize, links: &[(u32, u32)]) -> Vec<(f64, f64)> {
    let mut pos: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / n.max(1) as f64;
            (0.5 + 0.4 * a.cos(), 0.5 + 0.4 * a.sin())
        })
        .collect();
    if n < 3 {
        return pos;
    }
    let k = (1.0 / n as f64).sqrt();
    let mut temperature = 0.1;
    for _ in 0..300 {
        let mut shift = vec![(0.0, 0.0); n];
        for i in 0..n {
            for j in i + 1..n {
                let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
                let d = (dx * dx + dy * dy).sqrt().max(1e-6);
                let f = k * k / d;
                shift[i].0 += dx / d * f;
                shift[i].1 += dy / d * f;
                shift[j].0 -= dx / d * f;
                shift[j].1 -= dy / d * f;
            }
        }
        for &(a, b) in links {
            let (a, b) = (a as usize, b as usize);
            if a >= n || b >= n {
                continue;
            }
            let (dx, dy) = (pos[a].0 - pos[b].0, pos[a].1 - pos[b].1);
            let d = (dx * dx + dy * dy).sqrt().max(1e-6);
            let f = d * d / k;
            shift[a].0 -= dx / d * f;
            shift[a].1 -= dy / d * f;
            shift[b].0 += dx / d * f;
            shift[b].1 += dy / d * f;
        }
        for (p, s) in pos.iter_mut().zip(&shift) {
            let len = (s.0 * s.0 + s.1 * s.1).sqrt().max(1e-9);
            let step = len.min(temperature);
            p.0 += s.0 / len * step;
            p.1 += s.1 / len * step;
        }
        temperature *= 0.985;
    }
    // Fit into the unit square with a margin.
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pos {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let (w, h) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
    pos.iter()
        .map(|&(x, y)| (0.05 + 0.9 * (x - x0) / w, 0.05 + 0.9 * (y - y0) / h))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_deterministic_inside_the_square_and_keeps_nodes_apart() {
        let links: Vec<(u32, u32)> = (0..10).map(|i| (i, (i + 1) % 10)).collect();
        let a = spring_layout(10, &links);
        assert_eq!(a, spring_layout(10, &links));
        assert!(a
            .iter()
            .all(|&(x, y)| (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y)));
        for i in 0..10 {
            for j in i + 1..10 {
                let d = ((a[i].0 - a[j].0).powi(2) + (a[i].1 - a[j].1).powi(2)).sqrt();
                assert!(d > 0.02, "{i} and {j} overlap");
            }
        }
    }
}
