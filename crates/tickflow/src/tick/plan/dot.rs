//! The tick graph in Graphviz DOT, per function and per kind of function.
//!
//! A game registers thousands of functions of a handful of kinds (`move 17`, `move 18`, …):
//! drawn one box per function, the graph is a column hundreds of thousands of pixels tall
//! that answers nothing. The kind graph draws one box per kind, with counts, clusters in
//! group order and the links between kinds, so it answers "what runs before what".

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Plan;
use crate::tick::graph::TickGraph;
use crate::tick::handle::TickHandle;
use crate::tick::settings::TickGroup;

/// The kind of a function: its name without a trailing number and the separator before it
/// (`move 17`, `move#17`, `move_17` are kind `move`). Unnamed functions are one kind.
pub(crate) fn kind_of(name: &str) -> &str {
    let trimmed = name
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches([' ', '#', '_', '-', ':', '.']);
    match (name.is_empty(), trimmed.is_empty()) {
        (true, _) => "(unnamed)",
        (false, true) => name,
        (false, false) => trimmed,
    }
}

/// The kind of the live function `h`.
fn kind_at<C>(graph: &TickGraph<C>, h: TickHandle) -> &str {
    kind_of(graph.get(h).map_or("", |n| n.settings.name.as_str()))
}

/// One box of the kind graph.
#[derive(Default)]
struct Kind {
    /// Its node id in the DOT text (`k<id>`).
    id: usize,
    /// Position of its first function in the run order, so boxes follow the frame.
    first: usize,
    functions: usize,
    on_interval: usize,
}

impl Plan {
    /// The tick graph in Graphviz DOT: a cluster per actual group, an edge from each
    /// prerequisite to the function that waits for it, disabled functions dashed.
    pub(crate) fn dot<C>(&self, graph: &TickGraph<C>) -> String {
        let mut out = String::from("digraph ticks {\n  rankdir=LR;\n  node [shape=box];\n");
        for g in TickGroup::ALL {
            let members: Vec<u32> = self.members(g).collect();
            if members.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "  subgraph cluster_{} {{\n    label=\"{g:?}\";",
                g.index()
            );
            for i in members {
                let h = graph.handle_at(i).expect("live");
                let _ = writeln!(out, "    t{i} [label=\"{}\"];", escape(&graph.name_of(h)));
            }
            out.push_str("  }\n");
        }
        for (h, _) in graph.iter().filter(|(_, n)| !n.settings.enabled) {
            let _ = writeln!(
                out,
                "  t{} [label=\"{}\", style=dashed];",
                h.index(),
                escape(&graph.name_of(h))
            );
        }
        for (h, node) in graph.iter() {
            for &p in node.prereqs.iter().filter(|&&p| graph.get(p).is_some()) {
                let _ = writeln!(out, "  t{} -> t{};", p.index(), h.index());
            }
        }
        out.push_str("}\n");
        out
    }

    /// The boxes of the kind graph, keyed by (actual group, kind): a kind demoted to another
    /// group is a box there too.
    fn kinds<'g, C>(&self, graph: &'g TickGraph<C>) -> BTreeMap<(usize, &'g str), Kind> {
        let mut kinds: BTreeMap<(usize, &str), Kind> = BTreeMap::new();
        for (pos, &i) in self.order.iter().enumerate() {
            let h = graph.handle_at(i).expect("live");
            let g = self.info[i as usize].expect("resolved").actual.index();
            let k = kinds.entry((g, kind_at(graph, h))).or_insert(Kind {
                first: pos,
                ..Kind::default()
            });
            k.functions += 1;
            k.on_interval += usize::from(!graph.get(h).expect("live").settings.interval.is_zero());
        }
        for (id, k) in kinds.values_mut().enumerate() {
            k.id = id;
        }
        kinds
    }

    /// How many prerequisite links join each pair of boxes (by their ids).
    fn kind_links<C>(
        &self,
        graph: &TickGraph<C>,
        kinds: &BTreeMap<(usize, &str), Kind>,
    ) -> BTreeMap<(usize, usize), usize> {
        let id =
            |g: TickGroup, h: TickHandle| kinds.get(&(g.index(), kind_at(graph, h))).map(|k| k.id);
        let mut links: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for &i in &self.order {
            let h = graph.handle_at(i).expect("live");
            let to = id(self.info[i as usize].expect("resolved").actual, h);
            for &p in &graph.get(h).expect("live").prereqs {
                let Some(from) = self.get(p).filter(|_| graph.get(p).is_some()) else {
                    continue;
                };
                if let (Some(f), Some(t)) = (id(from.actual, p), to) {
                    *links.entry((f, t)).or_default() += 1;
                }
            }
        }
        links
    }

    /// The enabled functions of actual group `g`, in run order.
    fn members(&self, g: TickGroup) -> impl Iterator<Item = u32> + '_ {
        self.order
            .iter()
            .copied()
            .filter(move |&i| self.info[i as usize].expect("resolved").actual == g)
    }

    /// The kind graph in Graphviz DOT: one box per kind of enabled function in each actual
    /// group (`move ×2,000`), clusters in the order the groups run joined by `then` edges,
    /// and an edge per pair of kinds linked by prerequisites, labelled with how many links.
    /// Disabled functions are counted in the graph's title only.
    pub(crate) fn kinds_dot<C>(&self, graph: &TickGraph<C>) -> String {
        let kinds = self.kinds(graph);
        let disabled = graph.iter().filter(|(_, n)| !n.settings.enabled).count();
        let mut out = String::from(
            "digraph tick_kinds {\n  rankdir=LR;\n  compound=true;\n  node [shape=box, style=rounded];\n",
        );
        let _ = writeln!(
            out,
            "  label=\"{} tick functions of {} kinds{}; an edge: the left kind runs first\";",
            self.order.len(),
            kinds.len(),
            if disabled > 0 {
                format!(" ({disabled} disabled, not drawn)")
            } else {
                String::new()
            }
        );
        // Per group, its boxes in run order; the first box anchors the `then` edges.
        let mut anchors = Vec::new();
        for g in TickGroup::ALL {
            let mut boxes: Vec<(&(usize, &str), &Kind)> = kinds
                .iter()
                .filter(|((kg, _), _)| *kg == g.index())
                .collect();
            if boxes.is_empty() {
                continue;
            }
            boxes.sort_by_key(|(_, k)| k.first);
            let total: usize = boxes.iter().map(|(_, k)| k.functions).sum();
            let _ = writeln!(
                out,
                "  subgraph cluster_{} {{\n    label=\"{g:?}: {total}\";",
                g.index()
            );
            for ((_, kind), k) in &boxes {
                let mut label = format!("{} ×{}", escape(kind), k.functions);
                if k.on_interval > 0 {
                    let _ = write!(label, "\\n{} on intervals", k.on_interval);
                }
                let _ = writeln!(out, "    k{} [label=\"{label}\"];", k.id);
            }
            out.push_str("  }\n");
            anchors.push((g.index(), boxes[0].1.id));
        }
        for pair in anchors.windows(2) {
            let ((ga, a), (gb, b)) = (pair[0], pair[1]);
            let _ = writeln!(
                out,
                "  k{a} -> k{b} [ltail=cluster_{ga}, lhead=cluster_{gb}, label=\"then\", style=bold, color=gray50, fontcolor=gray50];"
            );
        }
        for ((f, t), n) in self.kind_links(graph, &kinds) {
            let _ = writeln!(out, "  k{f} -> k{t} [label=\"×{n}\"];");
        }
        out.push_str("}\n");
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_drop_a_trailing_number() {
        assert_eq!(kind_of("move 17"), "move");
        assert_eq!(kind_of("move#17"), "move");
        assert_eq!(kind_of("think_3"), "think");
        assert_eq!(kind_of("physics"), "physics");
        assert_eq!(kind_of("2d camera"), "2d camera");
        assert_eq!(kind_of("42"), "42");
        assert_eq!(kind_of(""), "(unnamed)");
    }
}
